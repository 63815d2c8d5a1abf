//! The PyTorch Profiler's views of a Kineto trace, as the TensorBoard plugin (torch-tb-profiler
//! 0.4.3) computes them, with its three faults on current traces corrected (see
//! [`crate::decode::kineto`]): the op tree per thread, runtime calls linked to the kernels they
//! launched by correlation id, steps from `ProfilerStep#N`, and the payloads of its Overview,
//! Operator, Kernel and Memory views, each as the plugin's JSON.
//!
//! The order of every walk follows the plugin's (events stably sorted by time, threads in order of
//! first appearance, children sorted by start then longest first), so that sums come out in the
//! same float order and ties sort the same.

pub mod kernels;
pub mod memory;
pub mod operators;
pub mod overview;
mod ranges;
pub mod ranks;
mod tree;

use crate::decode::kineto::{Event, Kind, KinetoTrace};
pub use tree::OpTree;

/// A number as Python holds it: an int that stayed 0 (an empty sum) or a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PyNum {
    pub v: f64,
    pub int: bool,
}

impl PyNum {
    pub fn json(self) -> serde_json::Value {
        if self.int {
            serde_json::Value::from(self.v as i64)
        } else {
            serde_json::Value::from(self.v)
        }
    }

    /// `str(x)` / `'{}'.format(x)`.
    pub fn text(self) -> String {
        if self.int {
            format!("{}", self.v as i64)
        } else {
            py_float(self.v)
        }
    }
}

/// Python's `repr` of a float: the shortest text that reads back the same, with `.0` on integral
/// values and an exponent outside [1e-4, 1e16).
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{x:e}");
        let (m, e) = s.split_once('e').expect("exponent form");
        let e: i32 = e.parse().expect("exponent");
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let s = format!("{x}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// Python's `round(x, n)` on a float: the nearest n-decimal value (half to even on the exact binary
/// value), as the float that text reads back as.
pub fn py_round(x: f64, n: usize) -> f64 {
    format!("{x:.n$}").parse().unwrap_or(x)
}

/// Python's `round(x)`: half to even, an int.
pub fn py_round_int(x: f64) -> i64 {
    x.round_ties_even() as i64
}

/// NumPy's `round(x, n)` (`np.float64.__round__`): `rint(x * 10^n) / 10^n`.
pub fn np_round(x: f64, n: i32) -> f64 {
    let f = 10f64.powi(n);
    (x * f).round_ties_even() / f
}

/// The plugin's step-time categories (`ProfileRole`), in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Kernel = 0,
    Memcpy,
    Memset,
    Communication,
    Runtime,
    DataLoader,
    CpuOp,
    Other,
}

/// What every view is computed from: the trace's events sorted by time, the op tree and the steps.
pub struct TorchProfile<'t> {
    pub trace: &'t KinetoTrace,
    /// Indices into `trace.events`, stably sorted by `ts`, as the plugin sorts them.
    pub order: Vec<usize>,
    pub profiler_start_ts: f64,
    pub tree: OpTree,
    pub steps: Steps,
}

/// Steps and step-time ranges per category (`StepParser`).
pub struct Steps {
    /// (start, end) of each step after the device-side update.
    pub spans: Vec<(f64, f64)>,
    pub names: Vec<String>,
    /// Merged ranges per category, Kernel..CpuOp.
    pub role_ranges: Vec<Vec<ranges::Range>>,
    pub global_start: f64,
    pub global_end: f64,
    pub used_devices: Vec<i64>,
    pub use_dp: bool,
    pub use_ddp: bool,
    pub has_nccl: bool,
}

/// What a [`TorchProfile`] derives from its trace, without the trace: kept beside the trace (a
/// session keeps one per Kineto file) so that every view of the trace reuses it.
pub struct Analysed {
    order: Vec<usize>,
    profiler_start_ts: f64,
    tree: OpTree,
    steps: Steps,
}

