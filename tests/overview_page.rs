//! The Overview Page against XProf 2.24's `overview_page` JSON on every CPU fixture, table by table.

mod common;

use tidemark::analysis::op_metrics::host::host_op_metrics_db;
use tidemark::analysis::overview_page::{xprof_json, OverviewPage, RunEnvironment};
use tidemark::analysis::steps;
use tidemark::decode::Profile;

const FIXTURES: [&str; 6] = [
    "tf/d2_tf_cnn/d2_tf_cnn",
    "tf/d1_tf_keras_bfc/d1_tf_keras_bfc",
    "tf/d1_tf_keras_none/d1_tf_keras_none",
    "tf/d1_tf_keras_stats/d1_tf_keras_stats",
    "jax/a1_docs_seed/a1_docs_seed",
    "jax/a2_mlp_train/a2_mlp_train",
];

#[test]
fn overview_pages_equal_xprof() {
    let mut failures = Vec::new();
    for stem in FIXTURES {
        let file = common::open(&format!("{stem}.xplane.pb.gz"));
        let Profile::XSpace(space) = &file.profile else { panic!("{stem}: not a trace") };
        let db = steps::step_db(space).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let page = OverviewPage::new(&db, &host_op_metrics_db(space).unwrap_or_else(|e| panic!("{stem}: {e}")), RunEnvironment::of(space));
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
