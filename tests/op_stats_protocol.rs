//! The HLO Op Stats, Kernel Stats and Roofline pages' requests through the worker protocol, against
//! XProf's own output: every column the page draws equals XProf's column of the same id, row by row,
//! on the real TPU v6e and V100 traces (read in place, skipped with a note when absent); the CPU
//! fixtures give empty tables; traces the engine refuses answer `Failed` with the reason.

mod common;

use common::ask;

use serde_json::Value;
use tidemark::engine::hlo_stats::HloStatsView;
use tidemark::engine::kernel_stats::KernelStatsView;
use tidemark::engine::protocol::{request, RequestBody, ResponseBody};
use tidemark::engine::roofline_model::RooflineModelView;
use tidemark::engine::Scope;
use tidemark::engine::{EngineError, Session};

const TPU: &str = "jax_tpu_v6e_inference/tpu_v6e_inference";
const V100: &str = "tf_v100_multi_worker/v100_worker";
const CPU: &str = "tf/d2_tf_cnn/d2_tf_cnn";

fn open(s: &mut Session, name: &str, bytes: Vec<u8>) -> u32 {
    match ask(s, RequestBody::Open { path: name.into() }, Some(bytes)) {
        ResponseBody::Opened { file_id, .. } => file_id,
        other => panic!("{other:?}"),
    }
}

/// A session with device fixture `prefix` open, and XProf's output of `tool` for it.
fn device(prefix: &str, tool: &str) -> Option<(Session, u32, Value)> {
    let trace = common::device_fixture(&format!("{prefix}.xplane.pb"))?;
    let name = prefix.rsplit('/').next().unwrap();
    let oracle = common::json_at(&trace.with_file_name(format!("{name}.{tool}.json")));
    let mut s = Session::new();
    let id = open(&mut s, name, std::fs::read(&trace).unwrap());
    Some((s, id, oracle))
}

fn cpu() -> (Session, u32) {
    let mut s = Session::new();
    let id = open(&mut s, "d2_tf_cnn.xplane.pb.gz", common::bytes(&format!("{CPU}.xplane.pb.gz")));
    (s, id)
}

fn hlo(s: &mut Session, file_id: u32) -> Result<HloStatsView, EngineError> {
    match ask(s, RequestBody::from(request::HloStats { scope: Scope::file(file_id) }), None) {
        ResponseBody::HloStats { view } => Ok(*view),
        ResponseBody::Failed { error } => Err(error),
        other => panic!("{other:?}"),
    }
}

fn kernels(s: &mut Session, file_id: u32) -> KernelStatsView {
    match ask(s, RequestBody::from(request::KernelStats { scope: Scope::file(file_id) }), None) {
        ResponseBody::KernelStats { view } => *view,
        other => panic!("{other:?}"),
    }
}

fn roofline(s: &mut Session, file_id: u32, include_infeed_outfeed: bool) -> Result<RooflineModelView, EngineError> {
    match ask(s, RequestBody::from(request::RooflineModel { scope: Scope::file(file_id), include_infeed_outfeed }), None) {
        ResponseBody::RooflineModel { view } => Ok(*view),
        ResponseBody::Failed { error } => Err(error),
        other => panic!("{other:?}"),
    }
}

/// Column `id` of XProf's DataTable `table`, over `rows` (indices into its rows).
fn oracle_column(table: &Value, id: &str, rows: &[usize]) -> Vec<Value> {
    let col = table["cols"].as_array().unwrap().iter().position(|c| c["id"] == id).unwrap_or_else(|| panic!("no column {id}"));
    rows.iter().map(|&r| table["rows"][r]["c"][col]["v"].clone()).collect()
}

/// Our column `ours` equals XProf's column `id` (numbers to 1e-9 relative, after `scale`).
fn assert_numbers(label: &str, table: &Value, id: &str, rows: &[usize], ours: &[f64], scale: f64) {
    let theirs = oracle_column(table, id, rows);
    assert_eq!(ours.len(), theirs.len(), "{label} {id}: rows");
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        let b = b.as_f64().unwrap_or_else(|| panic!("{label} {id} row {i}: {b}")) * scale;
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{label} {id} row {i}: {a} vs XProf's {b}");
    }
}

fn assert_texts(label: &str, table: &Value, id: &str, rows: &[usize], ours: &[String]) {
    let theirs: Vec<String> =
        oracle_column(table, id, rows).iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).collect();
    assert_eq!(ours, theirs, "{label} {id}");
}

