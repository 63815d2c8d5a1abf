//! Op Profile: the device's ops as a tree — program → category → (group of duplicates) → op — each
//! node with its time, FLOPs and bandwidth utilisation (XProf's `op_profile` tool,
//! `ConvertOpStatsToOpProfile` / `OpProfileBuilder`). Built by program and by category, each with
//! and without the idle row; XProf's JSON carries the by-program pair.
//! A fusion's node lists the instructions fused into it (from the HLO module, recursively for nested
//! fusions), each with its HLO text and category and no time, as XProf does.

pub mod xprof_json;

use crate::analysis::device_ops::DeviceOps;
use crate::analysis::op_metrics::builder::add_metrics;
use crate::analysis::op_metrics::roofline::giga_to_gibi;
use crate::analysis::op_metrics::{memory_space, safe_divide, HardwareType, MemoryOperation, OpMetrics, SourceInfo};
use crate::analysis::xla_modules::XlaModules;
use std::collections::HashMap;

/// What ends the name of a group of duplicates after its longest op's name (XProf's wording).
pub const DUPLICATES_SUFFIX: &str = " and its duplicate(s)";

/// The HLO instruction a node names: its name without [`DUPLICATES_SUFFIX`] (what its links look up).
pub fn instruction_name(node_name: &str) -> &str {
    node_name.strip_suffix(DUPLICATES_SUFFIX).unwrap_or(node_name)
}

/// Children kept per node below the grouping levels (XProf's default `op_profile_limit`).
pub const CHILDREN_PER_NODE: usize = 100;

/// How the tree groups ops under the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// Program → category → op.
    ByProgram,
    /// Category → op.
    ByCategory,
}

/// What an op node says about its HLO instruction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct XlaInfo {
    pub expression: String,
    pub provenance: String,
    pub category: String,
    pub program_id: u64,
    pub fingerprint: u64,
    pub computation_primitive_size: u32,
    pub source_info: SourceInfo,
}

/// A node's figures, as XProf's page reads them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeMetrics {
    /// Total time, ps.
    pub raw_time_ps: u64,
    pub raw_flops: f64,
    pub bf16_flops: f64,
    pub occurrences: u64,
    pub avg_time_ps: f64,
    /// FLOP-rate utilisation (capped at 1) times the node's share of the tree's time.
    pub flops: f64,
    pub uncapped_flops: f64,
    pub normalized_time_ps: u64,
    /// Utilisation (capped at 1) of HBM, on-chip read, on-chip write bandwidth.
    pub bandwidth_utils: [f64; 3],
    /// Bytes moved in HBM, on-chip read, on-chip write.
    pub raw_bytes_accessed: [f64; 3],
}

/// One node of the tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    pub name: String,
    pub metrics: NodeMetrics,
    /// Present on op nodes (and groups of duplicates, from their longest op).
    pub xla: Option<XlaInfo>,
    pub children: Vec<Node>,
    /// Children kept (XProf counts them again after pruning to [`CHILDREN_PER_NODE`]).
    pub num_children: usize,
}

/// The Op Profile of a trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpProfile {
    /// XProf's hardware name: `TPU`, `GPU`, `CPU_ONLY`.
    pub device_type: &'static str,
    pub by_program: Node,
    pub by_program_exclude_idle: Node,
    pub by_category: Node,
    pub by_category_exclude_idle: Node,
    /// Normalized over measured op time (DVFS scaling).
    pub agg_dvfs_time_scale_multiplier: f64,
    /// Why some ops show no FLOPs or bytes: Tidemark cannot compute XProf's cost of them (see
    /// [`crate::analysis::device_ops::DeviceOps::cost_note`]); `None` when every op is costed.
    pub cost_note: Option<String>,
}

pub fn analyze(ops: &DeviceOps, modules: &XlaModules) -> OpProfile {
    let tree = |grouping, exclude_idle| build(ops, modules, grouping, exclude_idle);
    OpProfile {
        device_type: ops.hardware.xprof_name(),
        by_program: tree(Grouping::ByProgram, false),
        by_program_exclude_idle: tree(Grouping::ByProgram, true),
        by_category: tree(Grouping::ByCategory, false),
        by_category_exclude_idle: tree(Grouping::ByCategory, true),
        agg_dvfs_time_scale_multiplier: safe_divide(ops.db.normalized_total_op_time_ps as f64, ops.db.total_op_time_ps as f64),
        cost_note: ops.cost_note(),
    }
}

