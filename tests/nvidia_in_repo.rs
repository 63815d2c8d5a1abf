//! A real NVIDIA GPU trace kept in the repository, so a clone without `../shared` still checks one
//! against XProf: `tests/fixtures/device/nvidia_h200_jax/n1_mlp_adam/` (a JAX MLP trained with Adam on
//! an NVIDIA H200, this project's own recording; see `tests/fixtures/README.md`), with XProf 2.24.2's
//! output for every tool beside it (all but the trace viewer's).
//!
//! Compared here: kernel_stats, memory_viewer of every module, memory_profile. The other tools are
//! compared on this same copy by the NVIDIA tests (`nvidia_op_costs`: op_profile, hlo_stats,
//! roofline_model, the Overview's top ops; `nvidia_framework_ops`: framework_op_stats and the
//! Overview's op shares; `nvidia_steps`: overview_page's steps and input_pipeline_analyzer), since
//! `common::device_fixture` reads `tests/fixtures/device/` before `../shared`.

mod common;

use tidemark::analysis::kernel_stats::xprof_json::to_xprof_json as kernel_stats_json;
use tidemark::analysis::memory_profile;
use tidemark::analysis::memory_viewer::{analyze, modules, xprof_json::to_xprof_json, Options};
use tidemark::decode::Profile;
use tidemark::engine::{Scope, Session};

/// The trace and its oracles, as `<folder>/<stem>` under `tests/fixtures` (add `.xplane.pb.gz` or
/// `.<tool>.json`).
const N1: &str = "device/nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam";

/// Its HLO modules (sorted), each with XProf's Memory Viewer output (`<stem>.memory_viewer.<module>.json`).
const MODULES: [&str; 9] = [
    "jit__normal(3988)",
    "jit__randint(4651)",
    "jit__threefry_fold_in(3325)",
    "jit__threefry_seed(662)",
    "jit_convert_element_type(2663)",
    "jit_init(1325)",
    "jit_init_fn(1998)",
    "jit_stage(0)",
    "jit_train_step(5314)",
];

fn trace() -> Vec<u8> {
    common::bytes(&format!("{N1}.xplane.pb.gz"))
}

#[test]
fn kernel_stats_equals_xprof() {
    let mut session = Session::new();
    let id = session.open(N1, trace(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id;
    let stats = session.kernel_stats(&Scope::file(id)).unwrap();
    let oracle = common::json(&format!("{N1}.kernel_stats.json"));
    assert_eq!(stats.reports.len(), oracle["rows"].as_array().map_or(0, Vec::len), "rows");
    // Hopper kernels that XProf says do not use Tensor Cores (cuBLAS `nvjet_…`, Triton `gemm_fusion_…`)
    // and ones that do (`sm90_xmma_gemm_…`), so the check covers both answers.
    let uses = |name: &str| {
        stats.reports.iter().filter(|r| r.key.name.starts_with(name)).map(|r| r.key.is_kernel_using_tensor_core).collect::<Vec<_>>()
    };
    assert!(uses("gemm_fusion").iter().all(|u| !u) && !uses("gemm_fusion").is_empty());
    assert!(uses("sm90_xmma_gemm").iter().all(|u| *u) && !uses("sm90_xmma_gemm").is_empty());
    if let Some(d) = common::json_diff(&kernel_stats_json(&stats), &oracle) {
        panic!("kernel_stats of {N1} differs from XProf: {d}");
    }
}

#[test]
fn memory_viewer_of_every_module_equals_xprof() {
    let file = common::open(&format!("{N1}.xplane.pb.gz"));
    let inputs = modules::module_inputs(&file.profile);
    let mut names: Vec<&str> = inputs.iter().map(|m| m.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, MODULES, "one XProf output per embedded module");
    let mut failures = Vec::new();
    for m in &inputs {
        let proto = m.proto.as_ref().unwrap_or_else(|e| panic!("{}: {e}", m.name));
        let viewer = analyze(proto, Options::default()).unwrap_or_else(|e| panic!("{}: {e}", m.name));
        let oracle = common::json(&format!("{N1}.memory_viewer.{}.json", m.name));
        let differences = common::memory_viewer::compare(to_xprof_json(&viewer), &oracle);
        if !differences.is_empty() {
            failures.push(format!("{}: {}", m.name, differences.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "modules differ from XProf:\n{}", failures.join("\n"));
}

#[test]
fn memory_profile_equals_xprof() {
    let file = common::open(&format!("{N1}.xplane.pb.gz"));
    let Profile::XSpace(space) = &file.profile else { panic!("{N1} is not an XSpace") };
    let profile = memory_profile::analyze(space).expect("analyzes");
    let mut ids: Vec<_> = profile.memory_ids().collect();
    ids.sort_unstable();
    assert_eq!(ids, ["GPU_0_bfc", "xla_gpu_host_bfc"], "memory IDs (the list guards against a profile empty on both sides)");
    let oracle = common::json(&format!("{N1}.memory_profile.json"));
    common::memory_profile::compare(N1, &oracle, &common::memory_profile::ours(&profile));
}
