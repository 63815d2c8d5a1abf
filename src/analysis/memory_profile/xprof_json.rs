//! XProf's own `memory_profile` JSON (proto3 JSON of `MemoryProfile` with primitive fields always
//! printed): camelCase names, int64/uint64 as strings, enums by name, integral doubles as integers.
//! Tidemark's own figures go under one extra top-level key, `tidemark`, in our snake_case structs;
//! XProf's fields are never changed, so XProf's frontend can read the document as is.
//!
//! XProf's part is written by hand, compact, in the field order serde's derive would use: it is a
//! few dozen keys and numbers-as-strings per timeline point, which serde_json writes through its
//! general string escaper (keys included), three times slower; `tidemark` goes through serde.

use super::{ActivityRef, AggregationStats, AllocatorProfile, EventCounts, LeakHints, MemoryProfile, Snapshot};
use crate::analysis::allocation_names::{AllocationName, AllocationNames, AllocatorNames, LiveNames, PeakRow, PoolAtPeak};
use crate::analysis::memory_events::Activity;
use serde::Serialize;
use std::collections::BTreeMap;

/// `"key":`, as one piece of text to append.
macro_rules! key {
    ($k:literal) => {
        concat!("\"", $k, "\":")
    };
}

/// Tidemark-only figures per memory ID.
#[derive(Serialize)]
pub struct Tidemark<'a> {
    pub allocators: BTreeMap<&'a str, TidemarkAllocator<'a>>,
    /// Every allocation named by module run / compile / transfer and buffer
    /// ([`crate::analysis::allocation_names`]),
    /// where they were computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation_names: Option<NamesJson<'a>>,
}

/// [`AllocationNames`] as the JSON carries it: the reasons, the module runs, and per memory ID what
/// was live at the peak by name, and the name of each `activeAllocations` row.
#[derive(Serialize)]
pub struct NamesJson<'a> {
    pub reasons: &'a [String],
    pub runs: Vec<RunJson<'a>>,
    pub allocators: BTreeMap<&'a str, AllocatorNamesJson<'a>>,
}

#[derive(Serialize)]
pub struct RunJson<'a> {
    pub module_name: Option<&'a str>,
    /// XProf's name of the module that made it, when one did; the candidates otherwise.
    pub module: Option<&'a str>,
    pub candidates: Vec<&'a str>,
    pub memory_id: &'a str,
    pub start_trace_ps: i64,
    pub allocations: u64,
    pub allocated_bytes: i64,
    pub temporary_bytes: i64,
}

#[derive(Serialize)]
pub struct AllocatorNamesJson<'a> {
    /// Why the events could not be named, if they could not.
    pub unaligned: Option<&'a str>,
    /// Per `activeAllocations` row: the name of its first allocation ("" for a computed row).
    pub breakdown_names: Vec<&'a str>,
    pub peak: PeakJson<'a>,
    /// Each step's heap floor by name ([`crate::analysis::allocation_names::FloorNames`]).
    pub floors: Vec<FloorJson<'a>>,
    /// What is still live when the window ends, by name: the leak hints' suspects.
    pub live_at_end: LiveJson<'a>,
}

#[derive(Serialize)]
pub struct FloorJson<'a> {
    pub step_id: i64,
    pub in_use_bytes: i64,
    pub stack_bytes: i64,
    #[serde(flatten)]
    pub live: LiveJson<'a>,
}

#[derive(Serialize)]
pub struct LiveJson<'a> {
    pub before_trace_bytes: i64,
    pub rows: Vec<PeakRowJson<'a>>,
    pub by_kind: Vec<(&'static str, i64)>,
    pub by_module: &'a [(String, i64)],
}

#[derive(Serialize)]
pub struct PeakJson<'a> {
    pub peak_bytes: i64,
    pub before_trace_bytes: i64,
    pub stack_bytes: i64,
    pub rows: Vec<PeakRowJson<'a>>,
    pub by_kind: Vec<(&'static str, i64)>,
    pub by_module: &'a [(String, i64)],
    /// "Preallocated but unused": known where the allocator's figures pin the pool, else bounded ([`PoolAtPeak`]).
    pub pool: &'a PoolAtPeak,
}