/// A node while the tree is built: its children by index, and the metrics summed into it.
#[derive(Default)]
struct Draft {
    name: String,
    xla: Option<XlaInfo>,
    children: Vec<usize>,
    metrics: OpMetrics,
}

struct Builder {
    nodes: Vec<Draft>,
    /// (parent, key) → child: programs by id, categories by name, duplicate groups by name.
    index: HashMap<(usize, String), usize>,
}

impl Builder {
    fn add_child(&mut self, parent: usize, name: String) -> usize {
        self.nodes.push(Draft { name, ..Draft::default() });
        let i = self.nodes.len() - 1;
        self.nodes[parent].children.push(i);
        i
    }

    fn child_keyed(&mut self, parent: usize, key: String) -> usize {
        if let Some(&i) = self.index.get(&(parent, key.clone())) {
            return i;
        }
        let i = self.add_child(parent, key.clone());
        self.index.insert((parent, key), i);
        i
    }
}

fn is_fusion(category: &str) -> bool {
    category.ends_with(" fusion")
}

fn children_time_ps(m: &OpMetrics) -> u64 {
    m.time_ps.wrapping_sub(m.self_time_ps)
}

/// Adds a nested op's self time (and, for an innermost op, its FLOPs and bytes) to a parent
/// (XProf's `UpdateNodeMetrics`).
fn add_to_parent(child: &OpMetrics, parent: &mut OpMetrics) {
    parent.time_ps = parent.time_ps.wrapping_add(child.self_time_ps);
    parent.normalized_time_ps = parent.normalized_time_ps.wrapping_add(child.normalized_time_ps);
    parent.self_time_ps = parent.self_time_ps.wrapping_add(child.self_time_ps);
    if children_time_ps(child) == 0 {
        parent.flops = parent.flops.wrapping_add(child.flops);
        parent.model_flops = parent.model_flops.wrapping_add(child.model_flops);
        parent.flops_v2 += child.flops_v2;
        parent.model_flops_v2 += child.model_flops_v2;
        parent.bytes_accessed = parent.bytes_accessed.wrapping_add(child.bytes_accessed);
        parent.dma_stall_ps = parent.dma_stall_ps.wrapping_add(child.dma_stall_ps);
        crate::analysis::op_metrics::builder::add_memory_accessed(&child.memory_accessed_breakdown, &mut parent.memory_accessed_breakdown);
    }
}

fn xla_info(m: &OpMetrics) -> XlaInfo {
    XlaInfo {
        expression: m.long_name.clone(),
        provenance: m.provenance.clone(),
        category: m.category.clone(),
        program_id: m.hlo_module_id,
        fingerprint: m.fingerprint,
        computation_primitive_size: m.computation_primitive_size,
        source_info: m.source_info.clone().unwrap_or_default(),
    }
}

/// How deep fusions nest inside one another at most (XLA nests one level in practice; the bound keeps
/// a malformed module whose fusion calls itself from recursing forever).
const MAX_FUSION_DEPTH: usize = 8;

/// Adds the instructions fused into op `name` of program `program_id` under `parent`, each with one
/// occurrence and no time (XProf's `AddFusionChildrenToOpMetricsFromHloInstruction` and
/// `InsertFusedInstructions`): name, HLO text, category and framework op; program id, FLOPs and
/// source left empty, as XProf leaves them.
fn add_fused_instructions(b: &mut Builder, parent: usize, modules: &XlaModules, program_id: u64, name: &str, depth: usize) {
    let Some(fusion) = modules.instruction(program_id, name).filter(|_| depth < MAX_FUSION_DEPTH) else { return };
    for fused_name in &fusion.fused {
        let Some(fused) = modules.instruction(program_id, fused_name) else { continue };
        let node = b.add_child(parent, fused_name.clone());
        b.nodes[node].metrics.occurrences = 1;
        b.nodes[node].xla = Some(XlaInfo {
            expression: fused.expression.clone(),
            provenance: fused.tf_op_name.clone(),
            category: fused.category.clone(),
            ..XlaInfo::default()
        });
        add_fused_instructions(b, node, modules, program_id, fused_name, depth + 1);
    }
}

