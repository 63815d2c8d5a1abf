//! The Graph Viewer: an HLO module's graph around one instruction (XProf's `graph_viewer`, type
//! `graph`), or a whole computation, drawn as XLA's `HloDotDumper` draws it for XProf — the same
//! nodes, edges and clusters — and laid out here for the page ([`layout`]) or written as DOT
//! ([`dot`]); and the whole module with each fusion one node, the page's overview ([`overview`]).
//!
//! What XLA's dumper decides, and we with it ([`filter`] picks the instructions):
//! - a shown fusion whose operands are all shown is expanded: its fused computation becomes a cluster
//!   and the fusion itself no node; edges into it go to its fused parameters, edges out of it leave
//!   its fused root;
//! - every computation a shown instruction calls (while bodies and conditions, branches, async
//!   computations, non-trivial reducers) is a cluster holding all its instructions, drawn once,
//!   with a dashed edge from its root to each caller; a trivial reducer (`add`, `max`, ...) is
//!   named in its caller's node instead;
//! - constants, broadcasts of scalar constants inside fusions, non-root get-tuple-elements and
//!   tuple parameters read only through them are folded into their users;
//! - the drawn computation's root gets a `ROOT` tag.
//!
//! Where we stop and XLA would not: a graph past [`MAX_NODES`] nodes is cut there with a note (a
//! while loop's body can hold thousands of instructions; the centre is drawn all the same), nested clusters past [`MAX_CLUSTER_DEPTH`]
//! are not expanded, and a malformed module whose computations call each other in a cycle is walked
//! once. XLA's special case for async-collective-fusion parameters is not followed.

pub mod dot;
pub mod filter;
pub mod index;
pub mod layout;

use crate::analysis::hlo_text::{shape_text, ModuleText};
use crate::proto::hlo::{HloModuleProto, ShapeProto};
use filter::{NodeFilter, Shown};
use index::ModuleIndex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Nodes drawn at most; past this the graph is cut with a note.
pub const MAX_NODES: usize = 10_000;
/// Clusters nested deeper than this are drawn as single nodes.
pub const MAX_CLUSTER_DEPTH: usize = 64;
/// XProf's default `graph_width`.
pub const DEFAULT_WIDTH: u32 = 1;
/// Widths above this are taken as this: every instruction of a real module is closer.
pub const MAX_WIDTH: u32 = 1_000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GraphViewerError {
    #[error("the HloProto has no module")]
    NoModule,
    #[error("module `{module}` has no computations, so it has no graph")]
    NoComputations { module: String },
    #[error("module `{module}` has no instruction or computation named `{node}`")]
    UnknownNode { module: String, node: String },
    #[error("module `{module}` has no root instruction to centre on; name one with --node")]
    NoRoot { module: String },
    #[error("the neighbourhood of `{node}` could not be walked: the module's computations call each other in a cycle ({visited} instructions reached)")]
    Cycle { node: String, visited: usize },
}

/// What to draw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphOptions {
    /// An instruction (its neighbourhood) or a computation (all of it); `None`: the entry
    /// computation's root instruction.
    pub node: Option<String>,
    /// Operand/user hops from the instruction (XProf's `graph_width`).
    pub width: u32,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions { node: None, width: DEFAULT_WIDTH }
    }
}

