//! Analyses: one module per tool, each turning decoded files into plain output structs.

pub mod data_table;
pub mod device_memory;
pub mod input_pipeline;
pub mod memory_events;
pub mod memory_profile;
pub mod memory_viewer;
pub mod op_metrics;
pub mod overview_page;
pub mod step_groups;
pub mod steps;
