//! Why the engine could not answer: one enum for every tool, with the facts as fields, so the page
//! and the CLI say exactly what went wrong (and the page can act on the kind: fall back to the first
//! memory ID, explain which HLO dump has a buffer assignment) instead of guessing from a string.
//!
//! `Display` is the sentence for the user, with the file first; [`EngineError::detail`] is the same
//! sentence without the file, for places that show the file beside it. A new tool adds variants.

use crate::decode::{DecodeError, Format};
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EngineError {
    /// A request named a file id the session does not hold (closed, or from before an engine restart).
    UnknownFile { file_id: u32 },
    /// The file could not be read from disk (CLI) or by the browser (page).
    Unreadable { file: String, reason: String },
    /// The bytes are not a profile Tidemark can decode; `offset_bytes` is where a truncated file ends.
    Decode { file: String, message: String, offset_bytes: Option<u64> },
    /// The file decoded, but is not the kind of profile `tool` reads.
    WrongFormat { file: String, tool: String, found: Format, needs: String },
    /// The Memory Profile has no allocator with this memory ID.
    UnknownMemoryId { file: String, memory_id: String, known: Vec<String> },
    /// No HLO module of the file is called `module` (by XProf's name or module name).
    UnknownModule { file: String, module: String, known: Vec<String> },
    /// `module` matches several modules by module name; XProf's names tell them apart.
    AmbiguousModule { file: String, module: String, candidates: Vec<String> },
    /// The module has no buffer assignment (a `before_optimizations` dump).
    NoBufferAssignment { file: String, module: String },
    /// The module has no allocations in this memory space.
    NoSuchMemorySpace { file: String, module: String, memory_space: i64, present: Vec<i64> },
    /// An analysis failed on this file's content (a malformed trace or module); `message` says how.
    Analysis { file: String, tool: String, message: String },
    /// `tool` cannot answer for this trace yet (a kind of device or trace it does not read); `reason`
    /// says what is missing.
    Unsupported { file: String, tool: String, reason: String },
    /// The engine stopped (a crash in the worker) while serving this request; `then` says what
    /// happened next (restarted, or could not be).
    EngineStopped { file: String, reason: String, then: String },
    /// A tool of a run (several hosts combined) was asked for a run of no files.
    EmptyRun,
    /// The file's bytes are not held (the page keeps one host of a run in memory and reads another
    /// again when a tool needs it); the page's worker reads it again and asks once more. Seen by the
    /// user only when one request needs two such files at once.
    NotResident { file: String, file_id: u32 },
}

impl EngineError {
    /// The file the error is about, as the user named it; `None` for an unknown file id.
    pub fn file(&self) -> Option<&str> {
        match self {
            EngineError::UnknownFile { .. } | EngineError::EmptyRun => None,
            EngineError::Unreadable { file, .. }
            | EngineError::Decode { file, .. }
            | EngineError::WrongFormat { file, .. }
            | EngineError::UnknownMemoryId { file, .. }
            | EngineError::UnknownModule { file, .. }
            | EngineError::AmbiguousModule { file, .. }
            | EngineError::NoBufferAssignment { file, .. }
            | EngineError::NoSuchMemorySpace { file, .. }
            | EngineError::Analysis { file, .. }
            | EngineError::Unsupported { file, .. }
            | EngineError::EngineStopped { file, .. }
            | EngineError::NotResident { file, .. } => Some(file),
        }
    }

    /// The error in words, without the file.
    pub fn detail(&self) -> String {
        match self {
            EngineError::UnknownFile { file_id } => {
                format!("file #{file_id} is not open in the engine (it was closed, or the engine restarted since); open it again")
            }
            EngineError::Unreadable { reason, .. } => format!("cannot read the file: {reason}"),
            EngineError::Decode { message, .. } => message.clone(),
            EngineError::WrongFormat { tool, found, needs, .. } => format!("this file is {found}, not {needs}, which the {tool} reads"),
            EngineError::UnknownMemoryId { memory_id, known, .. } => {
                format!("no memory ID `{memory_id}` (this file has: {})", known.join(", "))
            }
            EngineError::UnknownModule { module, known, .. } if known.is_empty() => {
                format!("no module `{module}`: this file has no HLO modules")
            }
            EngineError::UnknownModule { module, known, .. } => format!("no module `{module}`; the modules are: {}", known.join(", ")),
            EngineError::AmbiguousModule { module, candidates, .. } => {
                format!("`{module}` names several modules; choose one of: {}", candidates.join(", "))
            }
            EngineError::NoBufferAssignment { module, .. } => format!(
                "module `{module}` has no buffer assignment, so there is nothing for the Memory Viewer to show. XLA writes it only after optimizations: use the `*after_optimizations*.hlo.pb` dump (XLA_FLAGS=--xla_dump_hlo_as_proto) or a profile (*.xplane.pb) of a compiled program"
            ),
            EngineError::NoSuchMemorySpace { module, memory_space, present, .. } => {
                format!("memory space {memory_space} has no allocations in module `{module}`; its memory spaces are {present:?}")
            }
            EngineError::Analysis { tool, message, .. } => format!("the {tool} could not be computed: {message}"),
            EngineError::Unsupported { tool, reason, .. } => format!("the {tool} does not support this trace yet: {reason}"),
            EngineError::EngineStopped { reason, then, .. } => format!("the engine stopped while working on this file ({reason}); {then}"),
            EngineError::EmptyRun => "the run has no files: a run's tools combine its hosts' traces".to_string(),
            EngineError::NotResident { .. } => {
                "this request needs the bytes of several hosts at once, and the page holds one host's in memory at a time".to_string()
            }
        }
    }

    /// A decode failure of `file`, keeping where a truncated file ends.
    pub fn decode(file: &str, e: &DecodeError) -> Self {
        let offset_bytes = match e {
            DecodeError::Truncated { end, .. } => Some(*end),
            _ => None,
        };
        EngineError::Decode { file: file.to_string(), message: e.to_string(), offset_bytes }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.file() {
            Some(file) => write!(f, "{file}: {}", self.detail()),
            None => f.write_str(&self.detail()),
        }
    }
}

impl std::error::Error for EngineError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire form is tagged by `kind` with the facts as fields, and reads back equal.
    #[test]
    fn errors_travel_tagged_with_their_fields() {
        let e = EngineError::UnknownMemoryId { file: "a/x.pb".into(), memory_id: "GPU_9".into(), known: vec!["GPU_0_bfc".into()] };
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, r#"{"kind":"unknown_memory_id","file":"a/x.pb","memory_id":"GPU_9","known":["GPU_0_bfc"]}"#);
        assert_eq!(serde_json::from_str::<EngineError>(&json).unwrap(), e);
        assert_eq!(e.to_string(), "a/x.pb: no memory ID `GPU_9` (this file has: GPU_0_bfc)");
    }

    #[test]
    fn a_truncated_file_keeps_its_offset() {
        let e = DecodeError::Truncated { format: Format::XSpace, end: 1234, detail: "cut".into() };
        let EngineError::Decode { offset_bytes, .. } = EngineError::decode("t.pb", &e) else { panic!("a decode error") };
        assert_eq!(offset_bytes, Some(1234));
    }
}