impl<'t> TorchProfile<'t> {
    pub fn new(trace: &'t KinetoTrace) -> TorchProfile<'t> {
        let mut order: Vec<usize> = (0..trace.events.len()).collect();
        order.sort_by(|&a, &b| trace.events[a].ts.total_cmp(&trace.events[b].ts));
        let profiler_start_ts = trace.events.iter().map(|e| e.ts).fold(f64::INFINITY, f64::min);
        let tree = OpTree::build(trace, &order);
        let steps = Steps::parse(trace, &order, &tree);
        TorchProfile { trace, order, profiler_start_ts, tree, steps }
    }

    /// The profile of `trace` from its analysis, kept since [`TorchProfile::into_analysed`] (of the
    /// same trace: the analysis holds indices into its events).
    pub fn from_analysed(trace: &'t KinetoTrace, a: Analysed) -> TorchProfile<'t> {
        let Analysed { order, profiler_start_ts, tree, steps } = a;
        TorchProfile { trace, order, profiler_start_ts, tree, steps }
    }

    /// The analysis, to keep beside the trace.
    pub fn into_analysed(self) -> Analysed {
        let TorchProfile { order, profiler_start_ts, tree, steps, .. } = self;
        Analysed { order, profiler_start_ts, tree, steps }
    }

    /// The events in the plugin's order.
    pub fn events(&self) -> impl Iterator<Item = &'t Event> + '_ {
        self.order.iter().map(|&i| &self.trace.events[i])
    }

    pub fn has_kernel(&self) -> bool {
        !self.steps.role_ranges[Role::Kernel as usize].is_empty()
    }

    pub fn has_memcpy_or_memset(&self) -> bool {
        !self.steps.role_ranges[Role::Memcpy as usize].is_empty() || !self.steps.role_ranges[Role::Memset as usize].is_empty()
    }

    pub fn has_runtime(&self) -> bool {
        !self.steps.role_ranges[Role::Runtime as usize].is_empty()
    }

    pub fn has_communication(&self) -> bool {
        !self.steps.role_ranges[Role::Communication as usize].is_empty()
    }
}

fn is_dataloader(name: &str) -> bool {
    name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__") || name.starts_with("enumerate(DataPipe)#")
}

impl Steps {
    fn parse(trace: &KinetoTrace, order: &[usize], tree: &OpTree) -> Steps {
        let mut roles: Vec<Vec<ranges::Range>> = vec![Vec::new(); Role::Other as usize];
        let mut spans = Vec::new();
        let mut names = Vec::new();
        let (mut cpu_min, mut cpu_max) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut global_min, mut global_max) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut profiler_span = None;
        let comm_kernels = tree.comm_external_ids();
        for &i in order {
            let e = &trace.events[i];
            if e.kind == Kind::Memory {
                continue;
            }
            let r = (e.ts, e.ts + e.dur);
            let name = trace.name(e);
            match e.kind {
                Kind::Kernel if e.external_id.is_some_and(|x| comm_kernels.contains(&x)) => roles[Role::Communication as usize].push(r),
                Kind::Kernel => roles[Role::Kernel as usize].push(r),
                Kind::Memcpy => roles[Role::Memcpy as usize].push(r),
                Kind::Memset => roles[Role::Memset as usize].push(r),
                Kind::Runtime => roles[Role::Runtime as usize].push(r),
                Kind::Operator | Kind::Communication if is_dataloader(name) => roles[Role::DataLoader as usize].push(r),
                Kind::ProfilerStep => {
                    spans.push(r);
                    names.push(e.step.to_string());
                }
                Kind::Communication => roles[Role::Communication as usize].push(r),
                Kind::Python | Kind::Operator => roles[Role::CpuOp as usize].push(r),
                _ => {}
            }
            if matches!(e.kind, Kind::Python | Kind::Operator | Kind::ProfilerStep) {
                cpu_min = cpu_min.min(e.ts);
                cpu_max = cpu_max.max(e.ts + e.dur);
            }
            global_min = global_min.min(e.ts);
            global_max = global_max.max(e.ts + e.dur);
            if e.kind == Kind::Trace && name == "PyTorch Profiler (0)" {
                profiler_span = Some(r);
            }
        }
        let (global_start, global_end) = profiler_span.unwrap_or((global_min, global_max));
        if spans.is_empty() {
            spans.push((cpu_min, cpu_max));
            names.push("0".into());
        }
        let role_ranges = roles.into_iter().map(ranges::merge).collect();
        let mut steps = Steps {
            spans,
            names,
            role_ranges,
            global_start,
            global_end,
            used_devices: tree.used_devices.iter().copied().collect(),
            use_dp: false,
            use_ddp: false,
            has_nccl: false,
        };
        for e in &trace.events {
            let name = trace.name(e);
            steps.use_dp |= name == "DataParallel.forward";
            steps.use_ddp |= name == "DistributedDataParallel.forward";
            steps.has_nccl |= e.kind == Kind::Communication && name.starts_with("nccl:");
        }
        steps.update_device_steps(tree);
        steps
    }

    /// `_find_device_steps` and `_update_steps_duration`: each step stretched to the end of the
    /// device work its runtime calls launched, and trailing steps whose kernels were not all captured
    /// dropped.
    fn update_device_steps(&mut self, tree: &OpTree) {
        let mut rts: Vec<usize> = (0..tree.runtimes.len()).filter(|&r| !tree.runtimes[r].dummy).collect();
        rts.sort_by(|&a, &b| tree.runtimes[a].start.total_cmp(&tree.runtimes[b].start));
        let n = self.spans.len();
        let mut steps_device = vec![(f64::INFINITY, f64::NEG_INFINITY); n];
        let mut matched_count = vec![0usize; n];
        let mut matched = vec![false; tree.devices.len()];
        let mut any_matched = false;
        let (mut i_step, mut i_rt) = (0, 0);
        let (mut dmin, mut dmax) = (f64::INFINITY, f64::NEG_INFINITY);
        while i_step < n && i_rt < rts.len() {
            let (s0, s1) = self.spans[i_step];
            let rt = &tree.runtimes[rts[i_rt]];
            if rt.start < s0 {
                i_rt += 1;
            } else if rt.end <= s1 {
                for &d in &rt.device_nodes {
                    let dn = &tree.devices[d];
                    dmin = dmin.min(dn.start);
                    dmax = dmax.max(dn.end);
                    matched[d] = true;
                    any_matched = true;
                    matched_count[i_step] += 1;
                }
                i_rt += 1;
            } else if rt.start < s1 {
                i_rt += 1;
            } else {
                steps_device[i_step] = (dmin, dmax);
                i_step += 1;
                dmin = f64::INFINITY;
                dmax = f64::NEG_INFINITY;
            }
        }
        while i_step < n {
            steps_device[i_step] = (dmin, dmax);
            dmin = f64::INFINITY;
            dmax = f64::NEG_INFINITY;
            i_step += 1;
        }
        if !any_matched {
            return;
        }
        let mut prev_end = self.spans[0].0;
        if steps_device[0].0 != f64::INFINITY {
            for (d, dn) in tree.devices.iter().enumerate() {
                if !matched[d] && dn.end < steps_device[0].0 {
                    prev_end = prev_end.max(dn.end);
                }
            }
        }
        for (span, device) in self.spans.iter_mut().zip(&steps_device) {
            let start = prev_end.max(span.0);
            let mut end = span.1;
            if device.0 == f64::INFINITY {
                end = end.max(start);
            } else {
                end = end.max(device.1);
                if end < start {
                    end = start;
                }
            }
            *span = (start, end);
            prev_end = end;
        }
        if n > 1 {
            if let Some(last) = (0..n).rev().find(|&i| matched_count[i] > 0) {
                let mut keep = last + 1;
                if last > 0 && matched_count[last - 1] as f64 * 0.8 > matched_count[last] as f64 {
                    keep = last;
                }
                self.spans.truncate(keep);
                self.names.truncate(keep);
            }
        }
    }
}
