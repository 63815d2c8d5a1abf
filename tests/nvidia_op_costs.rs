//! XLA's GPU cost of every op, as XProf 2.24 computes it, on the NVIDIA H200 JAX traces: HLO Op Stats,
//! the roofline and Op Profile equal XProf's output (scatter and gather fusions, dynamic-update-slice
//! fusions, reduce and convert fusions, Triton gemm fusions, cuDNN convolutions, the threefry fusions
//! whose bitcasts reinterpret in place), and the Overview's top ten device ops are XProf's rows. Read
//! in place from `../shared/fixtures/device/` (skipped with a note when absent).

mod common;

use serde_json::Value;
use tidemark::analysis::hlo_stats::xprof_json::to_xprof_json as hlo_stats_json;
use tidemark::analysis::op_profile::xprof_json::to_xprof_json as op_profile_json;
use tidemark::analysis::overview_page::xprof_json::overview_page_json;
use tidemark::analysis::roofline_model::xprof_json::to_xprof_json as roofline_json;
use tidemark::engine::{Scope, Session};

/// The NVIDIA traces whose ops XProf costs (folder/name prefix under `nvidia_h200_jax/`).
const NVIDIA_FIXTURES: &[&str] = &["n1_mlp_adam/n1_mlp_adam", "n2_cnn_bf16/n2_cnn_bf16", "n3_lm_scan/n3_lm_scan", "n4_decode/n4_decode"];

/// The trace's session and file id, and its XProf output for a tool; `None` where the fixtures are absent.
fn open(f: &str) -> Option<(Session, u32, impl Fn(&str) -> Value)> {
    let trace = common::device_fixture(&format!("nvidia_h200_jax/{f}.xplane.pb.gz"))?;
    let stem = f.rsplit('/').next().unwrap().to_string();
    let dir = trace.parent().unwrap().to_path_buf();
    let mut session = Session::new();
    let id = session.open(f, std::fs::read(&trace).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{f}: {e}")).id;
    Some((session, id, move |tool: &str| common::json_at(&dir.join(format!("{stem}.{tool}.json")))))
}

fn assert_same(tool: &str, fixture: &str, actual: &Value, expected: &Value) {
    if let Some(d) = common::json_diff(actual, expected) {
        panic!("{tool} of {fixture} differs from XProf: {d}");
    }
}

/// Every op is costed (no note), and HLO Op Stats and the roofline equal XProf's, row for row.
#[test]
fn hlo_stats_and_roofline_equal_xprof() {
    for f in NVIDIA_FIXTURES {
        let Some((mut session, id, oracle)) = open(f) else { return };
        let ops = session.device_ops(&Scope::file(id), "op tables").unwrap();
        assert!(ops.uncosted.is_empty(), "{f}: {:?}", ops.cost_note());
        let stats = session.hlo_stats(&Scope::file(id)).unwrap();
        assert!(stats.rows.iter().any(|r| r.op.flops > 0), "{f}: FLOPs");
        assert_same("hlo_stats", f, &hlo_stats_json(&stats), &oracle("hlo_stats"));
        assert_same("roofline_model", f, &roofline_json(&session.roofline_model(&Scope::file(id)).unwrap()), &oracle("roofline_model"));
    }
}

/// Op Profile's tree equals XProf's, each node's children compared as a set where XProf's order is
/// its hash order (children of equal time).
#[test]
fn op_profile_equals_xprof() {
    for f in NVIDIA_FIXTURES {
        let Some((mut session, id, oracle)) = open(f) else { return };
        let mut ours = op_profile_json(&session.op_profile(&Scope::file(id)).unwrap());
        let mut expected = oracle("op_profile");
        common::sort_equal_time_children(&mut ours);
        common::sort_equal_time_children(&mut expected);
        assert_same("op_profile", f, &ours, &expected);
    }
}

/// The Overview's top ten device ops: XProf's rows (self time, cumulative time, category, operation,
/// FLOP rate), now that every op has its cost. Tensor Core eligibility and use are Kernel Stats'
/// (compared by its own tests), left out here.
#[test]
fn overview_top_device_ops_equal_xprof() {
    const TENSOR_CORE_COLUMNS: [&str; 2] = ["tcEligibility", "tcUtilization"];
    for f in NVIDIA_FIXTURES {
        let Some((mut session, id, oracle)) = open(f) else { return };
        let without_tensor_cores = |page: &Value| {
            let table = &page[0];
            let cols: Vec<&str> = table["cols"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
            let rows: Vec<Vec<Value>> = table["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let cells = r["c"].as_array().unwrap();
                    cols.iter().zip(cells).filter(|(c, _)| !TENSOR_CORE_COLUMNS.contains(c)).map(|(_, v)| v.clone()).collect()
                })
                .collect();
            serde_json::json!(rows)
        };
        let ours = overview_page_json(session.overview_page(&[id]).unwrap());
        let expected = oracle("overview_page");
        assert_eq!(expected[0]["rows"].as_array().map(Vec::len), Some(10), "{f}: XProf's top ten");
        assert_same("overview_page top device ops", f, &without_tensor_cores(&ours), &without_tensor_cores(&expected));
    }
}
