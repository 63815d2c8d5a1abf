//! The Graph Viewer of opened files: an HLO module's graph around an instruction, as plain data for
//! the CLI and, laid out, for the page.

use super::{EngineError, Scope, Session};
use crate::analysis::graph_viewer::layout::{layout, Layout};
use crate::analysis::graph_viewer::{graph, overview, Graph, GraphOptions, GraphViewerError, NodeKind};
use crate::analysis::memory_viewer::assignment::Assignment;
use crate::analysis::memory_viewer::modules::{self, ModuleInput};
use crate::analysis::memory_viewer::MemoryViewerError;
use crate::analysis::op_metrics::ps_to_us;
use crate::proto::hlo::HloModuleProto;
use crate::proto::hlo::HloProto;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

const TOOL: &str = "Graph Viewer";

/// One module of the page's selector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphModule {
    /// XProf's name: `jit_train_step(14)` inside a trace, the module name in a dump.
    pub name: String,
    pub instructions: usize,
}

/// The page's answer: the file's modules, the module shown, its graph and the graph's layout, and
/// what the trace and the buffer assignment say of the instructions drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphView {
    pub modules: Vec<GraphModule>,
    pub module: String,
    pub graph: Graph,
    pub layout: Layout,
    pub figures: GraphFigures,
}

/// The page's overview of a whole module (`analysis::graph_viewer::overview`: each fusion one node),
/// laid out, with the figures of the instructions it draws; asked once per module, so re-centring
/// the neighbourhood does not send it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphOverview {
    pub module: String,
    pub graph: Graph,
    pub layout: Layout,
    pub figures: GraphFigures,
}

/// Where an instruction's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeSource {
    /// XProf's HLO Op Stats (device ops).
    HloStats,
    /// The XLA ops the host threads ran (a CPU trace; Tidemark's XLA ops table).
    XlaOpsCpu,
}

/// The figures of the drawn instructions — the nodes, the fusions drawn as clusters and the centre —
/// by instruction name; an instruction the trace or the assignment says nothing of is absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphFigures {
    /// Which op table the times come from; `None`: the file has no times for this module (an HLO
    /// dump, a module that did not run in the trace).
    pub time_source: Option<TimeSource>,
    /// Whether the module carries its buffer assignment (the bytes are its logical buffers).
    pub has_buffers: bool,
    pub by_name: BTreeMap<String, InstructionFigures>,
}

/// What the trace and the buffer assignment say of one instruction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InstructionFigures {
    /// Its op table row: self time over the trace, µs, and that time's share as the table gives it
    /// (of the device's time in HLO Op Stats, of all XLA ops' self time on CPU).
    pub self_time_us: Option<f64>,
    pub self_time_fraction: Option<f64>,
    pub occurrences: Option<u64>,
    /// XProf's model FLOP rate, GFLOP/s (device ops only).
    pub flop_rate: Option<f64>,
    /// The logical buffers it defines, as the Memory Viewer names them (`name{1}`), with their sizes
    /// in bytes; by name.
    pub buffers: Vec<(String, i64)>,
}

