//! Device memory analysis of any pprof profile: one profile, a diff against itself and against an
//! empty one, and a series.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tidemark::analysis::device_memory::{analyze, diff, series, Options};
use tidemark::decode::pprof::PprofFile;

fuzz_target!(|data: &[u8]| {
    let Ok(p) = PprofFile::decode(data) else { return };
    let Ok(empty) = PprofFile::decode(&[]) else { return };
    for options in [Options::default(), Options { fold_library_frames: true, kind: Some("buffer".into()) }] {
        let r = analyze(&p, &options);
        let _ = serde_json::to_string(&r).expect("report serializes");
        let d = diff(&p, &p, &options);
        assert!(d.stacks.is_empty(), "a profile does not differ from itself");
        let _ = diff(&empty, &p, &options);
        let s = series(&[("memory1.prof", &empty), ("memory2.prof", &p)], &options);
        let _ = serde_json::to_string(&s).expect("series serializes");
    }
});
