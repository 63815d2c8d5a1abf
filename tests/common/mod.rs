//! Shared by the integration tests: where the fixtures are and how to read them.
#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel)
}

/// The fixture's bytes as stored (gzipped or not): what a user would drop.
pub fn bytes(rel: &str) -> Vec<u8> {
    let p = fixture(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A JSON fixture, gunzipped if stored as `.gz`.
pub fn json(rel: &str) -> serde_json::Value {
    let raw = bytes(rel);
    let text = if rel.ends_with(".gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_string(&mut s).expect("gunzip");
        s
    } else {
        String::from_utf8(raw).expect("utf-8")
    };
    serde_json::from_str(&text).expect("json")
}

pub fn open(rel: &str) -> tidemark::decode::DecodedFile {
    tidemark::decode::decode(rel, bytes(rel), &mut |_, _| {}).unwrap_or_else(|e| panic!("{rel}: {e}"))
}