/// The drawn graph: plain data, nodes in XLA's drawing order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    pub module_name: String,
    /// The instruction or computation centred on.
    pub center: String,
    /// Whether `center` names a computation (drawn whole) rather than an instruction.
    pub center_is_computation: bool,
    pub width: u32,
    /// The computation drawn (the centre's).
    pub computation: String,
    /// XLA's graph title, as plain lines.
    pub title: Vec<String>,
    pub nodes: Vec<Node>,
    /// The centre instruction as its node reads (`None` when a computation is drawn whole). A fusion
    /// at the centre whose operands are all shown is drawn as its cluster, not as a node, so what
    /// the page's card shows of the centre is read here, not from `nodes`.
    pub center_node: Option<Node>,
    pub edges: Vec<Edge>,
    pub clusters: Vec<Cluster>,
    /// Why the graph is partial, or what in the input was odd.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The instruction's name; `ROOT` for the root tag.
    pub name: String,
    pub opcode: String,
    pub kind: NodeKind,
    /// XLA's node title: `Parameter N`, the name, or `opcode` over the name.
    pub label: String,
    /// Lines under the title: attributes, shape, inlined operands, trivial subcomputation.
    pub details: Vec<String>,
    /// The shape with layout as XLA prints it (empty for the root tag).
    pub shape: String,
    /// XLA's colour scheme for it (`dark_blue`, `yellow`, ...).
    pub color: ColorScheme,
    /// The cluster it is drawn in.
    pub cluster: Option<usize>,
    /// The centre.
    pub highlight: bool,
    /// Some of its operands or users are left out.
    pub deemphasized: bool,
    /// XLA's text of the instruction, as XProf's op tools show it (empty for the root tag).
    pub expression: String,
    /// The framework op it came from (its metadata's `op_name`).
    pub framework_op: Option<String>,
    /// `file:line` of its source.
    pub source: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Instruction,
    Parameter,
    /// The `ROOT` tag under the drawn computation's root.
    Root,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
    /// The operand number, on edges into instructions with several operands.
    pub operand: Option<usize>,
    /// Its source is a small array (under 4,096 elements): XLA draws it with a hollow arrowhead.
    pub small: bool,
    /// For a subcomputation edge, the called computation's cluster.
    pub cluster: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Operand,
    Control,
    /// From a called computation's root to its caller.
    Subcomputation,
    /// To the root tag.
    Root,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// The computation drawn in it.
    pub computation: String,
    /// The instruction it expands (a fusion) or that calls it.
    pub caller: String,
    pub fused: bool,
    /// The caller's category (`loop fusion`, ...) for fused clusters.
    pub category: String,
    pub parent: Option<usize>,
    /// The fusion expanded is the centre.
    pub highlight: bool,
}

/// XLA's node colour schemes (`ColorScheme` in `hlo_graph_dumper.cc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColorScheme {
    Blue,
    Brown,
    DarkBlue,
    DarkGreen,
    DarkOrange,
    DarkRed,
    Gray,
    Green,
    Orange,
    Purple,
    Red,
    White,
    Yellow,
    DashedBorder,
}

/// The graph of `module` for `options`.
pub fn graph(module: &HloModuleProto, options: &GraphOptions) -> Result<Graph, GraphViewerError> {
    let index = ModuleIndex::new(module);
    if index.computations.is_empty() {
        return Err(GraphViewerError::NoComputations { module: module.name.clone() });
    }
    let width = options.width.min(MAX_WIDTH);
    let center_name = match &options.node {
        Some(n) => n.clone(),
        None => index
            .entry
            .and_then(|e| index.computations[e].root)
            .map(|r| index.name(r).to_string())
            .ok_or_else(|| GraphViewerError::NoRoot { module: module.name.clone() })?,
    };
    // XProf looks for both and draws the computation when one is so named.
    let computation = index.find_computation(&center_name);
    let instruction = index.find_instruction(&center_name);
    let (drawn, filter, title_head, center) = match (computation, instruction) {
        (Some(c), _) => (c, NodeFilter::everything(), String::new(), Center::Computation(c)),
        (None, Some(i)) => {
            let filter = filter::radius_around(&index, i, i64::from(width))
                .map_err(|visited| GraphViewerError::Cycle { node: center_name.clone(), visited })?;
            let head = format!("Neighborhood of {width} nodes around {}", index.name(i));
            (index.instructions[i].computation, filter, head, Center::Instruction(i))
        }
        (None, None) => return Err(GraphViewerError::UnknownNode { module: module.name.clone(), node: center_name }),
    };
    Ok(dump(&index, drawn, filter, title_head, center, width))
}

/// The whole module at a glance (the page's overview, with a neighbourhood as its zoomed view): the
/// entry computation and every computation it calls, drawn as [`graph`] draws a computation but with
/// each fusion one node, its fused computation not expanded. Fusions hold most of a compiled
/// module's instructions, so a module of thousands draws as its few hundred unfused ones, under the
/// same names the neighbourhoods centre on.
pub fn overview(module: &HloModuleProto) -> Result<Graph, GraphViewerError> {
    let index = ModuleIndex::new(module);
    let Some(entry) = index.entry else {
        return Err(GraphViewerError::NoComputations { module: module.name.clone() });
    };
    let head = format!("Overview of {}: every fusion one node", module.name);
    Ok(dump(&index, entry, NodeFilter::collapsed(), head, Center::Computation(entry), 0))
}

