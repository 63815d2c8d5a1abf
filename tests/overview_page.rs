//! The Overview Page against XProf 2.24's `overview_page` JSON on every CPU fixture, table by table.

mod common;

use tidemark::analysis::op_metrics::host::host_op_metrics_db;
use tidemark::analysis::overview_page::{xprof_json, OverviewPage, RunEnvironment};
use tidemark::analysis::steps;
use tidemark::decode::Profile;

#[test]
fn overview_pages_equal_xprof() {
    let mut failures = Vec::new();
    for stem in common::CPU_TRACES {
        let file = common::open(&format!("{stem}.xplane.pb.gz"));
        let Profile::XSpace(space) = &file.profile else { panic!("{stem}: not a trace") };
        let db = steps::step_db(space).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let page =
            OverviewPage::new(&db, &host_op_metrics_db(space).unwrap_or_else(|e| panic!("{stem}: {e}")), None, RunEnvironment::of(space));
        let actual = xprof_json::overview_page_json(&page);
        let expected = common::json(&format!("{stem}.overview_page.json"));
        for i in 0..7 {
            if let Some(d) = common::json_diff(&actual[i], &expected[i]) {
                failures.push(format!("{stem}: table {i}: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The engine's cached view and the CLI: `--json` prints XProf's JSON for both tools; the text says the
/// verdict and the steps, and says in words when there are none.
#[test]
fn engine_and_cli_give_the_same_pages() {
    let mut session = tidemark::engine::Session::new();
    let rel = "tf/d1_tf_keras_bfc/d1_tf_keras_bfc";
    let id = session.open(rel, common::bytes(&format!("{rel}.xplane.pb.gz")), &mut |_, _| {}).expect("opens").id;
    let page = session.overview_page(&[id]).expect("overview").clone();
    assert_eq!(common::json_diff(&xprof_json::overview_page_json(&page), &common::json(&format!("{rel}.overview_page.json"))), None);
    assert_eq!(session.input_pipeline(&[id]).expect("input pipeline"), &page.input);

    let bin = env!("CARGO_BIN_EXE_tidemark");
    for (tool, command) in [("input_pipeline_analyzer", "input-pipeline-analyzer"), ("overview_page", "overview-page")] {
        let out = std::process::Command::new(bin)
            .args([command, "--json"])
            .arg(common::fixture(&format!("{rel}.xplane.pb.gz")))
            .output()
            .expect("runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let printed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(common::json_diff(&printed, &common::json(&format!("{rel}.{tool}.json"))), None, "{command}");
    }
    let text = |command: &str, rel: &str| {
        let out = std::process::Command::new(bin).arg(command).arg(common::fixture(&format!("{rel}.xplane.pb.gz"))).output().expect("runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ipa = text("input-pipeline-analyzer", rel);
    assert!(
        ipa.contains("POTENTIALLY input-bound because 6.8%") && ipa.contains("steps: 18 (of 20 found, the first and last dropped)"),
        "{ipa}"
    );
    assert!(ipa.contains("train 1 ") && ipa.contains("Iterator::Root::Prefetch"), "{ipa}");
    let none = text("overview-page", "jax/a1_docs_seed/a1_docs_seed");
    assert!(none.contains("No step time measured") && none.contains("no step found"), "{none}");
}
