//! The Operator view (`/operation`, `/operation/table`): per op name, or per op name and input
//! shape, calls, host and device time (total and self) and Tensor Cores shares (`aggregate_ops`).

use super::{py_float, py_round, py_round_int, PyNum, TorchProfile};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;

/// How the Operator view groups the ops: the plugin's `group_by` query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpGrouping {
    /// `Operation`: by name.
    #[default]
    Name,
    /// `OperationAndInputShape`: by name and the shapes of the inputs of each call.
    InputShape,
}

/// One group's sums over its calls.
pub struct OpAgg {
    pub name: String,
    /// The inputs' shapes as the plugin writes them (Python's `str` of the `Input Dims` list), when
    /// grouped by them.
    pub input_shape: Option<String>,
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
    aggregate(p, OpGrouping::Name)
}

/// Python's `str` of a JSON value as `json.loads` reads it: the plugin's text of an input shape
/// (`[[32, 3, 224, 224], []]`), which is also its grouping key.
pub fn py_str(v: &Value) -> String {
    let mut out = String::new();
    write_py(v, &mut out);
    out
}

fn write_py(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Number(n) if n.is_f64() => out.push_str(&py_float(n.as_f64().unwrap_or(f64::NAN))),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_py_text(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py_text(k, out);
                out.push_str(": ");
                write_py(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `repr` of a string: single quotes unless the text holds one and no double quote.
fn write_py_text(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Ops grouped by `grouping`, in order of first appearance in the tree walk.
pub fn aggregate(p: &TorchProfile, grouping: OpGrouping) -> Vec<OpAgg> {
    let (ops, _) = p.tree.operators_and_kernels(p.trace);
    // Each distinct `Input Dims` text as the plugin's text, and that text's id: two spellings of
    // one list (spaces) are one group, as they are one Python list.
    let mut shape_ids: HashMap<String, u32> = HashMap::new();
    let shape_of: Vec<u32> = match grouping {
        OpGrouping::Name => Vec::new(),
        OpGrouping::InputShape => p
            .trace
            .input_dims
            .iter()
            .map(|text| {
                let shape = serde_json::from_str::<Value>(text).map_or_else(|_| text.clone(), |v| py_str(&v));
                let next = shape_ids.len() as u32;
                *shape_ids.entry(shape).or_insert(next)
            })
            .collect(),
    };
    let mut shapes: Vec<&str> = vec![""; shape_ids.len()];
    for (text, &id) in &shape_ids {
        shapes[id as usize] = text;
    }
    let mut index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut aggs: Vec<OpAgg> = Vec::new();
    for n in ops {
        let node = &p.tree.nodes[n];
        // A node's dims are 0 (`[]`) when the trace has no table of them.
        let shape = shape_of.get(node.input_dims as usize).copied();
        let slot = *index.entry((node.name, shape.unwrap_or(u32::MAX))).or_insert_with(|| {
            let input_shape = match grouping {
                OpGrouping::Name => None,
                OpGrouping::InputShape => Some(shape.map_or_else(|| "[]".to_string(), |s| shapes[s as usize].to_string())),
            };
            aggs.push(OpAgg {
                name: p.trace.names[node.name as usize].clone(),
                input_shape,
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
/// `operation_table`, grouped as `grouping` asks (the pies name the ops alone either way, as the
/// plugin's do).
pub fn operator_view(p: &TorchProfile, grouping: OpGrouping) -> Value {
    let aggs = aggregate(p, grouping);
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
            if let Some(shape) = &a.input_shape {
                row.insert("input_shape".into(), json!(shape));
            }
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

#[cfg(test)]
mod tests {
    use super::py_str;
    use serde_json::json;

    #[test]
    fn an_input_shape_reads_as_python_writes_it() {
        assert_eq!(py_str(&json!([[32, 3, 224, 224], [], [[1, 2], [3]]])), "[[32, 3, 224, 224], [], [[1, 2], [3]]]");
        assert_eq!(
            py_str(&json!([1.0, 2.5e-7, null, true, "it's", "a\nb", {"k": 1}])),
            "[1.0, 2.5e-07, None, True, \"it's\", 'a\\nb', {'k': 1}]"
        );
    }
}
