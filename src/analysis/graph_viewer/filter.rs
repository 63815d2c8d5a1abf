//! Which instructions a neighbourhood shows, and how: XLA's `MakeNodeRadiusAroundFilter`
//! (`hlo_graph_dumper.cc`), the rules XProf's graph viewer draws with.
//!
//! From the centre, a breadth-first walk of `width` hops over operands (not a tuple's, unless it is
//! the centre; a hop into or out of a bitcast is free), the roots of called computations, and users
//! (not a constant's, nor those of an instruction with more than 16). Instructions of other
//! computations than the centre's are always shown. An instruction some of whose operands are left
//! out is drawn de-emphasised, and a fusion so marked is drawn as one node rather than expanded.
//! The walk is XLA's, worklist duplicates included, so the set matches XProf's exactly.

use super::index::ModuleIndex;
use std::collections::{HashMap, VecDeque};

/// Users beyond this many are not walked (`kMaxUsersToRender`).
const MAX_USERS_TO_RENDER: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Normal,
    Hidden,
    /// The centre.
    Highlight,
    SomeOperandsOmitted,
    AllOperandsOmitted,
    SomeUsersOmitted,
}

/// What the dumper asks of each instruction.
pub struct NodeFilter {
    /// `None`: a whole computation, everything shown.
    neighbourhood: Option<(HashMap<usize, Shown>, usize)>,
    /// Every fusion drawn as one node, its fused computation not expanded (the module overview).
    pub collapse_fusions: bool,
}

impl NodeFilter {
    pub fn everything() -> Self {
        NodeFilter { neighbourhood: None, collapse_fusions: false }
    }

    /// Everything, each fusion one node: a whole module at the size of its unfused instructions.
    pub fn collapsed() -> Self {
        NodeFilter { neighbourhood: None, collapse_fusions: true }
    }

    pub fn get(&self, index: &ModuleIndex, i: usize) -> Shown {
        match &self.neighbourhood {
            None => Shown::Normal,
            Some((nodes, computation)) => match nodes.get(&i) {
                Some(&s) => s,
                None if index.instructions[i].computation != *computation => Shown::Normal,
                None => Shown::Hidden,
            },
        }
    }

    pub fn show(&self, index: &ModuleIndex, i: usize) -> bool {
        self.get(index, i) != Shown::Hidden
    }

    pub fn some_or_all_operands_omitted(&self, index: &ModuleIndex, i: usize) -> bool {
        matches!(self.get(index, i), Shown::SomeOperandsOmitted | Shown::AllOperandsOmitted)
    }

    pub fn deemphasized(&self, index: &ModuleIndex, i: usize) -> bool {
        matches!(self.get(index, i), Shown::SomeOperandsOmitted | Shown::AllOperandsOmitted | Shown::SomeUsersOmitted)
    }
}

/// The walk stopped after this many worklist items: a malformed module whose computations call
/// themselves makes XLA's walk (which re-queues called roots unconditionally) grow without end.
pub const MAX_WALK_STEPS: usize = 2_000_000;

/// The filter around `root` with `radius` hops, or `Err` when the walk ran past [`MAX_WALK_STEPS`].
pub fn radius_around(index: &ModuleIndex, root: usize, radius: i64) -> Result<NodeFilter, usize> {
    let mut nodes: HashMap<usize, Shown> = HashMap::new();
    let mut worklist: VecDeque<(usize, i64)> = VecDeque::from([(root, 0)]);
    let mut steps = 0;
    while let Some((i, depth)) = worklist.pop_front() {
        steps += 1;
        if steps > MAX_WALK_STEPS {
            return Err(nodes.len());
        }
        nodes.insert(i, Shown::Normal);
        if depth >= radius {
            continue;
        }
        let instr = &index.instructions[i];
        if i == root || instr.proto.opcode != "tuple" {
            for &o in &instr.operands {
                if !nodes.contains_key(&o) {
                    let free = index.opcode(o) == "bitcast" || instr.proto.opcode == "bitcast";
                    worklist.push_back((o, if free { depth } else { depth + 1 }));
                }
            }
        }
        for &c in &instr.called {
            if let Some(r) = index.computations[c].root {
                worklist.push_back((r, depth + 1));
            }
        }
        if instr.proto.opcode == "constant" {
            continue;
        }
        if instr.users.len() > MAX_USERS_TO_RENDER {
            nodes.insert(i, Shown::SomeUsersOmitted);
            continue;
        }
        for &u in &instr.users {
            if !nodes.contains_key(&u) {
                worklist.push_back((u, depth + 1));
            }
        }
    }
    let computation = index.instructions[root].computation;
    let displayed = |i: usize| nodes.contains_key(&i) || index.opcode(i) == "constant" || index.instructions[i].computation != computation;
    let fixed: HashMap<usize, Shown> = nodes
        .iter()
        .map(|(&i, &shown)| {
            let operands = &index.instructions[i].operands;
            let any = operands.iter().any(|&o| displayed(o));
            let all = operands.iter().all(|&o| displayed(o));
            let mut shown = if any && !all {
                Shown::SomeOperandsOmitted
            } else if !operands.is_empty() && !any {
                Shown::AllOperandsOmitted
            } else {
                shown
            };
            if shown == Shown::SomeUsersOmitted && index.instructions[i].users.iter().all(|&u| displayed(u)) {
                shown = Shown::Normal;
            }
            (i, shown)
        })
        .collect();
    let mut nodes = fixed;
    nodes.insert(root, Shown::Highlight);
    Ok(NodeFilter { neighbourhood: Some((nodes, computation)), collapse_fusions: false })
}
