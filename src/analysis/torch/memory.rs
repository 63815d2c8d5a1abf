//! The Memory view (`/memory`, `/memory_curve`, `/memory_events`): each `[memory]` event attributed
//! to the innermost op running on its thread when it happened (`MemoryParser.find_memory_nodes`),
//! sizes per op, the allocated and reserved curves per device, and allocations paired with their
//! frees by address.

use super::{py_round, TorchProfile};
use crate::decode::kineto::Kind;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};

/// One allocator event, with the op it is attributed to.
struct Record {
    tid: Option<i64>,
    ts: f64,
    device_type: Option<i64>,
    device_id: Option<i64>,
    addr: Option<u64>,
    bytes: i64,
    total_allocated: f64,
    total_reserved: f64,
    op_name: Option<String>,
    parent_op_name: Option<String>,
}

impl Record {
    fn device_name(&self) -> Option<String> {
        match self.device_type {
            Some(0) => Some("CPU".into()),
            Some(1) => Some(format!("GPU{}", self.device_id.map_or("None".to_string(), |d| d.to_string()))),
            _ => None,
        }
    }
}

/// The plugin's `DisplayRounder(ndigits=2)`: two decimals, or the first significant one below 0.01.
fn display_round(v: f64) -> f64 {
    let a = v.abs();
    if a >= 0.01 || v == 0.0 {
        py_round(v, 2)
    } else {
        py_round(v, a.log10().floor().abs() as usize)
    }
}

/// Memory records and the ops they belong to.
pub struct MemorySnapshot {
    records: Vec<Record>,
    /// Records per op node (indices into `records`).
    op_records: HashMap<usize, Vec<usize>>,
    processed: HashMap<usize, u32>,
}

impl MemorySnapshot {
    /// `None` for a trace without `[memory]` events (the plugin has no Memory view).
    pub fn new(p: &TorchProfile) -> Option<MemorySnapshot> {
        let mut records: Vec<Record> = p
            .events()
            .filter(|e| e.kind == Kind::Memory)
            .map(|e| {
                let m = &p.trace.memory[e.detail as usize];
                Record {
                    tid: e.tid,
                    ts: e.ts,
                    device_type: m.device_type,
                    device_id: m.device_id,
                    addr: m.addr,
                    bytes: m.bytes,
                    total_allocated: m.total_allocated,
                    total_reserved: m.total_reserved,
                    op_name: None,
                    parent_op_name: None,
                }
            })
            .collect();
        if records.is_empty() {
            return None;
        }
        let tree = &p.tree;
        let mut by_tid: Vec<(Option<i64>, Vec<usize>)> = Vec::new();
        let mut tid_slot: HashMap<Option<i64>, usize> = HashMap::new();
        for (i, r) in records.iter().enumerate() {
            let slot = *tid_slot.entry(r.tid).or_insert_with(|| {
                by_tid.push((r.tid, Vec::new()));
                by_tid.len() - 1
            });
            by_tid[slot].1.push(i);
        }
        let mut op_records: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut processed: HashMap<usize, u32> = HashMap::new();
        for (tid, recs) in &by_tid {
            let mut stack: Vec<(usize, usize)> = Vec::new();
            let mut current = tid.and_then(|t| tree.roots.iter().find(|(rt, _)| *rt == t)).map(|&(_, root)| root);
            let mut child_index = 0;
            if let Some(c) = current {
                *processed.entry(c).or_default() += 1;
            }
            let mut k = 0;
            while k < recs.len() {
                let ri = recs[k];
                let ts = records[ri].ts;
                let Some(cur) = current.filter(|&c| !tree.nodes[c].start.is_nan() && !tree.nodes[c].end.is_nan()) else {
                    k += 1;
                    continue;
                };
                let node = &tree.nodes[cur];
                if ts < node.start {
                    k += 1;
                    continue;
                } else if ts >= node.end {
                    match stack.pop() {
                        Some((parent, idx)) => {
                            current = Some(parent);
                            child_index = idx + 1;
                        }
                        None => current = None,
                    }
                    continue;
                }
                let mut cur = cur;
                while child_index < tree.nodes[cur].children.len() {
                    let c = tree.nodes[cur].children[child_index];
                    if ts < tree.nodes[c].start {
                        break;
                    } else if ts >= tree.nodes[c].end {
                        child_index += 1;
                    } else {
                        *processed.entry(c).or_default() += 1;
                        stack.push((cur, child_index));
                        cur = c;
                        child_index = 0;
                    }
                }
                current = Some(cur);
                if tree.is_operator(cur, p.trace) {
                    op_records.entry(cur).or_default().push(ri);
                    if records[ri].bytes > 0 {
                        records[ri].op_name = Some(tree.name(cur, p.trace).to_string());
                        if let Some(&(parent, _)) = stack.last() {
                            records[ri].parent_op_name = Some(tree.name(parent, p.trace).to_string());
                        }
                    }
                }
                k += 1;
            }
        }
        // Frees take the op of the allocation at their address.
        let mut alloc: HashMap<u64, usize> = HashMap::new();
        for i in 0..records.len() {
            let Some(addr) = records[i].addr else { continue };
            if records[i].bytes > 0 {
                alloc.insert(addr, i);
            } else if let Some(a) = alloc.remove(&addr) {
                records[i].op_name = records[a].op_name.clone();
                records[i].parent_op_name = records[a].parent_op_name.clone();
            }
        }
        Some(MemorySnapshot { records, op_records, processed })
    }

