//! A pprof profile and the figures the overview reads from it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tidemark::decode::pprof::PprofFile;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = PprofFile::decode(data) {
        let _ = p.sample_types();
        let _ = p.total_bytes();
        let _ = p.bytes_column();
    }
});
