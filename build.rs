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
    // An instruction's large, rarely set message fields are boxed: prost builds each instruction on the
    // stack and moves it into its computation's list, so every byte of the struct is written, copied
    // and copied again as the list grows, set or not. Unboxed, the constant, shardings, shapes and
    // dimension numbers made an instruction 2.7 KB (1.1 KB boxed); a GPU trace's modules, decoded twice
    // at open, spent a quarter of an op tool's time there, mostly faulting in the lists' fresh pages.
    let boxed = [
        "literal",
        "outfeed_shape",
        "sharding",
        "gather_dimension_numbers",
        "scatter_dimension_numbers",
        "convolution_dimension_numbers",
        "collective_device_list",
        "frontend_attributes",
    ];
    let mut config = prost_build::Config::new();
    config.btree_map(["."]).bytes([".tensorflow.profiler.XStat.bytes_value", ".xla.LiteralProto"]);
    for field in boxed {
        config.boxed(format!(".xla.HloInstructionProto.{field}"));
    }
    config.compile_fds(fds)?;
    Ok(())
}
