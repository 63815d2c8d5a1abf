//! Opening a file from disk into the engine's [`Session`]: every command goes through here, as the
//! page goes through its worker.

use std::path::Path;
use tidemark::engine::first_screen::empty_reason;
use tidemark::engine::tool::Tool;
use tidemark::engine::{EngineError, Session};

/// Reads `path` and opens it in `session` as `shown_path` (how the file is named in output and
/// errors); returns its id.
///
/// A trace cut short opens with what lies before the cut, as in the page: a one-line warning on
/// stderr says where the cut is, and the command carries on (its output, `--json` included, keeps
/// its shape, and it exits 0: XProf refuses such a file, so there is no status of its to keep).
pub fn open_file(session: &mut Session, path: &Path, shown_path: &str) -> Result<u32, EngineError> {
    let bytes = tidemark::engine::read_input::read_input(path)
        .map_err(|e| EngineError::Unreadable { file: shown_path.to_string(), reason: e.to_string() })?;
    let file = session.open(shown_path, bytes, &mut |_, _| {})?;
    if let Some(message) = file.overview.truncation_message() {
        eprintln!("tidemark: warning: {shown_path}: {message}");
    }
    Ok(file.id)
}

/// The line a tool's text output begins with when `tool` has nothing to show for the one file
/// `ids` names: why, and what to do — the sentence the page shows over the tool
/// ([`tidemark::engine::first_screen::empty_reason`]); empty otherwise (and for a run of several).
pub fn empty_reason_line(session: &Session, ids: &[u32], tool: Tool) -> String {
    let [id] = ids else { return String::new() };
    session.get(*id).and_then(|f| empty_reason(tool, &f.overview)).map(|r| format!("{}\n", r.sentence())).unwrap_or_default()
}
