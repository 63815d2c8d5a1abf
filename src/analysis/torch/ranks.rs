//! A PyTorch run of several ranks: one Kineto trace per worker (see [`crate::decode::log_dir`]), each
//! rank's step time split as the plugin's distributed view splits it, and its operators and kernels;
//! and the run combined, operators and kernels summed over its ranks.
//!
//! Every figure here is one the single-rank views already compute (the Overview's step-time
//! breakdown, the Operator view's sums per op name, the Kernel view's sums per kernel name), so a
//! rank's figures equal its own views'.

use super::kernels::KernelStats;
use super::operators::by_name;
use super::overview::breakdown;
use super::{Role, TorchProfile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A rank's average step time split as the distributed view does: time in computation kernels, in
/// communication (NCCL kernels and collectives), in memory copies and sets, and the rest (CPU,
/// runtime, data loading, idle).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StepSplit {
    /// The average step's duration.
    pub step_us: f64,
    pub computation_us: f64,
    pub communication_us: f64,
    /// Memcpy and Memset.
    pub memcpy_us: f64,
    /// `step_us` less the three above.
    pub other_us: f64,
}

/// One op name's sums over its calls (the Operator view's figures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpFigures {
    pub name: String,
    pub calls: u64,
    pub device_self_us: f64,
    pub device_total_us: f64,
    pub host_self_us: f64,
    pub host_total_us: f64,
}

/// One kernel name's calls and total time (the Kernel view's figures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelFigures {
    pub name: String,
    pub calls: u64,
    pub total_us: f64,
}

/// One rank of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    /// The worker (the file's host, see [`crate::decode::log_dir::RunHost`]).
    pub worker: String,
    /// `distributedInfo.rank` of its trace; `None` for a trace outside a distributed run.
    pub rank: Option<i64>,
    pub steps: usize,
    pub split: StepSplit,
    /// By device self time, then host self time (largest first), then name.
    pub operators: Vec<OpFigures>,
    /// By total time (largest first), then name; empty for a trace without kernels.
    pub kernels: Vec<KernelFigures>,
}

impl RankFigures {
    /// What matches this rank with the same rank of another run: its rank where the trace names
    /// one, else its worker.
    pub fn key(&self) -> String {
        match self.rank {
            Some(r) => format!("rank {r}"),
            None => self.worker.clone(),
        }
    }
}

/// A run of several ranks: each rank, and the run combined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchRun {
    /// By rank (ranks without one last, by worker).
    pub ranks: Vec<RankFigures>,
    /// The steps every rank has (the fewest of any rank).
    pub steps: usize,
    /// The ranks' average step splits averaged over the ranks (each rank weighs the same).
    pub split: StepSplit,
    /// Summed over the ranks; ordered as a rank's.
    pub operators: Vec<OpFigures>,
    pub kernels: Vec<KernelFigures>,
}

/// A rank's figures from its profile.
pub fn rank_figures(p: &TorchProfile, worker: &str) -> RankFigures {
    let b = breakdown(p);
    let at = |r: Role| b.average[r as usize];
    let computation_us = at(Role::Kernel);
    let communication_us = at(Role::Communication);
    let memcpy_us = at(Role::Memcpy) + at(Role::Memset);
    let split = StepSplit {
        step_us: b.average_total,
        computation_us,
        communication_us,
        memcpy_us,
        other_us: b.average_total - computation_us - communication_us - memcpy_us,
    };
    let mut operators: Vec<OpFigures> = by_name(p)
        .into_iter()
        .map(|a| OpFigures {
            name: a.name,
            calls: a.calls,
            device_self_us: a.self_device_duration.v,
            device_total_us: a.device_duration.v,
            host_self_us: a.self_host_duration,
            host_total_us: a.host_duration,
        })
        .collect();
    sort_operators(&mut operators);
    let mut kernels: Vec<KernelFigures> = KernelStats::new(p)
        .map(|k| k.rows.into_iter().map(|r| KernelFigures { name: r.name, calls: r.count, total_us: r.sum }).collect())
        .unwrap_or_default();
    sort_kernels(&mut kernels);
    RankFigures { worker: worker.to_string(), rank: p.trace.rank, steps: p.steps.spans.len(), split, operators, kernels }
}

fn sort_operators(ops: &mut [OpFigures]) {
    ops.sort_by(|a, b| {
        b.device_self_us
            .total_cmp(&a.device_self_us)
            .then_with(|| b.host_self_us.total_cmp(&a.host_self_us))
            .then_with(|| a.name.cmp(&b.name))
    });
}

fn sort_kernels(kernels: &mut [KernelFigures]) {
    kernels.sort_by(|a, b| b.total_us.total_cmp(&a.total_us).then_with(|| a.name.cmp(&b.name)));
}

