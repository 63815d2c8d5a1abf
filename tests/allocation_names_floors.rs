//! Allocation names beyond the peak (issue 30): the leak hints' suspects, each step's heap floor,
//! the timeline's hover and Memory across hosts, on the real JAX traces. Every figure is checked
//! against the allocator's own events (what the trace says) and the Memory Profile's leak hints, and
//! the named outputs against XProf's Memory Viewer of their module.

mod common;

use serde_json::Value;
use tidemark::analysis::allocation_names::{self, AllocationNames, AllocatorNames, LiveNames, NameKind};
use tidemark::analysis::memory_events::Activity;
use tidemark::analysis::memory_profile::{self, AllocatorProfile, MemoryProfile};
use tidemark::decode::Profile;
use tidemark::engine::Session;

/// The NVIDIA H200 JAX traces (n1 without preallocation, n2 and n3 with it).
const NVIDIA: [&str; 3] =
    ["nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam", "nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16", "nvidia_h200_jax/n3_lm_scan/n3_lm_scan"];
/// The AMD JAX traces.
const AMD: [&str; 3] =
    ["jax_mi300x_attention/mi300x_attention", "jax_mi300x_conv/mi300x_conv", "jax_mi355x_te_attention/mi355x_te_attention"];

fn path(stem: &str) -> Option<std::path::PathBuf> {
    let plain = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../shared/fixtures/device/{stem}.xplane.pb"));
    if plain.exists() {
        Some(plain)
    } else {
        common::device_fixture(&format!("{stem}.xplane.pb.gz"))
    }
}

fn named(stem: &str) -> Option<(MemoryProfile, AllocationNames)> {
    let file = common::open_at(&path(stem)?);
    let Profile::XSpace(space) = &file.profile else { panic!("{stem} is not a trace") };
    let profile = memory_profile::analyze(space).unwrap();
    let names = allocation_names::analyze(space, &profile).unwrap();
    Some((profile, names))
}

/// The allocations live just after event `at`, replayed from the events straight (no breakdown, no
/// matcher): the later allocation at an address replaces the earlier, a free removes it.
fn live_after(a: &AllocatorProfile, at: usize) -> Vec<usize> {
    let mut live = std::collections::BTreeMap::new();
    for i in 0..=at {
        let s = a.snapshots.get(i).unwrap();
        match s.activity.activity {
            Activity::Allocation => live.insert(s.activity.address, i),
            Activity::Deallocation => live.remove(&s.activity.address),
        };
    }
    let mut v: Vec<usize> = live.into_values().collect();
    v.sort_unstable();
    v
}

/// `l`'s rows hold exactly the allocations live after `at`, each under its own name, and with
/// `before_trace_bytes` add up to the heap there; the kinds and modules add up to the rows.
fn check_live(what: &str, a: &AllocatorProfile, n: &AllocatorNames, l: &LiveNames, at: usize) {
    let mut indices: Vec<usize> = l.rows.iter().flat_map(|r| r.snapshot_indices.iter().copied()).collect();
    indices.sort_unstable();
    assert_eq!(indices, live_after(a, at), "{what}");
    for r in &l.rows {
        for &i in &r.snapshot_indices {
            assert_eq!(n.name_of[i], r.name, "{what}: allocation {i}");
        }
        let bytes: i64 = r.snapshot_indices.iter().map(|&i| a.snapshots.get(i).unwrap().activity.allocation_bytes).sum();
        assert_eq!((r.allocations, r.allocation_bytes), (r.snapshot_indices.len() as u64, bytes), "{what}");
    }
    let rows: i64 = l.rows.iter().map(|r| r.allocation_bytes).sum();
    assert_eq!(rows + l.before_trace_bytes, a.snapshots.get(at).unwrap().stats.heap_allocated_bytes, "{what}");
    assert_eq!(l.by_kind.iter().map(|(_, b)| b).sum::<i64>(), rows, "{what}");
    assert_eq!(l.by_module.iter().map(|(_, b)| b).sum::<i64>(), rows, "{what}");
}

/// The leak hints' suspects, named: what is live after the last event, adding up to the leak
/// hints' own `live_at_end` (bytes and allocations).
#[test]
fn leak_suspects_are_named_and_add_up_to_the_leak_hints() {
    for stem in NVIDIA.iter().chain(&AMD) {
        let Some((profile, names)) = named(stem) else { continue };
        for (a, n) in profile.allocators.iter().zip(&names.allocators) {
            let what = format!("{stem} {} live at end", a.memory_id);
            assert_eq!(n.unaligned, None, "{what}");
            let end = &n.live_at_end;
            check_live(&what, a, n, end, a.snapshots.len() - 1);
            let rows: i64 = end.rows.iter().map(|r| r.allocation_bytes).sum();
            let count: u64 = end.rows.iter().map(|r| r.allocations).sum();
            assert_eq!(rows, a.leaks.live_at_end_bytes, "{what}");
            assert_eq!(count, a.leaks.live_at_end.iter().map(|g| g.allocations).sum::<u64>(), "{what}");
            if NVIDIA.contains(stem) {
                assert_eq!(end.before_trace_bytes, 0, "{what}");
            }
        }
    }
}

