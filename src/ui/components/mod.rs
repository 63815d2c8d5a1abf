//! Small reusable pieces of the page.

pub mod empty_reason;
pub mod metric;
pub mod op_links;
pub mod step_window;
pub mod table;
pub mod time_unit;
pub mod tool_nav;
pub mod toolbar;
pub mod truncated_banner;
