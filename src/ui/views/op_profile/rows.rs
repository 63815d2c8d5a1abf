//! Which nodes of the Op Profile tree are rows on screen, in order, as XProf's op table decides them:
//! the root's children always, each expanded node's first `limit` children ("ops limit"), or, with
//! "top 90%", only as many as make up 90 % of its time, and a "left out" line for the rest. A search
//! shows the matching nodes with their ancestors, expanded, whatever the limit. Plain logic with no
//! web dependency (`tests/ui_geometry.rs` runs it natively).

use std::collections::HashSet;

/// The tree's shape, as columns of the engine's reply (pre-order, root at 0).
pub struct Shape<'a> {
    pub raw_time_ps: &'a [u64],
    /// XProf's `numChildren`: the children the engine kept.
    pub num_children: &'a [u32],
    pub children: &'a [Vec<u32>],
}

/// What the user chose.
pub struct Options<'a> {
    /// Children shown per node below the root (XProf: 10 to 100).
    pub limit: usize,
    /// Only the children that make up the first 90 % of their parent's time.
    pub top90: bool,
    pub expanded: &'a HashSet<u32>,
    /// With a search: which nodes match it.
    pub matches: Option<&'a [bool]>,
    /// The root is a row too (a tree that is a single op, like a trace with only idle time).
    pub show_root: bool,
}

/// One row of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Line {
    /// Node `node`, indented `depth` levels, with a disclosure when it has children to show.
    Node { node: u32, depth: u16, has_children: bool, expanded: bool },
    /// Under an expanded node: how many of its children the limit leaves out.
    LeftOut { depth: u16, count: u32 },
}

/// How many of `node`'s children to show with "top 90%" on (XProf's `get90ChildrenIndex`): the
/// first ones until their time reaches 90 % of the node's, looking at no more than `limit`.
fn top90_count(shape: &Shape, node: usize, limit: usize) -> usize {
    let children = &shape.children[node];
    let time = shape.raw_time_ps[node];
    if children.is_empty() || time == 0 {
        return limit;
    }
    let target = time as f64 * 0.9;
    let mut total = 0.0;
    for (i, &c) in children.iter().take(limit).enumerate() {
        if total >= target {
            return i;
        }
        total += shape.raw_time_ps[c as usize] as f64;
    }
    limit
}

/// The children of `node` shown below the root, and how many are left out (XProf's `getChildren`
/// and `getLeftOut`).
fn shown_children<'s>(shape: &'s Shape, node: usize, opts: &Options) -> (&'s [u32], u32) {
    let children = &shape.children[node];
    let k = if opts.top90 { top90_count(shape, node, opts.limit) } else { opts.limit };
    let shown = &children[..k.min(children.len())];
    let left_out = (shape.num_children[node] as usize).saturating_sub(opts.limit.min(shown.len()));
    (shown, left_out as u32)
}

/// The rows, in order.
pub fn lines(shape: &Shape, opts: &Options) -> Vec<Line> {
    let mut out = Vec::new();
    if shape.children.is_empty() {
        return out;
    }
    let depth = u16::from(opts.show_root);
    if opts.show_root {
        out.push(Line::Node { node: 0, depth: 0, has_children: !shape.children[0].is_empty(), expanded: true });
    }
    match opts.matches {
        Some(matches) => {
            let mut keep = matches.to_vec();
            // Pre-order: every node comes after its parent, so a backward pass marks the ancestors.
            for i in (1..shape.children.len()).rev() {
                if shape.children[i].iter().any(|&c| keep[c as usize]) {
                    keep[i] = true;
                }
            }
            search_lines(shape, 0, depth, &keep, &mut out);
        }
        None => {
            for &c in &shape.children[0] {
                node_lines(shape, c as usize, depth, opts, &mut out);
            }
        }
    }
    out
}

fn node_lines(shape: &Shape, node: usize, depth: u16, opts: &Options, out: &mut Vec<Line>) {
    let (shown, left_out) = shown_children(shape, node, opts);
    let expanded = opts.expanded.contains(&(node as u32));
    out.push(Line::Node { node: node as u32, depth, has_children: !shown.is_empty(), expanded });
    if !expanded {
        return;
    }
    for &c in shown {
        node_lines(shape, c as usize, depth + 1, opts, out);
    }
    if left_out > 0 {
        out.push(Line::LeftOut { depth: depth + 1, count: left_out });
    }
}

fn search_lines(shape: &Shape, node: usize, depth: u16, keep: &[bool], out: &mut Vec<Line>) {
    for &c in &shape.children[node] {
        let c = c as usize;
        if !keep[c] {
            continue;
        }
        let has_children = shape.children[c].iter().any(|&g| keep[g as usize]);
        out.push(Line::Node { node: c as u32, depth, has_children, expanded: has_children });
        search_lines(shape, c, depth + 1, keep, out);
    }
}

/// The nodes to expand when the tree is first shown: the path from the root down the longest child
/// at each level, so the op that took the most time is on screen (XProf opens the root only).
pub fn initial_expanded(shape: &Shape) -> HashSet<u32> {
    let mut expanded = HashSet::new();
    let mut node = 0usize;
    while let Some(&first) = shape.children.get(node).and_then(|c| c.first()) {
        if shape.children[first as usize].is_empty() {
            break;
        }
        expanded.insert(first);
        node = first as usize;
    }
    expanded
}
