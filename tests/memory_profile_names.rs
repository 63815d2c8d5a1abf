//! The Memory Profile page's view of the peak named by what asked for each allocation
//! (`Session::memory_profile_view`'s `named` and each breakdown row's `name`), on the real JAX traces:
//! the named rows and bars add up to XProf's peak, every row of XProf's table is named (its computed
//! rows not), a row's link to the Memory Viewer names an instruction XProf's Memory Viewer of that
//! module shows, and a TensorFlow trace (whose ops name its allocations) gets no names.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use tidemark::analysis::allocation_names::NameKind;
use tidemark::engine::Session;

/// The JAX traces with allocator events: NVIDIA H200 (n1 without preallocation, n2 and n3 with it)
/// and AMD.
const JAX: [&str; 6] = [
    "nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam",
    "nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16",
    "nvidia_h200_jax/n3_lm_scan/n3_lm_scan",
    "jax_mi300x_attention/mi300x_attention",
    "jax_mi300x_conv/mi300x_conv",
    "jax_mi355x_te_attention/mi355x_te_attention",
];

fn trace(stem: &str) -> Option<PathBuf> {
    let plain = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../shared/fixtures/device/{stem}.xplane.pb"));
    if plain.exists() {
        return Some(plain);
    }
    common::device_fixture(&format!("{stem}.xplane.pb.gz"))
}

fn int(v: &Value) -> i64 {
    v.as_str().map_or_else(|| v.as_i64().unwrap_or(0), |s| s.parse().unwrap())
}

fn open(path: &std::path::Path) -> (Session, u32) {
    let mut session = Session::new();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let id = session.open(&name, std::fs::read(path).unwrap(), &mut |_, _| {}).unwrap().id;
    (session, id)
}

#[test]
fn named_peak_adds_up_and_links_to_the_memory_viewer() {
    for stem in JAX {
        let Some(path) = trace(stem) else { continue };
        let Some(oracle) = common::device_fixture(&format!("{stem}.memory_profile.json")).map(|p| common::json_at(&p)) else { continue };
        let (mut session, id) = open(&path);
        let memory_ids = session.memory_profile_view(id, None).unwrap().memory_ids;
        assert!(!memory_ids.is_empty(), "{stem}");
        for memory_id in memory_ids {
            let what = format!("{stem} {memory_id}");
            let a = session.memory_profile_view(id, Some(&memory_id)).unwrap().allocator.unwrap();
            let xprof = &oracle["memoryProfilePerAllocator"][&memory_id];
            let named = a.named.as_ref().unwrap_or_else(|| panic!("{what}: a JAX trace's peak is named"));
            assert_eq!(named.unaligned, None, "{what}");
            let peak = int(&xprof["profileSummary"]["peakStats"]["peakBytesInUse"]);
            assert_eq!(named.peak_bytes, peak, "{what}");
            let rows: i64 = named.rows.iter().map(|r| r.allocation_bytes).sum();
            assert_eq!(rows + named.before_trace_bytes + named.stack_bytes, peak, "{what}");
            // The bars are the rows grouped.
            let mut by_kind: BTreeMap<NameKind, i64> = BTreeMap::new();
            let mut by_module: BTreeMap<String, i64> = BTreeMap::new();
            for r in &named.rows {
                *by_kind.entry(r.name.kind).or_default() += r.allocation_bytes;
                *by_module.entry(r.name.module.clone().unwrap_or_default()).or_default() += r.allocation_bytes;
            }
            assert_eq!(named.by_kind.iter().cloned().collect::<BTreeMap<_, _>>(), by_kind, "{what}");
            assert_eq!(named.by_module.iter().cloned().collect::<BTreeMap<_, _>>(), by_module, "{what}");
            assert!(named.by_kind.windows(2).all(|w| w[0].1 >= w[1].1), "{what}: most first");
            // XProf's table, row for row: each allocation row named, its computed rows not.
            let active = xprof["activeAllocations"].as_array().unwrap();
            assert_eq!(a.breakdown.len(), active.len(), "{what}");
            for (row, x) in a.breakdown.iter().zip(active) {
                let computed = int(&x["specialIndex"]) >= 0;
                assert_eq!(row.name.is_none(), computed, "{what}: {row:?}");
            }
            // A row of a module links to that module's Memory Viewer, its instruction among XProf's
            // buffers there; a temporary lists the module's largest buffers.
            for r in &named.rows {
                let Some(module) = &r.name.module else { continue };
                let Some(viewer) = common::device_fixture(&format!("{stem}.memory_viewer.{module}.json")) else { continue };
                let text = std::fs::read_to_string(viewer).unwrap();
                // At the module's peak (`instructionName`), among its buffer blocks (`name`), or among
                // what lives for the whole program (`hloName` of an indefinite lifetime: a small output
                // XProf's peak lumps together).
                let shown = |op: &str| ["instructionName", "name", "hloName"].iter().any(|k| text.contains(&format!("\"{k}\":\"{op}\"")));
                if let Some(op) = &r.name.instruction {
                    assert!(shown(op), "{what}: {op} in {module}'s Memory Viewer");
                }
                if r.name.kind == NameKind::Temporary {
                    assert!(!r.largest_buffers.is_empty(), "{what}: {module}'s temporary");
                    for (b, _) in &r.largest_buffers {
                        assert!(shown(b), "{what}: {b} in {module}'s Memory Viewer");
                    }
                } else {
                    assert!(r.largest_buffers.is_empty(), "{what}");
                }
            }
        }
    }
}

