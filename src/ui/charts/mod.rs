//! Canvas charts. They draw what a view hands them (engine answers) and do geometry only.

pub mod timeline;
