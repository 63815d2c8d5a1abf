//! The Graph Viewer of opened files: an HLO module's graph around an instruction, as plain data for
//! the CLI and, laid out, for the page.

use super::{EngineError, Session};
use crate::analysis::graph_viewer::layout::{layout, Layout};
use crate::analysis::graph_viewer::{graph, Graph, GraphOptions, GraphViewerError};
use crate::analysis::memory_viewer::modules::{self, ModuleInput};
use crate::analysis::memory_viewer::MemoryViewerError;
use serde::{Deserialize, Serialize};

const TOOL: &str = "Graph Viewer";

/// One module of the page's selector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphModule {
    /// XProf's name: `jit_train_step(14)` inside a trace, the module name in a dump.
    pub name: String,
    pub instructions: usize,
}

/// The page's answer: the file's modules, the module shown, its graph and the graph's layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphView {
    pub modules: Vec<GraphModule>,
    pub module: String,
    pub graph: Graph,
    pub layout: Layout,
}

fn module_error(file: &str, e: MemoryViewerError) -> EngineError {
    let file = file.to_string();
    match e {
        MemoryViewerError::UnknownModule { module, known } => EngineError::UnknownModule { file, module, known },
        MemoryViewerError::AmbiguousModule { module, candidates } => EngineError::AmbiguousModule { file, module, candidates },
        e => EngineError::Analysis { file, tool: TOOL.into(), message: e.to_string() },
    }
}

fn graph_error(file: &str, module: &str, e: GraphViewerError) -> EngineError {
    EngineError::Analysis { file: file.to_string(), tool: TOOL.into(), message: format!("module {module}: {e}") }
}

fn instruction_count(m: &ModuleInput) -> usize {
    m.proto.as_ref().ok().and_then(|p| p.hlo_module.as_ref()).map_or(0, |h| h.computations.iter().map(|c| c.instructions.len()).sum())
}

impl Session {
    /// The modules of file `file_id` with their instruction counts, in XProf's order.
    pub fn graph_viewer_modules(&self, file_id: u32) -> Result<Vec<GraphModule>, EngineError> {
        let f = self.file(file_id)?;
        Ok(modules::module_inputs(&f.file.profile)
            .iter()
            .map(|m| GraphModule { name: m.name.clone(), instructions: instruction_count(m) })
            .collect())
    }

    /// The graph of `module` (XProf's name, or the module name when unique) of file `file_id`.
    pub fn graph_viewer(&self, file_id: u32, module: &str, options: &GraphOptions) -> Result<Graph, EngineError> {
        let f = self.file(file_id)?;
        let file = f.file.name.as_str();
        let inputs = modules::module_inputs(&f.file.profile);
        let m = modules::select(&inputs, module).map_err(|e| module_error(file, e))?;
        let proto = m.proto.as_ref().map_err(|e| EngineError::Analysis {
            file: file.to_string(),
            tool: TOOL.into(),
            message: format!("module {} could not be read: {e}", m.name),
        })?;
        let hlo = proto.hlo_module.as_ref().ok_or_else(|| graph_error(file, &m.name, GraphViewerError::NoModule))?;
        graph(hlo, options).map_err(|e| graph_error(file, &m.name, e))
    }

    /// The page's Graph tool: `module` when the file has it (a link from another file's tool may name
    /// one it has not), else the file's module with the most instructions; its graph for `options`,
    /// laid out.
    pub fn graph_view(&self, file_id: u32, module: Option<&str>, options: &GraphOptions) -> Result<GraphView, EngineError> {
        let modules = self.graph_viewer_modules(file_id)?;
        let given = module.map(|m| (m.to_string(), self.graph_viewer(file_id, m, options)));
        // In the fallback arm, a named module is one the file does not have.
        let named = module.is_some();
        let (chosen, graph) = match given {
            Some((_, Err(EngineError::UnknownModule { .. }))) | None => {
                let Some(largest) = modules.iter().max_by_key(|m| m.instructions) else {
                    return Err(EngineError::Unsupported {
                        file: self.file(file_id)?.file.name.clone(),
                        tool: TOOL.into(),
                        reason:
                            "the file holds no HLO modules (the Graph Viewer reads XLA HloProtos and XProf traces of compiled programs)"
                                .into(),
                    });
                };
                // A node named for another module is not looked for here: the entry root instead.
                let fallback = GraphOptions { node: if named { None } else { options.node.clone() }, width: options.width };
                (largest.name.clone(), self.graph_viewer(file_id, &largest.name, &fallback)?)
            }
            Some((m, result)) => (m, result?),
        };
        let layout = layout(&graph);
        Ok(GraphView { modules, module: chosen, graph, layout })
    }
}
