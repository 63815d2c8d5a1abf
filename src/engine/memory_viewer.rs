//! The Memory Viewer of opened files: every module the files offer, and the analysis of one module and
//! memory space. Analyses are cached per (file, module, memory space): the page asks again whenever the
//! user comes back to a module, and a large module takes long enough to analyse that this matters.

use super::{EngineError, Session};
use crate::analysis::memory_viewer::modules::{self, ModuleInput};
use crate::analysis::memory_viewer::{analyze, MemoryViewer, MemoryViewerError, Options};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// One line of the page's module selector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleEntry {
    pub file_id: u32,
    /// The file's path (what identifies it in the page).
    pub file: String,
    /// XProf's name: `jit_train_step(14)` inside a trace, the module name in an HloProto dump.
    pub name: String,
    pub module_name: String,
    /// The memory space the peak is of: 0 (device memory) where the module has it.
    pub memory_space: i64,
    pub memory_spaces: Vec<i64>,
    pub peak_heap_bytes: Option<i64>,
    /// Why the module has no Memory Viewer (no buffer assignment, unreadable, ...).
    pub problem: Option<EngineError>,
}

/// The Memory Viewer page's answer: the module list of the files it offers, and the module shown.
#[derive(Debug, Clone)]
pub struct ViewerPage {
    pub modules: Vec<ModuleEntry>,
    pub file_id: u32,
    /// The module shown (`None`: the file has no modules) and its analysis or why there is none.
    pub shown: Option<(String, Result<Arc<MemoryViewer>, EngineError>)>,
}

type CacheKey = (u32, String, i64);

/// Analyses computed so far; dropped with their file.
#[derive(Default)]
pub struct ViewerCache {
    entries: HashMap<CacheKey, Result<Arc<MemoryViewer>, EngineError>>,
}

impl ViewerCache {
    pub(super) fn forget_file(&mut self, file_id: u32) {
        self.entries.retain(|(f, _, _), _| *f != file_id);
    }
}

const TOOL: &str = "Memory Viewer";

/// The analysis's error about module `module` of `file`, as the engine's.
fn engine_error(file: &str, module: &str, e: MemoryViewerError) -> EngineError {
    let file = file.to_string();
    match e {
        MemoryViewerError::NoBufferAssignment { module } => EngineError::NoBufferAssignment { file, module },
        MemoryViewerError::NoSuchMemorySpace { memory_space, present } => {
            EngineError::NoSuchMemorySpace { file, module: module.to_string(), memory_space, present }
        }
        MemoryViewerError::UnknownModule { module, known } => EngineError::UnknownModule { file, module, known },
        MemoryViewerError::AmbiguousModule { module, candidates } => EngineError::AmbiguousModule { file, module, candidates },
        e @ (MemoryViewerError::NoModule | MemoryViewerError::Trace(_) | MemoryViewerError::Module(_)) => {
            EngineError::Analysis { file, tool: TOOL.into(), message: format!("module {module}: {e}") }
        }
    }
}

/// Analyses `m` of `file`; without `memory_space`, device memory (0) where the module has it, else its
/// first memory space.
fn analyse(file: &str, m: &ModuleInput, memory_space: Option<i64>) -> Result<Arc<MemoryViewer>, EngineError> {
    let proto = m.proto.as_ref().map_err(|e| EngineError::Analysis {
        file: file.to_string(),
        tool: TOOL.into(),
        message: format!("module {} could not be read: {e}", m.name),
    })?;
    let options = Options { memory_space: memory_space.unwrap_or(0), ..Options::default() };
    match (analyze(proto, options), memory_space) {
        (Err(MemoryViewerError::NoSuchMemorySpace { present, .. }), None) if !present.is_empty() => {
            analyze(proto, Options { memory_space: present[0], ..options })
        }
        (r, _) => r,
    }
    .map(Arc::new)
    .map_err(|e| engine_error(file, &m.name, e))
}

impl Session {
    /// The Memory Viewer of module `module` (XProf's name, or the module name when unique) of file
    /// `file_id`, in `memory_space` (see [`analyse`] for the default).
    pub fn memory_viewer(&mut self, file_id: u32, module: &str, memory_space: Option<i64>) -> Result<Arc<MemoryViewer>, EngineError> {
        let key = (file_id, module.to_string(), memory_space.unwrap_or(0));
        if let Some(hit) = self.viewers.entries.get(&key) {
            return hit.clone();
        }
        let f = self.file(file_id)?;
        let file = f.file.name.as_str();
        let inputs = modules::module_inputs(&f.file.profile);
        let result =
            modules::select(&inputs, module).map_err(|e| engine_error(file, module, e)).and_then(|m| analyse(file, m, memory_space));
        self.viewers.entries.insert(key, result.clone());
        result
    }

    /// The Memory Viewer page of file `file_id`: the modules of `file_ids` for its selector, and
    /// module `module` when the file has it, else the file's largest, in `memory_space`.
    pub fn memory_viewer_page(
        &mut self,
        file_ids: &[u32],
        file_id: u32,
        module: Option<&str>,
        memory_space: Option<i64>,
    ) -> Result<ViewerPage, EngineError> {
        self.file(file_id)?;
        let modules = self.memory_viewer_modules(Some(file_ids));
        let mut of_file = modules.iter().filter(|m| m.file_id == file_id);
        let chosen = match module {
            Some(wanted) => of_file.clone().find(|m| m.name == wanted).or_else(|| of_file.next()),
            None => of_file.next(),
        }
        .map(|m| m.name.clone());
        let shown = chosen.map(|name| {
            let viewer = self.memory_viewer(file_id, &name, memory_space);
            (name, viewer)
        });
        Ok(ViewerPage { modules, file_id, shown })
    }

    /// Every module of the open files `file_ids` (every open file when `None`) with its peak, largest
    /// first (modules without one last), then by file and name for a stable order. Analyses each module
    /// once (cached for the page's next ask).
    pub fn memory_viewer_modules(&mut self, file_ids: Option<&[u32]>) -> Vec<ModuleEntry> {
        let mut out = Vec::new();
        for f in self.files.iter().filter(|f| file_ids.is_none_or(|ids| ids.contains(&f.id))) {
            for m in modules::module_inputs(&f.file.profile) {
                let result =
                    self.viewers.entries.entry((f.id, m.name.clone(), 0)).or_insert_with(|| analyse(&f.file.name, &m, None)).clone();
                out.push(ModuleEntry {
                    file_id: f.id,
                    file: f.file.name.clone(),
                    memory_space: result.as_ref().map_or(0, |v| v.options.memory_space),
                    memory_spaces: result.as_ref().map(|v| v.memory_spaces.clone()).unwrap_or_default(),
                    peak_heap_bytes: result.as_ref().ok().map(|v| v.peak_heap_bytes),
                    problem: result.err(),
                    name: m.name,
                    module_name: m.module_name,
                });
            }
        }
        out.sort_by(|a, b| {
            b.peak_heap_bytes.cmp(&a.peak_heap_bytes).then_with(|| a.file_id.cmp(&b.file_id)).then_with(|| a.name.cmp(&b.name))
        });
        out
    }
}