/// What a graph is centred on.
enum Center {
    /// A computation, drawn whole.
    Computation(usize),
    /// An instruction's neighbourhood.
    Instruction(usize),
}

/// Computation `drawn` through `filter` as XLA's dumper draws it, titled `title_head`.
fn dump(index: &ModuleIndex, drawn: usize, filter: NodeFilter, title_head: String, center: Center, width: u32) -> Graph {
    let module = index.module;
    let mut dumper = Dumper::new(index, filter, drawn);
    dumper.dump_computation(drawn);
    dumper.dump_root_tag();
    let center_node = match center {
        Center::Instruction(i) => Some(dumper.describe(i)),
        Center::Computation(_) => None,
    };
    let mut notes = std::mem::take(&mut dumper.notes);
    if index.dangling_references > 0 {
        notes.push(format!(
            "{} operand or computation references name ids the module does not hold; they are left out",
            index.dangling_references
        ));
    }
    let (nodes, edges, clusters) = dumper.finish(&mut notes);
    let comp = &index.computations[drawn];
    let mut title = vec![title_head, format!("Computation {}", comp.name)];
    if let Some(f) = comp.fusion {
        title[1].push_str(&format!(" (in fusion instruction {})", index.name(f)));
    } else if Some(drawn) == index.entry {
        title.push("ENTRY computation".into());
    } else if !comp.callers.is_empty() {
        let callers: Vec<&str> = comp.callers.iter().map(|&c| index.name(c)).collect();
        title.push(format!("Caller instructions: {}", callers.join(", ")));
    }
    let (center, center_is_computation) = match center {
        Center::Computation(c) => (index.computations[c].name.to_string(), true),
        Center::Instruction(i) => (index.name(i).to_string(), false),
    };
    Graph {
        module_name: module.name.clone(),
        center,
        center_is_computation,
        width,
        computation: comp.name.to_string(),
        title,
        nodes,
        center_node,
        edges,
        clusters,
        notes,
    }
}

/// An edge before its ends are known to be drawn: instruction indices, `None` for the root tag.
struct PendingEdge {
    from: usize,
    to: Option<usize>,
    kind: EdgeKind,
    operand: Option<usize>,
    /// The called computation, for a subcomputation edge.
    computation: Option<usize>,
}

/// XLA's `HloDotDumper`, producing [`Graph`] parts instead of DOT text.
struct Dumper<'i, 'a> {
    index: &'i ModuleIndex<'a>,
    text: ModuleText<'a>,
    filter: NodeFilter,
    /// The computation drawn (`computation_`).
    computation: usize,
    nodes: Vec<Node>,
    node_of: HashMap<usize, usize>,
    root_tag: Option<usize>,
    pending: Vec<PendingEdge>,
    edge_counts: HashMap<(usize, Option<usize>), usize>,
    clusters: Vec<Cluster>,
    cluster_of: HashMap<usize, usize>,
    /// The cluster being filled.
    current: Vec<usize>,
    notes: Vec<String>,
    cut: bool,
}

/// XLA's `kMaxEdgesBetweenTwoNodes`.
const MAX_EDGES_BETWEEN_TWO_NODES: usize = 64;
/// XLA's `kMaxShapeLen`.
const MAX_SHAPE_LEN: usize = 64;

impl<'i, 'a> Dumper<'i, 'a> {
    fn new(index: &'i ModuleIndex<'a>, filter: NodeFilter, computation: usize) -> Self {
        Dumper {
            index,
            text: ModuleText::new(index.module),
            filter,
            computation,
            nodes: Vec::new(),
            node_of: HashMap::new(),
            root_tag: None,
            pending: Vec::new(),
            edge_counts: HashMap::new(),
            clusters: Vec::new(),
            cluster_of: HashMap::new(),
            current: Vec::new(),
            notes: Vec::new(),
            cut: false,
        }
    }