fn yes_no(v: &[bool]) -> Vec<String> {
    v.iter().map(|b| if *b { "Yes" } else { "No" }.to_string()).collect()
}

fn u64s(v: &[u64]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

#[test]
fn hlo_op_stats_page_is_xprofs_table_on_the_tpu_trace() {
    let Some((mut s, id, oracle)) = device(TPU, "hlo_stats") else { return };
    let v = hlo(&mut s, id).unwrap();
    let c = &v.columns;
    let rows: Vec<usize> = (0..oracle["rows"].as_array().unwrap().len()).collect();
    assert!(!rows.is_empty());
    let l = "hlo_stats";
    assert_numbers(l, &oracle, "rank", &rows, &u64s(&c.rank), 1.0);
    assert_texts(l, &oracle, "program_id", &rows, &c.program_id.iter().map(u64::to_string).collect::<Vec<_>>());
    assert_texts(l, &oracle, "category", &rows, &c.category);
    assert_texts(l, &oracle, "hlo_op_name", &rows, &c.hlo_op_name);
    assert_texts(l, &oracle, "hlo_op_expression", &rows, &c.expression);
    assert_texts(l, &oracle, "tf_op_name", &rows, &c.framework_op);
    assert_numbers(l, &oracle, "occurrences", &rows, &u64s(&c.occurrences), 1.0);
    assert_numbers(l, &oracle, "total_time", &rows, &c.total_time_us, 1.0);
    assert_numbers(l, &oracle, "avg_time", &rows, &c.avg_time_us, 1.0);
    assert_numbers(l, &oracle, "total_self_time", &rows, &c.total_self_time_us, 1.0);
    assert_numbers(l, &oracle, "avg_self_time", &rows, &c.avg_self_time_us, 1.0);
    // XProf writes percents; the page carries fractions.
    assert_numbers(l, &oracle, "total_self_time_percent", &rows, &c.self_time_fraction, 0.01);
    assert_numbers(l, &oracle, "cumulative_total_self_time_percent", &rows, &c.cumulative_self_time_fraction, 0.01);
    assert_numbers(l, &oracle, "dma_stall_percent", &rows, &c.dma_stall_fraction, 1.0);
    assert_numbers(l, &oracle, "model_flop_rate", &rows, &c.model_flop_rate, 1.0);
    assert_numbers(l, &oracle, "normalized_flop_rate", &rows, &c.normalized_flop_rate, 1.0);
    assert_numbers(l, &oracle, "measured_memory_bw", &rows, &c.measured_memory_bw, 1.0);
    assert_numbers(l, &oracle, "hbm_bw", &rows, &c.hbm_bw, 1.0);
    assert_numbers(l, &oracle, "cmem_read_bw", &rows, &c.cmem_read_bw, 1.0);
    assert_numbers(l, &oracle, "cmem_write_bw", &rows, &c.cmem_write_bw, 1.0);
    assert_numbers(l, &oracle, "operational_intensity", &rows, &c.operational_intensity, 1.0);
    assert_texts(l, &oracle, "bound_by", &rows, &c.bound_by);
    assert_texts(l, &oracle, "hlo_rematerialization", &rows, &yes_no(&c.rematerialization));
    assert_texts(l, &oracle, "outside_compilation", &rows, &yes_no(&c.outside_compilation));
    assert_texts(l, &oracle, "autotuned", &rows, &yes_no(&c.autotuned));
    assert_texts(l, &oracle, "core_type", &rows, &c.core_type);
    // The summary: the ops' self time, its share of the device's time, the leading category.
    let total: f64 = oracle_column(&oracle, "total_self_time", &rows).iter().filter_map(Value::as_f64).sum();
    assert!((v.total_self_time_us - total).abs() <= 1e-9 * total);
    let last = oracle_column(&oracle, "cumulative_total_self_time_percent", &rows).last().unwrap().as_f64().unwrap();
    assert!((v.op_time_fraction - last / 100.0).abs() < 1e-12);
    let (category, share) = v.top_category.expect("a leading category");
    assert!(c.category.contains(&category) && share > 0.0 && share <= 1.0, "{category} {share}");
}

/// XProf's pie chart of `table` grouping its TensorCore rows by column `group` (rows where `keep`):
/// Σ `total_self_time` per group, largest first, groups under 1 % merged into "Other" at the end
/// (Google Charts' `sliceVisibilityThreshold` 0.01, which XProf's page sets).
fn xprof_pie(table: &Value, group: &str, keep: impl Fn(&Value) -> bool) -> Vec<(String, f64)> {
    let col = |id: &str| table["cols"].as_array().unwrap().iter().position(|c| c["id"] == id).unwrap();
    let (g, t, core) = (col(group), col("total_self_time"), col("core_type"));
    let mut sums: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    for r in table["rows"].as_array().unwrap().iter().filter(|r| r["c"][core]["v"] != "SparseCore" && keep(r)) {
        *sums.entry(r["c"][g]["v"].as_str().unwrap().to_string()).or_default() += r["c"][t]["v"].as_f64().unwrap();
    }
    let total: f64 = sums.values().sum();
    let mut groups: Vec<(String, f64)> = sums.into_iter().collect();
    groups.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let (shown, small): (Vec<_>, Vec<_>) = groups.into_iter().partition(|(_, us)| us / total >= 0.01);
    let mut pie = shown;
    if !small.is_empty() {
        pie.push(("Other".to_string(), small.iter().map(|(_, us)| us).sum()));
    }
    pie
}

fn assert_pie(label: &str, ours: &[tidemark::engine::framework_op_stats::TypeSelfTime], theirs: &[(String, f64)]) {
    let names: Vec<&str> = ours.iter().map(|t| t.op_type.as_str()).collect();
    assert_eq!(names, theirs.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), "{label}");
    let total: f64 = theirs.iter().map(|(_, us)| us).sum();
    for (t, (_, us)) in ours.iter().zip(theirs) {
        assert!((t.self_time_us - us).abs() <= 1e-9 * us.abs().max(1.0), "{label} {}: {} vs {us}", t.op_type, t.self_time_us);
        assert!((t.fraction - us / total).abs() <= 1e-12, "{label} {}", t.op_type);
    }
}