    /// The highest `Total Allocated` per (device type, device id).
    pub fn peaks(&self) -> Vec<((i64, i64), f64)> {
        let mut peaks: Vec<((i64, i64), f64)> = Vec::new();
        for r in &self.records {
            if r.total_allocated.is_nan() {
                continue;
            }
            let key = (r.device_type.unwrap_or(-1), r.device_id.unwrap_or(-1));
            match peaks.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => *v = v.max(r.total_allocated),
                None => peaks.push((key, r.total_allocated.max(0.0))),
            }
        }
        peaks
    }

    /// `/memory`: per device, per op name: calls, size increase and allocations, with and without
    /// the ops below (KB).
    fn stats(&self, p: &TorchProfile) -> Value {
        let tree = &p.tree;
        // Per node: per device, [self increase, self alloc size, self alloc count, increase, alloc size, alloc count].
        let mut metrics: HashMap<usize, BTreeMap<String, [i64; 6]>> = HashMap::new();
        let mut op_calls: HashMap<u32, u64> = HashMap::new();
        for &(_, root) in &tree.roots {
            // Post-order walk: (node, entered).
            let mut stack: Vec<(usize, bool)> = tree.nodes[root].children.iter().rev().map(|&c| (c, false)).collect();
            while let Some((n, entered)) = stack.pop() {
                let is_op = tree.is_operator(n, p.trace);
                if !entered {
                    if is_op {
                        *op_calls.entry(tree.nodes[n].name).or_default() += 1;
                    }
                    if !self.processed.contains_key(&n) {
                        continue;
                    }
                    if is_op {
                        let mine = metrics.entry(n).or_default();
                        for &ri in self.op_records.get(&n).map_or(&[][..], |v| v) {
                            let r = &self.records[ri];
                            let Some(dev) = r.device_name() else { continue };
                            let m = mine.entry(dev).or_default();
                            m[0] += r.bytes;
                            m[3] += r.bytes;
                            if r.bytes > 0 {
                                m[1] += r.bytes;
                                m[4] += r.bytes;
                                m[2] += 1;
                                m[5] += 1;
                            }
                        }
                    }
                    stack.push((n, true));
                    stack.extend(tree.nodes[n].children.iter().rev().map(|&c| (c, false)));
                    continue;
                }
                let mut sums: BTreeMap<String, [i64; 6]> = BTreeMap::new();
                for c in &tree.nodes[n].children {
                    for (dev, m) in metrics.get(c).into_iter().flatten() {
                        let s = sums.entry(dev.clone()).or_default();
                        for i in 3..6 {
                            s[i] += m[i];
                        }
                    }
                }
                let mine = metrics.entry(n).or_default();
                for (dev, s) in sums {
                    let m = mine.entry(dev).or_default();
                    for i in 3..6 {
                        m[i] += s[i];
                    }
                }
            }
        }
        let mut by_name: BTreeMap<String, BTreeMap<String, [i64; 6]>> = BTreeMap::new();
        for (&n, devs) in &metrics {
            if !tree.is_operator(n, p.trace) {
                continue;
            }
            for (dev, m) in devs {
                let s = by_name.entry(dev.clone()).or_default().entry(tree.name(n, p.trace).to_string()).or_default();
                for i in 0..6 {
                    s[i] += m[i];
                }
            }
        }
        let name_index: HashMap<&str, u32> = op_calls.keys().map(|&k| (p.trace.names[k as usize].as_str(), k)).collect();
        let kb = |b: i64| json!(display_round(b as f64 / 1024.0));
        let mut rows = Map::new();
        for (dev, ops) in &by_name {
            let list: Vec<Value> = ops
                .iter()
                .filter(|(_, m)| m.iter().any(|&x| x != 0))
                .map(|(name, m)| {
                    let calls = name_index.get(name.as_str()).and_then(|k| op_calls.get(k)).copied().unwrap_or(0);
                    json!([name, calls, kb(m[3]), kb(m[0]), m[5], m[2], kb(m[4]), kb(m[1])])
                })
                .collect();
            rows.insert(dev.clone(), Value::Array(list));
        }
        let default = rows.keys().find(|d| d.starts_with("GPU")).cloned().unwrap_or_else(|| "CPU".into());
        json!({
            "metadata": {"title": "Memory View", "default_device": default, "search": "Operator Name", "sort": "Self Size Increase (KB)"},
            "columns": [
                {"name": "Operator Name", "type": "string"},
                {"name": "Calls", "type": "number", "tooltip": "# of calls of the operator."},
                {"name": "Size Increase (KB)", "type": "number", "tooltip": "The memory increase size include all children operators."},
                {"name": "Self Size Increase (KB)", "type": "number", "tooltip": "The memory increase size associated with the operator itself."},
                {"name": "Allocation Count", "type": "number", "tooltip": "The allocation count including all chidren operators."},
                {"name": "Self Allocation Count", "type": "number", "tooltip": "The allocation count belonging to the operator itself."},
                {"name": "Allocation Size (KB)", "type": "number", "tooltip": "The allocation size including all children operators."},
                {"name": "Self Allocation Size (KB)", "type": "number", "tooltip": "The allocation size belonging to the operator itself.\nIt will sum up all allocation bytes without considering the memory free."},
            ],
            "rows": rows,
        })
    }

    /// `/memory_curve`: allocated and reserved MB over ms since the profiler started, per device,
    /// drawn as steps (each point repeated at the next one's time).
    fn curve(&self, start: f64) -> Value {
        const MB: f64 = 1.0 / 1048576.0;
        let mut curves: BTreeMap<String, Vec<[f64; 3]>> = BTreeMap::new();
        let mut peaks: BTreeMap<String, f64> = BTreeMap::new();
        for r in &self.records {
            if r.addr.is_none() || r.total_allocated.is_nan() || r.total_reserved.is_nan() {
                continue;
            }
            let Some(dev) = r.device_name() else { continue };
            curves.entry(dev.clone()).or_default().push([0.001 * (r.ts - start), MB * r.total_allocated, MB * r.total_reserved]);
            let pk = peaks.entry(dev).or_insert(0.0);
            *pk = pk.max(r.total_allocated);
        }
        let mut rows = Map::new();
        for (dev, curve) in &curves {
            let mut out: Vec<[f64; 3]> = Vec::with_capacity(curve.len() * 2);
            for (i, pt) in curve.iter().enumerate() {
                if i != 0 {
                    let last = *out.last().expect("a point before");
                    out.push([pt[0], last[1], last[2]]);
                }
                out.push(*pt);
            }
            rows.insert(dev.clone(), json!(lttb(out, 10240)));
        }
        let peaks: Map<String, Value> =
            peaks.iter().map(|(d, v)| (d.clone(), json!(format!("Peak Memory Usage: {:.1}MB", MB * v)))).collect();
        let default = curves.keys().find(|d| d.starts_with("GPU")).cloned().unwrap_or_else(|| "CPU".into());
        json!({
            "metadata": {
                "default_device": default,
                "devices": curves.keys().collect::<Vec<_>>(),
                "peaks": peaks,
                "totals": {},
                "first_ts": start,
                "time_metric": "ms",
                "memory_metric": "MB",
                "time_factor": 0.001,
                "memory_factor": MB,
            },
            "columns": [
                {"name": "Time (ms)", "type": "number", "tooltip": "Time since profiler starts."},
                {"name": "Allocated (MB)", "type": "number", "tooltip": "Total memory in use."},
                {"name": "Reserved (MB)", "type": "number", "tooltip": "Total reserved memory by allocator, both used and unused."},
            ],
            "rows": rows,
        })
    }

    /// `/memory_events`: each allocation with its free (KB, ms), then allocations never freed, then
    /// frees of memory allocated before the trace.
    fn events(&self, start: f64) -> Value {
        let op = |r: &Record| {
            let name = r.op_name.clone().unwrap_or_else(|| "<unknown>".into());
            match &r.parent_op_name {
                Some(parent) if name.starts_with("aten::empty") && !parent.is_empty() => format!("{parent} ({name})"),
                _ => name,
            }
        };
        let ms = |t: f64| json!(display_round(0.001 * t));
        let kb = |b: i64| json!(display_round(b as f64 / 1024.0));
        let mut rows: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        // Python dicts: a key set again keeps its place; a deleted one leaves.
        let mut alloc: Vec<Option<(u64, usize)>> = Vec::new();
        let mut alloc_at: HashMap<u64, usize> = HashMap::new();
        let mut free: Vec<(u64, usize)> = Vec::new();
        let mut free_at: HashMap<u64, usize> = HashMap::new();
        let dev = |r: &Record| r.device_name().unwrap_or_else(|| "None".into());
        for (i, r) in self.records.iter().enumerate() {
            let Some(addr) = r.addr else { continue };
            if r.bytes > 0 {
                match alloc_at.get(&addr) {
                    Some(&slot) => alloc[slot] = Some((addr, i)),
                    None => {
                        alloc_at.insert(addr, alloc.len());
                        alloc.push(Some((addr, i)));
                    }
                }
            } else if let Some(slot) = alloc_at.remove(&addr) {
                let (_, ai) = alloc[slot].take().expect("a live allocation");
                let a = &self.records[ai];
                rows.entry(dev(a)).or_default().push(json!([op(a), kb(-r.bytes), ms(a.ts - start), ms(r.ts - start), ms(r.ts - a.ts)]));
            } else {
                match free_at.get(&addr) {
                    Some(&slot) => free[slot] = (addr, i),
                    None => {
                        free_at.insert(addr, free.len());
                        free.push((addr, i));
                    }
                }
            }
        }
        for &(_, i) in alloc.iter().flatten() {
            let r = &self.records[i];
            rows.entry(dev(r)).or_default().push(json!([op(r), kb(r.bytes), ms(r.ts - start), null, null]));
        }
        for &(_, i) in &free {
            let r = &self.records[i];
            rows.entry(dev(r)).or_default().push(json!([op(r), kb(-r.bytes), null, ms(r.ts - start), null]));
        }
        let default = rows.keys().find(|d| d.starts_with("GPU")).cloned().unwrap_or_else(|| "CPU".into());
        json!({
            "metadata": {"title": "Memory Events", "default_device": default},
            "columns": [
                {"name": "Operator", "type": "string", "tooltip": ""},
                {"name": "Size (KB)", "type": "number", "tooltip": ""},
                {"name": "Allocation Time (ms)", "type": "number", "tooltip": ""},
                {"name": "Release Time (ms)", "type": "number", "tooltip": ""},
                {"name": "Duration (ms)", "type": "number", "tooltip": ""},
            ],
            "rows": rows,
        })
    }
}

