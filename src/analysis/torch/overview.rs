//! The Overview (`/overview`): the step-time breakdown per step and on average
//! (`OverallParser`), the GPU summary (`GPUMetricsParser`, `TensorCoresParser`), the environment and
//! the recommendations (`RunProfileData.analyze`).

use super::kernels::KernelStats;
use super::ranges::{self, Range};
use super::{py_float, py_round, py_round_int, PyNum, Role, TorchProfile};
use crate::decode::kineto::Kind;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const CATEGORIES: [(Role, &str); 8] = [
    (Role::Kernel, "Kernel"),
    (Role::Memcpy, "Memcpy"),
    (Role::Memset, "Memset"),
    (Role::Communication, "Communication"),
    (Role::Runtime, "Runtime"),
    (Role::DataLoader, "DataLoader"),
    (Role::CpuOp, "CPU Exec"),
    (Role::Other, "Other"),
];

/// Each step's time per category (indexed by [`Role`]) and its total, and their averages.
pub struct Breakdown {
    pub steps: Vec<(Vec<PyNum>, f64)>,
    pub average: Vec<f64>,
    pub average_total: f64,
}

/// `OverallParser.aggregate`: the categories claim the steps' time in order, each what the ones
/// before left; `Other` is what none claimed.
pub fn breakdown(p: &TorchProfile) -> Breakdown {
    let mut cost_ranges: Vec<Vec<Range>> = Vec::new();
    let mut slots: Vec<Range> = Vec::new();
    for role in &p.steps.role_ranges {
        let range = if !slots.is_empty() {
            ranges::intersection(&slots, role)
        } else {
            slots = ranges::merge(p.steps.spans.clone());
            role.clone()
        };
        slots = ranges::subtract(&slots, &range);
        cost_ranges.push(range);
    }
    cost_ranges.push(slots);
    let mut steps = Vec::new();
    let mut average = vec![0.0; cost_ranges.len()];
    let mut average_total = 0.0;
    for &step in &p.steps.spans {
        let costs: Vec<PyNum> = cost_ranges.iter().map(|r| ranges::sum(&ranges::intersection(&[step], r))).collect();
        let total = step.1 - step.0;
        for (a, c) in average.iter_mut().zip(&costs) {
            *a += c.v;
        }
        average_total += total;
        steps.push((costs, total));
    }
    let n = p.steps.spans.len() as f64;
    for a in &mut average {
        *a /= n;
    }
    Breakdown { steps, average, average_total: average_total / n }
}

/// GPU utilisation, estimated SM efficiency and achieved occupancy per GPU (`GPUMetricsParser`).
pub struct GpuMetrics {
    pub utilization: BTreeMap<i64, f64>,
    pub sm_efficiency: BTreeMap<i64, f64>,
    pub occupancy: BTreeMap<i64, f64>,
    pub has_blocks_per_sm: bool,
    pub has_occupancy: bool,
}

