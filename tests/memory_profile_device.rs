//! The Memory Profile of every memory ID of the real GPU/TPU profiles against XProf 2.24's, read in
//! place (skipped where they are absent), compared as the CPU fixtures are
//! ([`common::memory_profile::compare`]). What these traces exercise beyond the CPU ones: the V100
//! trace was grouped when TensorFlow saved it, so its memory events' steps are their own `group_id`
//! stats (XProf does not group such a file again); the TPU trace's `hloModules` list its `XLA Modules`;
//! in the NVIDIA H200 JAX traces (gzipped), the breakdown merges many equal allocations, and the
//! snapshots where XProf's JSON and ours differ are those merged rows' representatives, which XProf
//! picks by hash order.

mod common;

use common::memory_profile::{compare, ours};
use tidemark::analysis::memory_profile::{self, MemoryProfile, Scan};
use tidemark::decode::Profile;

/// (folder/stem, its memory IDs): every memory ID is compared, and the list guards against a fixture
/// whose profile came out empty on both sides.
const DEVICE: [(&str, &[&str]); 8] = [
    ("jax_mi300x_attention/mi300x_attention", &["GPU_0_bfc", "xla_gpu_host_bfc"]),
    (
        "jax_mi300x_conv/mi300x_conv",
        &["GPU_0_bfc", "GPU_1_bfc", "GPU_2_bfc", "GPU_3_bfc", "GPU_4_bfc", "GPU_5_bfc", "GPU_6_bfc", "GPU_7_bfc"],
    ),
    ("jax_mi355x_te_attention/mi355x_te_attention", &["GPU_0_bfc"]),
    ("jax_tpu_v6e_inference/tpu_v6e_inference", &["0", "1", "2", "3"]),
    ("tf_v100_multi_worker/v100_worker", &["GPU_1_bfc", "GPU_4_bfc", "GPU_6_bfc", "gpu_host_bfc"]),
    ("nvidia_h200_jax/n1_mlp_adam/n1_mlp_adam", &["GPU_0_bfc", "xla_gpu_host_bfc"]),
    ("nvidia_h200_jax/n2_cnn_bf16/n2_cnn_bf16", &["GPU_0_bfc", "xla_gpu_host_bfc"]),
    ("nvidia_h200_jax/n3_lm_scan/n3_lm_scan", &["GPU_0_bfc", "xla_gpu_host_bfc"]),
];

/// The trace `name` (`.xplane.pb`, or `.xplane.pb.gz` where only that is stored); `None` where the
/// device fixtures are absent.
fn trace(name: &str) -> Option<std::path::PathBuf> {
    Some(common::plain_or_gz(common::device_fixture("")?.join(format!("{name}.xplane.pb"))))
}

#[test]
fn every_memory_id_of_every_device_profile_matches_xprof() {
    for (name, ids) in DEVICE {
        let (Some(xplane), Some(oracle)) = (trace(name), common::device_fixture(&format!("{name}.memory_profile.json"))) else {
            continue;
        };
        let file = common::open_at(&xplane);
        let Profile::XSpace(space) = &file.profile else { panic!("{name} is not an XSpace") };
        let once = memory_profile::analyze_with(space, Scan::Once).expect("analyzes");
        assert_eq!(memory_profile::analyze_with(space, Scan::Parallel).expect("analyzes"), once, "{name}: read by two threads");
        assert_eq!(once.memory_ids().collect::<Vec<_>>(), ids.to_vec(), "{name}: memory IDs");
        compare(name, &common::json_at(&oracle), &ours(&once));
    }
}

/// The Memory Profile of the device fixture `rel`, `None` where it is absent.
fn profile(rel: &str) -> Option<MemoryProfile> {
    let file = common::open_at(&common::device_fixture(rel)?);
    let Profile::XSpace(space) = &file.profile else { panic!("{rel} is not an XSpace") };
    Some(memory_profile::analyze(space).expect("analyzes"))
}

/// The V100 host allocator, where grouping the trace again (as a file saved without groups is) gave
/// peak step 0, 9 breakdown rows and other steps on the timeline: the recorded groups give XProf's.
#[test]
fn v100_host_allocator_takes_the_recorded_steps() {
    let Some(profile) = profile("tf_v100_multi_worker/v100_worker.xplane.pb") else { return };
    let host = profile.allocator("gpu_host_bfc").expect("gpu_host_bfc");
    assert_eq!(host.summary.peak_step_id, 1);
    assert_eq!(host.breakdown.len(), 6, "5 live allocations and the unused preallocated memory");
}

/// The TPU profile's programs, numbered over its TPU planes in file order.
#[test]
fn tpu_modules_are_listed() {
    let Some(profile) = profile("jax_tpu_v6e_inference/tpu_v6e_inference.xplane.pb") else { return };
    assert!(!profile.hlo_modules.is_empty());
    assert!(profile.hlo_modules.iter().enumerate().all(|(k, m)| m.id == k as i64 && m.start_time_ps <= m.end_time_ps));
    assert!(profile.hlo_modules.iter().all(|m| m.plane_name.starts_with("TPU:")));
}
