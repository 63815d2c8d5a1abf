//! Two runs compared, op by op, allocator by allocator and host by host: the selected run against a
//! baseline run, as `pprof --diff_base` compares two device memory profiles. Pure: it joins figures
//! each run already has (its Framework Op Stats rows, its hosts' allocator peaks, its step time); the
//! engine gathers them (`engine::run_comparison`). Runs are matched host by host by host name (the
//! file name without its profile suffix, the same in every run of a TensorBoard log folder); what only
//! one run has is listed as such.
//!
//! Two PyTorch runs (their ranks' Kineto traces) compare the same way, their ops summed over ranks as
//! the op table's rows, with their kernels and ranks besides ([`torch`]).

use crate::analysis::framework_op_stats::FrameworkOpRow;
use crate::analysis::op_metrics::IDLE;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub mod torch;

/// Which of the two runs a row was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Both,
    OnlyInCurrent,
    OnlyInBaseline,
}

impl Presence {
    fn of(current: bool, baseline: bool) -> Presence {
        match (current, baseline) {
            (true, false) => Presence::OnlyInCurrent,
            (false, true) => Presence::OnlyInBaseline,
            _ => Presence::Both,
        }
    }
}

/// One figure in both runs: `delta` is current minus baseline, `ratio` current over baseline (`None`
/// where the baseline is 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub current: f64,
    pub baseline: f64,
    pub delta: f64,
    pub ratio: Option<f64>,
}

impl Change {
    pub fn new(current: f64, baseline: f64) -> Change {
        Change { current, baseline, delta: current - baseline, ratio: (baseline != 0.0).then(|| current / baseline) }
    }
}

/// One framework op (a row of XProf's framework op table, by side, type and name) in both runs. An op
/// only one run has counts as 0 in the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpDelta {
    pub on_device: bool,
    pub op_type: String,
    pub op_name: String,
    pub presence: Presence,
    pub current_occurrences: u64,
    pub baseline_occurrences: u64,
    pub self_time_us: Change,
    pub total_time_us: Change,
}

/// An allocator's peak in one run (its Memory Profile summary).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryPeak {
    /// Heap + stack at the profiling window's peak (the Memory Profile's "peak memory usage").
    pub peak_bytes: i64,
    /// The allocator's peak since it was created.
    pub lifetime_peak_bytes: i64,
}

/// One host's allocator (by host name and memory ID) in both runs; `delta_peak_bytes` only where both
/// have it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPeakDelta {
    pub host: String,
    pub memory_id: String,
    pub presence: Presence,
    pub current: Option<MemoryPeak>,
    pub baseline: Option<MemoryPeak>,
    pub delta_peak_bytes: Option<i64>,
}

/// A host and the runs it is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostMatch {
    pub host: String,
    pub presence: Presence,
}

/// One run: its folder and its hosts, in its order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The folder the run's files lie in (empty for files opened alone).
    pub run_dir: String,
    /// Its name (TensorBoard's run name: the folder's name).
    pub run: String,
    pub hosts: Vec<String>,
}

/// The average step time of both runs, where both have steps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepTimeChange {
    pub current_steps: usize,
    pub baseline_steps: usize,
    pub average_ms: Change,
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    pub current: RunInfo,
    pub baseline: RunInfo,
    /// Every host of either run, the current run's first (in its order), then the baseline's others.
    pub hosts: Vec<HostMatch>,
    /// Σ self time of the device ops and of the host ops (`IDLE` left out).
    pub device_self_time_us: Change,
    pub host_self_time_us: Change,
    /// `None` where a run has no steps (the notes say why when its steps could not be found).
    pub step_time: Option<StepTimeChange>,
    /// By |Δ self time| (largest first), equal changes by op name, type, then side (device first).
    pub ops: Vec<OpDelta>,
    /// By host name, then memory ID.
    pub memory: Vec<MemoryPeakDelta>,
    /// What could not be compared, in words (a host without a Memory Profile, a run without steps).
    pub notes: Vec<String>,
    /// Two PyTorch runs' kernels and ranks; absent for XSpace runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch: Option<torch::TorchComparison>,
}

/// The total self time of each run's ops on one side (device or host), `IDLE` left out.
pub fn side_self_time_us(current: &[FrameworkOpRow], baseline: &[FrameworkOpRow], on_device: bool) -> Change {
    let sum = |rows: &[FrameworkOpRow]| {
        rows.iter().filter(|r| r.on_device == on_device && r.op_type != IDLE).fold(0.0, |sum, r| sum + r.total_self_time_us)
    };
    Change::new(sum(current), sum(baseline))
}

/// The ops of both tables matched by side, type and name, in the comparison's order.
pub fn op_deltas(current: &[FrameworkOpRow], baseline: &[FrameworkOpRow]) -> Vec<OpDelta> {
    fn key(r: &FrameworkOpRow) -> (bool, &str, &str) {
        (r.on_device, r.op_type.as_str(), r.op_name.as_str())
    }
    type Pair<'a> = (Option<&'a FrameworkOpRow>, Option<&'a FrameworkOpRow>);
    let mut matched: BTreeMap<(bool, &str, &str), Pair> = BTreeMap::new();
    for r in current {
        matched.entry(key(r)).or_default().0 = Some(r);
    }
    for r in baseline {
        matched.entry(key(r)).or_default().1 = Some(r);
    }
    let figure = |r: Option<&FrameworkOpRow>, f: fn(&FrameworkOpRow) -> f64| r.map_or(0.0, f);
    let mut ops: Vec<OpDelta> = matched
        .into_iter()
        .map(|((on_device, op_type, op_name), (c, b))| OpDelta {
            on_device,
            op_type: op_type.to_string(),
            op_name: op_name.to_string(),
            presence: Presence::of(c.is_some(), b.is_some()),
            current_occurrences: c.map_or(0, |r| r.occurrences),
            baseline_occurrences: b.map_or(0, |r| r.occurrences),
            self_time_us: Change::new(figure(c, |r| r.total_self_time_us), figure(b, |r| r.total_self_time_us)),
            total_time_us: Change::new(figure(c, |r| r.total_time_us), figure(b, |r| r.total_time_us)),
        })
        .collect();
    ops.sort_by(|a, b| {
        b.self_time_us
            .delta
            .abs()
            .total_cmp(&a.self_time_us.delta.abs())
            .then_with(|| a.op_name.cmp(&b.op_name))
            .then_with(|| a.op_type.cmp(&b.op_type))
            .then_with(|| b.on_device.cmp(&a.on_device))
    });
    ops
}