pub fn gpu_metrics(p: &TorchProfile) -> GpuMetrics {
    let mut kernel_ranges: BTreeMap<i64, Vec<Range>> = BTreeMap::new();
    let mut bps: BTreeMap<i64, Vec<(f64, f64, f64)>> = BTreeMap::new();
    let mut occ: BTreeMap<i64, Vec<(f64, f64, f64)>> = BTreeMap::new();
    for e in p.events().filter(|e| e.kind == Kind::Kernel) {
        let k = &p.trace.kernels[e.detail as usize];
        let Some(gpu) = k.device else { continue };
        let r = (e.ts, e.ts + e.dur);
        kernel_ranges.entry(gpu).or_default().push(r);
        if let Some(b) = k.blocks_per_sm.filter(|&b| b > 0.0) {
            bps.entry(gpu).or_default().push((r.0, r.1, b));
        }
        if let Some(o) = k.occupancy.filter(|&o| o >= 0.0) {
            occ.entry(gpu).or_default().push((r.0, r.1, o));
        }
    }
    let steps_start = p.steps.spans[0].0;
    let steps_end = p.steps.spans[p.steps.spans.len() - 1].1;
    let total = steps_end - steps_start;
    let mut m = GpuMetrics {
        utilization: BTreeMap::new(),
        sm_efficiency: BTreeMap::new(),
        occupancy: BTreeMap::new(),
        has_blocks_per_sm: bps.values().any(|v| !v.is_empty()),
        has_occupancy: occ.values().any(|v| !v.is_empty()),
    };
    for (&gpu, rs) in &kernel_ranges {
        let merged = ranges::merge(rs.clone());
        let busy = ranges::sum(&ranges::intersection(&merged, &[(steps_start, steps_end)]));
        m.utilization.insert(gpu, busy.v / total);
        let eff = ranges::merge_with_value(bps.get(&gpu).map_or(&[][..], |v| v));
        let eff = ranges::intersection_with_value(&eff, &[(steps_start, steps_end)]);
        if !eff.is_empty() {
            let mut weighted = 0.0;
            for r in &eff {
                weighted += r.2 * (r.1 - r.0);
            }
            m.sm_efficiency.insert(gpu, weighted / total);
        }
        let (mut t, mut o) = (0.0, 0.0);
        for r in occ.get(&gpu).map_or(&[][..], |v| v) {
            let (lo, hi) = (r.0.max(steps_start), r.1.min(steps_end));
            if lo < hi {
                o += r.2 * (hi - lo);
                t += hi - lo;
            }
        }
        if t > 0.0 {
            m.occupancy.insert(gpu, o / t);
        }
    }
    m
}

/// Kernel time on Tensor Cores per GPU, over the kernels operators launched (`_calculate_tc_ratio`),
/// and the share of kernel time launched by the innermost Tensor-Cores-eligible operators.
fn tensor_cores(p: &TorchProfile, gpus: &[i64]) -> (BTreeMap<i64, f64>, f64) {
    let (ops, _) = p.tree.operators_and_kernels(p.trace);
    let mut tc = BTreeMap::<i64, f64>::new();
    let mut total = BTreeMap::<i64, f64>::new();
    let mut has_kernel = false;
    let self_kernels = |n: usize, f: &mut dyn FnMut(usize)| {
        for &r in &p.tree.nodes[n].runtimes {
            for &d in &p.tree.runtimes[r].device_nodes {
                if p.tree.devices[d].kind == Kind::Kernel {
                    f(d);
                }
            }
        }
    };
    for &op in &ops {
        self_kernels(op, &mut |d| {
            has_kernel = true;
            let dev = &p.tree.devices[d];
            let gpu = dev.kernel.and_then(|k| p.trace.kernels[k].device).unwrap_or(0);
            let dur = dev.end - dev.start;
            if dev.tc_used {
                *tc.entry(gpu).or_default() += dur;
            }
            *total.entry(gpu).or_default() += dur;
        });
    }
    let mut ratio = BTreeMap::new();
    if has_kernel {
        for &g in gpus {
            let t = total.get(&g).copied().unwrap_or(0.0);
            ratio.insert(g, if t > 0.0 { tc.get(&g).copied().unwrap_or(0.0) / t } else { 0.0 });
        }
    }
    // Innermost eligible ops: eligible ones with no eligible op below them.
    let mut bottom = Vec::new();
    for &(_, root) in &p.tree.roots {
        bottom_eligible(p, root, &mut bottom);
    }
    let sum = |ns: &[usize]| {
        let mut s = 0.0;
        for &n in ns {
            self_kernels(n, &mut |d| s += p.tree.devices[d].end - p.tree.devices[d].start);
        }
        s
    };
    let all = sum(&ops);
    let eligible_ratio = if all > 0.0 { sum(&bottom) / all } else { 0.0 };
    (ratio, eligible_ratio)
}

