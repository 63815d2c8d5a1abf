//! Analyses: one module per tool, each turning decoded files into plain output structs.

pub mod memory_events;
pub mod memory_profile;
pub mod step_groups;
