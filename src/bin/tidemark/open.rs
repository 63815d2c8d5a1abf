//! Opening a file from disk into the engine's [`Session`]: every command goes through here, as the
//! page goes through its worker.

use std::path::Path;
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
