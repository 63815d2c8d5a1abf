//! Allocations named by module run, compile, transfer and buffer-assignment allocation
//! (`analysis::allocation_names`) on the real JAX traces: checked against XProf's own Memory Profile
//! and Memory Viewer output for the same files.

mod common;

use serde_json::Value;
use tidemark::analysis::allocation_names::buffers::{BufferKind, HeldHow};
use tidemark::analysis::allocation_names::{self, AllocationNames, NameKind};
use tidemark::analysis::memory_events::Activity;
use tidemark::analysis::memory_profile::{self, xprof_json, MemoryProfile};
use tidemark::decode::Profile;

/// The NVIDIA H200 JAX traces (n1 without preallocation, n2 and n3 with it).
const NVIDIA: [&str; 3] =
    ["nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam", "nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16", "nvidia_h200_jax/n3_lm_scan/n3_lm_scan"];
/// The AMD JAX traces.
const AMD: [&str; 3] =
    ["jax_mi300x_attention/mi300x_attention", "jax_mi300x_conv/mi300x_conv", "jax_mi355x_te_attention/mi355x_te_attention"];

/// The trace `stem` (`.xplane.pb` or `.xplane.pb.gz`), its Memory Profile and its names; `None` where
/// the device fixtures are absent.
fn named(stem: &str) -> Option<(MemoryProfile, AllocationNames)> {
    let plain = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../shared/fixtures/device/{stem}.xplane.pb"));
    let path = if plain.exists() { plain } else { common::device_fixture(&format!("{stem}.xplane.pb.gz"))? };
    let file = common::open_at(&path);
    let Profile::XSpace(space) = &file.profile else { panic!("{stem} is not a trace") };
    let profile = memory_profile::analyze(space).unwrap();
    let names = allocation_names::analyze(space, &profile).unwrap();
    Some((profile, names))
}

fn oracle(stem: &str, tool: &str) -> Option<Value> {
    common::device_fixture(&format!("{stem}.{tool}.json")).map(|p| common::json_at(&p))
}

fn int(v: &Value) -> i64 {
    v.as_str().map_or_else(|| v.as_i64().unwrap_or(0), |s| s.parse().unwrap())
}

/// At each allocator's peak, the named rows, what was allocated before the trace and the stack add up
/// to XProf's peak; nothing is left over on these traces (each records its allocators from the start).
#[test]
fn named_bytes_add_up_to_each_peak() {
    for stem in NVIDIA.iter().chain(&AMD) {
        let Some((profile, names)) = named(stem) else { continue };
        let xprof = oracle(stem, "memory_profile").expect("oracle");
        assert_eq!(names.allocators.len(), profile.allocators.len(), "{stem}");
        for (a, n) in profile.allocators.iter().zip(&names.allocators) {
            let what = format!("{stem} {}", a.memory_id);
            assert_eq!(n.unaligned, None, "{what}");
            assert_eq!(n.name_of.len(), a.snapshots.len(), "{what}");
            let p = &n.peak;
            let xprof_peak = int(&xprof["memoryProfilePerAllocator"][&a.memory_id]["profileSummary"]["peakStats"]["peakBytesInUse"]);
            assert_eq!(p.peak_bytes, xprof_peak, "{what}");
            let rows: i64 = p.rows.iter().map(|r| r.allocation_bytes).sum();
            assert_eq!(rows + p.before_trace_bytes + p.stack_bytes, xprof_peak, "{what}");
            if NVIDIA.contains(stem) {
                // Recorded from the allocator's creation: every live byte is an allocation of the window.
                assert_eq!(p.before_trace_bytes, 0, "{what}");
            }
            let by_kind: i64 = p.by_kind.iter().map(|(_, b)| b).sum();
            let by_module: i64 = p.by_module.iter().map(|(_, b)| b).sum();
            assert_eq!((by_kind, by_module), (rows, rows), "{what}");
        }
    }
}

