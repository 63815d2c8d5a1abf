//! A module's instructions and computations as XLA's `HloModule::CreateFromProto` links them: each
//! computation's instructions in proto-id order, each instruction's operands, users (in the order the
//! users appear in the proto, each once), control predecessors and called computations, and which
//! fusion instruction owns each fused computation. References to ids the module lacks are dropped
//! (XLA refuses such a proto; we draw what is there and say how many were dropped).

use crate::proto::hlo::{HloInstructionProto, HloModuleProto};
use std::collections::HashMap;

pub struct Instruction<'a> {
    pub proto: &'a HloInstructionProto,
    /// The computation it belongs to.
    pub computation: usize,
    pub operands: Vec<usize>,
    pub users: Vec<usize>,
    pub control_predecessors: Vec<usize>,
    pub called: Vec<usize>,
}

pub struct Computation<'a> {
    pub name: &'a str,
    /// Its instructions in proto-id order (as XLA sorts them after reading a proto).
    pub instructions: Vec<usize>,
    pub root: Option<usize>,
    /// The fusion instruction that calls it, when it is a fused computation.
    pub fusion: Option<usize>,
    /// Every instruction that calls it, in module order.
    pub callers: Vec<usize>,
}

pub struct ModuleIndex<'a> {
    pub module: &'a HloModuleProto,
    pub instructions: Vec<Instruction<'a>>,
    pub computations: Vec<Computation<'a>>,
    pub entry: Option<usize>,
    /// Operand, control or computation references to ids the module does not hold.
    pub dangling_references: usize,
}

impl<'a> ModuleIndex<'a> {
    pub fn new(module: &'a HloModuleProto) -> Self {
        let mut instructions = Vec::new();
        let mut computations = Vec::new();
        let mut by_id: HashMap<i64, usize> = HashMap::new();
        let computation_ids: HashMap<i64, usize> = module.computations.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
        for (ci, c) in module.computations.iter().enumerate() {
            let first = instructions.len();
            for proto in &c.instructions {
                by_id.entry(proto.id).or_insert(instructions.len());
                instructions.push(Instruction {
                    proto,
                    computation: ci,
                    operands: Vec::new(),
                    users: Vec::new(),
                    control_predecessors: Vec::new(),
                    called: Vec::new(),
                });
            }
            let mut order: Vec<usize> = (first..instructions.len()).collect();
            order.sort_by_key(|&i| instructions[i].proto.id);
            let root = by_id.get(&c.root_id).copied().filter(|&r| instructions[r].computation == ci);
            computations.push(Computation { name: &c.name, instructions: order, root, fusion: None, callers: Vec::new() });
        }
        let mut dangling = 0;
        for i in 0..instructions.len() {
            let proto = instructions[i].proto;
            let resolve = |ids: &[i64], dangling: &mut usize| -> Vec<usize> {
                ids.iter()
                    .filter_map(|id| {
                        let found = by_id.get(id).copied();
                        *dangling += usize::from(found.is_none());
                        found
                    })
                    .collect()
            };
            let operands = resolve(&proto.operand_ids, &mut dangling);
            let control = resolve(&proto.control_predecessor_ids, &mut dangling);
            let called: Vec<usize> = proto
                .called_computation_ids
                .iter()
                .filter_map(|id| {
                    let found = computation_ids.get(id).copied();
                    dangling += usize::from(found.is_none());
                    found
                })
                .collect();
            for &o in &operands {
                if !instructions[o].users.contains(&i) {
                    instructions[o].users.push(i);
                }
            }
            for &c in &called {
                computations[c].callers.push(i);
                if proto.opcode == "fusion" && computations[c].fusion.is_none() {
                    computations[c].fusion = Some(i);
                }
            }
            let instr = &mut instructions[i];
            instr.operands = operands;
            instr.control_predecessors = control;
            instr.called = called;
        }
        let entry = computation_ids
            .get(&module.entry_computation_id)
            .copied()
            .or_else(|| module.computations.iter().position(|c| c.name == module.entry_computation_name))
            .or_else(|| computations.len().checked_sub(1));
        ModuleIndex { module, instructions, computations, entry, dangling_references: dangling }
    }

    pub fn name(&self, i: usize) -> &'a str {
        &self.instructions[i].proto.name
    }

    pub fn opcode(&self, i: usize) -> &'a str {
        &self.instructions[i].proto.opcode
    }

    /// XProf's `FindInstruction`: the first instruction so named, ignoring case and a leading `%`.
    pub fn find_instruction(&self, name: &str) -> Option<usize> {
        let name = name.strip_prefix('%').unwrap_or(name);
        self.computations.iter().flat_map(|c| c.instructions.iter().copied()).find(|&i| self.name(i).eq_ignore_ascii_case(name))
    }

    /// XProf's `FindComputation`: the first computation so named, ignoring case.
    pub fn find_computation(&self, name: &str) -> Option<usize> {
        self.computations.iter().position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The fusion instruction whose fused computation holds `i` (XLA's `IsFused`).
    pub fn fusion_of(&self, i: usize) -> Option<usize> {
        self.computations[self.instructions[i].computation].fusion
    }

    pub fn is_root(&self, i: usize) -> bool {
        self.computations[self.instructions[i].computation].root == Some(i)
    }
}
