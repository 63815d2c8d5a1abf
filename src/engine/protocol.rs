//! The one narrow, versioned envelope between the page and the engine's web worker. Requests carry a
//! sequence number; the page drops replies to requests it no longer waits for. File bytes travel beside
//! the JSON envelope as a transferred `ArrayBuffer`, never inside it.

use super::memory_viewer::{ModuleEntry, ModuleProblem};
use super::{FileOverview, OpenError, Session};
use crate::analysis::memory_viewer::MemoryViewer;
use serde::{Deserialize, Serialize};

/// Bumped whenever a message changes shape.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub v: u32,
    pub seq: u64,
    pub body: RequestBody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RequestBody {
    /// Decode the bytes sent alongside as file `name`.
    Open { name: String },
    Close { file_id: u32 },
    /// Every module of every open file, with its peak (the Memory Viewer's module selector).
    MemoryViewerModules,
    /// The Memory Viewer of one module; `memory_space` `None` picks device memory where present.
    MemoryViewer { file_id: u32, module: String, memory_space: Option<i64> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub v: u32,
    pub seq: u64,
    pub body: ResponseBody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseBody {
    Progress { done: u64, total: u64 },
    Opened { file_id: u32, overview: Box<FileOverview> },
    Failed { error: OpenError },
    Closed { file_id: u32 },
    MemoryViewerModules { modules: Vec<ModuleEntry> },
    MemoryViewer { file_id: u32, module: String, viewer: Box<MemoryViewer> },
    /// The module has no Memory Viewer (no buffer assignment, no such module, ...).
    MemoryViewerUnavailable { file_id: u32, module: String, problem: ModuleProblem },
    /// The request itself could not be understood (wrong version, bad JSON).
    Rejected { message: String },
}

/// Answers `request` (JSON) against `session`; `bytes` are the file for `Open`. Progress is reported
/// through `emit` before the final response is returned.
pub fn handle(session: &mut Session, request: &str, bytes: Option<Vec<u8>>, emit: &mut dyn FnMut(Response)) -> Response {
    let req: Request = match serde_json::from_str(request) {
        Ok(r) => r,
        Err(e) => return Response { v: VERSION, seq: 0, body: ResponseBody::Rejected { message: format!("bad request: {e}") } },
    };
    let seq = req.seq;
    let reply = |body| Response { v: VERSION, seq, body };
    if req.v != VERSION {
        return reply(ResponseBody::Rejected { message: format!("protocol version {} is not {VERSION}; reload the page", req.v) });
    }
    match req.body {
        RequestBody::Open { name } => {
            let mut last_pct = u64::MAX;
            let mut progress = |done: u64, total: u64| {
                let pct = if total == 0 { 100 } else { done.saturating_mul(100) / total };
                if pct != last_pct {
                    last_pct = pct;
                    emit(Response { v: VERSION, seq, body: ResponseBody::Progress { done, total } });
                }
            };
            match session.open(&name, bytes.unwrap_or_default(), &mut progress) {
                Ok(f) => reply(ResponseBody::Opened { file_id: f.id, overview: Box::new(f.overview.clone()) }),
                Err(error) => reply(ResponseBody::Failed { error }),
            }
        }
        RequestBody::Close { file_id } => {
            session.close(file_id);
            reply(ResponseBody::Closed { file_id })
        }
        RequestBody::MemoryViewerModules => reply(ResponseBody::MemoryViewerModules { modules: session.memory_viewer_modules() }),
        RequestBody::MemoryViewer { file_id, module, memory_space } => match session.memory_viewer(file_id, &module, memory_space) {
            Ok(viewer) => reply(ResponseBody::MemoryViewer { file_id, module, viewer: Box::new((*viewer).clone()) }),
            Err(problem) => reply(ResponseBody::MemoryViewerUnavailable { file_id, module, problem }),
        },
    }
}
