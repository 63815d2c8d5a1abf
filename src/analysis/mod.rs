//! Analyses: one module per tool, each turning decoded files into plain output structs.

pub mod memory_events;
pub mod device_memory;
pub mod memory_viewer;