#[test]
fn hlo_op_stats_charts_are_xprofs_pies_on_the_tpu_trace() {
    let Some((mut s, id, oracle)) = device(TPU, "hlo_stats") else { return };
    let charts = hlo(&mut s, id).unwrap().charts;
    let remat = oracle["cols"].as_array().unwrap().iter().position(|c| c["id"] == "hlo_rematerialization").unwrap();
    assert_pie("by category", &charts.by_category, &xprof_pie(&oracle, "category", |_| true));
    assert_pie("by op", &charts.by_op, &xprof_pie(&oracle, "hlo_op_expression", |_| true));
    assert_pie("rematerialization", &charts.rematerialization, &xprof_pie(&oracle, "hlo_rematerialization", |_| true));
    assert_pie(
        "remat by category",
        &charts.rematerialization_by_category,
        &xprof_pie(&oracle, "category", |r| r["c"][remat]["v"] == "Yes"),
    );
    assert_pie("outside compilation", &charts.outside_compilation, &xprof_pie(&oracle, "outside_compilation", |_| true));
    assert!(charts.by_category.len() > 2, "{:?}", charts.by_category);
    assert!(charts.by_op.iter().any(|t| t.op_type == "Other"), "small ops merged: {:?}", charts.by_op);
}

#[test]
fn kernel_stats_page_is_xprofs_table_on_the_v100_trace() {
    let Some((mut s, id, oracle)) = device(V100, "kernel_stats") else { return };
    let v = kernels(&mut s, id);
    let c = &v.columns;
    let rows: Vec<usize> = (0..oracle["rows"].as_array().unwrap().len()).collect();
    assert!(!rows.is_empty());
    let l = "kernel_stats";
    let dims = |d: &[[u32; 3]]| d.iter().map(|d| format!("{},{},{}", d[0], d[1], d[2])).collect::<Vec<_>>();
    let bools = |b: &[bool]| b.iter().map(bool::to_string).collect::<Vec<_>>();
    assert_texts(l, &oracle, "kernel_name", &rows, &c.kernel_name);
    assert_numbers(
        l,
        &oracle,
        "registers_per_thread",
        &rows,
        &c.registers_per_thread.iter().map(|&r| f64::from(r)).collect::<Vec<_>>(),
        1.0,
    );
    assert_numbers(l, &oracle, "shmem_bytes", &rows, &u64s(&c.shmem_bytes), 1.0);
    assert_texts(l, &oracle, "block_dim", &rows, &dims(&c.block_dim));
    assert_texts(l, &oracle, "grid_dim", &rows, &dims(&c.grid_dim));
    assert_numbers(l, &oracle, "occupancy_pct", &rows, &c.occupancy_pct, 1.0);
    assert_texts(l, &oracle, "is_op_tensor_core_eligible", &rows, &bools(&c.op_tensor_core_eligible));
    assert_texts(l, &oracle, "is_kernel_using_tensor_core", &rows, &bools(&c.kernel_uses_tensor_core));
    assert_texts(l, &oracle, "op_name", &rows, &c.op_name);
    assert_numbers(l, &oracle, "occurrences", &rows, &u64s(&c.occurrences), 1.0);
    assert_numbers(l, &oracle, "total_duration_us", &rows, &c.total_duration_us, 1.0);
    assert_numbers(l, &oracle, "avg_duration_us", &rows, &c.avg_duration_us, 1.0);
    assert_numbers(l, &oracle, "min_duration_us", &rows, &c.min_duration_us, 1.0);
    assert_numbers(l, &oracle, "max_duration_us", &rows, &c.max_duration_us, 1.0);
    // The summary's shares are of XProf's rows' total duration.
    let durations: Vec<f64> = oracle_column(&oracle, "total_duration_us", &rows).iter().filter_map(Value::as_f64).collect();
    let on_tc: f64 = rows.iter().filter(|&&i| c.kernel_uses_tensor_core[i]).map(|&i| durations[i]).sum();
    let total: f64 = durations.iter().sum();
    assert!((v.total_duration_us - total).abs() <= 1e-9 * total);
    assert!((v.tensor_core_fraction - on_tc / total).abs() < 1e-12);
    assert!(v.eligible_unused_fraction <= v.eligible_fraction);
}