#[derive(Serialize)]
pub struct PeakRowJson<'a> {
    pub name: &'a AllocationName,
    pub allocations: u64,
    pub allocation_bytes: i64,
    pub requested_bytes: i64,
}

fn names_json<'a>(profile: &'a MemoryProfile, names: &'a AllocationNames) -> NamesJson<'a> {
    let runs = names
        .runs
        .iter()
        .map(|r| RunJson {
            module_name: r.module_name.as_deref(),
            module: r.module.and_then(|m| names.modules.get(m)).map(|m| m.xprof_name.as_str()),
            candidates: r.candidates.iter().filter_map(|&m| names.modules.get(m)).map(|m| m.xprof_name.as_str()).collect(),
            memory_id: &r.memory_id,
            start_trace_ps: r.start_trace_ps,
            allocations: r.allocations,
            allocated_bytes: r.allocated_bytes,
            temporary_bytes: r.temporary_bytes,
        })
        .collect();
    let allocators = profile
        .allocators
        .iter()
        .filter_map(|a| {
            let n = names.allocator(&a.memory_id)?;
            let label = |i: usize| n.name(i).map_or("", |x| x.label.as_str());
            let breakdown_names = a
                .breakdown
                .iter()
                .map(|r| if r.special_index.is_some() { "" } else { r.snapshot_indices.first().map_or("", |&i| label(i)) })
                .collect();
            let p = &n.peak;
            let peak = PeakJson {
                peak_bytes: p.peak_bytes,
                before_trace_bytes: p.before_trace_bytes,
                stack_bytes: p.stack_bytes,
                rows: row_json(n, &p.rows),
                by_kind: p.by_kind.iter().map(|&(k, b)| (k.label(), b)).collect(),
                by_module: &p.by_module,
                pool: &p.pool,
            };
            let floors = n
                .floors
                .iter()
                .map(|f| FloorJson {
                    step_id: f.step_id,
                    in_use_bytes: f.in_use_bytes,
                    stack_bytes: f.stack_bytes,
                    live: live_json(n, &f.live),
                })
                .collect();
            Some((
                a.memory_id.as_str(),
                AllocatorNamesJson {
                    unaligned: n.unaligned.as_deref(),
                    breakdown_names,
                    peak,
                    floors,
                    live_at_end: live_json(n, &n.live_at_end),
                },
            ))
        })
        .collect();
    NamesJson { reasons: &names.reasons, runs, allocators }
}

fn row_json<'a>(n: &'a AllocatorNames, rows: &[PeakRow]) -> Vec<PeakRowJson<'a>> {
    rows.iter()
        .filter_map(|r| {
            Some(PeakRowJson {
                name: n.names.get(r.name as usize)?,
                allocations: r.allocations,
                allocation_bytes: r.allocation_bytes,
                requested_bytes: r.requested_bytes,
            })
        })
        .collect()
}

fn live_json<'a>(n: &'a AllocatorNames, l: &'a LiveNames) -> LiveJson<'a> {
    LiveJson {
        before_trace_bytes: l.before_trace_bytes,
        rows: row_json(n, &l.rows),
        by_kind: l.by_kind.iter().map(|&(k, b)| (k.label(), b)).collect(),
        by_module: &l.by_module,
    }
}

#[derive(Serialize)]
pub struct TidemarkAllocator<'a> {
    pub counts: &'a EventCounts,
    pub leak_hints: &'a LeakHints,
    pub peak_step_id: i64,
    pub snapshot_count: usize,
    /// Per `activeAllocations` row: allocations XProf lists as live at the peak that were already freed
    /// ([`super::BreakdownRow::freed_before_peak`]).
    pub breakdown_freed_before_peak: Vec<u64>,
}

/// The document as compact JSON text.
pub fn to_string(profile: &MemoryProfile) -> Result<String, serde_json::Error> {
    to_string_named(profile, None)
}