    fn show(&self, i: usize) -> bool {
        self.filter.show(self.index, i)
    }

    fn opcode(&self, i: usize) -> &'a str {
        self.index.opcode(i)
    }

    fn shape(&self, i: usize) -> Option<&'a ShapeProto> {
        self.index.instructions[i].proto.shape.as_ref()
    }

    /// `ShouldShowSubcomputation`.
    fn should_show_subcomputation(&self, c: usize) -> bool {
        let comp = &self.index.computations[c];
        if let Some(f) = comp.fusion {
            if !self.show(f) || self.filter.collapse_fusions || self.filter.some_or_all_operands_omitted(self.index, f) {
                return false;
            }
        } else if self.trivial_computation(c).is_some() {
            return false;
        }
        comp.instructions.iter().any(|&i| self.show(i))
    }

    fn should_show_fusion_subcomputation(&self, i: usize) -> bool {
        self.opcode(i) == "fusion" && self.index.instructions[i].called.first().is_some_and(|&c| self.should_show_subcomputation(c))
    }

    /// `IsFusedBroadcastOfConstantEffectiveScalar`.
    fn is_fused_broadcast_of_scalar_constant(&self, i: usize) -> bool {
        self.index.fusion_of(i).is_some()
            && self.opcode(i) == "broadcast"
            && self.index.instructions[i]
                .operands
                .first()
                .is_some_and(|&o| self.opcode(o) == "constant" && self.shape(o).is_some_and(is_effective_scalar))
    }

    /// `TryGetFusionParameterConstant`: a fused parameter bound to a constant.
    fn fusion_parameter_constant(&self, i: usize) -> Option<usize> {
        if self.opcode(i) != "parameter" {
            return None;
        }
        let fusion = self.index.fusion_of(i)?;
        let number = usize::try_from(self.index.instructions[i].proto.parameter_number).ok()?;
        let operand = *self.index.instructions[fusion].operands.get(number)?;
        (self.opcode(operand) == "constant").then_some(operand)
    }

    /// `ShouldMergeIntoUsers`.
    fn should_merge_into_users(&self, i: usize) -> bool {
        if (self.opcode(i) == "get-tuple-element" && !self.index.is_root(i)) || self.fusion_parameter_constant(i).is_some() {
            return true;
        }
        let users = &self.index.instructions[i].users;
        self.opcode(i) == "parameter"
            && self.shape(i).is_some_and(|s| s.element_type == TUPLE)
            && self.index.fusion_of(i).is_none()
            && users.iter().filter(|&&u| self.show(u)).count() > 3
            && users.iter().all(|&u| !self.show(u) || self.opcode(u) == "get-tuple-element")
    }

    /// `GetNodeForEdge`: through one get-tuple-element, then down expanded fusions to their roots.
    fn node_for_edge(&self, mut i: usize) -> usize {
        if self.opcode(i) == "get-tuple-element" {
            if let Some(&o) = self.index.instructions[i].operands.first() {
                i = o;
            }
        }
        // Bounded: a malformed module's fusion could call a computation whose root is itself.
        for _ in 0..MAX_CLUSTER_DEPTH {
            if !self.should_show_fusion_subcomputation(i) {
                break;
            }
            match self.index.instructions[i].called.first().and_then(|&c| self.index.computations[c].root) {
                Some(r) => i = r,
                None => break,
            }
        }
        i
    }

    fn dump_computation(&mut self, c: usize) {
        let instructions = self.index.computations[c].instructions.clone();
        for i in instructions {
            if !self.show(i) {
                continue;
            }
            for &sub in &self.index.instructions[i].called {
                if self.should_show_subcomputation(sub) {
                    self.dump_subcomputation(sub, i);
                }
            }
            self.dump_instruction(i);
        }
    }

    fn dump_subcomputation(&mut self, c: usize, parent: usize) {
        let comp = &self.index.computations[c];
        if self.opcode(parent) != "fusion" {
            if let Some(root) = comp.root {
                let from = self.node_for_edge(root);
                self.pending.push(PendingEdge {
                    from,
                    to: Some(parent),
                    kind: EdgeKind::Subcomputation,
                    operand: None,
                    computation: Some(c),
                });
            }
        }
        // Drawn already; or the drawn computation itself, called from inside (only a malformed
        // module's computations call each other in a cycle).
        if self.cluster_of.contains_key(&c) || c == self.computation {
            return;
        }
        if self.current.len() >= MAX_CLUSTER_DEPTH {
            self.notes.push(format!("computation {} is nested more than {MAX_CLUSTER_DEPTH} deep and is not drawn", comp.name));
            return;
        }
        let fused = self.opcode(parent) == "fusion";
        let id = self.clusters.len();
        self.clusters.push(Cluster {
            computation: comp.name.to_string(),
            caller: self.index.name(parent).to_string(),
            fused,
            category: if fused { self.text.category(self.index.instructions[parent].proto) } else { String::new() },
            parent: self.current.last().copied(),
            highlight: fused && self.filter.get(self.index, parent) == Shown::Highlight,
        });
        self.cluster_of.insert(c, id);
        self.current.push(id);
        self.dump_computation(c);
        self.current.pop();
    }

    fn dump_root_tag(&mut self) {
        let Some(root) = self.index.computations[self.computation].root else { return };
        let from = self.node_for_edge(root);
        if !self.show(from) || self.opcode(from) == "constant" || self.is_fused_broadcast_of_scalar_constant(from) {
            return;
        }
        // Not drawn: cut by `MAX_NODES` (XLA always draws it).
        if !self.node_of.contains_key(&from) {
            return;
        }
        self.root_tag = Some(self.nodes.len());
        self.nodes.push(Node {
            name: "ROOT".into(),
            opcode: String::new(),
            kind: NodeKind::Root,
            label: "ROOT".into(),
            details: Vec::new(),
            shape: String::new(),
            color: ColorScheme::Brown,
            cluster: None,
            highlight: false,
            deemphasized: false,
            expression: String::new(),
            framework_op: None,
            source: None,
        });
        self.pending.push(PendingEdge { from, to: None, kind: EdgeKind::Root, operand: None, computation: None });
    }

    fn dump_instruction(&mut self, i: usize) {
        let opcode = self.opcode(i);
        if (opcode == "constant" || self.is_fused_broadcast_of_scalar_constant(i)) && !self.index.is_root(i) {
            return;
        }
        if self.should_merge_into_users(i) || self.should_show_fusion_subcomputation(i) {
            return;
        }
        // The centre is drawn past the cut: the instructions before it in post order (a root's
        // thousands of operands) would otherwise fill the graph and leave out what it is centred on.
        if self.nodes.len() >= MAX_NODES && self.filter.get(self.index, i) != Shown::Highlight {
            if !self.cut {
                self.cut = true;
                self.notes.push(format!(
                    "the graph has more than {MAX_NODES} nodes; only the first {MAX_NODES} are drawn (choose a smaller width or a node inside the loop body)"
                ));
            }
            return;
        }
        let node = self.describe(i);
        self.node_of.insert(i, self.nodes.len());
        self.nodes.push(node);
        self.add_incoming_edges(i);
    }

    /// Instruction `i` as a node of the cluster being filled.
    fn describe(&self, i: usize) -> Node {
        let opcode = self.opcode(i);
        let proto = self.index.instructions[i].proto;
        let mut details = Vec::new();
        if let Some(t) = self.trivial_subcomputations(i) {
            details.push(t);
        }
        let shape = proto.shape.as_ref().map(shape_text).unwrap_or_default();
        let mut shown_shape = shape.clone();
        if shown_shape.len() > MAX_SHAPE_LEN {
            let mut end = MAX_SHAPE_LEN - 3;
            while !shown_shape.is_char_boundary(end) {
                end -= 1;
            }
            shown_shape.truncate(end);
            shown_shape.push_str("...");
        }
        details.push(shown_shape);
        details.extend(self.inlined_operands(i));
        let kind = if opcode == "parameter" { NodeKind::Parameter } else { NodeKind::Instruction };
        let label = match kind {
            NodeKind::Parameter => format!("Parameter {}", proto.parameter_number),
            _ if proto.name.starts_with(opcode) => proto.name.clone(),
            _ if opcode == "fusion" => format!("{}\n{opcode}:{}", proto.name, proto.fusion_kind),
            _ => format!("{}\n{opcode}", proto.name),
        };
        let shown = self.filter.get(self.index, i);
        let highlight = shown == Shown::Highlight;
        let deemphasized = self.filter.deemphasized(self.index, i);
        let color = if highlight {
            ColorScheme::DarkRed
        } else if deemphasized {
            ColorScheme::DashedBorder
        } else {
            self.color(i)
        };
        Node {
            name: proto.name.clone(),
            opcode: opcode.to_string(),
            kind,
            label,
            details,
            shape,
            color,
            cluster: self.current.last().copied(),
            highlight,
            deemphasized,
            expression: self.text.expression(proto),
            framework_op: proto.metadata.as_ref().map(|m| m.op_name.clone()).filter(|n| !n.is_empty()),
            source: self.text.source(proto),
        }
    }

    /// `AddInstructionIncomingEdges`.
    fn add_incoming_edges(&mut self, i: usize) {
        let instr = &self.index.instructions[i];
        if instr.proto.opcode == "parameter" {
            if let Some(fusion) = self.index.fusion_of(i) {
                if instr.computation != self.computation {
                    let number = usize::try_from(instr.proto.parameter_number).ok();
                    if let Some(&operand) = number.and_then(|n| self.index.instructions[fusion].operands.get(n)) {
                        self.add_edge(operand, i, EdgeKind::Operand, Some(0));
                    }
                }
                return;
            }
        }
        for (n, &o) in instr.operands.iter().enumerate() {
            self.add_edge(o, i, EdgeKind::Operand, Some(n));
        }
        for &p in &instr.control_predecessors {
            self.add_edge(p, i, EdgeKind::Control, None);
        }
    }

    fn add_edge(&mut self, from: usize, to: usize, kind: EdgeKind, operand: Option<usize>) {
        if self.edge_counts.get(&(from, Some(to))).copied().unwrap_or(0) > MAX_EDGES_BETWEEN_TWO_NODES {
            return;
        }
        let from = self.node_for_edge(from);
        if !self.show(from)
            || self.opcode(from) == "constant"
            || self.is_fused_broadcast_of_scalar_constant(from)
            || self.should_merge_into_users(from)
        {
            return;
        }
        *self.edge_counts.entry((from, Some(to))).or_default() += 1;
        let several = self.index.instructions[to].operands.len() > 1;
        let operand = if kind == EdgeKind::Operand && several { operand } else { None };
        self.pending.push(PendingEdge { from, to: Some(to), kind, operand, computation: None });
    }

    /// `GetInstructionTrivialComputationStr`.
    fn trivial_subcomputations(&self, i: usize) -> Option<String> {
        if self.opcode(i) == "fusion" {
            return None;
        }
        let called = &self.index.instructions[i].called;
        let lines: Vec<String> = called
            .iter()
            .enumerate()
            .filter_map(|(n, &c)| {
                let t = self.trivial_computation(c)?;
                Some(if called.len() == 1 { format!("Subcomputation: {t}") } else { format!("Subcomputation {n}: {t}") })
            })
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// `MatchTrivialComputation`: a computation `p0 op p1` over effective scalars, named by its op.
    fn trivial_computation(&self, c: usize) -> Option<&'static str> {
        let comp = &self.index.computations[c];
        if comp.instructions.len() != 3 {
            return None;
        }
        let root = comp.root?;
        let ops = &self.index.instructions[root].operands;
        let scalar = |i: usize| self.shape(i).is_some_and(is_effective_scalar);
        let param = |i: usize, n: i64| self.opcode(i) == "parameter" && self.index.instructions[i].proto.parameter_number == n && scalar(i);
        let [a, b] = ops.as_slice() else { return None };
        if !scalar(root) || !((param(*a, 0) && param(*b, 1)) || (param(*a, 1) && param(*b, 0))) {
            return None;
        }
        let proto = self.index.instructions[root].proto;
        Some(match proto.opcode.as_str() {
            "add" => "add",
            "multiply" => "multiply",
            "minimum" => "min",
            "maximum" => "max",
            "xor" => "xor",
            "and" => "and",
            "or" => "or",
            "compare" => match proto.comparison_direction.as_str() {
                "LE" => "less-or-equal",
                "GE" => "greater-or-equal",
                "GT" => "greater-than",
                "LT" => "less-than",
                "EQ" => "equal-to",
                "NE" => "not-equal-to",
                _ => return None,
            },
            _ => return None,
        })
    }

    /// `GetInstructionNodeInlinedOperands`, in short: the operands folded into this node.
    fn inlined_operands(&self, i: usize) -> Vec<String> {
        let operands = &self.index.instructions[i].operands;
        let mut lines = Vec::new();
        for (n, &o) in operands.iter().enumerate() {
            let text = if self.opcode(o) == "constant" {
                Some(self.constant_text(o))
            } else if self.is_fused_broadcast_of_scalar_constant(o) {
                self.index.instructions[o].operands.first().map(|&c| self.constant_text(c))
            } else if self.should_merge_into_users(o) {
                Some(match self.opcode(o) {
                    "parameter" => match self.fusion_parameter_constant(o) {
                        Some(c) => self.constant_text(c),
                        None => format!("Parameter {}", self.index.instructions[o].proto.parameter_number),
                    },
                    "get-tuple-element" => self.tuple_element_text(o),
                    _ => self.index.name(o).to_string(),
                })
            } else {
                None
            };
            if let Some(t) = text {
                lines.push(if operands.len() > 1 { format!("operand {n} = {t}") } else { format!("operand = {t}") });
            }
            if lines.len() == 32 && n + 1 < operands.len() {
                lines.push("...".into());
                break;
            }
        }
        if self.opcode(i) == "parameter" {
            if let Some(fusion) = self.index.fusion_of(i) {
                let number = usize::try_from(self.index.instructions[i].proto.parameter_number).ok();
                if let Some(&input) = number.and_then(|n| self.index.instructions[fusion].operands.get(n)) {
                    if self.opcode(input) == "get-tuple-element" {
                        lines.push(self.tuple_element_text(input));
                    }
                }
            }
        }
        lines
    }

    fn tuple_element_text(&self, gte: usize) -> String {
        let proto = self.index.instructions[gte].proto;
        let of = self.index.instructions[gte].operands.first().map_or("", |&o| self.index.name(o));
        format!("tuple-element {} of {of} {}", proto.tuple_index, proto.shape.as_ref().map(shape_text).unwrap_or_default())
    }

    fn constant_text(&self, c: usize) -> String {
        let proto = self.index.instructions[c].proto;
        let shape = proto.shape.as_ref().map(shape_text).unwrap_or_default();
        let expression = self.text.expression(proto);
        // The value is what `constant(...)` holds in XLA's text, when it is printed.
        match expression.split_once(" constant(").and_then(|(_, v)| v.strip_suffix(')')) {
            Some(v) if v != "{...}" && v.len() <= 64 => format!("{shape} {v}"),
            _ if proto.name.starts_with("constant") => format!("{} {shape}", proto.name),
            _ => format!("constant {} {shape}", proto.name),
        }
    }

    /// `GetInstructionColor` (without sharding colours).
    fn color(&self, i: usize) -> ColorScheme {
        let small = self.shape(i).is_none_or(is_small);
        let parameter_color = if small { ColorScheme::Orange } else { ColorScheme::DarkOrange };
        let instr = &self.index.instructions[i];
        if instr
            .operands
            .iter()
            .any(|&o| self.opcode(o) == "parameter" && self.should_merge_into_users(o) && self.fusion_parameter_constant(o).is_none())
        {
            return parameter_color;
        }
        let scalar = self.shape(i).is_some_and(is_effective_scalar);
        let fused = self.index.fusion_of(i).is_some();
        match instr.proto.opcode.as_str() {
            "parameter" => parameter_color,
            "bitcast" | "get-tuple-element" | "after-all" | "add-dependency" | "tuple" | "opt-barrier" | "constant" => ColorScheme::White,
            "broadcast" => {
                let operand_scalar = instr.operands.first().and_then(|&o| self.shape(o)).is_some_and(is_effective_scalar);
                if fused && operand_scalar {
                    ColorScheme::White
                } else {
                    ColorScheme::Green
                }
            }
            "concatenate" | "dynamic-slice" | "gather" | "pad" | "reshape" | "dynamic-reshape" | "reverse" | "transpose" => {
                if scalar || fused {
                    ColorScheme::White
                } else {
                    ColorScheme::Green
                }
            }
            "dynamic-update-slice" if scalar => ColorScheme::White,
            "dynamic-update-slice" | "copy" | "copy-start" | "copy-done" => ColorScheme::Green,
            "convolution" | "dot" | "fft" | "triangular-solve" | "cholesky" => ColorScheme::DarkBlue,
            "batch-norm-grad"
            | "batch-norm-inference"
            | "batch-norm-training"
            | "reduce"
            | "reduce-window"
            | "scatter"
            | "select-and-scatter" => ColorScheme::Purple,
            "domain" | "fusion" | "map" | "get-dimension-size" | "set-dimension-size" => ColorScheme::Gray,
            "all-gather"
            | "all-gather-start"
            | "all-gather-done"
            | "all-reduce"
            | "reduce-scatter"
            | "all-reduce-start"
            | "all-reduce-done"
            | "all-to-all"
            | "collective-permute"
            | "collective-permute-start"
            | "collective-permute-done"
            | "infeed"
            | "outfeed"
            | "partition-id"
            | "recv"
            | "recv-done"
            | "send"
            | "send-done"
            | "replica-id"
            | "collective-broadcast" => ColorScheme::Brown,
            "call" | "conditional" | "custom-call" | "while" => ColorScheme::DarkGreen,
            "async-start" | "async-update" | "async-done" => ColorScheme::Blue,
            op if crate::analysis::hlo_text::is_elementwise_opcode(op)
                || matches!(op, "iota" | "rng" | "rng-get-and-update-state" | "rng-bit-generator" | "slice" | "sort") =>
            {
                if scalar {
                    ColorScheme::White
                } else {
                    ColorScheme::Yellow
                }
            }
            _ => ColorScheme::White,
        }
    }

    /// The nodes, the edges between drawn nodes, and the clusters.
    fn finish(self, notes: &mut Vec<String>) -> (Vec<Node>, Vec<Edge>, Vec<Cluster>) {
        let mut edges = Vec::with_capacity(self.pending.len());
        let mut dropped = 0;
        for e in &self.pending {
            let from = self.node_of.get(&e.from).copied();
            let to = match e.to {
                Some(t) => self.node_of.get(&t).copied(),
                None => self.root_tag,
            };
            match (from, to) {
                (Some(from), Some(to)) => {
                    let small = self.shape(e.from).is_none_or(is_small);
                    let cluster = e.computation.and_then(|c| self.cluster_of.get(&c).copied());
                    edges.push(Edge { from, to, kind: e.kind, operand: e.operand, small, cluster });
                }
                _ => dropped += 1,
            }
        }
        if dropped > 0 && !self.cut {
            notes.push(format!("{dropped} edges lead to instructions XLA does not draw and are left out"));
        }
        (self.nodes, edges, self.clusters)
    }
}

const TUPLE: i32 = 13;
const OPAQUE: i32 = 14;
const TOKEN: i32 = 17;

/// `ShapeUtil::IsEffectiveScalar`: an array whose every dimension is 1.
fn is_effective_scalar(shape: &ShapeProto) -> bool {
    !matches!(shape.element_type, TUPLE | OPAQUE | TOKEN) && shape.dimensions.iter().all(|&d| d == 1)
}

/// XLA's `IsSmall`: under 4,096 elements in all, or holding tokens or opaque values.
fn is_small(shape: &ShapeProto) -> bool {
    fn walk(s: &ShapeProto, elements: &mut i64) -> bool {
        match s.element_type {
            OPAQUE | TOKEN => true,
            TUPLE => s.tuple_shapes.iter().any(|t| walk(t, elements)),
            _ => {
                *elements = elements.saturating_add(s.dimensions.iter().fold(1i64, |n, &d| n.saturating_mul(d.max(0))));
                false
            }
        }
    }
    let mut elements = 0;
    walk(shape, &mut elements) || elements < 4096
}
