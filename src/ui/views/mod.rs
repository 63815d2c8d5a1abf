//! One view per tool (same names as `analysis/`), plus the file list and the landing page.

pub mod files;
pub mod landing;
pub mod memory_viewer;
pub mod overview;
pub mod tool_pending;