/// The CNN trace's peak (inside the compiler's autotuning) is named as the command line's JSON names
/// it: the same rows, kinds and modules, the same name per XProf row.
#[test]
fn the_page_and_the_command_line_name_alike() {
    let stem = "nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16";
    let Some(path) = trace(stem) else { return };
    let (code, out, err) = common::tidemark(&["memory-profile", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    let (mut session, id) = open(&path);
    let a = session.memory_profile_view(id, Some("GPU_0_bfc")).unwrap().allocator.unwrap();
    let named = a.named.unwrap();
    let cli = &json["tidemark"]["allocation_names"]["allocators"]["GPU_0_bfc"];
    let rows = cli["peak"]["rows"].as_array().unwrap();
    assert_eq!(named.rows.len(), rows.len());
    for (r, c) in named.rows.iter().zip(rows) {
        assert_eq!(r.name.label, c["name"]["label"].as_str().unwrap());
        assert_eq!(r.allocation_bytes, c["allocation_bytes"].as_i64().unwrap());
        assert_eq!(r.allocations, c["allocations"].as_u64().unwrap());
    }
    let kinds: Vec<(String, i64)> = named.by_kind.iter().map(|(k, b)| (k.label().to_string(), *b)).collect();
    let cli_kinds: Vec<(String, i64)> = serde_json::from_value(cli["peak"]["by_kind"].clone()).unwrap();
    assert_eq!(kinds, cli_kinds);
    let cli_modules: Vec<(String, i64)> = serde_json::from_value(cli["peak"]["by_module"].clone()).unwrap();
    assert_eq!(named.by_module, cli_modules);
    let names: Vec<String> = a.breakdown.iter().map(|r| r.name.clone().unwrap_or_default()).collect();
    let cli_names: Vec<String> = serde_json::from_value(cli["breakdown_names"].clone()).unwrap();
    assert_eq!(names, cli_names);
}

/// A TensorFlow trace's allocations are named by their ops: no names, as before.
#[test]
fn tensorflow_traces_are_not_named() {
    let path = common::fixture("tf/d1_tf_keras_bfc").join("d1_tf_keras_bfc.xplane.pb.gz");
    let (mut session, id) = open(&path);
    let a = session.memory_profile_view(id, None).unwrap().allocator.unwrap();
    assert_eq!(a.named, None);
    assert!(a.breakdown.iter().all(|r| r.name.is_none()));
}