/// The allocators of both runs matched by host and memory ID, in that order.
pub fn memory_deltas(
    current: BTreeMap<(String, String), MemoryPeak>,
    mut baseline: BTreeMap<(String, String), MemoryPeak>,
) -> Vec<MemoryPeakDelta> {
    let mut rows: BTreeMap<(String, String), (Option<MemoryPeak>, Option<MemoryPeak>)> = BTreeMap::new();
    for (k, c) in current {
        let b = baseline.remove(&k);
        rows.insert(k, (Some(c), b));
    }
    rows.extend(baseline.into_iter().map(|(k, b)| (k, (None, Some(b)))));
    rows.into_iter()
        .map(|((host, memory_id), (current, baseline))| MemoryPeakDelta {
            host,
            memory_id,
            presence: Presence::of(current.is_some(), baseline.is_some()),
            delta_peak_bytes: current.zip(baseline).map(|(c, b)| c.peak_bytes - b.peak_bytes),
            current,
            baseline,
        })
        .collect()
}

/// The hosts of both runs: the current run's in its order, then the baseline's others in theirs.
pub fn host_matches(current: &[String], baseline: &[String]) -> Vec<HostMatch> {
    let current_hosts = current.iter().map(|h| HostMatch { host: h.clone(), presence: Presence::of(true, baseline.contains(h)) });
    let baseline_only =
        baseline.iter().filter(|h| !current.contains(h)).map(|h| HostMatch { host: h.clone(), presence: Presence::OnlyInBaseline });
    current_hosts.chain(baseline_only).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(on_device: bool, op_type: &str, op_name: &str, self_us: f64) -> FrameworkOpRow {
        FrameworkOpRow {
            on_device,
            op_type: op_type.into(),
            op_name: op_name.into(),
            occurrences: 1,
            total_self_time_us: self_us,
            total_time_us: self_us * 2.0,
            ..FrameworkOpRow::default()
        }
    }

    #[test]
    fn ops_match_by_side_type_and_name_largest_change_first() {
        let current = [row(false, "MatMul", "a", 5.0), row(false, "Add", "b", 1.0), row(true, "Add", "b", 3.0)];
        let baseline = [row(false, "MatMul", "a", 2.0), row(false, "Conv", "c", 3.0), row(true, "Add", "b", 3.0)];
        let ops = op_deltas(&current, &baseline);
        let order: Vec<(&str, bool, Presence)> = ops.iter().map(|o| (o.op_name.as_str(), o.on_device, o.presence)).collect();
        // Δ 3 (a), Δ −3 (c) by name; Δ 1 (b host); Δ 0 (b device).
        assert_eq!(
            order,
            [
                ("a", false, Presence::Both),
                ("c", false, Presence::OnlyInBaseline),
                ("b", false, Presence::OnlyInCurrent),
                ("b", true, Presence::Both)
            ]
        );
        assert_eq!(ops[0].self_time_us, Change { current: 5.0, baseline: 2.0, delta: 3.0, ratio: Some(2.5) });
        assert_eq!(ops[1].self_time_us.ratio, Some(0.0));
        assert_eq!(ops[2].self_time_us.ratio, None);
        assert_eq!((ops[1].current_occurrences, ops[1].baseline_occurrences), (0, 1));
    }

    #[test]
    fn memory_and_hosts_match_by_name() {
        let peak = |p: i64| MemoryPeak { peak_bytes: p, lifetime_peak_bytes: p + 1 };
        let key = |h: &str, m: &str| (h.to_string(), m.to_string());
        let current = BTreeMap::from([(key("w0", "GPU_0_bfc"), peak(10)), (key("w1", "GPU_0_bfc"), peak(7))]);
        let baseline = BTreeMap::from([(key("w0", "GPU_0_bfc"), peak(4)), (key("w2", "GPU_0_bfc"), peak(3))]);
        let rows = memory_deltas(current, baseline);
        let got: Vec<(&str, Presence, Option<i64>)> = rows.iter().map(|r| (r.host.as_str(), r.presence, r.delta_peak_bytes)).collect();
        assert_eq!(got, [("w0", Presence::Both, Some(6)), ("w1", Presence::OnlyInCurrent, None), ("w2", Presence::OnlyInBaseline, None)]);
        let hosts = host_matches(&["w1".into(), "w0".into()], &["w0".into(), "w2".into()]);
        let got: Vec<(&str, Presence)> = hosts.iter().map(|h| (h.host.as_str(), h.presence)).collect();
        assert_eq!(got, [("w1", Presence::OnlyInCurrent), ("w0", Presence::Both), ("w2", Presence::OnlyInBaseline)]);
    }
}
