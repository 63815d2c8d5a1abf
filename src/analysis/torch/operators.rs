//! The Operator view grouped by operation (`/operation`, `/operation/table`): per op name, calls,
//! host and device time (total and self) and Tensor Cores shares (`aggregate_ops`).

use super::{py_round, py_round_int, PyNum, TorchProfile};
use serde_json::{json, Value};
use std::collections::HashMap;

/// One op name's sums over its calls.
pub struct OpAgg {
    pub name: String,
    pub calls: u64,
    pub host_duration: f64,
    pub device_duration: PyNum,
    pub self_host_duration: f64,
    pub self_device_duration: PyNum,
    pub tc_eligible: bool,
    pub tc_self_duration: f64,
    pub tc_total_duration: f64,
    pub has_call_stack: bool,
}

/// Ops grouped by name, in order of first appearance in the tree walk.
pub fn by_name(p: &TorchProfile) -> Vec<OpAgg> {
    let (ops, _) = p.tree.operators_and_kernels(p.trace);
    let mut index: HashMap<u32, usize> = HashMap::new();
    let mut aggs: Vec<OpAgg> = Vec::new();
    for n in ops {
        let node = &p.tree.nodes[n];
        let slot = *index.entry(node.name).or_insert_with(|| {
            aggs.push(OpAgg {
                name: p.trace.names[node.name as usize].clone(),
                calls: 0,
                host_duration: 0.0,
                device_duration: PyNum { v: 0.0, int: true },
                self_host_duration: 0.0,
                self_device_duration: PyNum { v: 0.0, int: true },
                tc_eligible: node.tc_eligible,
                tc_self_duration: 0.0,
                tc_total_duration: 0.0,
                has_call_stack: false,
            });
            aggs.len() - 1
        });
        let a = &mut aggs[slot];
        a.calls += 1;
        a.host_duration += node.end - node.start;
        a.device_duration.v += node.device_duration;
        a.device_duration.int &= node.device_int;
        a.self_host_duration += node.self_host_duration;
        a.self_device_duration.v += node.self_device_duration;
        a.self_device_duration.int &= node.self_device_int;
        a.tc_self_duration += node.tc_self_duration;
        a.tc_total_duration += node.tc_total_duration;
        a.has_call_stack |= node.has_call_stack;
    }
    aggs
}

fn pie(title: &str, mut rows: Vec<(String, PyNum)>) -> Value {
    if rows.is_empty() {
        return Value::Null;
    }
    rows.sort_by(|a, b| b.1.v.total_cmp(&a.1.v));
    let rows: Vec<Value> = rows.into_iter().map(|(n, v)| json!([n, v.json()])).collect();
    json!({"title": title, "columns": [{"type": "string", "name": "name"}, {"type": "number", "name": "value"}], "rows": rows})
}

/// The Operator view's payloads keyed by the plugin's file names: `operation` (the four pies) and
/// `operation_table`.
pub fn operator_view(p: &TorchProfile) -> Value {
    let aggs = by_name(p);
    let pick = |f: &dyn Fn(&OpAgg) -> PyNum| -> Vec<(String, PyNum)> {
        aggs.iter().map(|a| (a.name.clone(), f(a))).filter(|(_, v)| v.v > 0.0).collect()
    };
    let float = |v: f64| PyNum { v, int: false };
    let operation = json!({
        "device_total_time": pie("Device Total Time (us)", pick(&|a| a.device_duration)),
        "device_self_time": pie("Device Self Time (us)", pick(&|a| a.self_device_duration)),
        "host_total_time": pie("Host Total Time (us)", pick(&|a| float(a.host_duration))),
        "host_self_time": pie("Host Self Time (us)", pick(&|a| float(a.self_host_duration))),
    });
    let show_gpu = p.has_kernel() || p.has_memcpy_or_memset();
    let mut sorted: Vec<&OpAgg> = aggs.iter().collect();
    sorted.sort_by(|a, b| {
        let key = |x: &OpAgg| if show_gpu { x.self_device_duration.v } else { x.self_host_duration };
        key(b).total_cmp(&key(a))
    });
    let ratio = |num: f64, den: PyNum| {
        if den.v > 0.0 {
            PyNum { v: py_round(100.0 * num / den.v, 2), int: false }
        } else {
            PyNum { v: 0.0, int: true }
        }
    };
    let data: Vec<Value> = sorted
        .iter()
        .map(|a| {
            let mut row = serde_json::Map::new();
            row.insert("name".into(), json!(a.name));
            row.insert("calls".into(), json!(a.calls));
            if show_gpu {
                row.insert("device_self_duration".into(), json!(py_round_int(a.self_device_duration.v)));
                row.insert("device_total_duration".into(), json!(py_round_int(a.device_duration.v)));
            }
            row.insert("host_self_duration".into(), json!(py_round_int(a.self_host_duration)));
            row.insert("host_total_duration".into(), json!(py_round_int(a.host_duration)));
            row.insert("tc_eligible".into(), json!(if a.tc_eligible { "Yes" } else { "No" }));
            row.insert("tc_self_ratio".into(), ratio(a.tc_self_duration, a.self_device_duration).json());
            row.insert("tc_total_ratio".into(), ratio(a.tc_total_duration, a.device_duration).json());
            row.insert("has_call_stack".into(), json!(a.has_call_stack));
            Value::Object(row)
        })
        .collect();
    let table = json!({
        "metadata": {
            "sort": if show_gpu { "device_self_duration" } else { "host_self_duration" },
            "tooltips": {
                "tc_eligible": "Whether this operator is eligible to use Tensor Cores.",
                "tc_self_ratio": "Time of self-kernels with Tensor Cores / Time of self-kernels.",
                "tc_total_ratio": "Time of kernels with Tensor Cores / Time of kernels.",
            },
        },
        "data": data,
    });
    json!({"operation": operation, "operation_table": table})
}
