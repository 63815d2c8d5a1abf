//! The Memory Viewer of any HloProto, for every memory space it has, and its XProf JSON.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tidemark::analysis::memory_viewer::{analyze, xprof_json, Options};

fuzz_target!(|data: &[u8]| {
    let Ok(proto) = tidemark::decode::hlo::decode_proto(data) else { return };
    let Ok(first) = analyze(&proto, Options::default()) else { return };
    for memory_space in first.memory_spaces.clone() {
        if let Ok(v) = analyze(&proto, Options { memory_space, small_buffer_bytes: 0 }) {
            assert_eq!(v.heap_bytes.len(), v.instruction_names.len());
            let _ = xprof_json::to_xprof_json(&v);
            let _ = serde_json::to_string(&v).expect("viewer serializes");
        }
    }
});