/// The plugin's `lttb_sample`: a curve longer than `n_out` points down-sampled by
/// Largest-Triangle-Three-Buckets on (time, allocated), its first and last points kept; the points
/// between split into `n_out - 2` bins as `np.array_split` splits them (the first ones one longer).
fn lttb(data: Vec<[f64; 3]>, n_out: usize) -> Vec<[f64; 3]> {
    let len = data.len();
    if n_out >= len {
        return data;
    }
    let n_bins = n_out - 2;
    let inner = &data[1..len - 1];
    let (q, r) = (inner.len() / n_bins, inner.len() % n_bins);
    let bounds: Vec<(usize, usize)> = (0..n_bins).map(|i| (i * q + i.min(r), (i + 1) * q + (i + 1).min(r))).collect();
    let mut out = vec![[0.0; 3]; n_out];
    out[0] = data[0];
    out[n_out - 1] = data[len - 1];
    for (i, &(lo, hi)) in bounds.iter().enumerate() {
        let next = if i + 1 < n_bins { &inner[bounds[i + 1].0..bounds[i + 1].1] } else { &data[len - 1..] };
        let mut c = [0.0; 3];
        for p in next {
            for k in 0..3 {
                c[k] += p[k];
            }
        }
        let c = c.map(|x| x / next.len() as f64);
        let a = out[i];
        let area = |b: &[f64; 3]| 0.5 * ((a[0] - c[0]) * (b[1] - a[1]) - (a[0] - b[0]) * (c[1] - a[1])).abs();
        let mut best = lo;
        for j in lo..hi {
            if area(&inner[j]) > area(&inner[best]) {
                best = j;
            }
        }
        out[i + 1] = inner[best];
    }
    out
}

