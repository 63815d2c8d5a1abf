//! Generates the protobuf types from our own `.proto` files with a pure-Rust parser (protox), so a
//! build needs no `protoc` binary.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/xplane.proto", "proto/hlo.proto", "proto/pprof.proto"];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    // BTreeMap keeps map iteration (plane metadata) in key order: deterministic output everywhere.
    prost_build::Config::new().btree_map(["."]).compile_fds(fds)?;
    Ok(())
}