/// Each step's heap floor, named: one per step of the leak hints, at the step's first event at its
/// lowest heap + stack; the live allocations there, their stack and what came before the trace add
/// up to that floor.
#[test]
fn every_step_floor_is_named_and_adds_up() {
    for stem in NVIDIA.iter().chain(&AMD) {
        let Some((profile, names)) = named(stem) else { continue };
        for (a, n) in profile.allocators.iter().zip(&names.allocators) {
            let steps: Vec<i64> = n.floors.iter().map(|f| f.step_id).collect();
            let expected: Vec<i64> = a.leaks.step_floors.iter().map(|f| f.step_id).collect();
            assert_eq!(steps, expected, "{stem} {}", a.memory_id);
            for (f, hint) in n.floors.iter().zip(&a.leaks.step_floors) {
                let what = format!("{stem} {} step {}", a.memory_id, f.step_id);
                let i = f.snapshot_index;
                let s = a.snapshots.get(i).unwrap();
                assert_eq!((s.activity.step_id, s.stats.in_use_bytes()), (f.step_id, hint.min_in_use_bytes), "{what}");
                assert_eq!(f.in_use_bytes, hint.min_in_use_bytes, "{what}");
                let earlier = (0..i).find(|&k| a.snapshots.step_id(k) == f.step_id && a.snapshots.in_use_bytes(k) <= f.in_use_bytes);
                assert_eq!(earlier, None, "{what}: an earlier event of the step is as low");
                assert_eq!(f.stack_bytes, s.stats.stack_reserved_bytes, "{what}");
                check_live(&what, a, n, &f.live, i);
                let rows: i64 = f.live.rows.iter().map(|r| r.allocation_bytes).sum();
                assert_eq!(rows + f.live.before_trace_bytes + f.stack_bytes, f.in_use_bytes, "{what}");
                if NVIDIA.contains(stem) {
                    assert_eq!(f.live.before_trace_bytes, 0, "{what}");
                }
            }
        }
    }
}

