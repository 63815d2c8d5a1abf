//! XProf's own `memory_profile` JSON (proto3 JSON of `MemoryProfile` with primitive fields always
//! printed): camelCase names, int64/uint64 as strings, enums by name, integral doubles as integers.
//! Tidemark's own figures go under one extra top-level key, `tidemark`, in our snake_case structs;
//! XProf's fields are never changed, so XProf's frontend can read the document as is.

use super::{ActivityRef, AggregationStats, AllocatorProfile, EventCounts, LeakHints, MemoryProfile, Snapshot};
use crate::analysis::memory_events::Activity;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// The document: XProf's fields, then `tidemark`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Document<'a> {
    memory_profile_per_allocator: BTreeMap<&'a str, PerAllocator<'a>>,
    num_hosts: i32,
    memory_ids: Vec<&'a str>,
    version: i32,
    /// XProf declares the field and never fills it.
    hlo_modules: [(); 0],
    tidemark: Tidemark<'a>,
}

/// Tidemark-only figures per memory ID.
#[derive(Serialize)]
pub struct Tidemark<'a> {
    pub allocators: BTreeMap<&'a str, TidemarkAllocator<'a>>,
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

/// The document for `profile`.
pub fn document(profile: &MemoryProfile) -> Document<'_> {
    Document {
        memory_profile_per_allocator: profile.allocators.iter().map(|a| (a.memory_id.as_str(), per_allocator(a))).collect(),
        num_hosts: 1,
        memory_ids: profile.memory_ids().collect(),
        // XProf's "new sampling algorithm" marker.
        version: 1,
        hlo_modules: [],
        tidemark: Tidemark {
            allocators: profile
                .allocators
                .iter()
                .map(|a| {
                    let t = TidemarkAllocator {
                        counts: &a.counts,
                        leak_hints: &a.leaks,
                        peak_step_id: a.summary.peak_step_id,
                        snapshot_count: a.snapshots.len(),
                        breakdown_freed_before_peak: a.breakdown.iter().map(|r| r.freed_before_peak).collect(),
                    };
                    (a.memory_id.as_str(), t)
                })
                .collect(),
        },
    }
}

/// The document as compact JSON text.
pub fn to_string(profile: &MemoryProfile) -> Result<String, serde_json::Error> {
    // Room for it up front (it is a few hundred bytes per timeline point and breakdown row): growing
    // the buffer by doubling would copy it into fresh memory several times over.
    let rows: usize = profile.allocators.iter().map(|a| a.sampled_indices.len() + 2 * a.breakdown.len()).sum();
    let mut out = Vec::with_capacity(4096 + 512 * rows);
    serde_json::to_writer(&mut out, &document(profile))?;
    // serde_json writes valid UTF-8; the check cannot fail, and costs a fraction of the writing.
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PerAllocator<'a> {
    /// XProf replaces the full list with the representative snapshot of each breakdown row.
    memory_profile_snapshots: Vec<SnapshotJson<'a>>,
    profile_summary: SummaryJson,
    active_allocations: Vec<ActiveAllocationJson>,
    special_allocations: Vec<MetadataJson<'a>>,
    sampled_timeline_snapshots: Vec<SnapshotJson<'a>>,
}

