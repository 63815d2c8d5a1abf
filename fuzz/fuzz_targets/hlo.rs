//! A standalone HloProto and its overview summary.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tidemark::decode::hlo::{summarize, HloFile};

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = HloFile::decode(data) {
        let s = summarize("fuzz", None, &f.proto);
        let _ = serde_json::to_string(&s).expect("summary serializes");
    }
});
