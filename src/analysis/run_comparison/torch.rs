//! Two PyTorch runs compared (each a [`TorchRun`]: its ranks' Kineto traces): the ops summed over
//! each run's ranks as rows of the comparison's op table (a device row of an op's kernels' self time,
//! a host row of its CPU self time), each kernel name's total time, the average step time, and the
//! ranks matched rank by rank (by `distributedInfo.rank`, else by worker).

use super::{Change, OpDelta, Presence, StepTimeChange};
use crate::analysis::framework_op_stats::FrameworkOpRow;
use crate::analysis::torch::ranks::{OpFigures, RankFigures, StepSplit, TorchRun};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One kernel name's total time in both runs (summed over each run's ranks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelDelta {
    pub name: String,
    pub presence: Presence,
    pub current_calls: u64,
    pub baseline_calls: u64,
    pub total_time_us: Change,
}

/// A rank's average step split in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankDelta {
    /// `rank N`, or the worker for a trace outside a distributed run.
    pub rank: String,
    pub presence: Presence,
    pub current_worker: Option<String>,
    pub baseline_worker: Option<String>,
    pub step_us: Change,
    pub computation_us: Change,
    pub communication_us: Change,
    pub memcpy_us: Change,
    pub other_us: Change,
}

/// What a comparison of two PyTorch runs adds to the op table's: kernels and ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchComparison {
    /// By |Δ total time| (largest first), then name.
    pub kernels: Vec<KernelDelta>,
    /// The current run's ranks in its order, then the baseline's others.
    pub ranks: Vec<RankDelta>,
}

/// The op type of a PyTorch op's row: its namespace (`aten` of `aten::conv2d`), empty for an op
/// without one (a `record_function` range, an optimizer step).
fn namespace(name: &str) -> &str {
    name.split_once("::").map_or("", |(ns, _)| ns)
}

/// A run's ops summed over its ranks as op-table rows: one host row per op, and one device row per
/// op with device time.
pub fn op_rows(operators: &[OpFigures]) -> Vec<FrameworkOpRow> {
    let row = |o: &OpFigures, on_device: bool, self_us: f64, total_us: f64| FrameworkOpRow {
        on_device,
        op_type: namespace(&o.name).to_string(),
        op_name: o.name.clone(),
        occurrences: o.calls,
        true_occurrences: o.calls,
        total_time_us: total_us,
        avg_time_us: total_us / o.calls as f64,
        total_self_time_us: self_us,
        avg_self_time_us: self_us / o.calls as f64,
        ..FrameworkOpRow::default()
    };
    let mut rows = Vec::new();
    for o in operators {
        if o.device_total_us > 0.0 {
            rows.push(row(o, true, o.device_self_us, o.device_total_us));
        }
        rows.push(row(o, false, o.host_self_us, o.host_total_us));
    }
    rows
}

/// The two runs' kernels matched by name, largest change first.
pub fn kernel_deltas(current: &TorchRun, baseline: &TorchRun) -> Vec<KernelDelta> {
    /// Calls and total µs in each run.
    type Pair = (Option<(u64, f64)>, Option<(u64, f64)>);
    let mut matched: BTreeMap<&str, Pair> = BTreeMap::new();
    for k in &current.kernels {
        matched.entry(&k.name).or_default().0 = Some((k.calls, k.total_us));
    }
    for k in &baseline.kernels {
        matched.entry(&k.name).or_default().1 = Some((k.calls, k.total_us));
    }
    let mut rows: Vec<KernelDelta> = matched
        .into_iter()
        .map(|(name, (c, b))| KernelDelta {
            name: name.to_string(),
            presence: Presence::of(c.is_some(), b.is_some()),
            current_calls: c.map_or(0, |c| c.0),
            baseline_calls: b.map_or(0, |b| b.0),
            total_time_us: Change::new(c.map_or(0.0, |c| c.1), b.map_or(0.0, |b| b.1)),
        })
        .collect();
    rows.sort_by(|a, b| b.total_time_us.delta.abs().total_cmp(&a.total_time_us.delta.abs()).then_with(|| a.name.cmp(&b.name)));
    rows
}