/// The roofs are XProf's properties (six significant digits), the records its whole-profile rows of
/// each infeed/outfeed setting in its order, the chart's x and y its columns.
#[test]
fn roofline_page_is_xprofs_model_on_the_tpu_trace() {
    let Some((mut s, id, oracle)) = device(TPU, "roofline_model") else { return };
    let table = &oracle[0];
    let p = &table["p"];
    let close6 = |ours: f64, theirs: &Value| {
        let t: f64 = theirs.as_str().unwrap().parse().unwrap();
        (ours - t).abs() <= 5e-6 * t.abs().max(1e-9)
    };
    for include in [true, false] {
        let v = roofline(&mut s, id, include).unwrap();
        assert_eq!(v.include_infeed_outfeed, include);
        assert_eq!(v.device_type, p["device_type"].as_str().unwrap());
        assert!(close6(v.peak_flop_rate, &p["peak_flop_rate"]));
        let names: Vec<&str> = v.roofs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["VMEM Read", "VMEM Write", "HBM"], "a v6e has merged VMEM and HBM");
        for roof in &v.roofs {
            assert!(close6(roof.peak_bw_gib_per_s, &p[&roof.peak_metric]), "{}", roof.name);
            let ridge = roof.peak_metric.trim_start_matches("peak_").trim_end_matches("_bw").to_string() + "_ridge_point";
            assert!(close6(roof.ridge_point, &p[&ridge]), "{ridge}");
        }
        let rows: Vec<usize> = table["rows"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(_, r)| r["c"][0]["v"] == "Total" && r["c"][34]["v"] == include)
            .map(|(i, _)| i)
            .collect();
        let c = &v.records;
        assert_eq!(c.rank.len(), rows.len(), "include {include}: records");
        assert_eq!((c.rank[0], c.category[0].as_str()), (0, "Program"));
        let l = &format!("roofline (infeed/outfeed {include})");
        assert_numbers(l, table, "rank", &rows, &u64s(&c.rank), 1.0);
        assert_texts(l, table, "operation", &rows, &c.name);
        assert_texts(l, table, "category", &rows, &c.category);
        assert_numbers(l, table, "total_time", &rows, &c.total_time_us, 1.0);
        assert_numbers(l, table, "total_self_time", &rows, &c.total_self_time_us, 1.0);
        assert_numbers(l, table, "total_self_time_percent", &rows, &c.self_time_fraction, 1.0);
        assert_numbers(l, table, "measured_flop_rate", &rows, &c.measured_flop_rate, 1.0);
        assert_numbers(l, table, "model_flop_rate", &rows, &c.model_flop_rate, 1.0);
        assert_numbers(l, table, "hbm_bw", &rows, &c.hbm_bw, 1.0);
        assert_numbers(l, table, "operational_intensity", &rows, &c.operational_intensity, 1.0);
        assert_numbers(l, table, "bottleneck_operational_intensity", &rows, &c.bottleneck_operational_intensity, 1.0);
        assert_texts(l, table, "bound_by", &rows, &c.bound_by);
        assert_numbers(l, table, "roofline_efficiency", &rows, &c.roofline_efficiency, 1.0);
        assert_numbers(l, table, "total_time_in_percentage", &rows, &c.total_time_fraction, 1.0);
        assert_eq!(v.warnings.len(), oracle[1]["rows"].as_array().unwrap().len());
    }
}