/// Pushes the bottom Tensor-Cores-eligible ops under `n`; returns whether any was found.
fn bottom_eligible(p: &TorchProfile, n: usize, out: &mut Vec<usize>) -> bool {
    let before = out.len();
    for &c in &p.tree.nodes[n].children {
        bottom_eligible(p, c, out);
    }
    if p.tree.nodes[n].tc_eligible && out.len() == before {
        out.push(n);
    }
    out.len() > before
}

fn href(text: &str, url: &str) -> String {
    format!("<a href=\"{url}\" target=\"_blank\">{text}</a>")
}

const GPU_TOOLTIP_UTIL: &str = "GPU Utilization:\nGPU busy time / All steps time. The higher, the better. GPU busy time is the time during which there is at least one GPU kernel running on it. All steps time is the total time of all profiler steps(or called as iterations).\n";
const GPU_TOOLTIP_SM: &str = "Est. SM Efficiency:\nEstimated Stream Multiprocessor Efficiency. The higher, the better. This metric of a kernel, SM_Eff_K = min(blocks of this kernel / SM number of this GPU, 100%). This overall number is the sum of all kernels' SM_Eff_K weighted by kernel's execution duration, divided by all steps time.\n";
pub(super) const OCCUPANCY_COMMON: &str = "Est. Achieved Occupancy:\nFor most cases such as memory bandwidth bounded kernels, the higher the better. Occupancy is the ratio of active warps on an SM to the maximum number of active warps supported by the SM. The theoretical occupancy of a kernel is upper limit occupancy of this kernel, limited by multiple factors such as kernel shape, kernel used resource, and the GPU compute capability.\nEst. Achieved Occupancy of a kernel, OCC_K = min(threads of the kernel / SM number / max threads per SM, theoretical occupancy of the kernel). ";
const OCCUPANCY_OVERVIEW: &str = "This overall number is the weighted average of all kernels' OCC_K using kernel's execution duration as weight. It shows fine-grained low-level GPU utilization.\n";
const TC_TOOLTIP: &str = "Kernel using Tensor Cores:\nTotal GPU Time for Tensor Core kernels / Total GPU Time for all kernels.\n";