/// On the NVIDIA and AMD traces every module run is matched to its module, and the temporary it
/// allocates equals that module's temporaries in XProf's Memory Viewer to the byte (its total buffer
/// allocation less what lives for the whole program).
#[test]
fn every_run_temporary_equals_the_memory_viewer() {
    for stem in NVIDIA.iter().chain(&AMD) {
        let Some((_, names)) = named(stem) else { continue };
        assert!(!names.runs.is_empty(), "{stem}");
        for r in &names.runs {
            // A run of a module whose name several modules share, each fitting its allocations, is
            // matched to all of them (never one guessed): its temporary equals each one's.
            let modules: Vec<usize> = match r.module {
                Some(m) => vec![m],
                None if AMD.contains(stem) && !r.candidates.is_empty() => r.candidates.clone(),
                None => panic!("{stem}: run of {:?} unmatched: {:?}", r.module_name, r.candidates),
            };
            for m in modules.into_iter().map(|m| &names.modules[m]) {
                // Where the host events name no module, the run is matched by its allocations alone.
                assert!(r.module_name.as_deref().is_none_or(|n| n == m.name), "{stem}: {:?} {}", r.module_name, m.name);
                let Some(viewer) = oracle(stem, &format!("memory_viewer.{}", m.xprof_name)) else {
                    panic!("{stem}: no Memory Viewer oracle for {}", m.xprof_name)
                };
                let mib = |k: &str| viewer[k].as_f64().unwrap_or(0.0);
                let temporaries = ((mib("totalBufferAllocationMib") - mib("indefiniteBufferAllocationMib")) * 1048576.0).round() as i64;
                assert_eq!(r.temporary_bytes, temporaries, "{stem} {}", m.xprof_name);
            }
        }
    }
}

/// Every allocation named as a module's output is, in XProf's Memory Viewer of that module, a
/// may-be-live-out allocation of its requested size and of the named shape; where several are of one
/// size, every candidate is, and the name lists them all.
#[test]
fn outputs_match_their_shapes() {
    let mut checked = 0;
    for stem in NVIDIA.iter().chain(&AMD) {
        let Some((profile, names)) = named(stem) else { continue };
        let before = checked;
        for (a, n) in profile.allocators.iter().zip(&names.allocators) {
            for i in 0..a.snapshots.len() {
                let s = a.snapshots.get(i).unwrap();
                let Some(name) = n.name(i).filter(|x| x.kind == NameKind::Output && s.activity.activity == Activity::Allocation) else {
                    continue;
                };
                // Where several modules of one name fit the run (AMD), the candidates are the
                // allocations of that size in any of them: each is one of some candidate module's.
                let modules: Vec<&str> = match &name.module {
                    Some(m) => vec![m],
                    None => name.module_candidates.iter().map(String::as_str).collect(),
                };
                assert!(!modules.is_empty() && !name.buffer_candidates.is_empty(), "{stem}: {}", name.label);
                let viewers: Vec<Value> = modules.iter().map(|m| oracle(stem, &format!("memory_viewer.{m}")).expect("oracle")).collect();
                let module = modules.join("|");
                for &index in &name.buffer_candidates {
                    let l = viewers
                        .iter()
                        .flat_map(|v| v["indefiniteLifetimes"].as_array().expect("lifetimes"))
                        .find(|l| {
                            int(&l["id"]) == index
                                && (l["sizeMib"].as_f64().unwrap() * 1048576.0 - s.activity.requested_bytes as f64).abs() < 0.5
                        })
                        .unwrap_or_else(|| panic!("{stem} {module}: allocation {index}"));
                    assert!(l["attributes"].as_array().unwrap().iter().any(|x| x == "may-be live out"), "{stem} {module} {index}");
                    let bytes = l["sizeMib"].as_f64().unwrap() * 1048576.0;
                    assert!((bytes - s.activity.requested_bytes as f64).abs() <= 1e-9 * bytes, "{stem} {module} {index}");
                    let common_shape = l["commonShape"].as_str().unwrap_or("");
                    if let (false, Some(shape)) = (common_shape.is_empty(), &name.shape) {
                        assert_eq!(shape, common_shape, "{stem} {module} {index}");
                    }
                }
                if name.buffer_candidates.len() > 1 {
                    assert!(name.label.contains(&format!("one of {} allocations", name.buffer_candidates.len())), "{}", name.label);
                }
                checked += 1;
            }
        }
        // Every trace's runs have outputs: each trace has some checked.
        assert!(checked > before, "{stem}: no output named");
    }
    // n1 is kept in the repository, so at least its outputs are always checked.
    assert!(checked > 0);
}

/// n1's peak, named: `jit_train_step`'s temporary and its outputs hold it.
#[test]
fn n1_peak_is_train_step_outputs_and_temporary() {
    let Some((_, names)) = named(NVIDIA[0]) else { return };
    let n = names.allocator("GPU_0_bfc").unwrap();
    let temporary = n.peak.rows.iter().find(|r| n.names[r.name as usize].kind == NameKind::Temporary).expect("a temporary");
    let t = &n.names[temporary.name as usize];
    assert_eq!(t.module.as_deref(), Some("jit_train_step(5314)"));
    let run = names.runs.iter().find(|r| r.snapshot_indices.contains(&temporary.snapshot_indices[0])).unwrap();
    assert_eq!(temporary.requested_bytes, run.temporary_bytes);
    assert_eq!(n.peak.by_module[0].0, "jit_train_step(5314)");
}

