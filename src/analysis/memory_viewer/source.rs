//! Where an HLO instruction came from: the Python (or TF) source line and call stack, from the
//! module's `stack_frame_index` and the instruction's `OpMetadata`, as XProf's `GetSourceInfo` does.

use crate::proto::hlo::{HloInstructionProto, StackFrameIndexProto};
use serde::{Deserialize, Serialize};

/// Source of an instruction. `stack_frame` is `file:line:column` per frame, innermost first, joined by
/// newlines (XProf's format).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceInfo {
    pub file_name: String,
    pub line_number: i32,
    pub stack_frame: String,
}

/// The source of `instr`, or `None` when no file is known (XProf then omits `sourceInfo`).
///
/// The first stack frame wins when it names a file and a non-zero line; otherwise the metadata's
/// `source_file`/`source_line` are used, still with the stack text.
pub fn source_info(instr: &HloInstructionProto, index: Option<&StackFrameIndexProto>) -> Option<SourceInfo> {
    let metadata = instr.metadata.as_ref()?;
    let stack_frame = index.map(|i| stack_text(i, metadata.stack_frame_id)).unwrap_or_default();
    let from_stack = first_frame(&stack_frame).filter(|(file, line)| !file.is_empty() && *line != 0);
    let (file_name, line_number) = match from_stack {
        Some((file, line)) => (file.to_string(), line),
        None => (metadata.source_file.clone(), metadata.source_line),
    };
    (!file_name.is_empty()).then_some(SourceInfo { file_name, line_number, stack_frame })
}

/// `file:line` of the first line of a stack text (file names with `:` are not supported, as in XProf).
fn first_frame(stack: &str) -> Option<(&str, i32)> {
    let first = stack.split('\n').next()?;
    let mut parts = first.split(':');
    let file = parts.next()?;
    let line = parts.next()?;
    Some((file, line.parse().unwrap_or(0)))
}

/// Most frames of one stack text. Every buffer of an instruction carries its stack, so a malformed
/// index (a cycle, or one absurdly deep chain shared by many instructions) must not multiply into
/// memory; real JAX and TensorFlow stacks are a few dozen frames.
const MAX_STACK_FRAMES: usize = 256;
/// Longest file name kept in a stack line (real ones are paths of a few hundred bytes).
const MAX_FILE_NAME_BYTES: usize = 1024;
/// The stack text ends after the line that reaches this length (the largest fixture stack is 484
/// bytes; deep framework stacks stay under a few KiB).
const MAX_STACK_TEXT_BYTES: usize = 16 << 10;

/// The frames from `frame_id` (1-based) up through its parents. Frames with unknown locations still
/// count (file "" and line/column -1); the walk stops at an invalid id, after as many frames as the
/// index holds (so a cycle cannot loop forever), and after [`MAX_STACK_FRAMES`] or
/// [`MAX_STACK_TEXT_BYTES`].
fn stack_text(index: &StackFrameIndexProto, frame_id: i64) -> String {
    let mut lines = Vec::new();
    let mut id = frame_id;
    let mut text_bytes = 0;
    while id > 0 && lines.len() < index.stack_frames.len().min(MAX_STACK_FRAMES) && text_bytes < MAX_STACK_TEXT_BYTES {
        let Some(frame) = usize::try_from(id - 1).ok().and_then(|i| index.stack_frames.get(i)) else { break };
        id = i64::from(frame.parent_frame_id);
        let location = one_based(frame.file_location_id).and_then(|i| index.file_locations.get(i));
        let (file, line, column) = match location {
            Some(l) => {
                let file = one_based(l.file_name_id).and_then(|i| index.file_names.get(i));
                (file.map_or("", |f| prefix(f, MAX_FILE_NAME_BYTES)), l.line, l.column)
            }
            None => ("", -1, -1),
        };
        let line = format!("{file}:{line}:{column}");
        text_bytes += line.len() + 1;
        lines.push(line);
    }
    lines.join("\n")
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The vector index of a 1-based id; 0 and negative ids mean "none".
fn one_based(id: i32) -> Option<usize> {
    usize::try_from(id).ok()?.checked_sub(1)
}
