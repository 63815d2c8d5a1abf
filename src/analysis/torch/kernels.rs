//! The Kernel view: per kernel name (`KernelParser`, over every kernel event), per kernel and the
//! op that launched it (`aggregate_kernels`, over the kernels in the op tree), and the Tensor Cores
//! share.

use super::overview::{gpu_metrics, OCCUPANCY_COMMON};
use super::tree::kernel_uses_tc;
use super::{np_round, py_round, py_round_int, TorchProfile};
use crate::decode::kineto::Kind;
use serde_json::{json, Value};
use std::collections::HashMap;

/// One kernel name's figures.
pub struct KernelStat {
    pub name: String,
    pub tc_used: bool,
    pub count: u64,
    pub sum: f64,
    pub mean: f64,
    pub max: f64,
    pub min: f64,
    pub blocks_per_sm: f64,
    pub occupancy: f64,
}

/// Kernels by name, by total time (longest first), and the share of kernel time on Tensor Cores.
pub struct KernelStats {
    pub rows: Vec<KernelStat>,
    pub tc_used_ratio: f64,
}

impl KernelStats {
    pub fn new(p: &TorchProfile) -> Option<KernelStats> {
        if !p.has_kernel() {
            return None;
        }
        let mut index: HashMap<&str, usize> = HashMap::new();
        // Per name: (duration, blocks per SM, occupancy) of each call.
        type Calls = Vec<(f64, f64, f64)>;
        let mut groups: Vec<(&str, Calls)> = Vec::new();
        for e in p.events().filter(|e| e.kind == Kind::Kernel) {
            let name = p.trace.name(e);
            let k = &p.trace.kernels[e.detail as usize];
            let slot = *index.entry(name).or_insert_with(|| {
                groups.push((name, Vec::new()));
                groups.len() - 1
            });
            groups[slot].1.push((e.dur, k.blocks_per_sm.unwrap_or(0.0), k.occupancy.unwrap_or(0.0)));
        }
        // pandas groups by sorted name, then sorts by total time.
        groups.sort_by(|a, b| a.0.cmp(b.0));
        let weighted = |v: &[(f64, f64, f64)], f: fn(&(f64, f64, f64)) -> f64| {
            let w: f64 = v.iter().map(|x| x.0).sum();
            if w == 0.0 {
                0.0
            } else {
                v.iter().map(|x| f(x) * x.0).sum::<f64>() / w
            }
        };
        let mut rows: Vec<KernelStat> = groups
            .iter()
            .map(|(name, v)| {
                let sum: f64 = v.iter().map(|x| x.0).sum();
                KernelStat {
                    name: name.to_string(),
                    tc_used: kernel_uses_tc(name),
                    count: v.len() as u64,
                    sum,
                    mean: sum / v.len() as f64,
                    max: v.iter().map(|x| x.0).fold(f64::NEG_INFINITY, f64::max),
                    min: v.iter().map(|x| x.0).fold(f64::INFINITY, f64::min),
                    blocks_per_sm: weighted(v, |x| x.1),
                    occupancy: weighted(v, |x| x.2),
                }
            })
            .collect();
        rows.sort_by(|a, b| b.sum.total_cmp(&a.sum));
        let total: f64 = rows.iter().map(|r| r.sum).sum();
        let tc: f64 = rows.iter().filter(|r| r.tc_used).map(|r| r.sum).sum();
        let tc_used_ratio = if total > 0.0 { tc / total } else { 0.0 };
        Some(KernelStats { rows, tc_used_ratio })
    }
}

const TC_KERNEL_TOOLTIP: &str = "Whether this kernel uses Tensor Cores.";
const TC_OP_TOOLTIP: &str = "Whether the operator launched this kernel is eligible to use Tensor Cores.";
const BLOCKS_TOOLTIP: &str = "Blocks Per SM = blocks of this kernel / SM number of this GPU.\nIf this number is less than 1, it indicates the GPU multiprocessors are not fully utilized.\n\"Mean Blocks per SM\" is the weighted average of all calls of this kernel, using each call's execution duration as weight.";
const OCCUPANCY_TABLE: &str = "This \"Mean\" number is the weighted average of all calls' OCC_K of the kernel, using each call's execution duration as weight. It shows fine-grained low-level GPU utilization.";

fn duration_columns(columns: &mut Vec<Value>, has_bps: bool, has_occ: bool) {
    for c in ["Calls", "Total Duration (us)", "Mean Duration (us)", "Max Duration (us)", "Min Duration (us)"] {
        columns.push(json!({"type": "number", "name": c}));
    }
    if has_bps {
        columns.push(json!({"type": "number", "name": "Mean Blocks Per SM", "tooltip": BLOCKS_TOOLTIP}));
    }
    if has_occ {
        columns.push(json!({"type": "number", "name": "Mean Est. Achieved Occupancy (%)", "tooltip": format!("{OCCUPANCY_COMMON}{OCCUPANCY_TABLE}")}));
    }
}

