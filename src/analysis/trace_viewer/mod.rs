//! XProf's Trace Viewer: every event of a trace, by process (plane) and thread (line), as XProf lays
//! them out ([`layout`]) and names them ([`event_text`]); a columnar store of them built once per file
//! ([`store`]); and XProf's trace_viewer JSON ([`export`]).

pub mod event_text;
pub mod export;
pub mod layout;
pub mod store;

pub use store::TraceStore;
