//! A session for one tool (the command line's): what it leaves out of the open and of the op tables'
//! pass changes nothing the tool shows, and a tool that would read what was left out answers an error,
//! never a table of nothing. On d2_tf_cnn (TensorFlow CPU: host ops with eager marking, steps) and
//! a2_mlp_train (JAX CPU: XLA ops on CPU).

mod common;

use tidemark::analysis::{framework_op_stats, hlo_stats, kernel_stats, op_profile};
use tidemark::engine::{EngineError, Scope, Session};

const D2: &str = "tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz";
const A2: &str = "jax/a2_mlp_train/a2_mlp_train.xplane.pb.gz";

fn open(mut session: Session, rel: &str) -> (Session, u32) {
    let id = session.open(rel, common::bytes(rel), &mut |_, _| {}).unwrap_or_else(|e| panic!("{rel}: {e}")).id;
    (session, id)
}

/// The leanest session: no Memory Profile or steps at open, no host ops or XLA ops on CPU in the pass.
fn lean() -> Session {
    Session::deferring_memory_profiles().deferring_steps().leaving_out_host_ops().leaving_out_xla_ops_cpu()
}

#[test]
fn device_tables_equal_a_full_sessions() {
    for rel in [D2, A2] {
        let (mut full, f) = open(Session::new(), rel);
        let (mut lean, l) = open(lean(), rel);
        let (fs, ls) = (Scope::file(f), Scope::file(l));
        assert_eq!(
            hlo_stats::xprof_json::to_xprof_json(&full.hlo_stats(&fs).unwrap()),
            hlo_stats::xprof_json::to_xprof_json(&lean.hlo_stats(&ls).unwrap()),
            "{rel}"
        );
        assert_eq!(
            kernel_stats::xprof_json::to_xprof_json(&full.kernel_stats(&fs).unwrap()),
            kernel_stats::xprof_json::to_xprof_json(&lean.kernel_stats(&ls).unwrap()),
            "{rel}"
        );
        assert_eq!(
            op_profile::xprof_json::to_xprof_json(&full.op_profile(&fs).unwrap()),
            op_profile::xprof_json::to_xprof_json(&lean.op_profile(&ls).unwrap()),
            "{rel}"
        );
    }
}

#[test]
fn what_was_left_out_is_an_error_not_an_empty_table() {
    let (mut lean, id) = open(lean(), D2);
    assert!(matches!(lean.framework_op_stats(&Scope::file(id)), Err(EngineError::Unsupported { .. })));
    assert!(matches!(lean.overview_page(&[id]), Err(EngineError::Unsupported { .. })));
    assert!(matches!(lean.xla_ops_cpu(id), Err(EngineError::Unsupported { .. })));
    // Steps deferred: the overview has not counted them (the page's session has).
    assert_eq!(lean.get(id).unwrap().overview.steps, None);
    let (full, id) = open(Session::new(), D2);
    assert!(full.get(id).unwrap().overview.steps.is_some_and(|n| n > 0));
}

#[test]
fn steps_deferred_are_found_when_asked() {
    let (mut full, f) = open(Session::new(), D2);
    let (mut later, l) = open(Session::new().deferring_steps(), D2);
    let (a, b) = (full.overview_page(&[f]).unwrap().clone(), later.overview_page(&[l]).unwrap().clone());
    assert_eq!(a, b);
    assert!(!a.input.steps.is_empty());
}

/// The tables print themselves exactly as their JSON value prints.
#[test]
fn data_tables_print_as_their_values() {
    let (mut s, id) = open(Session::new(), D2);
    let stats = s.framework_op_stats(&Scope::file(id)).unwrap();
    let direct = serde_json::to_string(&framework_op_stats::xprof_json::tables(&stats)).unwrap();
    assert_eq!(direct, framework_op_stats::xprof_json::to_xprof_json(&stats).to_string());
}
