//! A snapshot's frames as people read them: Python frames as `file.py:line function`, library runs
//! folded as the device-memory tool folds them (kept, marked, for unfolding), C++ frames without the
//! allocator's own.

use crate::analysis::device_memory::is_library_file;
use crate::decode::pickle_snapshot::{Frame, TorchSnapshot};
use serde::{Deserialize, Serialize};

/// A Python frame: the file's base name, line and function, whether it is library code, and whether
/// it is folded (a library frame inside the call the user's code made, shown when unfolded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameText {
    pub file: String,
    pub line: i64,
    pub function: String,
    pub library: bool,
    pub folded: bool,
}

impl FrameText {
    fn of(s: &TorchSnapshot, f: &Frame) -> Self {
        let path = s.str(f.filename);
        let library = is_library_file(path);
        FrameText { file: base_name(path).to_string(), line: f.line, function: s.str(f.name).to_string(), library, folded: false }
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

/// The Python frames of `stack`, innermost first, every frame of a run of library frames but its
/// outermost (the library call the user's code made) marked folded.
pub fn python_stack(s: &TorchSnapshot, stack: u32) -> Vec<FrameText> {
    let mut python: Vec<FrameText> =
        s.stack(stack).iter().map(|f| &s.frames[*f as usize]).filter(|f| is_python(s, f)).map(|f| FrameText::of(s, f)).collect();
    // A library frame is folded when the frame that called it (the next outward) is library code too.
    let caller_is_library: Vec<bool> = python.iter().skip(1).map(|f| f.library).chain([false]).collect();
    for (f, caller) in python.iter_mut().zip(caller_is_library) {
        f.folded = f.library && caller;
    }
    python
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