/// The overview's JSON, as `/overview` serves it for a run of one worker.
pub fn overview(p: &TorchProfile, kernel_stats: Option<&KernelStats>, peak_memory: &[((i64, i64), f64)]) -> Value {
    let b = breakdown(p);
    let show_gpu = p.has_runtime() || p.has_kernel() || p.has_memcpy_or_memset();
    let comm = p.has_communication();
    let shown = |role: Role| match role {
        Role::Kernel | Role::Memcpy | Role::Memset | Role::Runtime => show_gpu,
        Role::Communication => comm,
        _ => true,
    };
    let tooltip_col = json!({"type": "string", "role": "tooltip", "p": {"html": "true"}});
    let mut columns = vec![json!({"type": "string", "name": "Step"})];
    for (role, name) in CATEGORIES.iter().filter(|(r, _)| shown(*r)) {
        let _ = role;
        columns.push(json!({"type": "number", "name": name}));
        columns.push(tooltip_col.clone());
    }
    let mut rows = Vec::new();
    for ((costs, total), step_name) in b.steps.iter().zip(&p.steps.names) {
        let mut row = vec![json!(step_name)];
        for (role, name) in CATEGORIES.iter().filter(|(r, _)| shown(*r)) {
            let c = costs[*role as usize];
            let pct = py_round(100.0 * c.v / total, 2);
            row.push(c.json());
            row.push(json!(format!(
                "<div class=\"visualization-tooltip\" style=\"white-space: nowrap;\">Step {step_name}<br>Total: {}us<br><b>{name}: {}us</b><br>Percentage: {}%</div>",
                py_float(*total),
                c.text(),
                py_float(pct)
            )));
        }
        rows.push(Value::Array(row));
    }
    let children: Vec<Value> = CATEGORIES
        .iter()
        .filter(|(r, _)| shown(*r))
        .map(|(role, name)| {
            let c = b.average[*role as usize];
            json!({"name": name, "description": "", "value": py_round_int(c), "extra": py_round(100.0 * c / b.average_total, 2)})
        })
        .collect();
    let gm = gpu_metrics(p);
    let gpus: Vec<i64> = gm.utilization.keys().copied().collect();
    let (tc_ratio, tc_eligible_ratio) = tensor_cores(p, &gpus);

    // Recommendations, in the plugin's order.
    let mut recs: Vec<String> = Vec::new();
    let avg = |r: Role| b.average[r as usize] / b.average_total;
    let dl = avg(Role::DataLoader);
    if dl > 0.05 {
        recs.push(format!("This run has high time cost on input data loading. {:.1}% of the step time is in DataLoader. You could try to set num_workers on DataLoader's construction and {}.", dl * 100.0, href("enable multi-processes on data loading", "https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading")));
    }
    if p.steps.use_dp && p.steps.used_devices.len() > 1 {
        recs.push(format!(
            "It is recommended to {} to do multi-GPU training.",
            href(
                "use DistributedDataParallel instead of DataParallel",
                "https://pytorch.org/docs/stable/notes/cuda.html#cuda-nn-ddp-instead"
            )
        ));
    }
    let props = p.trace.device_props.as_deref().unwrap_or(&[]);
    if p.steps.use_ddp && !p.steps.has_nccl && props.iter().any(|d| matches!((d.compute_major, d.compute_minor), (Some(a), Some(b)) if format!("{a}.{b}").parse::<f64>().is_ok_and(|c| c >= 3.5))) {
        recs.push("Nccl backend is currently the fastest and highly recommended backend when using DDP for training.".into());
    }
    let cm = avg(Role::Communication);
    if cm > 0.1 {
        recs.push(format!("This run has high time cost on communication. {:.1}% of the step time is in communication. You could try {} or {} or increase the batch size. Note: Gradient accumulation will increase global effective batch size, which may hurt model convergence and accuracy. For such case, you may want to evaluate {}.",
            cm * 100.0,
            // The plugin's URL here is a one-element tuple, which Python formats with its parentheses.
            href("Gradient Compression", "('https://pytorch.org/docs/stable/ddp_comm_hooks.html',)"),
            href("Gradient Accumulation", "https://towardsdatascience.com/what-is-gradient-accumulation-in-deep-learning-ec034122cfa"),
            href("LAMB optimizer", "https://nvidia.github.io/apex/optimizers.html#apex.optimizers.FusedLAMB")));
    }
    let low: Vec<i64> = gm.utilization.iter().filter(|(_, &u)| u < 0.5).map(|(&g, _)| g).collect();
    if !low.is_empty() {
        let mut list = low[0].to_string();
        for (i, g) in low.iter().enumerate().skip(1) {
            list += &if i == low.len() - 1 { format!("and {g}") } else { format!(", {g}") };
        }
        let has = if list.len() == 1 { "has" } else { "have" };
        recs.push(format!("GPU {list} {has} low utilization. You could try to increase batch size to improve. Note: Increasing batch size may affect the speed and stability of model convergence."));
    }
    if let Some(first) = props.first() {
        let tc_used = kernel_stats.map(|k| k.tc_used_ratio);
        if first.compute_major.is_some_and(|m| m >= 7) && tc_used == Some(0.0) && tc_eligible_ratio > 0.0 {
            recs.push(format!(
                "Kernels with {}% time are launched by Tensor Cores eligible operators. You could enable {} to speedup by using FP16.",
                py_round_int(tc_eligible_ratio * 100.0),
                href("Automatic Mixed Precision", "https://pytorch.org/docs/stable/amp.html")
            ));
        }
        for &((dev_type, dev_id), peak) in peak_memory {
            if dev_type == -1 {
                continue;
            }
            let total = usize::try_from(dev_id).ok().and_then(|i| props.get(i)).and_then(|d| d.total_global_mem);
            if let Some(total) = total.filter(|&t| peak > t * 0.9) {
                recs.push(format!("Device memory usage is at the limit of device memory capacity ({:.1}% of {:.1}GB on GPU{dev_id}). To get better value of your GPU or to use larger batch size for training, please refer to {} or {}.",
                    peak / total * 100.0, total / 1024.0 / 1024.0 / 1024.0,
                    href("Gradient Checkpoint", "https://pytorch.org/docs/stable/checkpoint.html"),
                    href("Automatic Mixed Precision", "https://pytorch.org/docs/stable/amp.html")));
                break;
            }
        }
    }
    let html = if recs.is_empty() { "<li>N/A</li>".to_string() } else { recs.iter().map(|r| format!("<li>{r}</li>")).collect() };

    let mut out = json!({
        "steps": {"columns": columns, "rows": rows},
        "performance": [{"name": "Average Step Time", "description": "", "value": py_round_int(b.average_total), "extra": 100, "children": children}],
        "recommendations": format!("<ul>{html}</ul>"),
        "environments": [
            {"title": "Number of Worker(s)", "value": "1"},
            {"title": "Device Type", "value": if show_gpu { "GPU" } else { "CPU" }},
        ],
    });
    if !gpus.is_empty() {
        out["gpu_metrics"] = gpu_summary(p, &gm, &tc_ratio);
    }
    out
}