/// Where the trace cannot say, the reasons say what is missing and what to record.
#[test]
fn what_the_trace_cannot_say_is_said() {
    if let Some((_, names)) = named("nvidia_h200_jax/n6_oom_seed/n6_oom_seed") {
        assert!(names.reasons.iter().any(|r| r.contains("no allocator events")), "{:?}", names.reasons);
    }
    if let Some((_, names)) = named("tf_v100_multi_worker/v100_worker") {
        assert!(names.reasons.iter().any(|r| r.contains("enable_hlo_proto")), "{:?}", names.reasons);
        assert!(names.reasons.iter().any(|r| r.contains("python_tracer_level")), "{:?}", names.reasons);
    }
    // n2 records everything the names need: what is left is what no trace says (constants never
    // pass through the allocator; no event gives a run's argument addresses).
    if let Some((_, names)) = named(NVIDIA[1]) {
        assert!(
            names.reasons.iter().all(|r| r.starts_with("No allocation is named a constant") || r.starts_with("A module run's parameters")),
            "{:?}",
            names.reasons
        );
    }
    // The decoder's 32 MiB host buffer is allocated outside any host event: said, with what to record.
    if let Some((_, names)) = named("nvidia_h200_jax/n4_decode/n4_decode") {
        let outside = names.reasons.iter().find(|r| r.contains("outside any host event")).expect("a reason");
        assert!(outside.starts_with("Of xla_gpu_host_bfc, ") && outside.contains("host_tracer_level=3"), "{outside}");
    }
}

/// The names go under the `tidemark` key; XProf's part of the JSON is byte-identical.
#[test]
fn json_keeps_xprof_part_byte_identical() {
    for stem in NVIDIA {
        let Some((profile, names)) = named(stem) else { continue };
        let plain = xprof_json::to_string(&profile).unwrap();
        let with = xprof_json::to_string_named(&profile, Some(&names)).unwrap();
        let cut = |s: &str| s[..s.find(",\"tidemark\":").expect("tidemark key")].to_string();
        assert_eq!(cut(&plain), cut(&with), "{stem}");
        let v: Value = serde_json::from_str(&with).unwrap();
        let n = &v["tidemark"]["allocation_names"];
        let rows = n["allocators"]["GPU_0_bfc"]["breakdown_names"].as_array().expect("breakdown names");
        assert_eq!(rows.len(), v["memoryProfilePerAllocator"]["GPU_0_bfc"]["activeAllocations"].as_array().unwrap().len());
        assert!(n["allocators"]["GPU_0_bfc"]["peak"]["rows"].as_array().is_some_and(|r| !r.is_empty()));
    }
}

