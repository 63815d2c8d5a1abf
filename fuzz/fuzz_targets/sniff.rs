//! Format sniffing: any bytes, any name → a format or a "not a profile" error naming what it is.
#![no_main]
use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 6] = ["trace.xplane.pb", "module.hlo.pb", "jit_f(1).hlo_proto.pb", "memory.prof", "data.bin", ""];

fuzz_target!(|data: &[u8]| {
    let (name, bytes) = match data.split_first() {
        Some((&k, rest)) => (NAMES[k as usize % NAMES.len()], rest),
        None => ("", data),
    };
    if let Err(e) = tidemark::decode::sniff::sniff(bytes, name) {
        assert!(!e.to_string().is_empty());
    }
});