fn gpu_summary(p: &TorchProfile, gm: &GpuMetrics, tc_ratio: &BTreeMap<i64, f64>) -> Value {
    let mut data = Vec::new();
    let (mut has_sm, mut has_occ, mut has_tc) = (false, false, false);
    for (i, (&gpu, &util)) in gm.utilization.iter().enumerate() {
        if i > 0 {
            data.push(json!({"title": "<hr/>", "value": ""}));
        }
        data.push(json!({"title": format!("GPU {gpu}:"), "value": ""}));
        let props = p.trace.device_props.as_deref().unwrap_or(&[]);
        if let Some(d) = usize::try_from(gpu).ok().and_then(|g| props.get(g)) {
            if let Some(n) = &d.name {
                data.push(json!({"title": "Name", "value": n}));
            }
            if let Some(m) = d.total_global_mem {
                data.push(json!({"title": "Memory", "value": format!("{} GB", py_float(py_round(m / 1024.0 / 1024.0 / 1024.0, 2)))}));
            }
            if let (Some(a), Some(b)) = (d.compute_major, d.compute_minor) {
                data.push(json!({"title": "Compute Capability", "value": format!("{a}.{b}")}));
            }
        }
        data.push(json!({"title": "GPU Utilization", "value": format!("{} %", py_float(py_round(util * 100.0, 2)))}));
        if let Some(&s) = gm.sm_efficiency.get(&gpu) {
            data.push(json!({"title": "Est. SM Efficiency", "value": format!("{} %", py_float(py_round(s * 100.0, 2)))}));
            has_sm = true;
        }
        if let Some(&o) = gm.occupancy.get(&gpu) {
            data.push(json!({"title": "Est. Achieved Occupancy", "value": format!("{} %", py_float(py_round(o, 2)))}));
            has_occ = true;
        }
        if let Some(&t) = tc_ratio.get(&gpu) {
            data.push(json!({"title": "Kernel Time using Tensor Cores", "value": format!("{} %", py_float(py_round(t * 100.0, 2)))}));
            has_tc = true;
        }
    }
    let mut tooltip = format!("The GPU usage metrics:\n\n{GPU_TOOLTIP_UTIL}");
    if has_sm {
        tooltip += &format!("\n{GPU_TOOLTIP_SM}");
    }
    if has_occ {
        tooltip += &format!("\n{OCCUPANCY_COMMON}{OCCUPANCY_OVERVIEW}");
    }
    if has_tc {
        tooltip += &format!("\n{TC_TOOLTIP}");
    }
    json!({"title": "GPU Summary", "data": data, "tooltip": tooltip})
}