/// On the NVIDIA traces, once the training step has run, what stays allocated between steps is its
/// outputs (parameters and optimizer state): at every later floor the training module's outputs hold
/// the most bytes, no run's temporary is live, and each of its outputs there is, in XProf's Memory
/// Viewer of that module, a may-be-live-out allocation of its size.
#[test]
fn the_floor_after_training_starts_is_the_train_steps_outputs() {
    let mut checked = 0;
    for stem in NVIDIA {
        let Some((profile, names)) = named(stem) else { continue };
        let a = profile.allocator("GPU_0_bfc").unwrap();
        let n = names.allocator("GPU_0_bfc").unwrap();
        let train = |m: &str| m.starts_with("jit_train_step(");
        let first = n.floors.iter().position(|f| f.live.by_module.iter().any(|(m, _)| train(m))).expect("a floor after training starts");
        let module = n.floors[first].live.by_module.iter().find(|(m, _)| train(m)).unwrap().0.clone();
        let viewer = common::json_at(&common::device_fixture(&format!("{stem}.memory_viewer.{module}.json")).expect("oracle"));
        let lifetimes = viewer["indefiniteLifetimes"].as_array().expect("lifetimes");
        for f in &n.floors[first..] {
            let what = format!("{stem} step {}", f.step_id);
            assert_eq!(f.live.by_module[0].0, module, "{what}");
            assert!(f.live.by_kind.iter().all(|(k, _)| *k != NameKind::Temporary), "{what}: {:?}", f.live.by_kind);
            for r in f.live.rows.iter().filter(|r| n.names[r.name as usize].module.as_deref() == Some(module.as_str())) {
                let name = &n.names[r.name as usize];
                assert_eq!(name.kind, NameKind::Output, "{what}: {}", name.label);
                for &i in &r.snapshot_indices {
                    let requested = a.snapshots.get(i).unwrap().activity.requested_bytes as f64;
                    assert!(
                        name.buffer_candidates.iter().any(|&id| lifetimes.iter().any(|l| {
                            l["id"].as_str().and_then(|s| s.parse::<i64>().ok()).or_else(|| l["id"].as_i64()) == Some(id)
                                && (l["sizeMib"].as_f64().unwrap() * 1048576.0 - requested).abs() <= 1e-9 * requested
                                && l["attributes"].as_array().unwrap().iter().any(|x| x == "may-be live out")
                        })),
                        "{what}: {}",
                        name.label
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 0);
}

fn open(session: &mut Session, stem: &str) -> Option<u32> {
    let p = path(stem)?;
    let name = p.file_name().unwrap().to_string_lossy().into_owned();
    Some(session.open(&name, std::fs::read(&p).unwrap(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}")).id)
}

/// The page's view: each timeline point (sampled and zoomed) carries its event's name, the labels
/// are the allocator's names, and the named floors and suspects are the analysis's.
#[test]
fn the_page_view_names_timeline_points_floors_and_suspects() {
    for stem in NVIDIA {
        let mut session = Session::new();
        let Some(id) = open(&mut session, stem) else { continue };
        let (profile, names) = named(stem).unwrap();
        let a = profile.allocator("GPU_0_bfc").unwrap();
        let n = names.allocator("GPU_0_bfc").unwrap();
        let view = session.memory_profile_view(id, Some("GPU_0_bfc")).unwrap().allocator.unwrap();
        let named = view.named.as_ref().expect("named");
        let labels: Vec<&str> = n.names.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(named.labels, labels, "{stem}");
        let window = session.memory_timeline_window(id, "GPU_0_bfc", view.first_time_ps, view.last_time_ps, 4000).unwrap();
        for e in view.timeline.iter().chain(&window.events) {
            let i = e.point.snapshot_index;
            assert_eq!(e.name, Some(n.name_of[i]), "{stem} point {i}");
        }
        assert_eq!(named.floors.len(), n.floors.len(), "{stem}");
        for (v, f) in named.floors.iter().zip(&n.floors) {
            assert_eq!(
                (v.step_id, v.in_use_bytes, v.stack_bytes, v.before_trace_bytes),
                (f.step_id, f.in_use_bytes, f.stack_bytes, f.live.before_trace_bytes)
            );
            assert_eq!(v.trace_time_ps, a.trace_time_ps(f.snapshot_index), "{stem}");
            let bytes: Vec<i64> = v.rows.iter().map(|r| r.allocation_bytes).collect();
            assert_eq!(bytes, f.live.rows.iter().map(|r| r.allocation_bytes).collect::<Vec<_>>(), "{stem}");
            assert_eq!(v.by_module, f.live.by_module, "{stem}");
        }
        let suspects: i64 = named.live_at_end.iter().map(|r| r.allocation_bytes).sum();
        assert_eq!(suspects, view.leaks.live_at_end_bytes, "{stem}");
        assert_eq!(named.live_at_end_by_module, n.live_at_end.by_module, "{stem}");
    }
}

/// Memory across hosts names each host's peak by module and kind, as that host's Memory Profile does.
#[test]
fn memory_across_hosts_names_each_peak() {
    let mut session = Session::new();
    let ids: Vec<u32> = NVIDIA.iter().filter_map(|stem| open(&mut session, stem)).collect();
    if ids.is_empty() {
        return;
    }
    let o = session.memory_across_hosts(&ids).unwrap();
    let mut named_rows = 0;
    for row in &o.allocators {
        let stem = NVIDIA[ids.iter().position(|&i| i == row.file_id).unwrap()];
        let (_, names) = named(stem).unwrap();
        let n = names.allocator(&row.memory_id).unwrap();
        assert_eq!(row.peak_by_module, n.peak.by_module, "{stem} {}", row.memory_id);
        assert_eq!(row.peak_by_kind, n.peak.by_kind, "{stem} {}", row.memory_id);
        let sum: i64 = row.peak_by_module.iter().map(|(_, b)| b).sum();
        assert_eq!(sum + n.peak.before_trace_bytes + n.peak.stack_bytes, row.peak_bytes, "{stem} {}", row.memory_id);
        named_rows += usize::from(!row.peak_by_module.is_empty());
    }
    assert!(named_rows >= ids.len());
}

/// The CLI: `memory-profile` prints the named suspects and floors, `--json` carries them under the
/// `tidemark` key, and `memory-across-hosts` names each peak by module.
#[test]
fn cli_prints_named_suspects_floors_and_host_peaks() {
    let Some(p) = path(NVIDIA[0]) else { return };
    let p = p.display().to_string();
    let (code, out, err) = common::tidemark(&["memory-profile", "--memory-id", "GPU_0_bfc", &p]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("leak suspects named") && out.contains("heap floor per step"), "{out}");
    let (code, out, err) = common::tidemark(&["memory-profile", "--json", &p]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let n = &v["tidemark"]["allocation_names"]["allocators"]["GPU_0_bfc"];
    let hints = &v["tidemark"]["allocators"]["GPU_0_bfc"]["leak_hints"];
    let rows: i64 = n["live_at_end"]["rows"].as_array().unwrap().iter().map(|r| r["allocation_bytes"].as_i64().unwrap()).sum();
    assert_eq!(rows, hints["live_at_end_bytes"].as_i64().unwrap());
    let floors = n["floors"].as_array().unwrap();
    assert_eq!(floors.len(), hints["step_floors"].as_array().unwrap().len());
    for (f, h) in floors.iter().zip(hints["step_floors"].as_array().unwrap()) {
        assert_eq!(f["in_use_bytes"], h["min_in_use_bytes"]);
    }
    let (code, out, err) = common::tidemark(&["memory-across-hosts", &p]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("peak by module: jit_train_step(5314)"), "{out}");
}