/// The AMD traces' XLA ops, costed by XLA's GPU cost rules, answer XProf's rows and a roofline with
/// the device's roofs; the V100's plane names no vendor, so its roofline has XProf's zero peak FLOP
/// rate beside its recorded HBM bandwidth, and only the program's row (its kernels name no HLO op).
#[test]
fn gpu_traces_answer_or_say_why_not() {
    if let Some((mut s, id, oracle)) = device("jax_mi300x_conv/mi300x_conv", "hlo_stats") {
        let h = hlo(&mut s, id).unwrap();
        assert_eq!(h.columns.rank.len(), oracle["rows"].as_array().unwrap().len());
        assert_eq!(h.columns.hlo_op_name[0], oracle["rows"][0]["c"][3]["v"].as_str().unwrap());
        let r = roofline(&mut s, id, true).unwrap();
        assert!(!r.roofs.is_empty() && r.peak_flop_rate > 0.0 && !r.records.rank.is_empty());
        assert!(!kernels(&mut s, id).columns.kernel_name.is_empty(), "AMD kernels are listed");
    }
    if let Some((mut s, id, oracle)) = device(V100, "roofline_model") {
        let r = roofline(&mut s, id, true).unwrap();
        assert_eq!(r.peak_flop_rate, 0.0);
        assert_eq!(r.device_type, oracle[0]["p"]["device_type"].as_str().unwrap());
        assert_eq!(r.records.name, ["Program"]);
        assert!(hlo(&mut s, id).unwrap().columns.rank.is_empty(), "the V100's kernels name no HLO op");
    }
}

#[test]
fn cpu_traces_give_empty_pages() {
    let (mut s, id) = cpu();
    let h = hlo(&mut s, id).unwrap();
    assert!(h.columns.rank.is_empty() && h.top_category.is_none());
    assert_eq!(h.op_time_fraction, 0.0);
    let k = kernels(&mut s, id);
    assert!(k.columns.kernel_name.is_empty());
    assert_eq!((k.total_duration_us, k.tensor_core_fraction), (0.0, 0.0));
    let r = roofline(&mut s, id, true).unwrap();
    assert!(r.records.rank.is_empty() && r.roofs.is_empty());
    assert_eq!(r.peak_flop_rate, 0.0);
}

#[test]
fn wire_form_and_unknown_file() {
    let forms = [
        (RequestBody::from(request::HloStats { scope: Scope::file(3) }), r#"{"type":"hlo_stats","file_ids":[3]}"#),
        (RequestBody::from(request::KernelStats { scope: Scope::file(3) }), r#"{"type":"kernel_stats","file_ids":[3]}"#),
        (
            RequestBody::from(request::RooflineModel { scope: Scope::file(3), include_infeed_outfeed: true }),
            r#"{"type":"roofline_model","file_ids":[3],"include_infeed_outfeed":true}"#,
        ),
    ];
    for (body, json) in forms {
        assert_eq!(serde_json::to_string(&body).unwrap(), json);
        let mut s = Session::new();
        let body = match body {
            RequestBody::HloStats(_) => RequestBody::from(request::HloStats { scope: Scope::file(9) }),
            RequestBody::KernelStats(_) => RequestBody::from(request::KernelStats { scope: Scope::file(9) }),
            _ => RequestBody::from(request::RooflineModel { scope: Scope::file(9), include_infeed_outfeed: false }),
        };
        match ask(&mut s, body, None) {
            ResponseBody::Failed { error } => assert_eq!(error, EngineError::UnknownFile { file_id: 9 }),
            other => panic!("{other:?}"),
        }
    }
    // Columns travel as arrays of numbers, not one object per row.
    let v = KernelStatsView::default();
    let json = serde_json::to_value(&v).unwrap();
    assert!(json["columns"]["total_duration_us"].is_array());
}
