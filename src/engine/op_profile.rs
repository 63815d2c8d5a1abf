//! What the Op Profile page draws: one of the four trees of the file's Op Profile (by program or by
//! category, idle in or out) as a flat list of nodes in columns — pre-order, each node with its
//! parent's index — instead of XProf's nested JSON, which repeats every key name on every node. The
//! figures the page shows are computed here with XProf's page formulas (`utils.ts`: time fraction,
//! FLOPS utilisation, wasted time, FLOP rate, bandwidths), so the page only lays them out. Each op
//! node is joined with its HLO instruction in the trace's modules for its shape with layout, its
//! source line and, where the trace gives none, its text.

use super::{EngineError, Scope, Session};
use crate::analysis::op_profile::{instruction_name, Node, OpProfile};
use crate::analysis::xla_modules::{XlaInstruction, XlaModules};
use serde::{Deserialize, Serialize};

/// How the tree groups ops under its root.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpProfileGrouping {
    /// Program → category → op (XProf's default).
    #[default]
    ByProgram,
    /// Category → op.
    ByCategory,
}

/// The page's reply: the tree asked for, and what the header says about the device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpProfileView {
    /// XProf's hardware name: `TPU`, `GPU`, `CPU_ONLY`.
    pub device_type: String,
    pub grouping: OpProfileGrouping,
    pub include_idle: bool,
    /// Measured over normalized op time (DVFS scaling); 0 when the trace has no ops.
    pub agg_dvfs_time_scale_multiplier: f64,
    pub nodes: OpNodeColumns,
    /// Why some ops show no FLOPs or bytes (Tidemark cannot compute XProf's cost of them); `None` when
    /// every op is costed.
    pub cost_note: Option<String>,
}

/// The tree's nodes, one entry per node in every column, in pre-order: the root at 0, each node's
/// children right after it (and its descendants), longest first as the engine sorted them. Figures
/// a node lacks are `None` where XProf's page shows `-` (its `NaN`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpNodeColumns {
    pub name: Vec<String>,
    /// The parent's index; the root's is 0.
    pub parent: Vec<u32>,
    /// XProf's `numChildren`: the children the engine kept (the page's "left out" counts).
    pub num_children: Vec<u32>,
    pub raw_time_ps: Vec<u64>,
    pub avg_time_ps: Vec<f64>,
    pub occurrences: Vec<u64>,
    /// Of the root's time.
    pub time_fraction: Vec<f64>,
    /// Achieved FLOP rate over the device's peak, uncapped (XProf's `flopsUtilization`).
    pub flops_utilization: Vec<Option<f64>>,
    /// Time fraction × (1 − max(FLOPS, HBM utilisation)) (XProf's "wasted time"; none unless both are
    /// known).
    pub wasted_fraction: Vec<Option<f64>>,
    /// FLOP/s from the model's FLOPs, and from the FLOPs normalised to bf16.
    pub flop_rate: Vec<Option<f64>>,
    pub bf16_flop_rate: Vec<Option<f64>>,
    /// Utilisation of HBM, on-chip read and on-chip write bandwidth (capped at 1); `None` where 0,
    /// as XProf's page shows nothing then.
    pub bandwidth_utilization: [Vec<Option<f64>>; 3],
    /// Bytes per second moved in HBM, on-chip read, on-chip write.
    pub bandwidth_bytes_per_s: [Vec<Option<f64>>; 3],
    /// Empty on the grouping nodes (root, programs, categories); an op's HLO category otherwise.
    pub category: Vec<String>,
    /// Whether the node is an op (or a group of duplicates, described by its longest op).
    pub is_op: Vec<bool>,
    /// The HLO instruction's text: XProf's `xla.expression` (a TPU trace's own), else the text of the
    /// instruction in the trace's HLO module.
    pub expression: Vec<String>,
    /// The instruction's result shape with its layout (`f32[8,128]{1,0:T(8,128)}`), from its module.
    pub shape: Vec<String>,
    /// The framework op the instruction came from (XProf's `provenance`).
    pub provenance: Vec<String>,
    pub program_id: Vec<u64>,
    /// An op's module as the Memory Viewer names it (`jit_f(14)`), where the trace holds that module.
    pub memory_viewer_module: Vec<Option<String>>,
    /// `file:line` of the framework code the op came from: the trace's, else the HLO's metadata.
    pub source: Vec<String>,
}