impl InstructionFigures {
    /// The bytes of its buffers.
    pub fn bytes(&self) -> i64 {
        self.buffers.iter().map(|b| b.1).sum()
    }
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
        self.with_hlo_module(file_id, module, |hlo| graph(hlo, options))
    }

    /// The overview of `module` of file `file_id`: the whole module, each fusion one node.
    pub fn graph_overview_graph(&self, file_id: u32, module: &str) -> Result<Graph, EngineError> {
        self.with_hlo_module(file_id, module, overview)
    }

    /// The page's overview of `module` (XProf's name, or the module name when unique), laid out, with
    /// its instructions' figures.
    pub fn graph_overview(&mut self, file_id: u32, module: &str) -> Result<GraphOverview, EngineError> {
        let graph = self.graph_overview_graph(file_id, module)?;
        let layout = layout(&graph);
        let figures = self.graph_figures(file_id, module, &graph)?;
        Ok(GraphOverview { module: module.to_string(), graph, layout, figures })
    }

    /// `draw` of the HloModuleProto of `module` of file `file_id`, its failures as the engine's.
    fn with_hlo_module(
        &self,
        file_id: u32,
        module: &str,
        draw: impl FnOnce(&HloModuleProto) -> Result<Graph, GraphViewerError>,
    ) -> Result<Graph, EngineError> {
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
        draw(hlo).map_err(|e| graph_error(file, &m.name, e))
    }

    /// The page's Graph tool: `module` when the file has it (a link from another file's tool may name
    /// one it has not), else the file's module with the most instructions; its graph for `options`,
    /// laid out.
    pub fn graph_viewer_view(&mut self, file_id: u32, module: Option<&str>, options: &GraphOptions) -> Result<GraphView, EngineError> {
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
        let figures = self.graph_figures(file_id, &chosen, &graph)?;
        Ok(GraphView { modules, module: chosen, graph, layout, figures })
    }

    /// The figures of the instructions `graph` draws: times from the device's HLO Op Stats rows of
    /// `module` (XProf's name, or the module name when unique), else from the host's XLA ops rows of
    /// it (a file without a trace has neither), and buffers from the module's buffer assignment.
    pub fn graph_figures(&mut self, file_id: u32, module: &str, graph: &Graph) -> Result<GraphFigures, EngineError> {
        let drawn: BTreeSet<&str> = graph
            .nodes
            .iter()
            .filter(|n| n.kind != NodeKind::Root)
            .map(|n| n.name.as_str())
            .chain(graph.clusters.iter().filter(|c| c.fused).map(|c| c.caller.as_str()))
            .chain(graph.center_node.iter().map(|n| n.name.as_str()))
            .collect();
        let mut by_name: BTreeMap<String, InstructionFigures> = BTreeMap::new();
        let xprof_name = {
            let f = self.file(file_id)?;
            let inputs = modules::module_inputs(&f.file.profile);
            let m = modules::select(&inputs, module).map_err(|e| module_error(&f.file.name, e))?;
            m.name.clone()
        };
        let timed = self.module_times(file_id, &xprof_name);
        let time_source = timed.as_ref().map(|(source, _)| *source);
        for (name, t) in timed.into_iter().flat_map(|(_, rows)| rows) {
            if drawn.contains(name.as_str()) {
                by_name.insert(name, t);
            }
        }
        let f = self.file(file_id)?;
        let inputs = modules::module_inputs(&f.file.profile);
        let proto = modules::select(&inputs, &xprof_name).ok().and_then(|m| m.proto.as_ref().ok());
        let has_buffers = proto.is_some_and(|p| p.buffer_assignment.is_some());
        if let Some(p) = proto.filter(|_| has_buffers) {
            for (name, buffers) in defined_buffers(p) {
                if drawn.contains(name) {
                    by_name.entry(name.to_string()).or_default().buffers = buffers;
                }
            }
        }
        Ok(GraphFigures { time_source, has_buffers, by_name })
    }

    /// Each op's row of `module` (XProf's name) in the file's op tables: the device's HLO Op Stats
    /// when it has rows for the module, else the host's XLA ops; `None` when neither has any (or the
    /// file has no trace).
    fn module_times(&mut self, file_id: u32, module: &str) -> Option<(TimeSource, Vec<(String, InstructionFigures)>)> {
        let scope = Scope::file(file_id);
        let metrics = self.op_metrics(&scope).ok()?;
        let device: Vec<(String, InstructionFigures)> = self
            .hlo_stats(&scope)
            .ok()
            .map(|stats| {
                stats
                    .rows
                    .iter()
                    .filter(|r| metrics.modules.xprof_name(r.op.hlo_module_id) == Some(module))
                    .map(|r| {
                        let figures = InstructionFigures {
                            self_time_us: Some(ps_to_us(r.op.self_time_ps)),
                            self_time_fraction: Some(r.self_time_fraction),
                            occurrences: Some(r.op.occurrences),
                            flop_rate: Some(r.roofline.model_flop_rate),
                            buffers: Vec::new(),
                        };
                        (r.hlo_op_name().to_string(), figures)
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !device.is_empty() {
            return Some((TimeSource::HloStats, device));
        }
        let host: Vec<(String, InstructionFigures)> = metrics
            .xla_ops_cpu
            .iter()
            .flat_map(|x| x.rows.iter())
            .filter(|r| r.memory_viewer_module.as_deref() == Some(module))
            .map(|r| {
                let figures = InstructionFigures {
                    self_time_us: Some(ps_to_us(r.self_time_ps)),
                    self_time_fraction: Some(r.self_time_fraction),
                    occurrences: Some(r.occurrences),
                    flop_rate: None,
                    buffers: Vec::new(),
                };
                (r.op_name.clone(), figures)
            })
            .collect();
        (!host.is_empty()).then_some((TimeSource::XlaOpsCpu, host))
    }
}

/// The logical buffers each instruction of `proto` defines (those the Memory Viewer can describe:
/// assigned, with a known instruction), by instruction name, each list by buffer name.
fn defined_buffers(proto: &HloProto) -> BTreeMap<&str, Vec<(String, i64)>> {
    let assignment = Assignment::new(proto);
    let mut by_instruction: BTreeMap<&str, Vec<(String, i64)>> = BTreeMap::new();
    for b in assignment.buffers.values() {
        by_instruction.entry(b.instruction.name.as_str()).or_default().push((b.name_with_shape_index(), b.size_bytes()));
    }
    for list in by_instruction.values_mut() {
        list.sort();
    }
    by_instruction
}