/// [`to_string`] with the allocations' names under the `tidemark` key, where given: XProf's part is
/// the same either way.
pub fn to_string_named(profile: &MemoryProfile, names: Option<&AllocationNames>) -> Result<String, serde_json::Error> {
    // Room for it up front (it is a few hundred bytes per timeline point and breakdown row): growing
    // the buffer by doubling would copy it into fresh memory several times over.
    let rows: usize = profile.allocators.iter().map(|a| a.sampled_indices.len() + 2 * a.breakdown.len()).sum();
    let mut w = Writer(Vec::with_capacity(4096 + 512 * rows));
    // By memory ID, as XProf's map is printed.
    let by_id: BTreeMap<&str, &AllocatorProfile> = profile.allocators.iter().map(|a| (a.memory_id.as_str(), a)).collect();
    w.raw("{\"memoryProfilePerAllocator\":{");
    for (k, (id, a)) in by_id.iter().enumerate() {
        w.comma(k);
        w.str(id);
        w.raw(":");
        per_allocator(&mut w, a);
    }
    w.raw("},\"numHosts\":1,\"memoryIds\":[");
    for (k, id) in profile.memory_ids().enumerate() {
        w.comma(k);
        w.str(id);
    }
    // Version 1: XProf's "new sampling algorithm" marker.
    w.raw("],\"version\":1,\"hloModules\":[");
    for (k, m) in profile.hlo_modules.iter().enumerate() {
        w.comma(k);
        w.raw("{\"name\":");
        w.str(&m.name);
        w.raw(",\"startTimePs\":");
        w.int(m.start_time_ps);
        w.raw(",\"endTimePs\":");
        w.int(m.end_time_ps);
        w.raw(",\"id\":");
        w.int(m.id);
        w.raw(",\"planeName\":");
        w.str(&m.plane_name);
        w.raw("}");
    }
    w.raw("],\"tidemark\":");
    let tidemark = Tidemark {
        allocators: by_id
            .iter()
            .map(|(&id, a)| {
                let t = TidemarkAllocator {
                    counts: &a.counts,
                    leak_hints: &a.leaks,
                    peak_step_id: a.summary.peak_step_id,
                    snapshot_count: a.snapshots.len(),
                    breakdown_freed_before_peak: a.breakdown.iter().map(|r| r.freed_before_peak).collect(),
                };
                (id, t)
            })
            .collect(),
        allocation_names: names.map(|n| names_json(profile, n)),
    };
    serde_json::to_writer(&mut w.0, &tidemark)?;
    w.raw("}");
    // Everything written is valid UTF-8; the check cannot fail, and costs a fraction of the writing.
    String::from_utf8(w.0).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

fn per_allocator(w: &mut Writer, a: &AllocatorProfile) {
    // XProf replaces the full list with the representative snapshot of each breakdown row. Its
    // indices: a special row's snapshot index is −(special index + 1), an allocation row's is its
    // position among the saved representative snapshots.
    let mut representatives = Vec::new();
    let mut active = Vec::new();
    for row in &a.breakdown {
        let (snapshot_index, special_index) = match (row.special_index, row.snapshot_indices.first()) {
            (Some(k), _) => (-(k as i64) - 1, k as i64),
            (None, Some(&i)) => {
                let Some(s) = a.snapshots.get(i) else { continue };
                representatives.push(s);
                ((representatives.len() - 1) as i64, -1)
            }
            (None, None) => continue,
        };
        active.push([snapshot_index, special_index, row.occurrences as i64]);
    }
    w.raw("{\"memoryProfileSnapshots\":");
    snapshots(w, a, representatives.into_iter());
    let s = &a.summary;
    w.raw(",\"profileSummary\":{\"peakBytesUsageLifetime\":");
    w.int(s.peak_bytes_usage_lifetime);
    w.raw(",\"peakStats\":");
    stats(w, &s.peak_stats);
    w.raw(",\"peakStatsTimePs\":");
    w.int(s.peak_stats_time_ps);
    w.raw(",\"memoryCapacity\":");
    w.int(s.memory_capacity_bytes);
    w.raw("},\"activeAllocations\":[");
    for (k, [snapshot_index, special_index, occurrences]) in active.into_iter().enumerate() {
        w.comma(k);
        w.object(&[
            (key!("snapshotIndex"), Value::Int(snapshot_index)),
            (key!("specialIndex"), Value::Int(special_index)),
            (key!("numOccurrences"), Value::Int(occurrences)),
        ]);
    }
    w.raw("],\"specialAllocations\":[");
    for (k, m) in a.special_allocations.iter().enumerate() {
        w.comma(k);
        let m = m.as_activity_ref();
        metadata(w, &m, [m.tf_op_name, m.region_type, m.data_type, m.tensor_shape].map(Value::Str));
    }
    w.raw("],\"sampledTimelineSnapshots\":");
    snapshots(w, a, a.sampled_indices.iter().filter_map(|&i| a.snapshots.get(i)));
    w.raw("}");
}

fn snapshots(w: &mut Writer, a: &AllocatorProfile, list: impl Iterator<Item = Snapshot>) {
    // Each distinct string as JSON once: a timeline repeats a few op names and shapes a thousand times.
    let strings: Vec<Vec<u8>> = a.strings.iter().map(|s| Writer::json_string(s)).collect();
    let string = |id: super::StrId| Value::Json(strings.get(id as usize).map_or(b"\"\"", Vec::as_slice));
    w.raw("[");
    for (k, s) in list.enumerate() {
        w.comma(k);
        w.raw("{\"timeOffsetPs\":");
        w.int(s.time_offset_ps);
        w.raw(",\"aggregationStats\":");
        stats(w, &s.stats);
        w.raw(",\"activityMetadata\":");
        let m = &s.activity;
        metadata(w, &a.activity(m), [m.tf_op_name, m.region_type, m.data_type, m.tensor_shape].map(string));
        w.raw("}");
    }
    w.raw("]");
}

fn stats(w: &mut Writer, s: &AggregationStats) {
    w.object(&[
        (key!("stackReservedBytes"), Value::Int(s.stack_reserved_bytes)),
        (key!("heapAllocatedBytes"), Value::Int(s.heap_allocated_bytes)),
        (key!("freeMemoryBytes"), Value::Int(s.free_memory_bytes)),
        (key!("fragmentation"), Value::Double(s.fragmentation)),
        (key!("peakBytesInUse"), Value::Int(s.peak_bytes_in_use)),
    ]);
}

/// `m`'s numbers, with its op, region, dtype and shape given as `strings` (as text, or already JSON).
fn metadata(w: &mut Writer, m: &ActivityRef<'_>, strings: [Value; 4]) {
    let activity = match m.activity {
        Activity::Allocation => "\"ALLOCATION\"",
        Activity::Deallocation => "\"DEALLOCATION\"",
    };
    let [op, region, dtype, shape] = strings;
    w.object(&[
        (key!("memoryActivity"), Value::Json(activity.as_bytes())),
        (key!("requestedBytes"), Value::Int(m.requested_bytes)),
        (key!("allocationBytes"), Value::Int(m.allocation_bytes)),
        (key!("address"), Value::Uint(m.address)),
        (key!("tfOpName"), op),
        (key!("stepId"), Value::Int(m.step_id)),
        (key!("regionType"), region),
        (key!("dataType"), dtype),
        (key!("tensorShape"), shape),
    ]);
}

/// A scalar of XProf's document, as proto3 JSON prints it.
enum Value<'a> {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(&'a str),
    /// Already JSON text.
    Json(&'a [u8]),
}