fn per_allocator(a: &AllocatorProfile) -> PerAllocator<'_> {
    let mut memory_profile_snapshots = Vec::new();
    let mut active_allocations = Vec::new();
    for row in &a.breakdown {
        // XProf's indices: a special row's snapshot index is −(special index + 1), an allocation row's
        // is its position among the saved representative snapshots.
        let (snapshot_index, special_index) = match (row.special_index, row.snapshot_indices.first()) {
            (Some(k), _) => (-(k as i64) - 1, k as i64),
            (None, Some(&i)) => {
                let Some(s) = a.snapshots.get(i) else { continue };
                memory_profile_snapshots.push(snapshot_json(a, s));
                ((memory_profile_snapshots.len() - 1) as i64, -1)
            }
            (None, None) => continue,
        };
        active_allocations.push(ActiveAllocationJson {
            snapshot_index: Int64(snapshot_index),
            special_index: Int64(special_index),
            num_occurrences: Int64(row.occurrences as i64),
        });
    }
    let s = &a.summary;
    PerAllocator {
        memory_profile_snapshots,
        profile_summary: SummaryJson {
            peak_bytes_usage_lifetime: Int64(s.peak_bytes_usage_lifetime),
            peak_stats: stats_json(&s.peak_stats),
            peak_stats_time_ps: Int64(s.peak_stats_time_ps),
            memory_capacity: Int64(s.memory_capacity_bytes),
        },
        active_allocations,
        special_allocations: a.special_allocations.iter().map(|m| metadata_json(m.as_activity_ref())).collect(),
        sampled_timeline_snapshots: a.sampled_indices.iter().filter_map(|&i| a.snapshots.get(i)).map(|s| snapshot_json(a, s)).collect(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotJson<'a> {
    time_offset_ps: Int64,
    aggregation_stats: StatsJson,
    activity_metadata: MetadataJson<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsJson {
    stack_reserved_bytes: Int64,
    heap_allocated_bytes: Int64,
    free_memory_bytes: Int64,
    fragmentation: ProtoDouble,
    peak_bytes_in_use: Int64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MetadataJson<'a> {
    memory_activity: &'static str,
    requested_bytes: Int64,
    allocation_bytes: Int64,
    address: Uint64,
    tf_op_name: &'a str,
    step_id: Int64,
    region_type: &'a str,
    data_type: &'a str,
    tensor_shape: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryJson {
    peak_bytes_usage_lifetime: Int64,
    peak_stats: StatsJson,
    peak_stats_time_ps: Int64,
    memory_capacity: Int64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ActiveAllocationJson {
    snapshot_index: Int64,
    special_index: Int64,
    num_occurrences: Int64,
}

fn snapshot_json<'a>(a: &'a AllocatorProfile, s: &Snapshot) -> SnapshotJson<'a> {
    SnapshotJson {
        time_offset_ps: Int64(s.time_offset_ps),
        aggregation_stats: stats_json(&s.stats),
        activity_metadata: metadata_json(a.activity(&s.activity)),
    }
}

fn stats_json(s: &AggregationStats) -> StatsJson {
    StatsJson {
        stack_reserved_bytes: Int64(s.stack_reserved_bytes),
        heap_allocated_bytes: Int64(s.heap_allocated_bytes),
        free_memory_bytes: Int64(s.free_memory_bytes),
        fragmentation: ProtoDouble(s.fragmentation),
        peak_bytes_in_use: Int64(s.peak_bytes_in_use),
    }
}

fn metadata_json(m: ActivityRef<'_>) -> MetadataJson<'_> {
    MetadataJson {
        memory_activity: match m.activity {
            Activity::Allocation => "ALLOCATION",
            Activity::Deallocation => "DEALLOCATION",
        },
        requested_bytes: Int64(m.requested_bytes),
        allocation_bytes: Int64(m.allocation_bytes),
        address: Uint64(m.address),
        tf_op_name: m.tf_op_name,
        step_id: Int64(m.step_id),
        region_type: m.region_type,
        data_type: m.data_type,
        tensor_shape: m.tensor_shape,
    }
}

/// proto3 JSON int64: a decimal string.
struct Int64(i64);

impl Serialize for Int64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0; 20];
        s.serialize_str(decimal(self.0.unsigned_abs(), self.0 < 0, &mut buf))
    }
}

/// `n` (negated if `negative`) in decimal, written into the end of `buf`. A profile's JSON holds tens
/// of thousands of numbers as strings, and going through `Display` costs several times more.
fn decimal(mut n: u64, negative: bool, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

/// proto3 JSON uint64: a decimal string.
struct Uint64(u64);

impl Serialize for Uint64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0; 20];
        s.serialize_str(decimal(self.0, false, &mut buf))
    }
}

/// proto3 JSON double as protobuf prints it: integral values without a fraction (`0`, not `0.0`), and
/// the non-finite values as the strings `NaN`, `Infinity`, `-Infinity` (JSON has no such numbers).
struct ProtoDouble(f64);

impl Serialize for ProtoDouble {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        // Integers up to 2^53 are exact in an f64, so printing them as integers loses nothing.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        if v.is_nan() {
            s.serialize_str("NaN")
        } else if v.is_infinite() {
            s.serialize_str(if v > 0.0 { "Infinity" } else { "-Infinity" })
        } else if v.fract() == 0.0 && v.abs() <= EXACT {
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }
}
