//! The lazy XSpace index, then every event of every line read from the wire and every stat resolved.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tidemark::decode::xplane::XSpace;

fuzz_target!(|data: &[u8]| {
    let Ok(space) = XSpace::index(data.to_vec(), &mut |done, total| assert!(done <= total)) else { return };
    for plane in &space.planes {
        for stat in &plane.meta.stats {
            let _ = plane.stat_value(stat);
        }
        for line in &plane.lines {
            let all = tidemark::decode::xplane::IdTable::new(plane.meta.stat_metadata.keys().map(|&id| (id, true)));
            let _ = space.for_each_raw_event(line, &all, |_| true, |_, ev| {
                for stat in ev.stats {
                    let _ = plane.raw_stat_value(stat);
                }
                Ok(())
            });
        }
    }
    for m in tidemark::decode::hlo::embedded_modules(&space) {
        let _ = tidemark::decode::hlo::decode_proto(m.proto_bytes);
    }
});
