//! Device memory analysis of JAX pprof profiles (`jax.profiler.save_device_memory_profile`,
//! docs/formats.md §4): what is live, by Python stack; what changed between two snapshots; and
//! which stack keeps growing across a series of snapshots (the leak suspects).
//!
//! Each pprof sample is one live buffer (label `kind` = `buffer`, with `device`) or one loaded
//! executable (`kind` = `executable`), with its allocating Python stack. Samples are aggregated by
//! *stack key*: kind, device and the exact frames (function, file, line). Frames are compared by
//! content, not by pprof location id, because ids differ between files (and JAX writes several ids
//! for the same Python line), while a leak hunt must match the same line across snapshots.
//!
//! Entry points: [`analyze`] (one profile), [`diff`] (two, `pprof --diff_base` style) and
//! [`series`] (N snapshots, ranked leak suspects). All output is plain `Serialize` data in a
//! deterministic order.

mod diff;
mod frames;
mod profile;
mod read;
mod series;
mod tree;

pub use diff::{diff, DiffReport, DiffRow};
pub use frames::{is_library_file, site};
pub use profile::{analyze, FunctionRow, KindTotal, ProfileReport, StackRow};
pub use series::{order_by_number, series, Growth, SeriesReport, SeriesStack, SnapshotSummary};
pub use tree::TreeNode;

use serde::{Deserialize, Serialize};

/// How samples are read before any analysis.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Collapse each run of library frames to its outermost frame (see [`frames::fold`]), so stacks
    /// read as the user's code plus the library call it made.
    pub fold_library_frames: bool,
    /// Keep only samples whose `kind` label equals this (`buffer`, `executable`); `None` keeps all.
    pub kind: Option<String>,
}

/// One Python frame.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Frame {
    pub function: String,
    pub file: String,
    pub line: i64,
    /// Whether `file` is library code (site-packages, JAX/jaxlib, the Python stdlib): see
    /// [`is_library_file`]. Lets a UI dim these frames.
    pub library: bool,
}

impl Frame {
    pub fn new(function: &str, file: &str, line: i64) -> Self {
        Frame { function: function.to_string(), file: file.to_string(), line, library: is_library_file(file) }
    }
}
