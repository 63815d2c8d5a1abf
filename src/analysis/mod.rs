//! Analyses: one module per tool, each turning decoded files into plain output structs.

pub mod allocation_names;
pub mod data_table;
pub mod device_memory;
pub mod device_ops;
pub mod device_planes;
pub mod file_details;
pub mod framework_op_stats;
pub mod gpu_cost;
pub mod gpu_events;
pub mod graph_viewer;
pub mod hlo_stats;
pub mod hlo_text;
pub mod input_pipeline;
pub mod kernel_stats;
pub mod memory_across_hosts;
pub mod memory_events;
pub mod memory_profile;
pub mod memory_viewer;
pub mod number_text;
pub mod op_metrics;
pub mod op_profile;
pub mod overview_page;
pub mod preprocess;
pub mod roofline_model;
pub mod run_comparison;
pub mod step_groups;
pub mod steps;
#[cfg(test)]
pub(crate) mod test_xspace;
pub mod torch;
pub mod torch_snapshot;
pub mod trace_viewer;
pub mod xla_modules;
pub mod xla_ops_cpu;
