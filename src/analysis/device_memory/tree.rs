//! The stack tree (caller → callee) for a flame graph or icicle: root = all samples, its children
//! the outermost frames.

use super::read::{StackKey, Values};
use super::Frame;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// A node of the stack tree. Siblings are merged by function (name and file), the way pprof's
/// default function granularity draws them, so `func2` is one box even when it allocates from two
/// lines; `lines` lists those lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeNode {
    /// `"all"` for the root.
    pub function: String,
    pub file: String,
    /// The distinct lines of `function` on the stacks through this node, ascending.
    pub lines: Vec<i64>,
    pub library: bool,
    /// Bytes of samples whose stack ends here.
    pub self_bytes: i64,
    /// Bytes of samples whose stack passes through here (self included).
    pub total_bytes: i64,
    pub self_count: i64,
    pub total_count: i64,
    /// Largest `|total_bytes|` first, then largest `|total_count|`, then by function and file.
    pub children: Vec<TreeNode>,
}

impl TreeNode {
    /// The tree's nodes in preorder with their depth (root = 0), children in the tree's order
    /// (largest first), each node without its children: a flat form for consumers that cannot take
    /// a nesting as deep as a Python stack.
    pub fn into_preorder(self) -> Vec<(u32, TreeNode)> {
        fn walk(mut n: TreeNode, depth: u32, out: &mut Vec<(u32, TreeNode)>) {
            let children = std::mem::take(&mut n.children);
            out.push((depth, n));
            for c in children {
                walk(c, depth + 1, out);
            }
        }
        let mut out = Vec::new();
        walk(self, 0, &mut out);
        out
    }
}

#[derive(Default)]
struct Building {
    lines: BTreeSet<i64>,
    library: bool,
    self_values: Values,
    total_values: Values,
    children: BTreeMap<(String, String), Building>,
}

/// Builds the tree of `stacks`; values may be negative (a diff).
pub(super) fn build<'a>(stacks: impl IntoIterator<Item = (&'a StackKey, Values)>) -> TreeNode {
    let mut root = Building::default();
    for (key, values) in stacks {
        root.total_values.add(values);
        let mut node = &mut root;
        for Frame { function, file, line, library } in &key.frames {
            node = node.children.entry((function.clone(), file.clone())).or_default();
            node.lines.insert(*line);
            node.library = *library;
            node.total_values.add(values);
        }
        node.self_values.add(values);
    }
    finish("all".to_string(), String::new(), root)
}

fn finish(function: String, file: String, b: Building) -> TreeNode {
    let mut children: Vec<TreeNode> = b.children.into_iter().map(|((f, file), c)| finish(f, file, c)).collect();
    children.sort_by_key(|c| (Reverse(c.total_bytes.unsigned_abs()), Reverse(c.total_count.unsigned_abs())));
    TreeNode {
        function,
        file,
        lines: b.lines.into_iter().collect(),
        library: b.library,
        self_bytes: b.self_values.bytes,
        total_bytes: b.total_values.bytes,
        self_count: b.self_values.count,
        total_count: b.total_values.count,
        children,
    }
}
