//! A snapshot's frames as people read them: Python frames as `file.py:line function`, library runs
//! folded as the device-memory tool folds them, C++ frames without the allocator's own.

use crate::analysis::device_memory::is_library_file;
use crate::decode::pickle_snapshot::{Frame, TorchSnapshot};
use serde::{Deserialize, Serialize};

/// A Python frame: the file's base name, line and function, and whether it is library code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameText {
    pub file: String,
    pub line: i64,
    pub function: String,
    pub library: bool,
}

impl FrameText {
    fn of(s: &TorchSnapshot, f: &Frame) -> Self {
        let path = s.str(f.filename);
        FrameText { file: base_name(path).to_string(), line: f.line, function: s.str(f.name).to_string(), library: is_library_file(path) }
    }

    /// `file.py:line function`.
    pub fn text(&self) -> String {
        format!("{}:{} {}", self.file, self.line, self.function)
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_python(s: &TorchSnapshot, f: &Frame) -> bool {
    s.str(f.filename).ends_with(".py")
}

/// The innermost Python frame of stack `stack` (C++ frames come first where the snapshot recorded
/// them), `None` when it has none.
pub fn innermost_python_frame(s: &TorchSnapshot, stack: u32) -> Option<FrameText> {
    s.stack(stack).iter().map(|f| &s.frames[*f as usize]).find(|f| is_python(s, f)).map(|f| FrameText::of(s, f))
}

/// The Python frames of `stack`, innermost first, each run of library frames folded to its
/// outermost frame (the library call the user's code made).
pub fn python_stack(s: &TorchSnapshot, stack: u32) -> Vec<FrameText> {
    let python: Vec<FrameText> =
        s.stack(stack).iter().map(|f| &s.frames[*f as usize]).filter(|f| is_python(s, f)).map(|f| FrameText::of(s, f)).collect();
    // Outermost first, keep the first of each library run, back to innermost first.
    let mut out: Vec<FrameText> = Vec::with_capacity(python.len());
    for f in python.into_iter().rev() {
        if !(f.library && out.last().is_some_and(|prev: &FrameText| prev.library)) {
            out.push(f);
        }
    }
    out.reverse();
    out
}

/// C++ function names of the stack's own work, innermost first: without the unwinder and the caching
/// allocator (every allocation's innermost frames), the dispatcher's wrappers and the Python
/// interpreter and C runtime below the first Python frame.
pub fn cpp_stack(s: &TorchSnapshot, stack: u32) -> Vec<String> {
    const PLUMBING: &[&str] = &[
        "torch::unwind",
        "torch::CapturedTraceback",
        "torch::cuda::(anonymous namespace)::gather",
        "c10::cuda::CUDACachingAllocator",
        "c10::impl::",
        "c10::Dispatcher",
        "at::_ops::",
    ];
    s.stack(stack)
        .iter()
        .map(|f| &s.frames[*f as usize])
        .take_while(|f| !is_python(s, f))
        .map(|f| s.str(f.name))
        .filter(|name| !PLUMBING.iter().any(|p| name.starts_with(p)))
        .map(str::to_string)
        .collect()
}