/// `tidemark memory-profile` prints the named peak table; `--json` adds the names under `tidemark`.
#[test]
fn cli_prints_the_named_peak() {
    let Some(path) = common::device_fixture(&format!("{}.xplane.pb.gz", NVIDIA[0])) else { return };
    let path = path.display().to_string();
    let (code, out, err) = common::tidemark(&["memory-profile", &path]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("named at peak") && out.contains("jit_train_step(5314) temporary"), "{out}");
    assert!(
        out.contains("preallocated but unused: the trace cannot tell: between 230.79 MiB and 104.57 GiB (pool at least 514.00 MiB; limit 104.85 GiB − in use 283.21 MiB)"),
        "{out}"
    );
    assert!(out.contains("To know it, record jax.devices()[0].memory_stats()['pool_bytes']"), "{out}");
    let (code, out, err) = common::tidemark(&["memory-profile", "--json", &path]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["tidemark"]["allocation_names"]["runs"].as_array().is_some_and(|r| !r.is_empty()));
    let pool = &v["tidemark"]["allocation_names"]["allocators"]["GPU_0_bfc"]["peak"]["pool"];
    assert_eq!(pool["unused_at_most_bytes"], 112_583_507_968i64 - 296_962_304);
    assert_eq!(pool["known"], false);
    // The CNN (preallocated): the unused pool is known; its outputs are new values named by the
    // parameters of their shape, in the named peak, the leak suspects and the step floors.
    let Some(path) = common::device_fixture(&format!("{}.xplane.pb.gz", NVIDIA[1])) else { return };
    let path = path.display().to_string();
    let (code, out, err) = common::tidemark(&["memory-profile", &path]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("preallocated but unused: 104.56 GiB (the pool is the allocator's whole limit 104.85 GiB"), "{out}");
    let c3 = "jit_train_step(5312) output {2|7} f32[3,3,128,128]{3,2,1,0}, a new value shaped as p['c3'], s[0].trace['c3']";
    assert!(out.lines().any(|l| l.contains("    ") && l.contains(c3)), "{out}");
    let (code, out, err) = common::tidemark(&["memory-profile", "--json", &path]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let n = &v["tidemark"]["allocation_names"]["allocators"]["GPU_0_bfc"];
    assert_eq!(n["peak"]["pool"]["known"], true);
    let end = n["live_at_end"]["rows"].as_array().unwrap();
    let row = end.iter().find(|r| r["name"]["label"].as_str().is_some_and(|l| l.starts_with(c3))).expect("the c3 outputs at the end");
    let like: Vec<&str> = row["name"]["new_value_shaped_as"].as_array().unwrap().iter().map(|p| p["variable"].as_str().unwrap()).collect();
    assert_eq!(like, ["p['c3']", "s[0].trace['c3']"]);
    let floor = n["floors"].as_array().unwrap().last().unwrap()["rows"].as_array().unwrap();
    assert!(floor.iter().any(|r| r["name"]["label"].as_str().is_some_and(|l| l.starts_with(c3))));
}

/// An output that holds no parameter (no aliasing, no copy) is said to be a new value, with the entry
/// parameters of exactly its shape (the HLO's, never a guess of which): on the CNN's `jit_train_step`
/// each of its ten results (new weights and momenta, SGD) has the shape of one weight `p[X]` and its
/// momentum `s[0].trace[X]`. Checked against XProf's Memory Viewer of the module: the result tuple's
/// element shapes, and the entry parameters (their HLO names, `p__c3__.1`, are the variables
/// sanitised) of each shape.
#[test]
fn new_outputs_name_the_parameters_of_their_shape() {
    let stem = NVIDIA[1];
    let Some((_, names)) = named(stem) else { return };
    let m = names.modules.iter().find(|m| m.name == "jit_train_step").expect("jit_train_step");
    let viewer = oracle(stem, &format!("memory_viewer.{}", m.xprof_name)).expect("oracle");
    let lifetimes = viewer["indefiniteLifetimes"].as_array().unwrap();
    let tuple = lifetimes.iter().find_map(|l| l["commonShape"].as_str().filter(|s| s.starts_with('('))).expect("the result tuple");
    let elements: Vec<String> = tuple[1..tuple.len() - 1].split(", ").map(|e| e.rsplit("*/").next().unwrap().to_string()).collect();
    let parameters: Vec<(&str, &str)> = lifetimes
        .iter()
        .filter(|l| l["attributes"].as_array().unwrap().iter().any(|a| a == "entry computation parameter"))
        .map(|l| (l["logicalBuffers"][0]["hloName"].as_str().unwrap(), l["logicalBuffers"][0]["shape"].as_str().unwrap()))
        .collect();
    let sanitised = |v: &str| format!("{}.1", v.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>());
    let mut seen = 0;
    for a in m.allocations.iter().filter(|a| a.kind == BufferKind::Output && a.holds.is_none()) {
        let Some([k]) = a.output_index.as_deref() else { continue };
        let mut expected: Vec<&str> = parameters.iter().filter(|p| p.1 == elements[*k as usize]).map(|p| p.0).collect();
        let mut got: Vec<String> =
            a.shaped_as.iter().map(|p| sanitised(p.variable.as_deref().expect("JAX names its parameters"))).collect();
        expected.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, expected, "output {{{k}}}");
        if *k < 10 {
            assert_eq!(got.len(), 2, "output {{{k}}}: a weight and its momentum");
            seen += 1;
        }
    }
    assert_eq!(seen, 10);
    // Every name of an output of the module says it is a new value.
    let n = names.allocator("GPU_0_bfc").unwrap();
    let outputs: Vec<_> =
        n.names.iter().filter(|x| x.kind == NameKind::Output && x.module.as_deref() == Some(m.xprof_name.as_str())).collect();
    assert!(!outputs.is_empty());
    for x in outputs {
        let shape_index_table = x.shape.as_deref().is_some_and(|s| s.starts_with('('));
        assert_eq!(x.new_value_shaped_as.is_some(), !shape_index_table, "{}", x.label);
        assert!(shape_index_table || x.label.contains(", a new value "), "{}", x.label);
    }
}

