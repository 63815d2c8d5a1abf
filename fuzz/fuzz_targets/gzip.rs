//! Bounded gzip inflation: never more than the limit, never a panic; any error is a clear one.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tidemark::decode::gzip;

fuzz_target!(|data: &[u8]| {
    // A small limit keeps bombs cheap to detect; the default limit is exercised too for small outputs.
    match gzip::inflate_with_limit(data, 1 << 20) {
        Ok(out) => assert!(out.len() <= 1 << 20),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if data.len() < 64 {
        let _ = gzip::inflate(data);
    }
});