impl OpNodeColumns {
    pub fn len(&self) -> usize {
        self.name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// The children of every node, in order.
    pub fn children(&self) -> Vec<Vec<u32>> {
        let mut children = vec![Vec::new(); self.len()];
        for (i, &p) in self.parent.iter().enumerate().skip(1) {
            children[p as usize].push(i as u32);
        }
        children
    }

    /// Adds `n`; `instruction` is its op's HLO instruction, when the trace's modules have it.
    fn push(&mut self, n: &Node, parent: u32, root_time_ps: u64, instruction: Option<&XlaInstruction>) {
        let m = &n.metrics;
        let some_if = |ok: bool, v: f64| ok.then_some(v);
        let timed = m.raw_time_ps > 0;
        let time_fraction = if timed && root_time_ps > 0 { m.raw_time_ps as f64 / root_time_ps as f64 } else { 0.0 };
        // XProf's `uncappedFlops` is the utilisation times the node's share of the tree's time.
        let flops_utilization = some_if(time_fraction != 0.0, m.uncapped_flops / time_fraction);
        let bandwidth = |i: usize| some_if(m.bandwidth_utils[i] != 0.0, m.bandwidth_utils[i]);
        let hbm = bandwidth(0);
        // XProf's page takes the larger of the two with `Math.max`, which is NaN when either is.
        let wasted = flops_utilization.zip(hbm).map(|(f, h)| time_fraction * (1.0 - f.max(h)));
        let per_s = |v: f64| some_if(timed, v * 1e12 / m.raw_time_ps as f64);
        let xla = n.xla.as_ref();
        let source = xla.map(|x| &x.source_info).filter(|s| !s.file_name.is_empty());
        self.name.push(n.name.clone());
        self.parent.push(parent);
        self.num_children.push(n.num_children as u32);
        self.raw_time_ps.push(m.raw_time_ps);
        self.avg_time_ps.push(m.avg_time_ps);
        self.occurrences.push(m.occurrences);
        self.time_fraction.push(time_fraction);
        self.flops_utilization.push(flops_utilization);
        self.wasted_fraction.push(wasted);
        self.flop_rate.push(per_s(m.raw_flops));
        self.bf16_flop_rate.push(per_s(m.bf16_flops));
        for i in 0..3 {
            self.bandwidth_utilization[i].push(bandwidth(i));
            self.bandwidth_bytes_per_s[i].push(per_s(m.raw_bytes_accessed[i]));
        }
        self.category.push(xla.map(|x| x.category.clone()).unwrap_or_default());
        self.is_op.push(xla.is_some());
        let expression = xla.map(|x| x.expression.clone()).filter(|e| !e.is_empty());
        self.expression.push(expression.or_else(|| instruction.map(|i| i.expression.clone())).unwrap_or_default());
        self.shape.push(instruction.map(|i| i.shape.clone()).unwrap_or_default());
        self.provenance.push(xla.map(|x| x.provenance.clone()).unwrap_or_default());
        self.program_id.push(xla.map_or(0, |x| x.program_id));
        let source = source.map(|s| format!("{}:{}", s.file_name, s.line_number));
        self.source.push(source.or_else(|| instruction.and_then(|i| i.source.clone())).unwrap_or_default());
    }

    /// `node` and its descendants in pre-order, under `parent`.
    fn push_tree(&mut self, node: &Node, parent: u32, root_time_ps: u64, modules: &XlaModules) {
        let me = self.len() as u32;
        let instruction = instruction_of(node, modules);
        self.push(node, parent, root_time_ps, instruction);
        // Buffers and graph only for an instruction of the module (see `xprof_name_holding`).
        self.memory_viewer_module
            .push(instruction.and(node.xla.as_ref()).and_then(|x| modules.xprof_name(x.program_id)).map(str::to_string));
        for c in &node.children {
            self.push_tree(c, me, root_time_ps, modules);
        }
    }

    /// The tree under `root` (XProf's page divides by the root it shows), its ops joined with their
    /// instructions in `modules`.
    pub fn of(root: &Node, modules: &XlaModules) -> Self {
        let mut columns = OpNodeColumns::default();
        columns.push_tree(root, 0, root.metrics.raw_time_ps, modules);
        columns
    }
}

/// The HLO instruction of op node `n`: its name in its program, or for a group of duplicates (which
/// takes its longest op's description) that op's.
fn instruction_of<'m>(n: &Node, modules: &'m XlaModules) -> Option<&'m XlaInstruction> {
    let xla = n.xla.as_ref()?;
    modules.instruction(xla.program_id, instruction_name(&n.name))
}

/// The tree of `profile` that `grouping` and `include_idle` pick.
pub fn tree(profile: &OpProfile, grouping: OpProfileGrouping, include_idle: bool) -> &Node {
    match (grouping, include_idle) {
        (OpProfileGrouping::ByProgram, true) => &profile.by_program,
        (OpProfileGrouping::ByProgram, false) => &profile.by_program_exclude_idle,
        (OpProfileGrouping::ByCategory, true) => &profile.by_category,
        (OpProfileGrouping::ByCategory, false) => &profile.by_category_exclude_idle,
    }
}

impl Session {
    /// The Op Profile page of `scope`: the tree `grouping` and `include_idle` pick, in columns (ops
    /// joined with the whole run's modules).
    pub fn op_profile_view(
        &mut self,
        scope: &Scope,
        grouping: OpProfileGrouping,
        include_idle: bool,
    ) -> Result<OpProfileView, EngineError> {
        let profile = self.op_profile(scope)?;
        let metrics = self.op_metrics(&Scope::run(&scope.file_ids))?;
        Ok(OpProfileView {
            device_type: profile.device_type.to_string(),
            grouping,
            include_idle,
            agg_dvfs_time_scale_multiplier: profile.agg_dvfs_time_scale_multiplier,
            nodes: OpNodeColumns::of(tree(&profile, grouping, include_idle), &metrics.modules),
            cost_note: profile.cost_note.clone(),
        })
    }
}