fn build(ops: &DeviceOps, modules: &XlaModules, grouping: Grouping, exclude_idle: bool) -> Node {
    let root_name = match grouping {
        Grouping::ByProgram => "by_program",
        Grouping::ByCategory => "by_category",
    };
    let mut b = Builder { nodes: vec![Draft { name: root_name.into(), ..Draft::default() }], index: HashMap::new() };
    if ops.db.metrics.is_empty() {
        return finish(&b, 0, None);
    }
    for m in &ops.db.metrics {
        if m.name.starts_with("region") || (exclude_idle && m.is_idle()) {
            continue;
        }
        add_to_parent(m, &mut b.nodes[0].metrics);
        let program = (!m.is_idle() && grouping == Grouping::ByProgram).then(|| {
            let name = modules.module_name(m.hlo_module_id).map_or_else(|| "main".to_string(), |n| format!("{n}({})", m.hlo_module_id));
            let p = b.child_keyed(0, format!("program {}", m.hlo_module_id));
            b.nodes[p].name = name;
            add_to_parent(m, &mut b.nodes[p].metrics);
            p
        });
        if children_time_ps(m) > 0 {
            continue;
        }
        let grouping_nodes = if m.is_idle() {
            vec![b.add_child(0, m.name.clone())]
        } else {
            let category = b.child_keyed(program.unwrap_or(0), m.category.clone());
            let dedup_name = if m.deduplicated_name.is_empty() { &m.name } else { &m.deduplicated_name };
            let group = b.child_keyed(category, dedup_name.clone());
            vec![category, group, b.add_child(group, m.name.clone())]
        };
        let leaf = *grouping_nodes.last().expect("one node at least");
        b.nodes[leaf].xla = Some(xla_info(m));
        // XProf lists fused instructions under TPU ops only (its GPU op db has no children).
        if ops.hardware == HardwareType::Tpu {
            add_fused_instructions(&mut b, leaf, modules, m.hlo_module_id, &m.name, 0);
        }
        for n in grouping_nodes {
            add_metrics(m, &mut b.nodes[n].metrics, false);
        }
    }
    b.nodes[0].metrics.time_ps = ops.db.total_time_ps(exclude_idle);
    let levels = match grouping {
        Grouping::ByProgram => 2,
        Grouping::ByCategory => 1,
    };
    let peaks = Peaks::of(ops);
    let mut root = finish(&b, 0, Some((&peaks, b.nodes[0].metrics.time_ps)));
    sort_and_prune(&mut root, levels);
    finalize_duplicates(&mut root);
    root
}

/// The device's peaks as the tree's utilisations divide by them: GFLOP/s, and GiB/s for HBM and on-chip
/// read/write.
struct Peaks {
    gigaflops: f64,
    bws_gib: [f64; 3],
}

impl Peaks {
    fn of(ops: &DeviceOps) -> Self {
        let env = &ops.perf_env;
        let bw = |i: usize| env.peak_bws_giga_bytes_per_second.get(i).map_or(0.0, |&b| giga_to_gibi(b));
        Peaks { gigaflops: env.peak_tera_flops_per_second * 1e3, bws_gib: [bw(0), bw(1), bw(2)] }
    }
}

/// The drafts as nodes, with their figures (XProf's `PopulateOpMetricsNode`) when `figures` gives the
/// peaks and the tree's total time.
fn finish(b: &Builder, i: usize, figures: Option<(&Peaks, u64)>) -> Node {
    let d = &b.nodes[i];
    Node {
        name: d.name.clone(),
        metrics: figures.map(|(peaks, total_ps)| node_metrics(&d.metrics, peaks, total_ps)).unwrap_or_default(),
        xla: d.xla.clone(),
        children: d.children.iter().map(|&c| finish(b, c, figures)).collect(),
        num_children: 0,
    }
}

