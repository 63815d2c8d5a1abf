//! Steps: XProf's step events and its step database (`xplane_to_step_events.cc`,
//! `step_events_to_steps_db.cc`, `event_span.cc`), the base of the Input Pipeline Analyzer and the
//! Overview Page. A trace without accelerators takes its steps from the host, one with GPUs from the
//! GPUs (as XProf does: its host events then do not count).
//!
//! 1. Host: every host event gets its step group ([`crate::analysis::step_groups`], the same grouping the
//!    Memory Profile uses; in a file grouped when it was recorded, the `group_id` stat it carries, and
//!    its `step_name` stat names a marker). In each group, the step markers (events named `train…`, `test…`,
//!    `TraceContext…` without a `/`, and the roots grouping named) give the step's span, the longest
//!    one; the other events are typed by what they do (host compute, waiting for input, copies to
//!    the device or host) — [`events`]. GPUs: the markers are the derived `Steps` line's spans, the
//!    events the kernels and copies of each step — [`device`].
//! 2. Each step's events are made non-overlapping (at any instant the highest type active counts),
//!    clipped to the step's span, and summed by type; time no event covers is "unknown" (XProf's
//!    "All others"). Steps without compute (host compute on the host, device compute on a device) or
//!    without a marker are left out, and when more than 5
//!    steps remain the first and the last are dropped (they are usually cut by the profiling window,
//!    and XProf 2.24 drops them) — [`db`].
//!
//! Not computed: the per-core steps of a TPU trace with a step line ([`StepDb::device_steps_unsupported`]
//! says so). A TPU trace without a step line has no steps, in XProf as here.

pub mod db;
pub mod device;
pub mod events;
pub mod intersection;

use crate::analysis::device_planes::{device_planes, DeviceKind};
use crate::analysis::step_groups;
use crate::decode::xplane::names::STEPS_LINE;
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
    DeviceCollectives = 100,
    HostWaitInput = 110,
    DeviceToDevice = 120,
    DeviceToHost = 130,
    /// Compute in single (or unknown) precision.
    DeviceCompute32 = 140,
    /// Compute in half precision.
    DeviceCompute16 = 150,
}

impl EventType {
    /// Every type, by priority.
    pub const ALL: [EventType; 10] = [
        EventType::Unknown,
        EventType::HostCompute,
        EventType::HostToHost,
        EventType::HostToDevice,
        EventType::DeviceCollectives,
        EventType::HostWaitInput,
        EventType::DeviceToDevice,
        EventType::DeviceToHost,
        EventType::DeviceCompute32,
        EventType::DeviceCompute16,
    ];
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
    /// XProf takes this trace's steps from its devices in a way not computed here (a TPU trace with a
    /// step line): there are no steps.
    pub device_steps_unsupported: bool,
    /// For the steps of several hosts combined ([`intersection::combine`]), each step's time on its
    /// slowest host, which XProf's step time statistics take; empty for one host's steps.
    pub slowest_host_step_ps: Vec<u64>,
    /// Device compute time by precision, over every group's events.
    pub precision: PrecisionStats,
}

/// Device compute time in half and in single precision (XProf's `PrecisionStats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PrecisionStats {
    pub compute_16bit_ps: u64,
    pub compute_32bit_ps: u64,
}

/// The step database of `space`: from its GPUs when it has some, else from its host plane
/// (`/host:CPU`); empty without either.
pub fn step_db(space: &XSpace) -> Result<StepDb, DecodeError> {
    let unsupported = || Ok(StepDb { device_steps_unsupported: true, ..StepDb::default() });
    let (details, has_device) = match device_planes(space) {
        None => match space.plane_named(crate::decode::xplane::names::HOST_PLANE) {
            Some(host) => (events::host_step_events(space, host)?, false),
            None => return Ok(StepDb::default()),
        },
        Some((DeviceKind::Gpu, planes)) => {
            let groups = if step_groups::recorded_grouped(space) { device::Groups::Recorded } else { device::launch_groups(space)? };
            (device::gpu_step_events(space, &planes, &groups)?, true)
        }
        // XProf's TPU steps are the TensorCores' step lines; without one there are none.
        Some((DeviceKind::Tpu, planes)) if planes.iter().any(|p| p.lines.iter().any(|l| l.header.name == STEPS_LINE)) => {
            return unsupported()
        }
        Some((DeviceKind::Tpu, _)) => return Ok(StepDb::default()),
    };
    let (steps, steps_found, precision) = db::steps(details, has_device);
    Ok(StepDb { steps, steps_found, device_steps_unsupported: false, precision, slowest_host_step_ps: Vec::new() })
}
