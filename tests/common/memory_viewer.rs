//! The Memory Viewer compared with XProf's JSON, as `tests/memory_viewer.rs` and
//! `tests/nvidia_in_repo.rs` both do.
//!
//! XProf's by-size order is an unstable sort, so equal-size buffers are compared as sets; every other
//! value must be equal as parsed JSON (numbers within 1e-9 relative).

use serde_json::Value;

const REL_TOLERANCE: f64 = 1e-9;

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= REL_TOLERANCE * a.abs().max(b.abs())
}

/// Differences between `ours` and `theirs` (XProf), as readable lines; floats within tolerance.
fn diff(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => {
            if !close(a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN)) {
                out.push(format!("{path}: ours {a}, XProf {b}"));
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            for (k, bv) in b {
                match a.get(k) {
                    Some(av) => diff(&format!("{path}.{k}"), av, bv, out),
                    None => out.push(format!("{path}.{k}: missing in ours (XProf {bv})")),
                }
            }
            for k in a.keys().filter(|k| !b.contains_key(*k) && *k != "tidemark") {
                out.push(format!("{path}.{k}: only in ours ({})", a[k]));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                out.push(format!("{path}: {} items in ours, {} in XProf", a.len(), b.len()));
            }
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), av, bv, out);
            }
        }
        _ if ours == theirs => {}
        _ => out.push(format!("{path}: ours {ours}, XProf {theirs}")),
    }
}

fn size_of(o: &Value) -> f64 {
    o["logicalBufferSizeMib"].as_f64().unwrap_or(0.0)
}

/// XProf's by-size order is an unstable sort: among equal sizes any order is right. Checks the size
/// sequence, that equal-size runs hold the same buffers, and that our index maps are consistent; then
/// puts XProf's tie order into ours so the plain diff can compare the rest.
fn reconcile_by_size(ours: &mut Value, theirs: &Value, out: &mut Vec<String>) {
    let (Some(ob), Some(tb)) = (ours["maxHeapBySize"].as_array().cloned(), theirs["maxHeapBySize"].as_array().cloned()) else {
        return;
    };
    if ob.len() != tb.len() {
        return; // reported by the plain diff
    }
    let mut start = 0;
    while start < tb.len() {
        let mut end = start + 1;
        while end < tb.len() && size_of(&tb[end]) == size_of(&tb[start]) {
            end += 1;
        }
        for theirs_object in &tb[start..end] {
            let same = |o: &&Value| {
                let mut d = Vec::new();
                diff("", o, theirs_object, &mut d);
                d.is_empty()
            };
            if !ob[start..end].iter().any(|o| same(&o)) {
                out.push(format!("maxHeapBySize[{start}..{end}]: XProf's {theirs_object} is not among ours of that size"));
            }
        }
        start = end;
    }
    let max_heap = ours["maxHeap"].as_array().cloned().unwrap_or_default();
    let by_size_to_max: Vec<usize> =
        ours["bySizeToMaxHeap"].as_array().map(|v| v.iter().filter_map(Value::as_u64).map(|i| i as usize).collect()).unwrap_or_default();
    let max_to_by_size: Vec<usize> =
        ours["maxHeapToBySize"].as_array().map(|v| v.iter().filter_map(Value::as_u64).map(|i| i as usize).collect()).unwrap_or_default();
    for (rank, &i) in by_size_to_max.iter().enumerate() {
        if max_heap.get(i) != ob.get(rank) || max_to_by_size.get(i) != Some(&rank) {
            out.push(format!("our by-size index maps disagree at rank {rank}"));
        }
    }
    for k in ["maxHeapBySize", "maxHeapToBySize", "bySizeToMaxHeap"] {
        ours[k] = theirs[k].clone();
    }
}

/// Compares our JSON for one module with XProf's, returning the differences.
pub fn compare(mut ours: Value, theirs: &Value) -> Vec<String> {
    let mut out = Vec::new();
    reconcile_by_size(&mut ours, theirs, &mut out);
    diff("", &ours, theirs, &mut out);
    out
}
