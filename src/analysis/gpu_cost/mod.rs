//! FLOPs and bytes of the HLO instructions a GPU ran, as XProf computes them for its op tables: XLA's
//! GPU cost analysis (`GpuHloCostAnalysis` over the module's entry computation and, as XLA visits
//! them, the bodies of its while loops, calls, conditionals and async ops; run the way XProf's
//! `XProfGpuCostAnalysis` runs it, with no device description), reimplemented on the module's
//! `HloProto`.
//!
//! The analysis keeps XLA's single-precision bookkeeping (its properties are `float`s) so that sums
//! round as XLA's do. An instruction whose cost needs a rule Tidemark does not have (collectives,
//! whose cost needs the run's replica groups) gets a [`CostError`] naming it, never a guessed
//! number. Custom calls other than cuBLASLt GEMMs and cuDNN convolutions (legacy cuBLAS GEMMs, fused
//! attention, top-k) are "unknown" to the analysis: XProf reports 0 FLOPs and bytes for them.

mod flops_table;
pub mod shape;

use crate::analysis::hlo_text::is_elementwise_opcode;
use crate::proto::hlo as pb;
use flops_table::flops_per_element;
use shape::{bit_width, elements, elements_recursive, is_tuple, leaves, memory_space, size_bytes};
use std::collections::{BTreeSet, HashMap};

/// What XProf's op tables take from the cost analysis for one instruction, per execution.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InstructionCost {
    /// FLOPs normalised to the device (8- and 4-bit inputs count half and a quarter).
    pub device_flops: i64,
    /// FLOPs as the model counts them.
    pub model_flops: i64,
    pub bytes_accessed: i64,
    /// Bytes read from and written to device memory (XLA memory space 0), when any.
    pub hbm_read_bytes: i64,
    pub hbm_write_bytes: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, thiserror::Error)]
pub enum CostError {
    #[error("XProf's GPU cost of HLO opcode `{0}` is not modelled by Tidemark")]
    Unsupported(String),
    #[error("XProf's GPU cost of element type {0} is not modelled by Tidemark")]
    ElementType(i32),
    #[error("malformed HLO module: {0}")]
    Malformed(String),
}

/// The costs of one module's instructions by name.
#[derive(Debug, Clone, Default)]
pub struct ModuleCosts {
    by_name: HashMap<String, Result<InstructionCost, CostError>>,
}

impl ModuleCosts {
    /// The cost of instruction `name`: `Ok(None)` where XProf has none (the module has no such
    /// instruction, or the analysis does not visit it as an op of its own: fused and reducer
    /// computations).
    pub fn cost(&self, name: &str) -> Result<Option<InstructionCost>, CostError> {
        match self.by_name.get(name) {
            None => Ok(None),
            Some(cost) => cost.clone().map(Some),
        }
    }
}

/// Custom-call targets of cuDNN convolutions (XLA's `IsCustomCallToDnnConvolution`).
const DNN_CONV_TARGETS: &[&str] = &[
    "__cudnn$convForward",
    "__cudnn$convBackwardInput",
    "__cudnn$convBackwardFilter",
    "__cudnn$convBiasActivationForward",
    "__cudnn$convForwardGraph",
];
/// Custom-call targets of cuBLASLt GEMMs (XLA's `IsCublasLtGemm`), the only cuBLAS calls XLA costs.
const CUBLAS_LT_TARGETS: &[&str] = &["__cublas$lt$matmul", "__cublas$lt$matmul$f8"];
/// FLOPs of one fused multiply-add.
const FMA_FLOPS: i64 = 2;

/// Costs every instruction of `module`'s entry computation and of the computations XLA's analysis
/// visits from it as programs of their own (while bodies and conditions, called computations,
/// conditional branches, async computations).
pub fn module_costs(module: &pb::HloModuleProto) -> ModuleCosts {
    let hlo = Module::new(module);
    let mut by_name = HashMap::new();
    let mut pending = vec![module.entry_computation_id];
    let mut seen = BTreeSet::new();
    while let Some(id) = pending.pop() {
        let Some(computation) = hlo.computations.get(&id).filter(|_| seen.insert(id)) else { continue };
        for i in &computation.instructions {
            by_name.entry(i.name.clone()).or_insert_with(|| hlo.instruction_cost(i));
            if is_control_flow(&i.opcode) {
                pending.extend(i.called_computation_ids.iter().copied());
            }
        }
    }
    ModuleCosts { by_name }
}

/// Opcodes whose called computations XLA's analysis visits as programs of their own.
fn is_control_flow(opcode: &str) -> bool {
    matches!(opcode, "while" | "call" | "conditional" | "async-start")
}

/// One instruction's properties as XLA's cost analysis keeps them (single precision).
#[derive(Debug, Clone, Default)]
struct Props {
    flops: f32,
    bytes_accessed: f32,
    /// Share of each operand the instruction reads.
    operand_utilization: Vec<f32>,
    /// Bytes read of each operand, by (operand, shape index).
    operand_bytes: HashMap<(usize, Vec<i64>), f32>,
    /// Bytes written, by output shape index.
    output_bytes: HashMap<Vec<i64>, f32>,
}

impl Props {
    /// Each figure of `other` combined into this one's by `f` (a figure only `other` has is taken).
    fn merge(&mut self, other: &Props, f: fn(f32, f32) -> f32) {
        self.flops = f(self.flops, other.flops);
        self.bytes_accessed = f(self.bytes_accessed, other.bytes_accessed);
        for (k, &v) in &other.operand_bytes {
            self.operand_bytes.entry(k.clone()).and_modify(|x| *x = f(*x, v)).or_insert(v);
        }
        for (k, &v) in &other.output_bytes {
            self.output_bytes.entry(k.clone()).and_modify(|x| *x = f(*x, v)).or_insert(v);
        }
        for (n, &v) in other.operand_utilization.iter().enumerate() {
            match self.operand_utilization.get_mut(n) {
                Some(x) => *x = f(*x, v),
                None => self.operand_utilization.push(v),
            }
        }
    }
}