/// Why ranks cannot form one run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("a run needs at least one rank")]
    Empty,
    #[error("{first} and {second} are both {key}: a run holds one trace per rank (open one capture of each worker)")]
    DuplicateRank { key: String, first: String, second: String },
}

/// The run of these ranks: ordered by rank, and combined.
pub fn combine(mut ranks: Vec<RankFigures>) -> Result<TorchRun, RunError> {
    if ranks.is_empty() {
        return Err(RunError::Empty);
    }
    ranks.sort_by(|a, b| match (a.rank, b.rank) {
        (Some(x), Some(y)) => x.cmp(&y).then_with(|| a.worker.cmp(&b.worker)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.worker.cmp(&b.worker),
    });
    for w in ranks.windows(2) {
        if w[0].key() == w[1].key() {
            return Err(RunError::DuplicateRank { key: w[0].key(), first: w[0].worker.clone(), second: w[1].worker.clone() });
        }
    }
    let n = ranks.len() as f64;
    let mut split = StepSplit::default();
    for r in &ranks {
        split.step_us += r.split.step_us;
        split.computation_us += r.split.computation_us;
        split.communication_us += r.split.communication_us;
        split.memcpy_us += r.split.memcpy_us;
        split.other_us += r.split.other_us;
    }
    for f in [&mut split.step_us, &mut split.computation_us, &mut split.communication_us, &mut split.memcpy_us, &mut split.other_us] {
        *f /= n;
    }
    let mut ops: BTreeMap<&str, OpFigures> = BTreeMap::new();
    let mut kernels: BTreeMap<&str, KernelFigures> = BTreeMap::new();
    for r in &ranks {
        for o in &r.operators {
            let sum = ops.entry(&o.name).or_insert_with(|| OpFigures {
                calls: 0,
                device_self_us: 0.0,
                device_total_us: 0.0,
                host_self_us: 0.0,
                host_total_us: 0.0,
                ..o.clone()
            });
            sum.calls += o.calls;
            sum.device_self_us += o.device_self_us;
            sum.device_total_us += o.device_total_us;
            sum.host_self_us += o.host_self_us;
            sum.host_total_us += o.host_total_us;
        }
        for k in &r.kernels {
            let sum = kernels.entry(&k.name).or_insert_with(|| KernelFigures { calls: 0, total_us: 0.0, ..k.clone() });
            sum.calls += k.calls;
            sum.total_us += k.total_us;
        }
    }
    let mut operators: Vec<OpFigures> = ops.into_values().collect();
    sort_operators(&mut operators);
    let mut kernels: Vec<KernelFigures> = kernels.into_values().collect();
    sort_kernels(&mut kernels);
    let steps = ranks.iter().map(|r| r.steps).min().unwrap_or(0);
    Ok(TorchRun { ranks, steps, split, operators, kernels })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(worker: &str, rank: Option<i64>, step_us: f64, kernel_us: f64) -> RankFigures {
        RankFigures {
            worker: worker.into(),
            rank,
            steps: 3,
            split: StepSplit {
                step_us,
                computation_us: kernel_us,
                communication_us: 1.0,
                memcpy_us: 0.5,
                other_us: step_us - kernel_us - 1.5,
            },
            operators: vec![OpFigures {
                name: "aten::mm".into(),
                calls: 2,
                device_self_us: kernel_us,
                device_total_us: kernel_us,
                host_self_us: 3.0,
                host_total_us: 4.0,
            }],
            kernels: vec![KernelFigures { name: "gemm".into(), calls: 2, total_us: kernel_us }],
        }
    }

    #[test]
    fn ranks_are_ordered_averaged_and_summed() {
        let run =
            combine(vec![rank("w1", Some(1), 10.0, 6.0), rank("solo", None, 7.0, 1.0), rank("w0", Some(0), 8.0, 2.0)]).expect("a run");
        let keys: Vec<String> = run.ranks.iter().map(RankFigures::key).collect();
        assert_eq!(keys, ["rank 0", "rank 1", "solo"]);
        assert_eq!(run.split.step_us, (10.0 + 7.0 + 8.0) / 3.0);
        assert_eq!(run.split.computation_us, 3.0);
        assert_eq!((run.operators[0].calls, run.operators[0].device_self_us, run.operators[0].host_total_us), (6, 9.0, 12.0));
        assert_eq!((run.kernels[0].calls, run.kernels[0].total_us), (6, 9.0));
    }

    #[test]
    fn a_rank_twice_is_refused() {
        let e = combine(vec![rank("a", Some(0), 1.0, 0.5), rank("b", Some(0), 1.0, 0.5)]).expect_err("refused");
        assert_eq!(e.to_string(), "a and b are both rank 0: a run holds one trace per rank (open one capture of each worker)");
        assert_eq!(combine(Vec::new()), Err(RunError::Empty));
    }
}
