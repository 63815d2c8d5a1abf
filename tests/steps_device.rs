//! The Input Pipeline Analyzer and Overview Page against XProf 2.24 on the real GPU/TPU profiles, read in
//! place (skipped where they are absent). Tidemark's steps are the host's: XProf takes device traces'
//! steps from the device (kernels grouped by correlation, TPU step lines) and fills the overview's top
//! ops from a device op table, neither of which is computed here. What is equal today is asserted; what
//! is not is listed by table, so a change either way shows.

mod common;

use serde_json::Value;
use tidemark::analysis::input_pipeline::xprof_json::input_pipeline_json;
use tidemark::analysis::op_metrics::host::host_op_metrics_db;
use tidemark::analysis::overview_page::{xprof_json::overview_page_json, OverviewPage, RunEnvironment};
use tidemark::analysis::steps;
use tidemark::decode::Profile;

/// (folder/stem, tables of input_pipeline_analyzer that differ, tables of overview_page that differ), and why:
/// - AMD GPUs (no step markers anywhere): both equal (the overview's top ops from the GPU op db, their
///   Tensor Core flags from the kernel stats, the GPU model from the device's capabilities).
/// - TPU v6e: XProf writes its TPU step table (TPU columns, the max-infeed-core table) and the TPU duty
///   cycle, which are not computed here.
/// - V100: XProf finds one step from the device's kernels (device compute 14.9 ms); the host alone has
///   none, so the step table, verdict, recommendation and diagnostics differ. The host input-op table is
///   equal.
const DEVICE: [(&str, &[usize], &[usize]); 5] = [
    ("jax_mi300x_attention/mi300x_attention", &[], &[]),
    ("jax_mi300x_conv/mi300x_conv", &[], &[]),
    ("jax_mi355x_te_attention/mi355x_te_attention", &[], &[]),
    ("jax_tpu_v6e_inference/tpu_v6e_inference", &[0, 1], &[0, 1]),
    ("tf_v100_multi_worker/v100_worker", &[1, 4], &[0, 1, 3, 6]),
];

fn differing(actual: &Value, expected: &Value) -> (Vec<usize>, Vec<String>) {
    let n = expected.as_array().map_or(0, Vec::len);
    let diffs: Vec<(usize, String)> = (0..n).filter_map(|i| common::json_diff(&actual[i], &expected[i]).map(|d| (i, d))).collect();
    (diffs.iter().map(|(i, _)| *i).collect(), diffs.into_iter().map(|(i, d)| format!("table {i}: {d}")).collect())
}

#[test]
fn device_profiles_against_xprof() {
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for (stem, ipa_differs, overview_differs) in DEVICE {
        let Some(path) = common::device_fixture(&format!("{stem}.xplane.pb")) else { continue };
        let bytes = std::fs::read(&path).expect("read");
        let file = tidemark::decode::decode(stem, bytes, &mut |_, _| {}).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let Profile::XSpace(space) = &file.profile else { panic!("{stem}: not a trace") };
        let db = steps::step_db(space).expect("steps");
        let host_ops = host_op_metrics_db(space).expect("host ops");
        let modules = tidemark::analysis::xla_modules::XlaModules::from_space(space);
        let device_ops = tidemark::analysis::device_ops::analyze(space, &modules).ok();
        let mut page = OverviewPage::new(&db, &host_ops, device_ops.as_ref().map(|d| &d.db), RunEnvironment::of(space));
        page.mark_tensor_cores(&tidemark::analysis::kernel_stats::analyze(space, &modules).expect("kernel stats"));
        for (tool, actual, expected_differs) in [
            ("input_pipeline_analyzer", input_pipeline_json(&page.input), ipa_differs),
            ("overview_page", overview_page_json(&page), overview_differs),
        ] {
            let expected = common::json_at(&path.with_file_name(format!("{}.{tool}.json", stem.rsplit('/').next().unwrap_or(stem))));
            let (tables, diffs) = differing(&actual, &expected);
            report.push(format!("{stem} {tool}: {}", if diffs.is_empty() { "equal".to_string() } else { diffs.join("; ") }));
            if tables != expected_differs {
                failures.push(format!("{stem} {tool}: tables differing {tables:?}, expected {expected_differs:?}"));
            }
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// On the TPU trace the overview's top ten device ops (from the device op table, folded into framework
/// ops) and the host/device op shares equal XProf's; the duty cycle beside them is not computed.
#[test]
fn tpu_top_device_ops_equal_xprof() {
    let stem = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some(path) = common::device_fixture(&format!("{stem}.xplane.pb")) else { return };
    let file = tidemark::decode::decode(stem, std::fs::read(&path).expect("read"), &mut |_, _| {}).expect("decodes");
    let Profile::XSpace(space) = &file.profile else { panic!("not a trace") };
    let device_ops = tidemark::analysis::device_ops::analyze(space, &tidemark::analysis::xla_modules::XlaModules::from_space(space))
        .expect("TPU device ops");
    let page = OverviewPage::new(
        &steps::step_db(space).expect("steps"),
        &host_op_metrics_db(space).expect("host ops"),
        Some(&device_ops.db),
        RunEnvironment::of(space),
    );
    let actual = overview_page_json(&page);
    let expected = common::json_at(&path.with_file_name("tpu_v6e_inference.overview_page.json"));
    assert_eq!(common::json_diff(&actual[0]["rows"], &expected[0]["rows"]), None);
    assert_eq!(common::json_diff(&actual[0]["cols"], &expected[0]["cols"]), None);
    for key in ["host_tf_op_percent", "device_tf_op_percent", "host_op_time_eager_percent", "device_op_time_eager_percent"] {
        assert_eq!(actual[0]["p"][key], expected[0]["p"][key], "{key}");
    }
    assert_eq!(common::json_diff(&actual[2], &expected[2]), None, "run environment");
    assert_eq!(common::json_diff(&actual[3], &expected[3]), None, "recommendation");
}
