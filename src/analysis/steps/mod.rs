//! Steps: XProf's step events of the host plane and its step database (`xplane_to_step_events.cc`,
//! `step_events_to_steps_db.cc`, `event_span.cc`), the base of the Input Pipeline Analyzer and the
//! Overview Page.
//!
//! 1. Every host event gets its step group ([`crate::analysis::step_groups`], the same grouping the
//!    Memory Profile uses). In each group, the step markers (events named `train…`, `test…`,
//!    `TraceContext…` without a `/`, and the roots grouping named) give the step's span, the longest
//!    one; the other events are typed by what they do (host compute, waiting for input, copies to
//!    the device or host) — [`events`].
//! 2. Each step's events are made non-overlapping (at any instant the highest type active counts),
//!    clipped to the step's span, and summed by type; time no event covers is "unknown" (XProf's
//!    "All others"). Steps without host compute or without a marker are left out, and when more than 5
//!    steps remain the first and the last are dropped (they are usually cut by the profiling window,
//!    and XProf 2.24 drops them) — [`db`].
//!
//! Only host steps: traces with GPU or TPU planes get their steps from the device in XProf, which this
//! module does not do ([`StepDb::device_steps_unsupported`] says so).

pub mod db;
pub mod events;
pub mod intersection;

use crate::decode::xplane::XSpace;
use crate::decode::DecodeError;

/// XProf's warning when a trace has no step marker (the Input Pipeline Analyzer's, the Overview
/// Page's and the Roofline Model's diagnostics).
pub const NO_STEP_MARKER: &str = "No step marker observed and hence the step time is unknown. This may happen if (1) training steps are not instrumented (e.g., if you are not using Keras) or (2) the profiling duration is shorter than the step time. For (1), you need to add step instrumentation; for (2), you may try to profile longer.";

/// What a stretch of a step was spent on (XProf's `EventType`; the value is its priority when events
/// overlap: the highest wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum EventType {
    /// No event covers it ("All others").
    Unknown = 0,
    HostCompute = 10,
    HostToHost = 70,
    HostToDevice = 80,
    HostWaitInput = 110,
}

impl EventType {
    /// Every type, by priority.
    pub const ALL: [EventType; 5] =
        [EventType::Unknown, EventType::HostCompute, EventType::HostToHost, EventType::HostToDevice, EventType::HostWaitInput];
}

/// One step of the step database.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The step's group id (what the Memory Profile's `stepId` is).
    pub group_id: i64,
    /// The name grouping gave its root (`train 7`), else the group id.
    pub name: String,
    pub begin_ps: i64,
    pub duration_ps: u64,
    /// Time of each type inside the step, for the types that occur (a type present with 0 is kept, as
    /// XProf keeps it); they add up to the duration, less any host-to-host time overlapping nothing else.
    pub type_ps: Vec<(EventType, u64)>,
}

impl Step {
    pub fn ps(&self, t: EventType) -> u64 {
        self.type_ps.iter().find(|(x, _)| *x == t).map_or(0, |(_, ps)| *ps)
    }
}

/// The steps of a trace, in group id order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepDb {
    pub steps: Vec<Step>,
    /// Steps found before the first and last were dropped.
    pub steps_found: usize,
    /// The trace has GPU or TPU planes, whose steps XProf takes from the device: not computed here.
    pub device_steps_unsupported: bool,
    /// For the steps of several hosts combined ([`intersection::combine`]), each step's time on its
    /// slowest host, which XProf's step time statistics take; empty for one host's steps.
    pub slowest_host_step_ps: Vec<u64>,
}

/// The step database of `space` from its host plane (`/host:CPU`); empty without one.
pub fn step_db(space: &XSpace) -> Result<StepDb, DecodeError> {
    let device_steps_unsupported = crate::analysis::device_planes::device_planes(space).is_some();
    let Some(host) = space.plane_named(crate::analysis::memory_profile::HOST_PLANE) else {
        return Ok(StepDb { device_steps_unsupported, ..StepDb::default() });
    };
    let details = events::host_step_events(space, host)?;
    let (steps, steps_found) = db::steps(details);
    Ok(StepDb { steps, steps_found, device_steps_unsupported, slowest_host_step_ps: Vec::new() })
}