/// The Kernel view's payloads keyed by the plugin's file names: `kernel` (the pie), `kernel_table`,
/// `kernel_op_table`, `kernel_tc_pie`; `None` for a trace without kernels (the plugin has no view).
pub fn kernel_view(p: &TorchProfile) -> Option<Value> {
    let stats = KernelStats::new(p)?;
    let gm = gpu_metrics(p);
    let pie_columns = json!([{"type": "string", "name": "name"}, {"type": "number", "name": "value"}]);
    let pie_rows: Vec<Value> = stats.rows.iter().map(|r| json!([r.name, r.sum])).collect();

    let mut columns = vec![
        json!({"type": "string", "name": "Name"}),
        json!({"type": "string", "name": "Tensor Cores Used", "tooltip": TC_KERNEL_TOOLTIP}),
    ];
    duration_columns(&mut columns, gm.has_blocks_per_sm, gm.has_occupancy);
    let rows: Vec<Value> = stats
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![
                json!(r.name),
                json!(if r.tc_used { "Yes" } else { "No" }),
                json!(r.count),
                json!(py_round_int(r.sum)),
                json!(py_round_int(r.mean)),
                json!(py_round_int(r.max)),
                json!(py_round_int(r.min)),
            ];
            if gm.has_blocks_per_sm {
                row.push(json!(np_round(r.blocks_per_sm, 2)));
            }
            if gm.has_occupancy {
                row.push(json!(np_round(r.occupancy, 2)));
            }
            Value::Array(row)
        })
        .collect();
    let kernel_table = json!({"metadata": {"sort": "Total Duration (us)"}, "data": {"columns": columns, "rows": rows}});

    Some(json!({
        "kernel": {"total": {"columns": pie_columns, "rows": pie_rows}},
        "kernel_table": kernel_table,
        "kernel_op_table": kernel_op_table(p, gm.has_blocks_per_sm, gm.has_occupancy),
        "kernel_tc_pie": {"total": {"columns": pie_columns, "rows": [["Using Tensor Cores", stats.tc_used_ratio], ["Not Using Tensor Cores", 1.0 - stats.tc_used_ratio]]}},
    }))
}

/// `str(list)` of a launch dimension.
fn py_list(v: &Option<Vec<i64>>) -> String {
    match v {
        None => "None".into(),
        Some(v) => format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

fn kernel_op_table(p: &TorchProfile, has_bps: bool, has_occ: bool) -> Value {
    struct Agg {
        name: String,
        op: String,
        grid: String,
        block: String,
        regs: String,
        shared: String,
        tc_used: bool,
        op_tc: bool,
        calls: u64,
        total: f64,
        min: f64,
        max: f64,
        bps: f64,
        occ: f64,
    }
    let (_, kernels) = p.tree.operators_and_kernels(p.trace);
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut aggs: Vec<Agg> = Vec::new();
    for d in kernels {
        let dev = &p.tree.devices[d];
        let k = &p.trace.kernels[dev.kernel.expect("kernels only")];
        let dur = dev.end - dev.start;
        let name = p.trace.names[dev.name as usize].clone();
        let op = match dev.op_name {
            None => "N/A".to_string(),
            Some(u32::MAX) => "CallTreeRoot".to_string(),
            Some(n) => p.trace.names[n as usize].clone(),
        };
        let or0 = |v: Option<i64>| v.filter(|&x| x != 0).map_or("0".to_string(), |x| x.to_string());
        let (grid, block, regs, shared) = (py_list(&k.grid), py_list(&k.block), or0(k.regs_per_thread), or0(k.shared_memory));
        let key = [name.as_str(), &op, &grid, &block, &regs, &shared].join("###");
        let slot = *index.entry(key).or_insert_with(|| {
            aggs.push(Agg {
                name: name.clone(),
                op: op.clone(),
                grid: grid.clone(),
                block: block.clone(),
                regs: regs.clone(),
                shared: shared.clone(),
                tc_used: dev.tc_used,
                op_tc: dev.op_tc_eligible,
                calls: 0,
                total: 0.0,
                min: f64::INFINITY,
                max: 0.0,
                bps: 0.0,
                occ: 0.0,
            });
            aggs.len() - 1
        });
        let a = &mut aggs[slot];
        a.calls += 1;
        a.total += dur;
        a.min = a.min.min(dur);
        a.max = a.max.max(dur);
        a.bps += k.blocks_per_sm.unwrap_or(0.0) * dur;
        a.occ += k.occupancy.unwrap_or(0.0) * dur;
    }
    aggs.sort_by(|a, b| b.total.total_cmp(&a.total));
    let mut columns = vec![
        json!({"type": "string", "name": "Name"}),
        json!({"type": "string", "name": "Operator"}),
        json!({"type": "string", "name": "Grid"}),
        json!({"type": "string", "name": "Block"}),
        json!({"type": "number", "name": "Register Per Thread"}),
        json!({"type": "number", "name": "Shared Memory"}),
        json!({"type": "string", "name": "Kernel Uses Tensor Cores", "tooltip": TC_KERNEL_TOOLTIP}),
        json!({"type": "string", "name": "Op is Tensor Cores eligible", "tooltip": TC_OP_TOOLTIP}),
    ];
    duration_columns(&mut columns, has_bps, has_occ);
    let yes = |b: bool| if b { "Yes" } else { "No" };
    let rows: Vec<Value> = aggs
        .iter()
        .map(|a| {
            let mut row = vec![
                json!(a.name),
                json!(a.op),
                json!(a.grid),
                json!(a.block),
                json!(a.regs),
                json!(a.shared),
                json!(yes(a.tc_used)),
                json!(yes(a.op_tc)),
                json!(a.calls),
                json!(a.total),
                json!(py_round_int(a.total / a.calls as f64)),
                json!(a.max),
                json!(a.min),
            ];
            let avg = |x: f64| if a.total > 0.0 { x / a.total } else { 0.0 };
            if has_bps {
                row.push(json!(py_round(avg(a.bps), 2)));
            }
            if has_occ {
                row.push(json!(py_round(avg(a.occ), 2)));
            }
            Value::Array(row)
        })
        .collect();
    json!({"metadata": {"sort": "Total Duration (us)"}, "data": {"columns": columns, "rows": rows}})
}