/// An output the module's input/output aliasing ties to a parameter holds that parameter, named by the
/// variable JAX wrote in the parameter's op_name: the TPU trace's `jit_f` aliases its three results
/// with its three 5 GiB parameters `ws[0]`..`ws[2]`. Each is one of the module's outputs, of the shape
/// XProf's Memory Viewer gives that element of the result tuple.
#[test]
fn aliased_outputs_hold_their_parameters() {
    let stem = "jax_tpu_v6e_inference/tpu_v6e_inference";
    let Some((_, names)) = named(stem) else { return };
    let m = names.modules.iter().find(|m| m.name == "jit_f").expect("jit_f");
    let viewer = oracle(stem, &format!("memory_viewer.{}", m.xprof_name)).expect("oracle");
    let tuple = viewer["indefiniteLifetimes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|l| l["commonShape"].as_str().filter(|s| s.starts_with('(')))
        .expect("the result tuple");
    let elements: Vec<&str> = tuple[1..tuple.len() - 1].split(", ").collect();
    let mut held: Vec<_> = m.allocations.iter().filter_map(|a| Some((a.output_index.clone()?, a.holds.clone()?, a))).collect();
    held.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(held.len(), elements.len());
    for (k, (index, h, a)) in held.iter().enumerate() {
        let variable = format!("ws[{k}]");
        assert_eq!(index, &vec![k as i64]);
        assert_eq!(a.kind, BufferKind::Output);
        assert_eq!((h.how, h.parameter_number, h.parameter_shape_index.as_slice()), (HeldHow::Aliased, k as i64, &[][..]));
        assert_eq!(h.variable.as_deref(), Some(variable.as_str()));
        assert_eq!(a.shape, elements[k]);
        assert_eq!(a.size_bytes, 5 * 1024 * 1024 * 256 * 4);
        assert_eq!(h.text(), format!("holds {variable} (parameter {k}, aliased)"));
    }
}

/// A result that is a copy of a parameter says so, by the variable's name: `jit_stage` and
/// `jit_convert_element_type` (a conversion to the same type) return a copy of `args[0]`, and XProf's
/// Memory Viewer of each shows the output's buffer defined by a copy beside the parameter `args_0_`.
/// No other output says it holds a parameter: `jit_train_step` is compiled without aliasing, and an
/// output computed from a parameter (new weights from old) is tied to it by nothing in the HLO.
#[test]
fn copied_outputs_name_their_parameter() {
    for stem in NVIDIA {
        let Some((_, names)) = named(stem) else { continue };
        let mut modules = std::collections::BTreeSet::new();
        for name in names.allocators.iter().flat_map(|n| &n.names).filter(|x| x.holds.is_some()) {
            let module = name.module.as_deref().expect("one module");
            assert!(module.starts_with("jit_stage(") || module.starts_with("jit_convert_element_type("), "{stem}: {}", name.label);
            let h = name.holds.as_ref().unwrap();
            assert_eq!((h.how, h.parameter_number, h.variable.as_deref()), (HeldHow::Copied, 0, Some("args[0]")), "{stem}");
            assert!(name.label.ends_with(", a copy of args[0] (parameter 0)"), "{}", name.label);
            let viewer = oracle(stem, &format!("memory_viewer.{module}")).expect("oracle");
            let lifetimes = viewer["indefiniteLifetimes"].as_array().unwrap();
            let with = |attribute: &str| {
                lifetimes.iter().find(|l| l["attributes"].as_array().unwrap().iter().any(|x| x == attribute)).unwrap()["logicalBuffers"][0]
                    ["hloName"]
                    .as_str()
                    .unwrap()
                    .to_string()
            };
            assert!(with("may-be live out").starts_with("copy"), "{stem} {module}");
            assert_eq!(with("entry computation parameter"), "args_0_.1", "{stem} {module}");
            modules.insert(module.split('(').next().unwrap().to_string());
        }
        assert_eq!(modules.into_iter().collect::<Vec<_>>(), ["jit_convert_element_type", "jit_stage"], "{stem}");
    }
}

/// "Preallocated but unused" read from the allocator's own figures, never guessed: the BFC allocator's
/// fragmentation (1 − largest free chunk / (pool − in use)) bounds its pool from below. On n2 and n3
/// (preallocated) the bound reaches the limit within a millionth: the unused pool at the peak is the
/// limit less the peak. On n1 (`XLA_PYTHON_CLIENT_PREALLOCATE=false`, same limit) it stays far below:
/// the trace cannot tell, the note says so and what to record. The first free of n2 (its first 256-byte
/// allocation freed beside the second) alone bounds the pool by 256 / fragmentation.
#[test]
fn preallocated_but_unused_read_from_the_allocator() {
    for (stem, preallocated) in NVIDIA.iter().zip([false, true, true]) {
        let Some((profile, names)) = named(stem) else { continue };
        let xprof = oracle(stem, "memory_profile").expect("oracle");
        let summary = &xprof["memoryProfilePerAllocator"]["GPU_0_bfc"]["profileSummary"];
        let pool = &names.allocator("GPU_0_bfc").unwrap().peak.pool;
        assert_eq!(pool.limit_bytes, int(&summary["memoryCapacity"]), "{stem}");
        assert_eq!(pool.limit_bytes, 112_583_507_968, "{stem}");
        assert_eq!(pool.in_use_bytes, int(&summary["peakStats"]["peakBytesInUse"]), "{stem}");
        let most = pool.limit_bytes - pool.in_use_bytes;
        assert_eq!(pool.unused_at_most_bytes, Some(most), "{stem}");
        let least = pool.pool_at_least_bytes.expect("a bound") - pool.in_use_bytes;
        assert_eq!(pool.unused_at_least_bytes, least.max(0), "{stem}");
        assert_eq!(pool.known, preallocated, "{stem}");
        assert!(pool.note.contains("fragmentation"), "{}", pool.note);
        if preallocated {
            assert!(pool.limit_bytes - pool.pool_at_least_bytes.unwrap() < pool.limit_bytes / 100_000, "{stem}");
            assert_eq!(pool.unused_bytes(), Some(most), "{stem}");
            assert!(pool.note.contains("the pool is the whole limit"), "{}", pool.note);
        } else {
            assert!(pool.pool_at_least_bytes.unwrap() < pool.limit_bytes / 100, "{stem}");
            assert_eq!(pool.unused_bytes(), None, "{stem}");
            assert!(pool.note.starts_with("The trace cannot tell how much is preallocated but unused"), "{}", pool.note);
            assert!(
                pool.note.contains("XLA_PYTHON_CLIENT_PREALLOCATE") && pool.note.contains("memory_stats()['pool_bytes']"),
                "{}",
                pool.note
            );
        }
        if *stem == NVIDIA[1] {
            let a = profile.allocator("GPU_0_bfc").unwrap();
            let s = &a.snapshots;
            let first_free = (0..s.len()).find(|&i| s.activity(i) == Activity::Deallocation).unwrap();
            let x = s.get(first_free).unwrap().stats;
            assert_eq!(x.heap_allocated_bytes, 256);
            let bound = 256 + (256.0 / x.fragmentation) as i64;
            assert!((bound - pool.limit_bytes).abs() < pool.limit_bytes / 100_000, "{bound}");
        }
    }
}

/// No allocator event is a module's constant: XLA's GPU executable resolves constants to kernel-module
/// globals (or memory it allocates directly) at a run's `Resolve constant globals`, never through the
/// allocator. n1's modules have constant allocations (the XLA dump's buffer assignment lists them as
/// `constant`; its Trace Viewer shows 380 `Resolve constant globals`, one per run); no allocation is
/// named by that event, and the reason names each module with its constants.
#[test]
fn constants_are_said_to_be_outside_the_allocator() {
    let Some((_, names)) = named(NVIDIA[0]) else { return };
    let with: Vec<_> = names.modules.iter().filter(|m| !m.constants.is_empty()).collect();
    assert!(!with.is_empty());
    let reason = names.reasons.iter().find(|r| r.starts_with("No allocation is named a constant")).expect("a reason");
    for m in with {
        let bytes: i64 = m.constants.iter().map(|&(_, b)| b).sum();
        assert!(
            reason.contains(&format!("{} ({} allocation", m.xprof_name, m.constants.len()))
                && reason.contains(&format!(", {bytes} bytes)")),
            "{reason}"
        );
    }
    for n in &names.allocators {
        assert!(n.names.iter().all(|x| !x.event.contains("constant")), "{}", n.memory_id);
    }
    assert!(names.reasons.iter().any(|r| r.starts_with("A module run's parameters are named by what allocated them")));
}
