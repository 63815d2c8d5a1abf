//! What an op tool is asked about: a [`Scope`] — one file, or a run's hosts combined as XProf combines
//! them for "all hosts" (`CombineAllOpStats`), over the whole trace or a time window (a step). A file is
//! a run of one host, so every op tool has one request and one `Session` method taking a scope, and
//! every op table reads the scope's op metrics ([`Session::op_metrics`]): computed once per scope and
//! kept in one cache until one of its files is closed.

use super::op_metrics::{file_op_metrics, FileOpMetrics};
use super::run_op_metrics::combine;
use super::{EngineError, Session};
use crate::analysis::op_metrics::TimeWindow;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// The files an op tool reads (in the run's host order, the order XProf combines them in; one id for a
/// file) and the window its events must start inside (the whole trace without one; Tidemark's own,
/// XProf has no such limit).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scope {
    pub file_ids: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<TimeWindow>,
}

impl Scope {
    /// The whole trace of file `file_id`.
    pub fn file(file_id: u32) -> Scope {
        Scope { file_ids: vec![file_id], window: None }
    }

    /// The whole traces of the run `file_ids`, its hosts combined.
    pub fn run(file_ids: &[u32]) -> Scope {
        Scope { file_ids: file_ids.to_vec(), window: None }
    }

    /// This scope over `window` (the whole trace with `None`).
    pub fn within(self, window: Option<TimeWindow>) -> Scope {
        Scope { window, ..self }
    }

    /// The scope's first file: the one its errors name. A scope of no file is [`EngineError::EmptyRun`].
    pub fn first(&self) -> Result<u32, EngineError> {
        self.file_ids.first().copied().ok_or(EngineError::EmptyRun)
    }
}

/// Windows whose op metrics are kept: the page asks for one step at a time, and going back and forth
/// between a few steps should not pass over the trace again.
const KEPT_WINDOWS: usize = 8;

/// The op metrics computed so far, by scope: every whole-trace scope's until one of its files is
/// closed, the last few windows' ([`KEPT_WINDOWS`]) besides, the most recently computed last.
#[derive(Default)]
pub(super) struct OpMetricsCache {
    whole: HashMap<Vec<u32>, Arc<FileOpMetrics>>,
    windowed: VecDeque<(Scope, Arc<FileOpMetrics>)>,
}

impl OpMetricsCache {
    fn get(&self, scope: &Scope) -> Option<Arc<FileOpMetrics>> {
        match scope.window {
            None => self.whole.get(&scope.file_ids).cloned(),
            Some(_) => self.windowed.iter().find(|(s, _)| s == scope).map(|(_, m)| m.clone()),
        }
    }

    /// Keeps the op metrics of `scope`; over a window, forgetting the oldest entry of another window
    /// beyond [`KEPT_WINDOWS`]. Entries of the same window are never forgotten for each other: a run's
    /// hosts are kept one by one over one window, and a host released in the page must find its own
    /// entry when the request is asked again after another host was read back.
    fn keep(&mut self, scope: &Scope, metrics: Arc<FileOpMetrics>) {
        let Some(window) = scope.window else {
            self.whole.insert(scope.file_ids.clone(), metrics);
            return;
        };
        if self.windowed.len() >= KEPT_WINDOWS {
            if let Some(oldest) = self.windowed.iter().position(|(s, _)| s.window != Some(window)) {
                self.windowed.remove(oldest);
            }
        }
        self.windowed.push_back((scope.clone(), metrics));
    }

    pub(super) fn forget_file(&mut self, file_id: u32) {
        self.whole.retain(|ids, _| !ids.contains(&file_id));
        self.windowed.retain(|(s, _)| !s.file_ids.contains(&file_id));
    }
}

/// The tools' name in errors.
const TOOL: &str = "op tables";

impl Session {
    /// The op metrics of `scope`: a file's one op-metrics pass, that pass again over the events that
    /// start inside the window, or the hosts' op metrics (each over the window) combined. Kept until one
    /// of its files is closed (a window's: the last few windows).
    pub fn op_metrics(&mut self, scope: &Scope) -> Result<Arc<FileOpMetrics>, EngineError> {
        let first = scope.first()?;
        if let Some(m) = self.op_metrics.get(scope) {
            return Ok(m);
        }
        let metrics = match (scope.file_ids.as_slice(), scope.window) {
            ([_], None) => {
                let (_, space) = self.trace_of(first, TOOL)?;
                Arc::new(file_op_metrics(space, self.op_metrics_parts).map_err(|e| self.analysis_error(first, TOOL, e.to_string()))?)
            }
            ([_], Some(window)) => {
                let whole = self.op_metrics(&Scope::file(first))?;
                let (_, space) = self.trace_of(first, TOOL)?;
                Arc::new(whole.in_window(space, window).map_err(|e| self.analysis_error(first, TOOL, e.to_string()))?)
            }
            // Each host's op metrics are kept on their own: in the page a run holds one host's bytes at
            // a time, so a request over several hosts is asked again after each released host is read
            // back, and the hosts done before must not need their bytes again.
            (ids, window) => {
                let mut hosts = Vec::with_capacity(ids.len());
                for &id in ids {
                    let metrics = self.op_metrics(&Scope::file(id).within(window))?;
                    hosts.push((metrics, self.hostnames(id, TOOL)?));
                }
                Arc::new(combine(&hosts))
            }
        };
        self.op_metrics.keep(scope, metrics.clone());
        Ok(metrics)
    }
}
