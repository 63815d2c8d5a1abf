//! What each host event is to the grouping: its kind (executor, iterator, tf.data function run), whether
//! it is a root, and its grouping stats (contexts, root level, step and iteration numbers).

use crate::decode::xplane::{IdTable, Plane, StatValue};
use crate::fast_hash::FastMap;

/// XProf's name for the events that make a trace ungroupable (TensorFlow 1 control-flow loops).
pub(super) const LOOP_OPS: [&str; 5] = ["WhileOp-EvalCond", "WhileOp-StartBody", "ForOp", "ParallelForOp", "ForeverOp"];
pub(super) const EXECUTOR: &str = "ExecutorState::Process";
pub(super) const ITERATOR_GET_NEXT: [&str; 2] = ["IteratorGetNextOp::DoCompute", "IteratorGetNextAsOptionalOp::DoCompute"];
pub(crate) const TF_DATA_FUNCTION_RUNS: [&str; 4] = [
    "InstantiatedCapturedFunction::Run",
    "InstantiatedCapturedFunction::RunAsync",
    "InstantiatedCapturedFunction::RunInstantiated",
    "InstantiatedCapturedFunction::RunWithBorrowedArgs",
];
pub(super) const LEGACY_ROOT: &str = "TraceContext";
/// Roots that start a group without being named as a step (XProf's implicit roots; executor events
/// are [`Kind::Executor`]).
pub(super) const IMPLICIT_ROOTS: [&str; 3] = ["FunctionRun", "SessionRun", "RunGraph"];
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Other,
    Executor,
    IteratorGetNext,
    TfDataFunctionRun,
}

/// The grouping stats of one event: metadata stats first, then the event's own (later wins, as
/// XProf's `ForEachStat` visits them).
#[derive(Default, Clone, Copy, PartialEq)]
pub(super) struct GroupingStats {
    pub(super) producer: (Option<i64>, Option<u64>),
    pub(super) consumer: (Option<i64>, Option<u64>),
    pub(super) root_level: Option<i64>,
    pub(super) is_async: bool,
    pub(super) step_id: Option<i64>,
    pub(super) iter_num: Option<i64>,
    pub(super) step_num: Option<i64>,
    /// The process of the event's context ends (`_pid`), where it names one (else the plane's).
    pub(super) pid: Option<i64>,
}

/// The stats grouping reads ([`Grouper::push`] needs them selected), by name; a stat's role is its
/// position here + 1 (0: not read). `step_num` only names a root's group; `_pid` only says which
/// process's ends of its contexts an event's are.
pub const STATS: [&str; 10] = ["_pt", "_p", "_ct", "_c", "_r", "_a", "id", "iter_num", "step_num", "_pid"];

/// The stats of an event's own that can make an event whose metadata gives it no part in grouping
/// (no name XProf treats specially, no grouping stats) more than a leaf of its enclosing node: a
/// context end, a root, or asynchronous. (`id` and `iter_num` count only for events that are one.)
pub const NODE_MAKING_STATS: [&str; 6] = ["_pt", "_p", "_ct", "_c", "_r", "_a"];

/// The role of each stat metadata id of the plane (the first id of each name, as XProf looks them up).
pub(super) struct StatIds(IdTable<u8>);

impl StatIds {
    pub(super) fn new(plane: &Plane) -> Self {
        StatIds(IdTable::new(STATS.iter().enumerate().filter_map(|(i, n)| plane.stat_id(n).map(|id| (id, i as u8 + 1)))))
    }

    #[inline]
    pub(super) fn role(&self, metadata_id: i64) -> u8 {
        self.0.get(metadata_id)
    }
}

/// The kinds of a plane's inter-thread contexts: a context is of a type and of a process (an event's
/// `_pid`, else the plane's `process_id`; an `int32` to XProf), and XProf connects only the ends of one
/// process, so each (type, process) is numbered as a kind of its own, in order of appearance. Shared
/// by the step grouping and the eager marking.
pub(crate) struct ContextKinds {
    plane_pid: Option<i64>,
    ranks: FastMap<(i64, Option<i64>), u32>,
    /// The last kind looked up: a trace has a handful, and long runs of events repeat one.
    last: Option<((i64, Option<i64>), u32)>,
}

impl ContextKinds {
    pub(crate) fn new(plane: &Plane) -> Self {
        let plane_pid = plane
            .stat_id("process_id")
            .and_then(|id| plane.meta.stats.iter().find(|s| s.metadata_id == id))
            .and_then(|stat| int(&plane.stat_value(stat)?));
        ContextKinds { plane_pid, ranks: FastMap::default(), last: None }
    }

    /// The rank of contexts of type `t` at an event whose own `_pid` is `pid`, and whether it is new.
    #[inline]
    pub(crate) fn rank(&mut self, t: i64, pid: Option<i64>) -> (u32, bool) {
        let key = (t, pid.or(self.plane_pid).map(|p| i64::from(p as i32)));
        if let Some((last, rank)) = self.last {
            if last == key {
                return (rank, false);
            }
        }
        let next = self.ranks.len() as u32;
        let rank = *self.ranks.entry(key).or_insert(next);
        self.last = Some((key, rank));
        (rank, rank == next)
    }
}

pub(super) fn int(v: &StatValue) -> Option<i64> {
    match v {
        StatValue::Int(i) => Some(*i),
        StatValue::Uint(u) => Some(*u as i64),
        _ => None,
    }
}

impl GroupingStats {
    /// Applies one stat of `role` (a stat without a value changes nothing, as in XProf).
    pub(super) fn apply(&mut self, role: u8, v: Option<StatValue>) {
        let Some(v) = v else { return };
        let i = int(&v);
        match role {
            1 => self.producer.0 = i,
            2 => self.producer.1 = i.map(|x| x as u64),
            3 => self.consumer.0 = i,
            4 => self.consumer.1 = i.map(|x| x as u64),
            5 => self.root_level = i,
            6 => self.is_async = i.is_some_and(|x| x != 0),
            7 => self.step_id = i,
            8 => self.iter_num = i,
            9 => self.step_num = i,
            10 => self.pid = i,
            _ => {}
        }
    }
}

/// What an event's metadata alone says: its kind, whether its name makes it a legacy root, and the
/// grouping stats of the metadata (the event's own stats are applied on top).
#[derive(Clone, Copy)]
pub(super) struct MetaInfo {
    pub(super) kind: Kind,
    pub(super) legacy_root: bool,
    /// A root of this name starts a group without naming a step.
    pub(super) implicit_root: bool,
    /// The caller wants the groups of these events.
    pub(super) tracked: bool,
    pub(super) stats: GroupingStats,
}

/// An event that may matter beyond nesting: a root candidate, or an executor / iterator / tf.data run.
#[derive(Clone, Copy)]
pub(super) struct Keyed {
    pub(super) node: u32,
    pub(super) kind: Kind,
    pub(super) root_level: i64,
    pub(super) begin_ps: i64,
    pub(super) step_id: Option<i64>,
    pub(super) iter_num: Option<i64>,
    pub(super) step_num: Option<i64>,
    /// Its event metadata id (for a root's group name).
    pub(super) metadata_id: i64,
    /// Its rank among the tracked events, or [`NONE`].
    pub(super) tracked: u32,
}