struct Module<'a> {
    computations: HashMap<i64, &'a pb::HloComputationProto>,
    instructions: HashMap<i64, &'a pb::HloInstructionProto>,
}

impl<'a> Module<'a> {
    fn new(module: &'a pb::HloModuleProto) -> Self {
        let computations = module.computations.iter().map(|c| (c.id, c)).collect();
        let instructions = module.computations.iter().flat_map(|c| &c.instructions).map(|i| (i.id, i)).collect();
        Module { computations, instructions }
    }

    fn operand(&self, i: &pb::HloInstructionProto, n: usize) -> Result<&'a pb::HloInstructionProto, CostError> {
        i.operand_ids
            .get(n)
            .and_then(|id| self.instructions.get(id).copied())
            .ok_or_else(|| CostError::Malformed(format!("`{}` has no operand {n}", i.name)))
    }

    fn operands(&self, i: &pb::HloInstructionProto) -> Result<Vec<&'a pb::HloInstructionProto>, CostError> {
        (0..i.operand_ids.len()).map(|n| self.operand(i, n)).collect()
    }

    fn called(&self, i: &pb::HloInstructionProto) -> Result<&'a pb::HloComputationProto, CostError> {
        i.called_computation_ids
            .first()
            .and_then(|id| self.computations.get(id).copied())
            .ok_or_else(|| CostError::Malformed(format!("`{}` calls no computation", i.name)))
    }

    /// What XProf's cost wrapper reports for an entry instruction.
    fn instruction_cost(&self, i: &pb::HloInstructionProto) -> Result<InstructionCost, CostError> {
        let props = self.visit(i)?;
        let valid = |v: i64| if v == -1 { 0 } else { v };
        let flop_count = props.flops as i64;
        let adjustment = self.device_flops_adjustment(i, props.flops)?;
        let bytes_accessed = valid(props.bytes_accessed as i64);
        let (mut hbm_read_bytes, mut hbm_write_bytes) = (0, 0);
        if bytes_accessed > 0 {
            let operands = self.operands(i)?;
            let mut read = 0i64;
            for (n, operand) in operands.iter().enumerate() {
                for (index, leaf) in leaves(operand.shape()) {
                    if memory_space(leaf) == Some(0) {
                        read += props.operand_bytes.get(&(n, index)).copied().unwrap_or(0.0) as i64;
                    }
                }
            }
            let mut written = 0i64;
            for (index, leaf) in leaves(i.shape()) {
                if memory_space(leaf) == Some(0) {
                    written += props.output_bytes.get(&index).copied().unwrap_or(0.0) as i64;
                }
            }
            hbm_read_bytes = valid(read).max(0);
            hbm_write_bytes = valid(written).max(0);
        }
        Ok(InstructionCost {
            device_flops: valid(flop_count - adjustment as i64),
            model_flops: valid(flop_count),
            bytes_accessed,
            hbm_read_bytes,
            hbm_write_bytes,
        })
    }

    /// XProf's `DefaultPostprocess`: FLOPs on 8-bit inputs count half, on 4-bit inputs a quarter. A
    /// custom call has none, but for a cuBLASLt GEMM, whose first operand's width decides it.
    fn device_flops_adjustment(&self, i: &pb::HloInstructionProto, model_flops: f32) -> Result<f32, CostError> {
        let widest = if i.opcode != "custom-call" {
            self.operands(i)?.iter().filter_map(|o| bit_width(o.shape().element_type)).max()
        } else if CUBLAS_LT_TARGETS.contains(&i.custom_call_target.as_str()) {
            bit_width(self.operand(i, 0)?.shape().element_type)
        } else {
            return Ok(0.0);
        };
        let divisor = match widest {
            Some(8) if model_flops != 0.0 => 2.0,
            Some(4) if model_flops != 0.0 => 4.0,
            _ => 1.0,
        };
        Ok(model_flops - model_flops / divisor)
    }

    /// XLA's `Preprocess`: every operand read whole, the output written whole.
    fn preprocess(&self, i: &pb::HloInstructionProto) -> Result<Props, CostError> {
        let out = size_bytes(i.shape())?;
        let mut p = Props { bytes_accessed: out as f32, ..Props::default() };
        p.output_bytes.insert(Vec::new(), out as f32);
        for (n, operand) in self.operands(i)?.iter().enumerate() {
            let size = size_bytes(operand.shape())?;
            p.bytes_accessed += size as f32;
            p.operand_bytes.insert((n, Vec::new()), size as f32);
            p.operand_utilization.push(1.0);
        }
        Ok(p)
    }

    /// Preprocess, then the opcode's handler (XLA's visitor for one instruction).
    fn visit(&self, i: &pb::HloInstructionProto) -> Result<Props, CostError> {
        let mut p = self.preprocess(i)?;
        let unsupported = || Err(CostError::Unsupported(i.opcode.clone()));
        match i.opcode.as_str() {
            op if is_elementwise_opcode(op) && op != "copy" => {
                p.flops = (flops_per_element(op, i.shape().element_type) * elements_recursive(i.shape())) as f32;
            }
            "parameter" | "constant" => {
                p.bytes_accessed = 0.0;
                p.output_bytes.insert(Vec::new(), 0.0);
            }
            // A bitcast (or a transpose that is one) touches no memory.
            "get-tuple-element" | "bitcast" => moves_nothing(&mut p, 1),
            "transpose" if transpose_is_bitcast(self.operand(i, 0)?.shape(), i.shape(), &i.dimensions) => moves_nothing(&mut p, 1),
            // Ordering and annotation ops emit no code.
            "domain" | "after-all" | "add-dependency" => moves_nothing(&mut p, i.operand_ids.len()),
            "tuple" => {
                p.bytes_accessed = size_bytes(i.shape())? as f32;
                for n in 0..i.operand_ids.len() {
                    p.operand_bytes.insert((n, Vec::new()), 0.0);
                }
            }
            // Preprocess's reads and writes, no FLOPs (XLA's handlers leave them, or count only
            // transcendentals or collective bytes, which XProf does not read).
            "copy"
            | "iota"
            | "reshape"
            | "dynamic-reshape"
            | "broadcast"
            | "reverse"
            | "pad"
            | "transpose"
            | "rng"
            | "rng-bit-generator"
            | "rng-get-and-update-state"
            | "optimization-barrier"
            | "partition-id"
            | "replica-id"
            | "get-dimension-size"
            | "set-dimension-size"
            | "send"
            | "send-done"
            | "recv"
            | "recv-done"
            | "copy-start"
            | "copy-done"
            | "async-update"
            | "async-done"
            | "collective-permute"
            | "collective-permute-start"
            | "collective-permute-done"
            | "collective-broadcast"
            | "all-to-all"
            | "ragged-all-to-all"
            | "all-gather-done"
            | "all-reduce-done"
            | "topk"
            | "batch-norm-training"
            | "batch-norm-inference"
            | "batch-norm-grad" => {}
            // XLA's GPU analysis visits the wrapped op in the same pass, which leaves the start's own
            // figures empty.
            "async-start" => p = Props::default(),
            "while" | "call" => {
                p = Props::default();
                for &id in &i.called_computation_ids {
                    p.merge(&self.computation_props(id)?, |a, b| a + b);
                }
            }
            // The most of each figure over the branches.
            "conditional" => {
                let mut branches = i.called_computation_ids.iter();
                p = branches.next().map(|&id| self.computation_props(id)).transpose()?.unwrap_or_default();
                for &id in branches {
                    p.merge(&self.computation_props(id)?, f32::max);
                }
            }
            "sort" => {
                let n = elements(self.operand(i, 0)?.shape());
                p.flops = (n * log2_ceiling(n)) as f32;
            }
            "map" => p.flops = self.reducer_flops(i)? * elements(i.shape()) as f32,
            "select-and-scatter" => self.select_and_scatter(i, &mut p)?,
            "fft" => {
                let operand = self.operand(i, 0)?.shape();
                let real = if is_tuple(operand) { operand.tuple_shapes.first().unwrap_or(operand) } else { operand };
                let log_factors: i64 = i.fft_length.iter().map(|&n| log2_floor(n)).product();
                p.flops = (FMA_FLOPS * 4 * log_factors * elements(real)) as f32;
            }
            "triangular-solve" => {
                let (a, b) = (self.operand(i, 0)?.shape(), self.operand(i, 1)?.shape());
                let (a_size, b_size) = (size_bytes(a)? as f32, size_bytes(b)? as f32);
                p.bytes_accessed = size_bytes(i.shape())? as f32 + a_size / 2.0 + b_size;
                // XLA sets operand 0's bytes twice, the second time to operand 1's size.
                p.operand_bytes.insert((0, Vec::new()), b_size);
                p.flops = (FMA_FLOPS * a.dimensions.last().copied().unwrap_or(0) * elements(b)) as f32;
            }
            "cholesky" => {
                let a = self.operand(i, 0)?.shape();
                let half = size_bytes(a)? as f32 / 2.0;
                p.bytes_accessed = half * 2.0;
                p.output_bytes.insert(Vec::new(), half);
                p.operand_bytes.insert((0, Vec::new()), half);
                p.flops = (a.dimensions.last().copied().unwrap_or(0) * elements(a) / 3) as f32;
            }
            "slice" | "dynamic-slice" => {
                let (out, operand) = (size_bytes(i.shape())?, self.operand(i, 0)?);
                let indices = if i.opcode == "dynamic-slice" { size_bytes(self.operand(i, 1)?.shape())? } else { 0 };
                p.bytes_accessed = (out * 2 + indices) as f32;
                p.output_bytes.insert(Vec::new(), out as f32);
                p.operand_bytes.insert((0, Vec::new()), out as f32);
                p.operand_utilization[0] = (elements(i.shape()) as f64 / elements(operand.shape()) as f64) as f32;
            }
            "dynamic-update-slice" => {
                let update = self.operand(i, 1)?;
                let (update_size, start_size) = (size_bytes(update.shape())?, size_bytes(self.operand(i, 2)?.shape())?);
                p.bytes_accessed = (update_size * 2 + start_size) as f32;
                p.output_bytes.insert(Vec::new(), update_size as f32);
                p.operand_bytes.insert((0, Vec::new()), 0.0);
                p.operand_bytes.insert((1, Vec::new()), update_size as f32);
                p.operand_bytes.insert((2, Vec::new()), start_size as f32);
                let out = elements(i.shape());
                p.operand_utilization[0] = ((out - elements(update.shape())) as f64 / out as f64) as f32;
            }
            "concatenate" => {
                let dim = *i.dimensions.first().ok_or_else(|| CostError::Malformed(format!("`{}` has no dimension", i.name)))?;
                let operand_dim = self.operand(i, 0)?.shape().dimensions.get(dim as usize).copied().unwrap_or(0);
                let per_element = if dim > 0 && operand_dim & 31 != 0 { 400 } else { 6 };
                p.flops = (per_element * elements_recursive(i.shape())) as f32;
            }
            "dot" => {
                let dnums = i
                    .dot_dimension_numbers
                    .as_ref()
                    .ok_or_else(|| CostError::Malformed(format!("`{}` has no dimension numbers", i.name)))?;
                p.flops = dot_flops(self.operand(i, 0)?.shape(), i.shape(), dnums) as f32;
            }
            "convolution" => p.flops = self.convolution_flops(i, i.shape())? as f32,
            "gather" => self.gather(i, &mut p)?,
            "scatter" => self.scatter(i, &mut p)?,
            "reduce" => self.reduce(i, &mut p)?,
            "reduce-window" => p.flops = self.reducer_flops(i)? * reduce_window_count(i) as f32,
            "fusion" => self.fusion(i, &mut p)?,
            "custom-call" if DNN_CONV_TARGETS.contains(&i.custom_call_target.as_str()) => {
                let result = if is_tuple(i.shape()) { i.shape().tuple_shapes.first().unwrap_or(i.shape()) } else { i.shape() };
                p.flops = self.convolution_flops(i, result)? as f32;
                if is_tuple(i.shape()) {
                    let out = size_bytes(result)? as f32;
                    p.bytes_accessed -= p.output_bytes.get(&Vec::new()).copied().unwrap_or(0.0);
                    p.bytes_accessed += out;
                    p.output_bytes.insert(Vec::new(), out);
                }
            }
            "custom-call" if CUBLAS_LT_TARGETS.contains(&i.custom_call_target.as_str()) => self.cublas_lt_gemm(i, &mut p)?,
            "custom-call" => {
                // An unknown custom call: every figure "unknown" (-1), which XProf reports as 0.
                p.flops = -1.0;
                p.bytes_accessed = -1.0;
                p.output_bytes.insert(Vec::new(), -1.0);
                for n in 0..i.operand_ids.len() {
                    p.operand_bytes.insert((n, Vec::new()), -1.0);
                }
            }
            _ => return unsupported(),
        }
        Ok(p)
    }

    /// XLA's `HandleGather`: a copy of the output's size plus a read of the indices, no FLOPs; the
    /// operand is read as much as the output holds.
    fn gather(&self, i: &pb::HloInstructionProto, p: &mut Props) -> Result<(), CostError> {
        let (out, indices) = (size_bytes(i.shape())?, size_bytes(self.operand(i, 1)?.shape())?);
        p.bytes_accessed = (out * 2 + indices) as f32;
        p.operand_bytes.insert((0, Vec::new()), out as f32);
        p.operand_bytes.insert((1, Vec::new()), indices as f32);
        p.output_bytes.insert(Vec::new(), out as f32);
        let share = (elements(i.shape()) as f64 / elements(self.operand(i, 0)?.shape()) as f64) as f32;
        match p.operand_utilization.first_mut() {
            Some(u) => *u = share,
            None => p.operand_utilization.push(share),
        }
        Ok(())
    }

    /// XLA's `HandleScatter`: the updates' size three times (input, output, updates) plus the
    /// indices, and the combiner's FLOPs once per element of the (first) updates.
    fn scatter(&self, i: &pb::HloInstructionProto, p: &mut Props) -> Result<(), CostError> {
        let n = i.operand_ids.len().saturating_sub(1) / 2;
        let mut total_update = 0i64;
        for k in 0..n {
            let update = size_bytes(self.operand(i, n + 1 + k)?.shape())?;
            p.operand_bytes.insert((k, Vec::new()), update as f32);
            p.operand_bytes.insert((n + 1 + k, Vec::new()), update as f32);
            total_update += update;
        }
        let indices = size_bytes(self.operand(i, n)?.shape())?;
        p.operand_bytes.insert((n, Vec::new()), indices as f32);
        p.bytes_accessed = (total_update * 3 + indices) as f32;
        p.output_bytes.insert(Vec::new(), total_update as f32);
        p.flops = self.reducer_flops(i)? * elements(self.operand(i, n + 1)?.shape()) as f32;
        Ok(())
    }

    /// The summed figures of every instruction of computation `id` (what XLA's nested analysis of a
    /// called computation gives back).
    fn computation_props(&self, id: i64) -> Result<Props, CostError> {
        let computation = self.computations.get(&id).ok_or_else(|| CostError::Malformed(format!("no computation {id}")))?;
        let mut sum = Props::default();
        for x in &computation.instructions {
            sum.merge(&self.visit(x)?, |a, b| a + b);
        }
        Ok(sum)
    }

    /// XLA's `HandleSelectAndScatter`: the select computation once per source element and window
    /// position but one, the scatter computation once per source element.
    fn select_and_scatter(&self, i: &pb::HloInstructionProto, p: &mut Props) -> Result<(), CostError> {
        let flops_of = |n: usize| -> Result<f32, CostError> {
            let id = i.called_computation_ids.get(n).ok_or_else(|| CostError::Malformed(format!("`{}` lacks a computation", i.name)))?;
            Ok(self.computation_props(*id)?.flops)
        };
        let source = elements(self.operand(i, 1)?.shape());
        let window: i64 = i.window.as_ref().map_or(1, |w| w.dimensions.iter().map(|d| d.size).product());
        p.flops = flops_of(0)? * (source * (window - 1)) as f32 + flops_of(1)? * source as f32;
        Ok(())
    }

    /// XLA's GPU cost of a cuBLASLt GEMM: the dot FLOPs of its backend config's dimension numbers, and
    /// only its result (the first element of its tuple) written.
    fn cublas_lt_gemm(&self, i: &pb::HloInstructionProto, p: &mut Props) -> Result<(), CostError> {
        let config: serde_json::Value = serde_json::from_slice(&i.backend_config)
            .map_err(|e| CostError::Malformed(format!("`{}` has no readable GEMM backend config: {e}", i.name)))?;
        let contracting = &config["gemm_backend_config"]["dot_dimension_numbers"]["lhs_contracting_dimensions"];
        let lhs = self.operand(i, 0)?.shape();
        let mut width = 1i64;
        for d in contracting.as_array().map(Vec::as_slice).unwrap_or_default() {
            // Protobuf's JSON writes 64-bit integers as strings.
            let d = d.as_i64().or_else(|| d.as_str().and_then(|s| s.parse().ok()));
            let d = d.and_then(|d| lhs.dimensions.get(usize::try_from(d).ok()?).copied());
            width *= d.ok_or_else(|| CostError::Malformed(format!("`{}` contracts a dimension its operand lacks", i.name)))?;
        }
        let output = if is_tuple(i.shape()) { i.shape().tuple_shapes.first().unwrap_or(i.shape()) } else { i.shape() };
        p.flops = (FMA_FLOPS * elements(output) * width) as f32;
        let out = size_bytes(output)? as f32;
        p.bytes_accessed += out - p.output_bytes.get(&Vec::new()).copied().unwrap_or(0.0);
        p.output_bytes.insert(Vec::new(), out);
        Ok(())
    }

    /// XLA's `HandleReduce` (FLOPs of the reducer per reduced element) and its GPU override (each
    /// init value read once per output element).
    fn reduce(&self, i: &pb::HloInstructionProto, p: &mut Props) -> Result<(), CostError> {
        let reducer_flops = self.reducer_flops(i)?;
        let output = if is_tuple(i.shape()) { i.shape().tuple_shapes.first().unwrap_or(i.shape()) } else { i.shape() };
        let reduction_count = elements(self.operand(i, 0)?.shape()) - elements(output);
        p.flops = reducer_flops * reduction_count as f32;
        let output_bytes: i64 = leaves(i.shape()).iter().map(|(_, s)| size_bytes(s)).sum::<Result<i64, _>>()?;
        p.output_bytes.insert(Vec::new(), output_bytes as f32);
        let inputs = i.operand_ids.len() / 2;
        let mut bytes = output_bytes as f32;
        for n in 0..inputs {
            bytes += p.operand_bytes.get(&(n, Vec::new())).copied().unwrap_or(0.0);
        }
        let output_elements = elements(output);
        for n in inputs..i.operand_ids.len() {
            let init_bytes = output_elements * size_bytes(self.operand(i, n)?.shape())?;
            p.operand_bytes.insert((n, Vec::new()), init_bytes as f32);
            p.operand_utilization[n] = output_elements as f32;
            bytes += init_bytes as f32;
        }
        p.bytes_accessed = bytes;
        Ok(())
    }

    /// FLOPs of one application of `i`'s reducer computation.
    fn reducer_flops(&self, i: &pb::HloInstructionProto) -> Result<f32, CostError> {
        let mut flops = 0.0f32;
        for x in &self.called(i)?.instructions {
            flops += self.visit(x)?.flops;
        }
        Ok(flops)
    }

    /// XLA's `GetConvolutionFlops` over the valid window positions, with `result` the convolution's
    /// output (a cuDNN call's first tuple element).
    fn convolution_flops(&self, i: &pb::HloInstructionProto, result: &pb::ShapeProto) -> Result<i64, CostError> {
        let malformed = || CostError::Malformed(format!("`{}` lacks its convolution dimensions", i.name));
        let (lhs, rhs) = (self.operand(i, 0)?.shape(), self.operand(i, 1)?.shape());
        let d = i.convolution_dimension_numbers.as_ref().ok_or_else(malformed)?;
        let dim = |s: &pb::ShapeProto, n: i64| s.dimensions.get(n as usize).copied().ok_or_else(malformed);
        let (input_feature, output_feature, batch) =
            (dim(lhs, d.input_feature_dimension)?, dim(result, d.output_feature_dimension)?, dim(lhs, d.input_batch_dimension)?);
        let unit = pb::WindowDimension { size: 1, stride: 1, window_dilation: 1, base_dilation: 1, ..Default::default() };
        let window = i.window.as_ref().map(|w| w.dimensions.clone()).unwrap_or_default();
        let mut valid_positions = 1i64;
        if window.is_empty() {
            valid_positions = valid_position_count(&unit, 1, 1, 1);
        }
        for (n, w) in window.iter().enumerate() {
            let (k, o, x) = (
                dim(rhs, *d.kernel_spatial_dimensions.get(n).ok_or_else(malformed)?)?,
                dim(result, *d.output_spatial_dimensions.get(n).ok_or_else(malformed)?)?,
                dim(lhs, *d.input_spatial_dimensions.get(n).ok_or_else(malformed)?)?,
            );
            valid_positions *= valid_position_count(w, x, k, o);
        }
        let (feature_groups, batch_groups) = (i.feature_group_count.max(1), i.batch_group_count.max(1));
        Ok((input_feature / feature_groups) * output_feature * (batch / batch_groups) * valid_positions * FMA_FLOPS)
    }

    /// XLA's `HandleFusion` with the GPU analysis's utilisation-weighted FLOPs and reads.
    fn fusion(&self, fusion: &pb::HloInstructionProto, p: &mut Props) -> Result<(), CostError> {
        let computation = self.called(fusion)?;
        // A custom fusion of a gather or scatter costs as its first such instruction alone.
        if fusion.fusion_kind == "kCustom" {
            for x in &computation.instructions {
                match x.opcode.as_str() {
                    "gather" => return self.gather(x, p),
                    "scatter" => return self.scatter(x, p),
                    _ => {}
                }
            }
        }
        let mut nested: HashMap<i64, Props> = HashMap::new();
        for x in &computation.instructions {
            nested.insert(x.id, self.visit(x)?);
        }
        let root = self
            .instructions
            .get(&computation.root_id)
            .copied()
            .ok_or_else(|| CostError::Malformed(format!("`{}` has no root", computation.name)))?;

        // Output bytes (XLA's FusionProcessOutputBytesAccessed).
        p.bytes_accessed = 0.0;
        p.output_bytes.clear();
        for (index, subshape) in leaves(fusion.shape()) {
            let mut out_root = root;
            if index.len() == 1 && root.opcode == "tuple" {
                out_root = self.operand(root, index[0] as usize)?;
            }
            let size = if out_root.opcode == "dynamic-update-slice" {
                if let Some(r) = nested.get_mut(&out_root.id) {
                    r.operand_utilization[0] = 0.0;
                }
                size_bytes(self.operand(out_root, 1)?.shape())?
            } else {
                size_bytes(subshape)?
            };
            p.bytes_accessed += size as f32;
            p.output_bytes.insert(index, size as f32);
        }
        if is_tuple(fusion.shape()) {
            p.output_bytes.insert(Vec::new(), 0.0);
            propagate_output_bytes(fusion.shape(), &mut Vec::new(), &mut p.output_bytes);
        }

        // FLOPs and utilisations (GpuHloCostAnalysis::FusionCalculateUtilizations).
        let order = self.post_order(computation)?;
        let mut utilization: HashMap<i64, f32> = HashMap::new();
        let mut root_utilization: HashMap<i64, f32> = order.iter().map(|x| (x.id, 0.0)).collect();
        let mut use_roots: HashMap<i64, BTreeSet<i64>> = order.iter().map(|x| (x.id, BTreeSet::new())).collect();
        root_utilization.insert(root.id, 1.0);
        use_roots.entry(root.id).or_default().insert(root.id);
        p.flops = 0.0;
        for x in order.iter().rev() {
            let u: f32 = use_roots[&x.id].iter().map(|r| root_utilization[r]).sum();
            utilization.insert(x.id, u);
            p.flops += u * nested[&x.id].flops;
            let passes_through = self.is_elementwise(x)?
                || x.opcode == "tuple"
                || x.opcode == "get-tuple-element"
                || (x.opcode == "bitcast" && same_array_but_type(self.operand(x, 0)?.shape(), x.shape()));
            for n in 0..x.operand_ids.len() {
                let operand = self.operand(x, n)?;
                if passes_through {
                    let roots = use_roots[&x.id].clone();
                    use_roots.entry(operand.id).or_default().extend(roots);
                } else {
                    use_roots.entry(operand.id).or_default().insert(operand.id);
                    let mut operand_utilization = u * nested[&x.id].operand_utilization.get(n).copied().unwrap_or(0.0);
                    // Rounded up to whole elements, in single precision as XLA rounds it.
                    let count = elements_recursive(operand.shape()) as f32;
                    operand_utilization = if count == 0.0 { 0.0 } else { (operand_utilization * count).ceil() / count };
                    *root_utilization.entry(operand.id).or_default() += operand_utilization;
                }
            }
        }

        // Large constants are read from memory (FusionCountConstantsMemoryAccess).
        for x in &computation.instructions {
            if x.opcode == "constant" && elements(x.shape()) > 1 {
                p.bytes_accessed += size_bytes(x.shape())? as f32 * utilization[&x.id].min(1.0);
            }
        }

        // Each parameter is read as much as it is used, at most once (FusionProcessOperandBytesRead).
        p.operand_bytes.clear();
        let read_bytes = |x: &pb::HloInstructionProto| -> Result<i64, CostError> {
            Ok((size_bytes(x.shape())? as f32 * utilization.get(&x.id).copied().unwrap_or(0.0).min(1.0)) as i64)
        };
        for x in computation.instructions.iter().filter(|x| x.opcode == "parameter") {
            let n = usize::try_from(x.parameter_number).map_err(|_| CostError::Malformed(format!("`{}` has a negative number", x.name)))?;
            let read = if is_tuple(x.shape()) {
                // A tuple parameter is read through the get-tuple-elements of its leaves.
                let mut sum = 0;
                for (index, _) in leaves(x.shape()) {
                    let mut gte = x;
                    for &k in &index {
                        if let Some(user) = computation
                            .instructions
                            .iter()
                            .find(|u| u.opcode == "get-tuple-element" && u.tuple_index == k && u.operand_ids.first() == Some(&gte.id))
                        {
                            gte = user;
                        }
                    }
                    let size = read_bytes(gte)?;
                    p.operand_bytes.insert((n, index), size as f32);
                    sum += size;
                }
                sum
            } else {
                read_bytes(x)?
            };
            p.bytes_accessed += read as f32;
            p.operand_bytes.insert((n, Vec::new()), read as f32);
            if let Some(u) = p.operand_utilization.get_mut(n) {
                *u = utilization[&x.id];
            }
        }
        Ok(())
    }

    /// XLA's `IsElementwise`: an elementwise opcode, or a fusion of only elementwise instructions.
    fn is_elementwise(&self, i: &pb::HloInstructionProto) -> Result<bool, CostError> {
        if i.opcode != "fusion" {
            return Ok(is_elementwise_opcode(&i.opcode));
        }
        for x in &self.called(i)?.instructions {
            if x.opcode != "parameter" && !self.is_elementwise(x)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The computation's instructions in XLA's post order (operands first, in operand order,
    /// starting from each instruction nothing uses, in computation order).
    fn post_order(&self, c: &'a pb::HloComputationProto) -> Result<Vec<&'a pb::HloInstructionProto>, CostError> {
        let used: BTreeSet<i64> = c.instructions.iter().flat_map(|x| x.operand_ids.iter().copied()).collect();
        let mut visited: HashMap<i64, bool> = HashMap::new();
        let mut order = Vec::new();
        for start in c.instructions.iter().filter(|x| !used.contains(&x.id)) {
            let mut stack = vec![start];
            while let Some(&current) = stack.last() {
                match visited.get(&current.id) {
                    Some(done) => {
                        stack.pop();
                        if !done {
                            order.push(current);
                            visited.insert(current.id, true);
                        }
                    }
                    None => {
                        visited.insert(current.id, false);
                        for n in (0..current.operand_ids.len()).rev() {
                            stack.push(self.operand(current, n)?);
                        }
                    }
                }
            }
        }
        Ok(order)
    }
}

/// Valid (kernel, output) position pairs along one spatial dimension of a convolution.
fn valid_position_count(w: &pb::WindowDimension, input: i64, kernel: i64, output: i64) -> i64 {
    let (stride, window_dilation, base_dilation) = (w.stride.max(1), w.window_dilation.max(1), w.base_dilation.max(1));
    if input == output
        && kernel == output
        && input == base_dilation
        && window_dilation == 1
        && (input - 1).max(1) == stride
        && w.padding_low == 0
        && w.padding_high == 0
    {
        return input;
    }
    if input == 1
        && kernel == output
        && window_dilation == 1
        && base_dilation == 1
        && stride == 1
        && w.padding_high == output - 1
        && w.padding_low == output - 1
    {
        return output;
    }
    let mut count = 0;
    for k in 0..kernel {
        if stride == 1 && base_dilation == 1 {
            let base = w.padding_low - k * window_dilation;
            count += ((input + base).min(output) - base.max(0)).max(0);
            continue;
        }
        for o in 0..output {
            let undilated = o * stride - w.padding_low + k * window_dilation;
            let index = if base_dilation > 1 { undilated / base_dilation } else { undilated };
            if undilated != index * base_dilation || index < 0 || index >= input {
                continue;
            }
            count += 1;
        }
    }
    count
}

/// How many times a reduce-window applies its reducer (XLA's `HandleReduceWindow`): window size
/// minus one per output element, or, for a window that reduces one dimension and broadcasts the
/// result back over it, once per reduced element and once per broadcast element.
fn reduce_window_count(i: &pb::HloInstructionProto) -> i64 {
    let window = i.window.as_ref().map(|w| w.dimensions.as_slice()).unwrap_or_default();
    let output = if is_tuple(i.shape()) { i.shape().tuple_shapes.first().unwrap_or(i.shape()) } else { i.shape() };
    let output_elements = elements(output);
    let mut window_elements: i64 = window.iter().map(|d| d.size).product();
    let mut count = (window_elements - 1) * output_elements;
    let reducing = window.iter().filter(|d| d.size != 1).count();
    let padded = window.iter().filter(|d| d.padding_low != 0 || d.padding_high != 0).count();
    if reducing == 1 && padded == 1 && !is_tuple(i.shape()) {
        let broadcast_back = window.iter().position(|d| {
            d.size != 1 && d.padding_low != 0 && d.padding_high != 0 && d.padding_low == d.padding_high && d.size == 2 * d.padding_low + 1
        });
        if let Some(dim) = broadcast_back {
            let extent = i.shape().dimensions.get(dim).copied().unwrap_or(0);
            if window[dim].padding_low == extent - 1 {
                window_elements = extent;
                count = output_elements / window_elements + (window_elements - 1);
            }
        }
    }
    count
}

/// XLA's `ShapeUtil::TransposeIsBitcast`: the transpose permutes the layout exactly as it permutes
/// the dimensions, so the bytes stay where they are.
fn transpose_is_bitcast(operand: &pb::ShapeProto, result: &pb::ShapeProto, dimensions: &[i64]) -> bool {
    let (Some(input), Some(output)) = (operand.layout.as_ref(), result.layout.as_ref()) else { return false };
    output.minor_to_major.len() == input.minor_to_major.len()
        && output
            .minor_to_major
            .iter()
            .zip(&input.minor_to_major)
            .all(|(&o, &i)| usize::try_from(o).ok().and_then(|o| dimensions.get(o)) == Some(&i))
}

/// No bytes read or written: the output and the first `operands` operands move nothing.
fn moves_nothing(p: &mut Props, operands: usize) {
    p.bytes_accessed = 0.0;
    p.output_bytes.insert(Vec::new(), 0.0);
    for n in 0..operands {
        p.operand_bytes.insert((n, Vec::new()), 0.0);
    }
}

/// ⌈log₂ n⌉ (0 for n ≤ 1), as XLA's `Log2Ceiling`.
fn log2_ceiling(n: i64) -> i64 {
    if n <= 1 {
        0
    } else {
        i64::from(64 - (n - 1).leading_zeros())
    }
}

/// ⌊log₂ n⌋ (0 for n ≤ 1), as XLA's `Log2Floor`.
fn log2_floor(n: i64) -> i64 {
    if n <= 1 {
        0
    } else {
        i64::from(63 - n.leading_zeros())
    }
}

/// Whether two shapes differ at most in element type (XLA's `ShapeUtil::EqualIgnoringElementType`): a
/// bitcast between them reinterprets each element in place, as an elementwise op would.
fn same_array_but_type(a: &pb::ShapeProto, b: &pb::ShapeProto) -> bool {
    !is_tuple(a) && !is_tuple(b) && a.dimensions == b.dimensions && a.is_dynamic_dimension == b.is_dynamic_dimension && a.layout == b.layout
}

/// XLA's `GetDotFlops`: one FMA per output element and contracted element.
fn dot_flops(lhs: &pb::ShapeProto, result: &pb::ShapeProto, dnums: &pb::DotDimensionNumbers) -> i64 {
    let width: i64 = dnums.lhs_contracting_dimensions.iter().map(|&d| lhs.dimensions.get(d as usize).copied().unwrap_or(1)).product();
    FMA_FLOPS * elements(result) * width
}

/// A tuple output's bytes: the sum of its elements' (XLA's `propagate_output_size_to_parent`).
fn propagate_output_bytes(shape: &pb::ShapeProto, index: &mut Vec<i64>, bytes: &mut HashMap<Vec<i64>, f32>) -> f32 {
    let known = bytes.get(index.as_slice()).copied().unwrap_or(0.0);
    if known != 0.0 || !is_tuple(shape) {
        return known;
    }
    let mut sum = 0.0f32;
    for (n, s) in shape.tuple_shapes.iter().enumerate() {
        index.push(n as i64);
        sum += propagate_output_bytes(s, index, bytes);
        index.pop();
    }
    bytes.insert(index.clone(), sum);
    sum
}

trait HasShape {
    fn shape(&self) -> &pb::ShapeProto;
}

impl HasShape for pb::HloInstructionProto {
    fn shape(&self) -> &pb::ShapeProto {
        static EMPTY: std::sync::OnceLock<pb::ShapeProto> = std::sync::OnceLock::new();
        self.shape.as_ref().unwrap_or_else(|| EMPTY.get_or_init(pb::ShapeProto::default))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::{HloComputationProto, HloInstructionProto, HloModuleProto, LayoutProto, ShapeProto};

    fn f32_vector(n: i64) -> ShapeProto {
        ShapeProto {
            element_type: shape::element_type::F32,
            dimensions: vec![n],
            layout: Some(LayoutProto { minor_to_major: vec![0], ..Default::default() }),
            ..Default::default()
        }
    }

    fn instr(id: i64, name: &str, opcode: &str, operands: &[i64]) -> HloInstructionProto {
        HloInstructionProto {
            id,
            name: name.into(),
            opcode: opcode.into(),
            shape: Some(f32_vector(8)),
            operand_ids: operands.to_vec(),
            ..Default::default()
        }
    }

    /// `fusion(p) = op(exp(p), exp(p))` in an entry computation fed by one parameter.
    fn module(op: &str) -> HloModuleProto {
        let fused = HloComputationProto {
            id: 2,
            root_id: 12,
            instructions: vec![instr(10, "p0", "parameter", &[]), instr(11, "exp", "exponential", &[10]), instr(12, "root", op, &[11, 11])],
            ..Default::default()
        };
        let mut fusion = instr(2, "fusion", "fusion", &[1]);
        fusion.fusion_kind = "kLoop".into();
        fusion.called_computation_ids = vec![2];
        let entry =
            HloComputationProto { id: 1, root_id: 2, instructions: vec![instr(1, "x", "parameter", &[]), fusion], ..Default::default() };
        HloModuleProto { entry_computation_id: 1, computations: vec![fused, entry], ..Default::default() }
    }

    #[test]
    fn a_loop_fusion_costs_its_ops_per_element_and_reads_its_input_once() {
        let cost = module_costs(&module("add")).cost("fusion").unwrap().unwrap();
        // exp on f32 is 86 FLOPs an element in the profile, add the default 3.
        assert_eq!(cost.model_flops, 8 * (86 + 3));
        assert_eq!(cost.device_flops, cost.model_flops);
        assert_eq!((cost.bytes_accessed, cost.hbm_read_bytes, cost.hbm_write_bytes), (64, 32, 32));
        // Parameters move nothing; instructions inside the fusion are not kernels.
        assert_eq!(module_costs(&module("add")).cost("x").unwrap().unwrap().bytes_accessed, 0);
        assert_eq!(module_costs(&module("add")).cost("exp"), Ok(None));
    }

    #[test]
    fn an_opcode_without_a_rule_is_an_error_naming_it() {
        assert_eq!(module_costs(&module("all-reduce")).cost("fusion"), Err(CostError::Unsupported("all-reduce".into())));
    }

    /// An entry computation `x = parameter; op = <opcode>(x)` where `op` is `instruction`.
    fn entry_with(instruction: HloInstructionProto) -> HloModuleProto {
        let entry = HloComputationProto {
            id: 1,
            root_id: 2,
            instructions: vec![instr(1, "x", "parameter", &[]), instruction],
            ..Default::default()
        };
        HloModuleProto { entry_computation_id: 1, computations: vec![entry], ..Default::default() }
    }

    #[test]
    fn a_sort_costs_n_log_n() {
        let cost = module_costs(&entry_with(instr(2, "sort", "sort", &[1]))).cost("sort").unwrap().unwrap();
        // 8 elements: 8 × ⌈log₂ 8⌉; the operand read and the output written.
        assert_eq!((cost.model_flops, cost.bytes_accessed), (24, 64));
        assert_eq!((log2_ceiling(1), log2_ceiling(5), log2_floor(5)), (0, 3, 2));
    }

    #[test]
    fn a_cublas_lt_gemm_costs_its_dot_and_writes_its_result_only() {
        let mut gemm = instr(2, "gemm", "custom-call", &[1, 1]);
        gemm.custom_call_target = "__cublas$lt$matmul".into();
        gemm.backend_config = br#"{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["0"]}}}"#.to_vec();
        let workspace = ShapeProto {
            element_type: shape::element_type::S8,
            dimensions: vec![1024],
            layout: f32_vector(1).layout,
            ..Default::default()
        };
        gemm.shape = Some(ShapeProto {
            element_type: shape::element_type::TUPLE,
            tuple_shapes: vec![f32_vector(8), workspace],
            ..Default::default()
        });
        let cost = module_costs(&entry_with(gemm.clone())).cost("gemm").unwrap().unwrap();
        // 8 outputs × 8 contracted × 2; reads 2 × 32 bytes, writes the 32-byte result (not the workspace).
        assert_eq!((cost.model_flops, cost.device_flops, cost.bytes_accessed), (128, 128, 96));
        // The legacy cuBLAS call is unknown to XLA: no cost.
        gemm.custom_call_target = "__cublas$gemm".into();
        let cost = module_costs(&entry_with(gemm)).cost("gemm").unwrap().unwrap();
        assert_eq!((cost.model_flops, cost.bytes_accessed), (0, 0));
    }

    #[test]
    fn a_transpose_that_keeps_the_bytes_in_place_moves_none() {
        let shape = |minor_to_major: Vec<i64>| ShapeProto {
            element_type: shape::element_type::F32,
            dimensions: vec![2, 4],
            layout: Some(LayoutProto { minor_to_major, ..Default::default() }),
            ..Default::default()
        };
        assert!(transpose_is_bitcast(&shape(vec![1, 0]), &shape(vec![0, 1]), &[1, 0]));
        assert!(!transpose_is_bitcast(&shape(vec![1, 0]), &shape(vec![1, 0]), &[1, 0]));
    }

    #[test]
    fn a_while_body_is_costed_as_its_own_program() {
        let mut m = module("add");
        // The fusion moves into a while body; the entry runs the loop.
        let body = HloComputationProto { id: 3, root_id: 2, instructions: m.computations[1].instructions.clone(), ..Default::default() };
        let mut while_op = instr(5, "while", "while", &[4]);
        while_op.called_computation_ids = vec![3];
        m.computations[1] = HloComputationProto {
            id: 1,
            root_id: 5,
            instructions: vec![instr(4, "init", "parameter", &[]), while_op],
            ..Default::default()
        };
        m.computations.push(body);
        let costs = module_costs(&m);
        let fusion = costs.cost("fusion").unwrap().unwrap();
        assert_eq!(fusion.model_flops, 8 * (86 + 3));
        // The loop's own figures are its body's.
        assert_eq!(costs.cost("while").unwrap().unwrap().model_flops, fusion.model_flops);
    }

    #[test]
    fn a_bitcast_to_another_element_type_passes_its_users_on() {
        // A bitcast that only reinterprets the element type passes use roots on as an elementwise op;
        // one that reshapes does not.
        assert!(same_array_but_type(&f32_vector(8), &ShapeProto { element_type: shape::element_type::S32, ..f32_vector(8) }));
        assert!(!same_array_but_type(&f32_vector(8), &f32_vector(4)));
    }

    #[test]
    fn convolution_positions_follow_padding_and_stride() {
        let w = |size, stride, pad| pb::WindowDimension { size, stride, padding_low: pad, padding_high: pad, ..Default::default() };
        // A 3-D cuDNN convolution of the MI300X trace: window 1x2x2, stride 1x2x2, padding 1 each side.
        assert_eq!(valid_position_count(&w(1, 1, 1), 32, 1, 34), 32);
        assert_eq!(valid_position_count(&w(2, 2, 1), 60, 2, 31), 60);
        assert_eq!(valid_position_count(&w(2, 2, 1), 104, 2, 53), 104);
    }
}
