//! One view per tool (same names as `analysis/`), plus the file list and the landing page.

pub mod device_memory;
pub mod export;
pub mod file_details;
pub mod files;
pub mod framework_op_stats;
pub mod graph_viewer;
pub mod hlo_stats;
pub mod input_pipeline;
pub mod kernel_stats;
pub mod landing;
pub mod memory_across_hosts;
pub mod memory_profile;
pub mod memory_viewer;
pub mod op_page;
pub mod op_profile;
pub mod overview_page;
pub mod roofline_model;
pub mod run_comparison;
pub mod torch;
pub mod torch_ranks;
pub mod torch_snapshot;
pub mod trace_viewer;
pub mod xla_ops_cpu;
