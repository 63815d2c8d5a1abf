//! Kernel Stats of the real NVIDIA H200 JAX traces beside the checkout (read in place, skipped with a
//! note when absent) equal XProf 2.24's, every column and the row order: Hopper cuBLAS (`nvjet_…`,
//! `sm90_xmma_gemm_…`), cuDNN and CUTLASS convolutions, Triton `gemm_fusion_…` kernels, with their Tensor
//! Core use decided by the plane's vendor and their ops' eligibility by JAX op names.

mod common;

use tidemark::analysis::kernel_stats::xprof_json::to_xprof_json as kernel_stats_json;
use tidemark::engine::{Scope, Session};

/// (folder/stem, rows XProf lists): the counts guard against a table empty on both sides.
const NVIDIA_H200: [(&str, usize); 5] = [
    ("nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam", 197),
    ("nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16", 643),
    ("nvidia_h200_jax/n3_lm_scan/n3_lm_scan", 427),
    ("nvidia_h200_jax/n4_decode/n4_decode", 76),
    ("nvidia_h200_jax/n6_oom_seed/n6_oom_seed", 0),
];

#[test]
fn kernel_stats_equals_xprof_on_nvidia_h200_traces() {
    for (f, rows) in NVIDIA_H200 {
        let Some(trace) = common::device_fixture(&format!("{f}.xplane.pb.gz")) else { continue };
        let oracle = common::json_at(&trace.with_file_name(format!("{}.kernel_stats.json", f.rsplit('/').next().unwrap())));
        let mut session = Session::new();
        let id = session.open(f, std::fs::read(&trace).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
        let stats = session.kernel_stats(&Scope::file(id)).unwrap();
        assert_eq!(stats.reports.len(), rows, "{f}: rows");
        if let Some(d) = common::json_diff(&kernel_stats_json(&stats), &oracle) {
            panic!("kernel_stats of {f} differs from XProf: {d}");
        }
    }
}