fn node_metrics(m: &OpMetrics, peaks: &Peaks, total_ps: u64) -> NodeMetrics {
    let time_ns = m.time_ps as f64 / 1e3;
    let mut flop_rate = safe_divide(m.flops_v2, time_ns);
    if m.normalized_time_ps != 0 {
        flop_rate *= safe_divide(m.time_ps as f64, m.normalized_time_ps as f64);
    }
    let uncapped = safe_divide(flop_rate, peaks.gigaflops);
    let time_fraction = safe_divide(m.time_ps as f64, total_ps as f64);
    let bytes = |hbm: bool, op: MemoryOperation| -> f64 {
        m.memory_accessed_breakdown
            .iter()
            .filter(|a| a.operation_type == op && ((a.memory_space == memory_space::HBM) == hbm))
            .map(|a| a.bytes_accessed as f64)
            .sum()
    };
    let gib_per_s = |bytes: f64| giga_to_gibi(safe_divide(bytes, time_ns));
    let hbm = gib_per_s(bytes(true, MemoryOperation::Read)) + gib_per_s(bytes(true, MemoryOperation::Write));
    let sram_rd = gib_per_s(bytes(false, MemoryOperation::Read));
    let sram_wr = gib_per_s(bytes(false, MemoryOperation::Write));
    let gib_to_gb = (1u64 << 30) as f64 / 1e9;
    let cap = |u: f64| u.min(1.0);
    NodeMetrics {
        raw_time_ps: m.time_ps,
        raw_flops: m.model_flops_v2,
        bf16_flops: m.flops_v2,
        occurrences: m.occurrences,
        avg_time_ps: safe_divide(m.time_ps as f64, m.occurrences as f64),
        flops: cap(uncapped) * time_fraction,
        uncapped_flops: uncapped * time_fraction,
        normalized_time_ps: m.normalized_time_ps,
        bandwidth_utils: [
            cap(safe_divide(hbm, peaks.bws_gib[0])),
            cap(safe_divide(sram_rd, peaks.bws_gib[1])),
            cap(safe_divide(sram_wr, peaks.bws_gib[2])),
        ],
        raw_bytes_accessed: [hbm * gib_to_gb * time_ns, sram_rd * gib_to_gb * time_ns, sram_wr * gib_to_gb * time_ns],
    }
}

/// Sorts every node's children longest first (a fusion's by FLOPs), keeping all of them on the
/// grouping levels and [`CHILDREN_PER_NODE`] below (XProf's `SortAndPruneChildren`). Equal times keep
/// the order the ops were added in (XProf leaves them to its partial sort).
fn sort_and_prune(node: &mut Node, level: i32) {
    for c in &mut node.children {
        sort_and_prune(c, level - 1);
    }
    if node.children.len() > 1 {
        if node.xla.as_ref().is_some_and(|x| is_fusion(&x.category)) {
            node.children.sort_by(|a, b| b.metrics.raw_flops.total_cmp(&a.metrics.raw_flops));
        } else {
            node.children.sort_by_key(|c| std::cmp::Reverse(c.metrics.raw_time_ps));
        }
    }
    if level <= 0 {
        node.children.truncate(CHILDREN_PER_NODE);
    }
    // XProf prunes twice and counts the children before each pass: the count left is the kept one.
    node.num_children = node.children.len();
}

/// A group of duplicates with one op becomes that op; a larger group takes its longest op's
/// description and the name `<op> and its duplicate(s)` (XProf's `FinalizeDeduplicatedNodes`).
fn finalize_duplicates(node: &mut Node) {
    let is_group = !node.children.is_empty() && node.xla.is_none() && node.children.iter().all(|c| c.xla.is_some());
    if !is_group {
        node.children.iter_mut().for_each(finalize_duplicates);
        return;
    }
    if node.children.len() == 1 {
        *node = node.children.remove(0);
        return;
    }
    let top = &node.children[0];
    let top_xla = top.xla.clone().unwrap_or_default();
    node.name = format!("{}{DUPLICATES_SUFFIX}", top.name);
    node.xla = Some(XlaInfo {
        provenance: if is_fusion(&top_xla.category) { String::new() } else { top_xla.provenance.clone() },
        computation_primitive_size: 0,
        ..top_xla
    });
}
