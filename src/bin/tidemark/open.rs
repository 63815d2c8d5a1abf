//! Opening a file from disk into the engine's [`Session`]: every command goes through here, as the
//! page goes through its worker.

use std::path::Path;
use tidemark::engine::{EngineError, Session};

/// Reads `path` and opens it in `session` as `shown_path` (how the file is named in output and
/// errors); returns its id.
pub fn open_file(session: &mut Session, path: &Path, shown_path: &str) -> Result<u32, EngineError> {
    let bytes = tidemark::engine::read_input::read_input(path)
        .map_err(|e| EngineError::Unreadable { file: shown_path.to_string(), reason: e.to_string() })?;
    session.open(shown_path, bytes, &mut |_, _| {}).map(|f| f.id)
}