/// Compact JSON text, appended.
struct Writer(Vec<u8>);

impl Writer {
    fn raw(&mut self, text: &str) {
        self.0.extend_from_slice(text.as_bytes());
    }

    /// `{"key":value,...}`, each key given as its `"key":` ([`key!`]).
    fn object(&mut self, fields: &[(&str, Value)]) {
        self.raw("{");
        for (k, (key, value)) in fields.iter().enumerate() {
            self.comma(k);
            self.raw(key);
            match *value {
                Value::Int(v) => self.int(v),
                Value::Uint(v) => self.uint(v),
                Value::Double(v) => self.double(v),
                Value::Str(v) => self.str(v),
                Value::Json(v) => self.0.extend_from_slice(v),
            }
        }
        self.raw("}");
    }

    /// `s` as a JSON string ([`Writer::str`]), on its own.
    fn json_string(s: &str) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(s.len() + 2));
        w.str(s);
        w.0
    }

    /// The separator before item `k` of an array or object.
    fn comma(&mut self, k: usize) {
        if k > 0 {
            self.0.push(b',');
        }
    }

    /// A JSON string: as is when nothing in it needs escaping (op names and shapes nearly never do),
    /// else escaped by serde_json, so the text is the same either way.
    fn str(&mut self, s: &str) {
        if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
            // Writing into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut self.0, s);
        } else {
            self.0.push(b'"');
            self.0.extend_from_slice(s.as_bytes());
            self.0.push(b'"');
        }
    }

    /// proto3 JSON int64: a decimal string.
    fn int(&mut self, v: i64) {
        self.quoted(itoa::Buffer::new().format(v));
    }

    /// proto3 JSON uint64: a decimal string.
    fn uint(&mut self, v: u64) {
        self.quoted(itoa::Buffer::new().format(v));
    }

    fn quoted(&mut self, digits: &str) {
        self.0.push(b'"');
        self.0.extend_from_slice(digits.as_bytes());
        self.0.push(b'"');
    }

    /// proto3 JSON double as protobuf prints it: integral values without a fraction (`0`, not `0.0`),
    /// and the non-finite values as the strings `NaN`, `Infinity`, `-Infinity` (JSON has no such
    /// numbers); other values as serde_json prints them (shortest round-trip form).
    fn double(&mut self, v: f64) {
        // Integers up to 2^53 are exact in an f64, so printing them as integers loses nothing.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        if v.is_nan() {
            self.raw("\"NaN\"");
        } else if v.is_infinite() {
            self.raw(if v > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
        } else if v.fract() == 0.0 && v.abs() <= EXACT {
            self.raw(itoa::Buffer::new().format(v as i64));
        } else {
            // Writing into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut self.0, &v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Writer;

    fn written(f: impl FnOnce(&mut Writer)) -> String {
        let mut w = Writer(Vec::new());
        f(&mut w);
        String::from_utf8(w.0).expect("UTF-8")
    }

    /// Strings come out exactly as serde_json writes them, whether or not they need escaping.
    #[test]
    fn strings_as_serde_json_writes_them() {
        for s in ["", "sequential/conv2d/Conv2D", "a\"b", "back\\slash", "line\nbreak\t\u{1}", "µs — ünïcode", "\u{7f}"] {
            assert_eq!(written(|w| w.str(s)), serde_json::to_string(s).expect("serializes"), "{s:?}");
        }
    }

    /// int64 / uint64 as decimal strings, the extremes included.
    #[test]
    fn integers_as_decimal_strings() {
        for v in [0, 7, -1, 1 << 40, i64::MAX, i64::MIN] {
            assert_eq!(written(|w| w.int(v)), format!("\"{v}\""));
        }
        assert_eq!(written(|w| w.uint(u64::MAX)), format!("\"{}\"", u64::MAX));
    }

    /// Doubles as protobuf prints them: integral ones as integers, non-finite ones as strings.
    #[test]
    fn doubles_as_protobuf_prints_them() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (0.25, "0.25"),
            (-1.5, "-1.5"),
            (1e300, "1e+300"),
            (f64::NAN, "\"NaN\""),
            (f64::INFINITY, "\"Infinity\""),
            (f64::NEG_INFINITY, "\"-Infinity\""),
        ];
        for (v, text) in cases {
            assert_eq!(written(|w| w.double(v)), text, "{v}");
        }
    }
}