/// The Memory view's payloads keyed by the plugin's file names: `memory`, `memory_curve`,
/// `memory_events`; `None` for a trace without `[memory]` events.
pub fn memory_view(p: &TorchProfile) -> Option<Value> {
    let snap = MemorySnapshot::new(p)?;
    Some(json!({
        "memory": snap.stats(p),
        "memory_curve": snap.curve(p.profiler_start_ts),
        "memory_events": snap.events(p.profiler_start_ts),
    }))
}

#[cfg(test)]
mod tests {
    use super::lttb;

    #[test]
    fn lttb_keeps_short_curves_and_the_ends_of_long_ones() {
        let short: Vec<[f64; 3]> = (0..5).map(|i| [i as f64, 1.0, 2.0]).collect();
        assert_eq!(lttb(short.clone(), 10), short);
        // A spike in the middle of a flat line survives down-sampling to 4 points.
        let mut long: Vec<[f64; 3]> = (0..9).map(|i| [i as f64, 0.0, 0.0]).collect();
        long[3][1] = 5.0;
        let out = lttb(long.clone(), 4);
        assert_eq!(out.len(), 4);
        assert_eq!(out[0], long[0]);
        assert_eq!(out[3], long[8]);
        assert!(out.contains(&long[3]), "{out:?}");
    }
}
