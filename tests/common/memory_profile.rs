//! The Memory Profile compared with XProf's JSON, as `tests/memory_profile.rs` and
//! `tests/memory_profile_device.rs` both do.
//!
//! XProf breaks ties between equal breakdown rows at random, so a merged row (more than one occurrence)
//! is compared by its merge key and count only; everything else must be equal as parsed JSON values.

use serde_json::Value;
use tidemark::analysis::memory_profile::{xprof_json, MemoryProfile};

pub fn ours(profile: &MemoryProfile) -> Value {
    serde_json::from_str(&xprof_json::to_string(profile).expect("serializes")).expect("our JSON parses")
}

/// The fields XProf merges equal rows on.
fn merge_key(m: &Value) -> Value {
    let keys = ["memoryActivity", "requestedBytes", "allocationBytes", "tfOpName", "regionType", "dataType", "tensorShape"];
    Value::Array(keys.iter().map(|k| m[*k].clone()).collect())
}

/// Each breakdown row resolved to (occurrences, the snapshot or special allocation it points at).
fn rows(alloc: &Value) -> Vec<(Value, Value)> {
    let list = |k: &str| alloc[k].as_array().cloned().unwrap_or_default();
    let snapshots = list("memoryProfileSnapshots");
    let specials = list("specialAllocations");
    list("activeAllocations")
        .iter()
        .map(|row| {
            let n = row["numOccurrences"].clone();
            let special: i64 = row["specialIndex"].as_str().and_then(|s| s.parse().ok()).expect("specialIndex");
            let snap: i64 = row["snapshotIndex"].as_str().and_then(|s| s.parse().ok()).expect("snapshotIndex");
            let target = if special >= 0 {
                assert_eq!(snap, -special - 1, "special rows carry XProf's negative snapshot index");
                specials[special as usize].clone()
            } else {
                snapshots[snap as usize].clone()
            };
            (n, target)
        })
        .collect()
}

pub fn compare(name: &str, expected: &Value, actual: &Value) {
    for key in ["numHosts", "memoryIds", "version", "hloModules"] {
        assert_eq!(actual[key], expected[key], "{name}: {key}");
    }
    let exp = expected["memoryProfilePerAllocator"].as_object().expect("per allocator");
    let act = actual["memoryProfilePerAllocator"].as_object().expect("per allocator");
    assert_eq!(act.keys().collect::<Vec<_>>(), exp.keys().collect::<Vec<_>>(), "{name}: memory IDs");
    for (id, e) in exp {
        let a = &act[id];
        let fields = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
        assert_eq!(fields(a), fields(e), "{name}/{id}: fields");
        assert_eq!(a["profileSummary"], e["profileSummary"], "{name}/{id}: summary");
        assert_eq!(a["specialAllocations"], e["specialAllocations"], "{name}/{id}: special allocations");
        let (at, et) = (&a["sampledTimelineSnapshots"], &e["sampledTimelineSnapshots"]);
        assert_eq!(at.as_array().map(Vec::len), et.as_array().map(Vec::len), "{name}/{id}: sampled timeline length");
        for (k, (x, y)) in at.as_array().into_iter().flatten().zip(et.as_array().into_iter().flatten()).enumerate() {
            assert_eq!(x, y, "{name}/{id}: sampled timeline point {k}");
        }
        let (ar, er) = (rows(a), rows(e));
        assert_eq!(ar.len(), er.len(), "{name}/{id}: breakdown rows");
        assert_eq!(
            a["memoryProfileSnapshots"].as_array().map(Vec::len),
            e["memoryProfileSnapshots"].as_array().map(Vec::len),
            "{name}/{id}: memoryProfileSnapshots holds one snapshot per allocation row"
        );
        // Row order is fully determined by the merge key (equal keys are merged), so compare in order.
        for (k, ((an, at), (en, et))) in ar.iter().zip(&er).enumerate() {
            assert_eq!(an, en, "{name}/{id}: row {k} occurrences");
            let meta = |v: &Value| if v.get("activityMetadata").is_some() { v["activityMetadata"].clone() } else { v.clone() };
            assert_eq!(merge_key(&meta(at)), merge_key(&meta(et)), "{name}/{id}: row {k} key");
            if en == "1" {
                assert_eq!(at, et, "{name}/{id}: row {k} (a single allocation, no tie)");
            }
        }
    }
}