/// The two runs' ranks matched by [`RankFigures::key`]; a rank only one run has counts as 0 in the
/// other.
pub fn rank_deltas(current: &TorchRun, baseline: &TorchRun) -> Vec<RankDelta> {
    let find = |run: &'_ TorchRun, key: &str| run.ranks.iter().find(|r| r.key() == key).cloned();
    let baseline_only = baseline.ranks.iter().filter(|b| find(current, &b.key()).is_none());
    let keys: Vec<String> = current.ranks.iter().chain(baseline_only).map(RankFigures::key).collect();
    keys.into_iter()
        .map(|key| {
            let (c, b) = (find(current, &key), find(baseline, &key));
            let split = |r: &Option<RankFigures>| r.as_ref().map_or(StepSplit::default(), |r| r.split);
            let (cs, bs) = (split(&c), split(&b));
            RankDelta {
                presence: Presence::of(c.is_some(), b.is_some()),
                current_worker: c.map(|r| r.worker),
                baseline_worker: b.map(|r| r.worker),
                rank: key,
                step_us: Change::new(cs.step_us, bs.step_us),
                computation_us: Change::new(cs.computation_us, bs.computation_us),
                communication_us: Change::new(cs.communication_us, bs.communication_us),
                memcpy_us: Change::new(cs.memcpy_us, bs.memcpy_us),
                other_us: Change::new(cs.other_us, bs.other_us),
            }
        })
        .collect()
}

/// The runs' average step time (the ranks' averages averaged), in ms as the comparison holds it.
pub fn step_time(current: &TorchRun, baseline: &TorchRun) -> StepTimeChange {
    StepTimeChange {
        current_steps: current.steps,
        baseline_steps: baseline.steps,
        average_ms: Change::new(current.split.step_us / 1000.0, baseline.split.step_us / 1000.0),
    }
}

/// The op rows of both runs and their deltas, in the comparison's order (see [`super::op_deltas`]).
pub fn torch_op_deltas(current: &TorchRun, baseline: &TorchRun) -> (Vec<FrameworkOpRow>, Vec<FrameworkOpRow>, Vec<OpDelta>) {
    let (c, b) = (op_rows(&current.operators), op_rows(&baseline.operators));
    let ops = super::op_deltas(&c, &b);
    (c, b, ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::torch::ranks::{combine, KernelFigures};

    fn rank(worker: &str, rank: i64, scale: f64) -> RankFigures {
        RankFigures {
            worker: worker.into(),
            rank: Some(rank),
            steps: 2,
            split: StepSplit { step_us: 10.0 * scale, computation_us: 4.0 * scale, communication_us: 2.0, memcpy_us: 1.0, other_us: 3.0 },
            operators: vec![
                OpFigures {
                    name: "aten::mm".into(),
                    calls: 1,
                    device_self_us: 4.0 * scale,
                    device_total_us: 4.0 * scale,
                    host_self_us: 2.0,
                    host_total_us: 2.0,
                },
                OpFigures {
                    name: "Optimizer.step".into(),
                    calls: 1,
                    device_self_us: 0.0,
                    device_total_us: 0.0,
                    host_self_us: 5.0,
                    host_total_us: 5.0,
                },
            ],
            kernels: vec![KernelFigures { name: "gemm".into(), calls: 1, total_us: 4.0 * scale }],
        }
    }

    #[test]
    fn kernels_ops_and_ranks_are_matched() {
        let current = combine(vec![rank("a", 0, 2.0), rank("b", 1, 2.0)]).expect("run");
        let baseline = combine(vec![rank("x", 0, 1.0), rank("y", 2, 1.0)]).expect("run");
        let k = kernel_deltas(&current, &baseline);
        assert_eq!((k[0].name.as_str(), k[0].total_time_us), ("gemm", Change::new(16.0, 8.0)));
        let (_, _, ops) = torch_op_deltas(&current, &baseline);
        let got: Vec<(&str, &str, bool, f64)> =
            ops.iter().map(|o| (o.op_type.as_str(), o.op_name.as_str(), o.on_device, o.self_time_us.delta)).collect();
        assert_eq!(got, [("aten", "aten::mm", true, 8.0), ("", "Optimizer.step", false, 0.0), ("aten", "aten::mm", false, 0.0)]);
        let ranks = rank_deltas(&current, &baseline);
        let got: Vec<(&str, Presence, Option<&str>, f64)> =
            ranks.iter().map(|r| (r.rank.as_str(), r.presence, r.baseline_worker.as_deref(), r.step_us.delta)).collect();
        assert_eq!(
            got,
            [
                ("rank 0", Presence::Both, Some("x"), 10.0),
                ("rank 1", Presence::OnlyInCurrent, None, 20.0),
                ("rank 2", Presence::OnlyInBaseline, Some("y"), -10.0)
            ]
        );
        assert_eq!(step_time(&current, &baseline).average_ms, Change::new(0.02, 0.01));
    }
}
