//! The loaded files: each one's way from disk to its details ([`FileStatus`]), how lists label it,
//! and what the main area shows for the selected one ([`Shown`]). Kept apart from the rest of the
//! state because the file list changes with every progress report, while what is shown must change
//! only when the selected file's state changes kind.

use super::AppState;
use crate::engine::FileDetails;
use leptos::prelude::*;
use std::sync::Arc;

/// Where one file is in its journey from disk to its details.
#[derive(Debug, Clone, PartialEq)]
pub enum FileStatus {
    /// Reading from disk (`read` of `total` bytes), then decoding in the worker (`decoded` of `total`).
    Loading {
        read: u64,
        decoded: u64,
        total: u64,
    },
    Ready {
        file_id: u32,
        details: Arc<FileDetails>,
    },
    Failed {
        error: crate::engine::EngineError,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoadedFile {
    /// Page-local key, stable for the life of the page.
    pub key: u64,
    /// The path relative to what was opened (`run1/host.xplane.pb` in a dropped folder, the file
    /// name for a dropped file): what identifies the file, in the page and in the URL.
    pub path: String,
    pub status: FileStatus,
}

impl LoadedFile {
    /// How the file is labelled in lists: its base name, or, where another loaded file has the same
    /// base name, the shortest end of its path that no other loaded file shares
    /// (`run1/host.xplane.pb`).
    pub fn label(&self, all: &[LoadedFile]) -> String {
        let parts: Vec<&str> = self.path.split('/').collect();
        let others: Vec<&LoadedFile> = all.iter().filter(|o| o.key != self.key).collect();
        (1..=parts.len())
            .map(|k| parts[parts.len() - k..].join("/"))
            .find(|end| !others.iter().any(|o| o.path == *end || o.path.ends_with(&format!("/{end}"))))
            .unwrap_or_else(|| self.path.clone())
    }
}

/// What the main area shows for the selected file. It changes only when the selected file's state
/// changes kind (loading → ready), never with another file's progress, so a tool view is not rebuilt
/// (and does not ask the engine again) while other files load.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// No file is loaded: the landing page.
    Nothing,
    Ready {
        file_id: u32,
        details: Arc<FileDetails>,
    },
    Loading {
        path: String,
    },
    Failed,
    /// The selected path (from a link) is not loaded; `None`: nothing is selected.
    Missing {
        path: Option<String>,
    },
}

impl AppState {
    /// Sets the status of the file with page-local key `key` (a progress report, its details, an
    /// error).
    pub fn update_file(&self, key: u64, status: FileStatus) {
        self.files.update(|fs| {
            if let Some(f) = fs.iter_mut().find(|f| f.key == key) {
                f.status = status;
            }
        });
    }

    /// What the main area shows (see [`Shown`]); read it through a `Memo` so that it only notifies
    /// when it changes.
    pub fn shown(&self) -> Shown {
        let selected = self.selected.get();
        self.files.with(|fs| {
            if fs.is_empty() {
                return Shown::Nothing;
            }
            match selected.as_ref().and_then(|p| fs.iter().find(|f| &f.path == p)).map(|f| &f.status) {
                Some(FileStatus::Ready { file_id, details }) => Shown::Ready { file_id: *file_id, details: details.clone() },
                Some(FileStatus::Loading { .. }) => Shown::Loading { path: selected.unwrap_or_default() },
                Some(FileStatus::Failed { .. }) => Shown::Failed,
                None => Shown::Missing { path: selected },
            }
        })
    }

    /// The loaded files' engine ids and paths, in list order.
    pub fn ready_files(&self) -> Vec<(u32, String)> {
        self.files.with(|fs| {
            fs.iter()
                .filter_map(|f| match f.status {
                    FileStatus::Ready { file_id, .. } => Some((file_id, f.path.clone())),
                    _ => None,
                })
                .collect()
        })
    }
}
