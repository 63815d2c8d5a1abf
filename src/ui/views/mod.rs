//! One view per tool (same names as `analysis/`), plus the file list and the landing page.

pub mod device_memory;
pub mod export;
pub mod files;
pub mod framework_op_stats;
pub mod landing;
pub mod memory_profile;
pub mod memory_viewer;
pub mod overview;
pub mod trace_viewer;
pub mod xla_ops_cpu;
