//! Generates the protobuf types from our own `.proto` files with a pure-Rust parser (protox), so a
//! build needs no `protoc` binary.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/xplane.proto", "proto/hlo.proto", "proto/pprof.proto"];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    // BTreeMap keeps map iteration (plane metadata) in key order: deterministic output everywhere.
    // The large byte fields are `bytes::Bytes`: an XStat's bytes (the HLO protos a trace embeds, tens
    // of MB with their constants) is copied once out of the file, not twice, and an HloProto decoded
    // from it shares its literals' bytes instead of copying them (most of a large GPU trace's time was
    // the kernel zeroing the pages those copies touched).
    prost_build::Config::new().btree_map(["."]).bytes([".tensorflow.profiler.XStat.bytes_value", ".xla.LiteralProto"]).compile_fds(fds)?;
    Ok(())
}
