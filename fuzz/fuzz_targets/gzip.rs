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
        // A stream cut short gives what it inflated before the cut, and says how much.
        if let Ok((out, Some(cut))) = gzip::inflate_to_cut(data) {
            assert_eq!((cut.compressed_len, cut.inflated_bytes), (data.len() as u64, out.len() as u64));
        }
    }
});
