//! The Memory Profile (with step grouping) of any XSpace, its XProf JSON and its row queries.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tidemark::analysis::memory_profile;
use tidemark::decode::xplane::XSpace;

fuzz_target!(|data: &[u8]| {
    let Ok(space) = XSpace::index(data.to_vec(), &mut |_, _| {}) else { return };
    let Ok(profile) = memory_profile::analyze(&space) else { return };
    let _ = memory_profile::xprof_json::to_string(&profile).expect("memory profile JSON");
    for a in &profile.allocators {
        assert!(a.sampled_indices.len() <= memory_profile::MAX_TIMELINE_POINTS);
        for row in &a.breakdown {
            let _ = a.row_metadata(row);
            let all = a.row_lifetimes(row);
            let one: Vec<_> = row.snapshot_indices.iter().filter_map(|&i| a.lifetime(i)).collect();
            assert_eq!(all, one, "row_lifetimes agrees with lifetime");
        }
        let _ = a.timeline_window(i64::MIN, i64::MAX, 50);
    }
});
