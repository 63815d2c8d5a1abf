//! A layered (Sugiyama) layout of a [`Graph`], top to bottom, operands above their users:
//!
//! 1. layers by longest path from the sources (edges closing a cycle, which only malformed input
//!    has, are reversed first, found by an iterative depth-first search);
//! 2. edges longer than one layer get a bend point (a dummy node) in every layer they cross;
//! 3. each layer ordered by a few down-and-up barycentre sweeps, a cluster's nodes kept together and
//!    sibling clusters in the same left-to-right order on every layer;
//! 4. x by a few sweeps pulling each node to the mean of its neighbours, then pushed apart so no two
//!    nodes of a layer overlap; y by layer, each layer as tall as its tallest node;
//! 5. clusters made whole: a cluster's box spans every layer between its first and last node, so on
//!    each layer it crosses it gets its left and right edges as two more unknowns (a zero-width
//!    placeholder stands in where it has no node), and x is pushed right, in the order of a
//!    left-of graph, until every node and box is clear of every box it is not in. So a box holds its
//!    own nodes and nothing else, as Graphviz draws XLA's clusters.
//!
//! Linear in nodes and edges per sweep, so a 6,500-instruction module lays out in well under a
//! second natively (bench/RESULTS.md). Text is measured by a fixed character width: the page draws
//! labels with a monospace font of that advance.

use super::Graph;
use serde::{Deserialize, Serialize};

/// Width of a character of a node's text, in layout units (pixels at zoom 1).
pub const CHAR_WIDTH: f64 = 7.0;
/// Height of a line of a node's text.
pub const LINE_HEIGHT: f64 = 14.0;
/// Lines of detail drawn under a node's title (the rest is in its card).
pub const DETAIL_LINES: usize = 2;
/// Characters of a line drawn at most.
pub const MAX_LINE_CHARS: usize = 40;
const PADDING: f64 = 8.0;
const NODE_GAP: f64 = 24.0;
const LAYER_GAP: f64 = 48.0;
const CLUSTER_PAD: f64 = 10.0;
const ORDER_SWEEPS: usize = 4;
const POSITION_SWEEPS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    /// One box per graph node, in the graph's order.
    pub nodes: Vec<Rect>,
    /// One polyline per graph edge: from the bottom of its source to the top of its target.
    pub edges: Vec<Vec<(f64, f64)>>,
    /// One box per cluster around its nodes (and nested clusters).
    pub clusters: Vec<Rect>,
    pub width: f64,
    pub height: f64,
}

/// The lines a node shows: its label, then up to [`DETAIL_LINES`] lines of detail, each cut to
/// [`MAX_LINE_CHARS`].
pub fn node_lines(graph: &Graph, n: usize) -> Vec<String> {
    let node = &graph.nodes[n];
    node.label
        .lines()
        .chain(node.details.iter().flat_map(|d| d.lines()).take(DETAIL_LINES))
        .map(|l| if l.chars().count() > MAX_LINE_CHARS { l.chars().take(MAX_LINE_CHARS - 1).chain(['…']).collect() } else { l.to_string() })
        .collect()
}

fn node_size(graph: &Graph, n: usize) -> (f64, f64) {
    let lines = node_lines(graph, n);
    let chars = lines.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    (chars as f64 * CHAR_WIDTH + 2.0 * PADDING, lines.len() as f64 * LINE_HEIGHT + PADDING)
}

/// The graph laid out.
pub fn layout(graph: &Graph) -> Layout {
    let n = graph.nodes.len();
    let edges: Vec<(usize, usize)> = graph.edges.iter().map(|e| (e.from, e.to)).filter(|(a, b)| a != b).collect();
    let edges = break_cycles(n, &edges);
    let layer = layers(n, &edges);

    // Chains of dummies for long edges: vertex ids n.. are dummies.
    let mut vertex_layer = layer.clone();
    let mut vertex_cluster: Vec<Option<usize>> = graph.nodes.iter().map(|x| x.cluster).collect();
    let mut segments: Vec<(usize, usize)> = Vec::new();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(graph.edges.len());
    for e in &graph.edges {
        let (a, b) = (e.from, e.to);
        let (top, bottom) = if layer[a] <= layer[b] { (a, b) } else { (b, a) };
        // A long edge's bends stay in the innermost cluster holding both its ends: inside a
        // cluster between two of its nodes, around the clusters it does not enter.
        let bend_cluster = common_cluster(graph, graph.nodes[a].cluster, graph.nodes[b].cluster);
        let mut chain = vec![top];
        for l in layer[top] + 1..layer[bottom] {
            let d = vertex_layer.len();
            vertex_layer.push(l);
            vertex_cluster.push(bend_cluster);
            chain.push(d);
        }
        chain.push(bottom);
        for w in chain.windows(2) {
            if w[0] != w[1] {
                segments.push((w[0], w[1]));
            }
        }
        chains.push(chain);
    }
    let mut vertices = vertex_layer.len();
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); vertices];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); vertices];
    for &(a, b) in &segments {
        down[a].push(b);
        up[b].push(a);
    }
    let layer_count = vertex_layer.iter().max().map_or(0, |&l| l + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layer_count];
    for (v, &l) in vertex_layer.iter().enumerate() {
        rows[l].push(v);
    }
    let mut chains_of: Vec<Vec<usize>> = vertex_cluster.iter().map(|&c| cluster_chain(graph, c)).collect();

    // Ordering.
    let mut position = vec![0.0f64; vertices];
    let set_positions = |rows: &Vec<Vec<usize>>, position: &mut Vec<f64>| {
        for row in rows {
            for (i, &v) in row.iter().enumerate() {
                position[v] = i as f64;
            }
        }
    };
    set_positions(&rows, &mut position);
    for sweep in 0..ORDER_SWEEPS * 2 {
        let downward = sweep % 2 == 0;
        let keys = cluster_keys(graph.clusters.len(), &chains_of, &position);
        let order: Vec<usize> = if downward { (1..layer_count).collect() } else { (0..layer_count.saturating_sub(1)).rev().collect() };
        for l in order {
            let neighbours = if downward { &up } else { &down };
            let bary: Vec<f64> = rows[l]
                .iter()
                .map(|&v| {
                    let ns = &neighbours[v];
                    if ns.is_empty() {
                        position[v]
                    } else {
                        ns.iter().map(|&u| position[u]).sum::<f64>() / ns.len() as f64
                    }
                })
                .collect();
            sort_row(&mut rows[l], &bary, &chains_of, &keys);
            for (i, &v) in rows[l].iter().enumerate() {
                position[v] = i as f64;
            }
        }
    }

    // Sizes, y by layer.
    let mut size: Vec<(f64, f64)> = (0..vertices).map(|v| if v < n { node_size(graph, v) } else { (0.0, 0.0) }).collect();
    let mut layer_y = vec![0.0; layer_count];
    let mut layer_h = vec![0.0f64; layer_count];
    let mut y = 0.0;
    for l in 0..layer_count {
        layer_h[l] = rows[l].iter().map(|&v| size[v].1).fold(LINE_HEIGHT, f64::max);
        layer_y[l] = y;
        y += layer_h[l] + LAYER_GAP;
    }
    let top = CLUSTER_PAD * 3.0;

    // The layers each cluster's box crosses (its height does not depend on x): a placeholder in
    // each such layer that holds none of its vertices, innermost clusters first (a nested
    // cluster's placeholder stands for its parents too).
    let unplaced: Vec<Rect> = (0..n).map(|v| Rect { x: 0.0, y: layer_y[vertex_layer[v]] + top, w: size[v].0, h: size[v].1 }).collect();
    let spans = cluster_boxes(graph, &unplaced);
    // Each layer's band reaches halfway into the gaps either side (the first and last without
    // end), so the bands tile the height and any two boxes that meet vertically cross a layer
    // both.
    let band = |l: usize| {
        let lo = if l == 0 { f64::NEG_INFINITY } else { layer_y[l] + top - LAYER_GAP / 2.0 };
        let hi = if l + 1 == layer_count { f64::INFINITY } else { layer_y[l] + top + layer_h[l] + LAYER_GAP / 2.0 };
        (lo, hi)
    };
    // (cluster, layer) pairs where the cluster holds a vertex.
    let mut present: std::collections::HashSet<(usize, usize)> =
        (0..vertices).flat_map(|v| chains_of[v].iter().map(move |&c| (c, v))).map(|(c, v)| (c, vertex_layer[v])).collect();
    for c in (0..graph.clusters.len()).rev() {
        let b = spans[c];
        if b.w <= 0.0 {
            continue;
        }
        for (l, row) in rows.iter_mut().enumerate() {
            let (lo, hi) = band(l);
            if b.y + b.h <= lo || b.y >= hi || present.contains(&(c, l)) {
                continue;
            }
            let chain = cluster_chain(graph, Some(c));
            present.extend(chain.iter().map(|&k| (k, l)));
            row.push(vertices);
            vertices += 1;
            vertex_layer.push(l);
            chains_of.push(chain);
            size.push((0.0, 0.0));
            up.push(Vec::new());
            down.push(Vec::new());
            // Among the layer's vertices where its cluster's key puts it.
            position.push(f64::INFINITY);
        }
    }
    // Every layer sorted once more by the same cluster keys, so sibling clusters (and each
    // cluster's placeholders) stand in one left-to-right order on all layers; within a cluster the
    // sweeps' order is kept.
    let keys = cluster_keys(graph.clusters.len(), &chains_of, &position);
    for row in &mut rows {
        let own: Vec<f64> = row.iter().map(|&v| position[v]).collect();
        sort_row(row, &own, &chains_of, &keys);
    }

    // x: packed, then pulled to neighbours and pushed apart.
    let mut x = vec![0.0f64; vertices];
    for row in &rows {
        pack(row, &size, &mut x, None);
    }
    for sweep in 0..POSITION_SWEEPS * 2 {
        let downward = sweep % 2 == 0;
        for l in 0..layer_count {
            let l = if downward { l } else { layer_count - 1 - l };
            let neighbours = if downward { &up } else { &down };
            let want: Vec<f64> = rows[l]
                .iter()
                .map(|&v| {
                    let ns = &neighbours[v];
                    if ns.is_empty() {
                        x[v]
                    } else {
                        ns.iter().map(|&u| x[u]).sum::<f64>() / ns.len() as f64
                    }
                })
                .collect();
            pack(&rows[l], &size, &mut x, Some(&want));
        }
    }
    separate_clusters(graph.clusters.len(), &rows, &chains_of, &size, &mut x);
    let min_x = (0..vertices).map(|v| x[v] - size[v].0 / 2.0).fold(f64::INFINITY, f64::min);
    let shift = if min_x.is_finite() { CLUSTER_PAD * (graph.clusters.len().min(1) as f64 + 1.0) - min_x } else { 0.0 };
    let nodes: Vec<Rect> = (0..n)
        .map(|v| {
            let (w, h) = size[v];
            Rect { x: x[v] + shift - w / 2.0, y: layer_y[vertex_layer[v]] + top, w, h }
        })
        .collect();
    let edges_out: Vec<Vec<(f64, f64)>> = graph
        .edges
        .iter()
        .zip(&chains)
        .map(|(e, chain)| {
            let mut points: Vec<(f64, f64)> = Vec::with_capacity(chain.len());
            for (k, &v) in chain.iter().enumerate() {
                let cx = x[v] + shift;
                if v < n {
                    let r = nodes[v];
                    // Leave from a node's bottom, arrive at its top.
                    let at_bottom = k == 0;
                    points.push((cx, if at_bottom { r.y + r.h } else { r.y }));
                } else {
                    points.push((cx, layer_y[vertex_layer[v]] + top + layer_h[vertex_layer[v]] / 2.0));
                }
            }
            if e.from != chain[0] {
                points.reverse();
            }
            points
        })
        .collect();
    let clusters = cluster_boxes(graph, &nodes);
    let mut l = Layout { nodes, edges: edges_out, clusters, width: 0.0, height: 0.0 };
    l.fit_to_origin();
    l
}

impl Layout {
    /// Moved so that everything drawn (nested clusters' boxes reach further out than the nodes)
    /// starts [`CLUSTER_PAD`] from the origin, and sized to hold it.
    fn fit_to_origin(&mut self) {
        let drawn = || self.nodes.iter().chain(self.clusters.iter().filter(|r| r.w > 0.0));
        let x0 = drawn().map(|r| r.x).fold(f64::INFINITY, f64::min);
        let y0 = drawn().map(|r| r.y).fold(f64::INFINITY, f64::min);
        let (dx, dy) = if x0.is_finite() { (CLUSTER_PAD - x0, CLUSTER_PAD - y0) } else { (0.0, 0.0) };
        for r in self.nodes.iter_mut().chain(self.clusters.iter_mut().filter(|r| r.w > 0.0)) {
            r.x += dx;
            r.y += dy;
        }
        for p in self.edges.iter_mut().flatten() {
            p.0 += dx;
            p.1 += dy;
        }
        let drawn = || self.nodes.iter().chain(self.clusters.iter().filter(|r| r.w > 0.0));
        self.width = drawn().map(|r| r.x + r.w).fold(0.0, f64::max) + CLUSTER_PAD;
        self.height = drawn().map(|r| r.y + r.h).fold(0.0, f64::max) + CLUSTER_PAD;
    }
}

/// Cluster `c` and the clusters around it, outermost first (bounded: a malformed parent chain
/// cannot loop).
fn cluster_chain(graph: &Graph, mut c: Option<usize>) -> Vec<usize> {
    let mut chain = Vec::new();
    while let Some(x) = c {
        if chain.len() > graph.clusters.len() {
            break;
        }
        chain.push(x);
        c = graph.clusters[x].parent;
    }
    chain.reverse();
    chain
}

/// The innermost cluster holding both `a` and `b` (`None`: the top level).
fn common_cluster(graph: &Graph, a: Option<usize>, b: Option<usize>) -> Option<usize> {
    let (a, b) = (cluster_chain(graph, a), cluster_chain(graph, b));
    a.iter().zip(&b).take_while(|(x, y)| x == y).last().map(|(x, _)| *x)
}

/// Each cluster's place in a layer's order: the mean position of the vertices it holds on every
/// layer, the same on all layers (so sibling clusters keep one order); a vertex not yet placed
/// (at infinity) does not count.
fn cluster_keys(clusters: usize, chains: &[Vec<usize>], position: &[f64]) -> Vec<f64> {
    let mut sum = vec![(0.0f64, 0usize); clusters];
    for (v, chain) in chains.iter().enumerate() {
        if position[v].is_finite() {
            for &c in chain {
                sum[c].0 += position[v];
                sum[c].1 += 1;
            }
        }
    }
    sum.into_iter().map(|(s, k)| if k == 0 { 0.0 } else { s / k as f64 }).collect()
}

/// Pushes x right, as little as it must, until on every layer each vertex is clear of the one
/// before it and of every cluster box it is not in, and each box holds its own vertices: a
/// cluster's left and right edges are unknowns shared by all the layers it crosses, each layer's
/// order says what lies left of what, and the unknowns are set in that graph's topological order
/// (Kahn), each to the largest of where the sweeps put it and what its left neighbours demand.
/// Sibling clusters stand in one order on every layer, so the graph has no cycle; were one there
/// (a bug, not input), the vertices on it would keep the sweeps' places.
fn separate_clusters(clusters: usize, rows: &[Vec<usize>], chains: &[Vec<usize>], size: &[(f64, f64)], x: &mut [f64]) {
    if clusters == 0 {
        return;
    }
    let vertices = x.len();
    let (left, right) = (|c: usize| vertices + 2 * c, |c: usize| vertices + 2 * c + 1);
    let unknowns = vertices + 2 * clusters;
    // (to, least distance from `from`): x[to] >= x[from] + distance.
    let mut after: Vec<Vec<(usize, f64)>> = vec![Vec::new(); unknowns];
    let gap = |v: usize| if size[v].0 == 0.0 { NODE_GAP / 2.0 } else { NODE_GAP };
    for row in rows {
        // What the next item is placed after: a vertex (its half width then a gap), a cluster's
        // left edge (padding), or a closed cluster's right edge (a gap).
        let mut before: Option<(usize, f64)> = None;
        let mut open: &[usize] = &[];
        for &v in row.iter().chain(std::iter::once(&usize::MAX)) {
            let chain: &[usize] = if v == usize::MAX { &[] } else { &chains[v] };
            let shared = open.iter().zip(chain).take_while(|(a, b)| a == b).count();
            for &c in open[shared..].iter().rev() {
                // `d` is the previous item's right edge plus a gap: the box's edge is a padding
                // past that edge instead.
                if let Some((from, d)) = before {
                    after[from].push((right(c), d - NODE_GAP + CLUSTER_PAD));
                }
                before = Some((right(c), NODE_GAP));
            }
            if v == usize::MAX {
                break;
            }
            for &c in &chain[shared..] {
                if let Some((from, d)) = before {
                    after[from].push((left(c), d));
                }
                before = Some((left(c), CLUSTER_PAD));
            }
            let half = size[v].0 / 2.0;
            if let Some((from, d)) = before {
                let d = if from < vertices { d - NODE_GAP + gap(v) } else { d };
                after[from].push((v, d + half));
            }
            before = Some((v, half + NODE_GAP));
            open = chain;
        }
    }
    let mut indegree = vec![0usize; unknowns];
    for list in &after {
        for &(to, _) in list {
            indegree[to] += 1;
        }
    }
    let mut value: Vec<f64> = (0..unknowns).map(|u| if u < vertices { x[u] } else { f64::NEG_INFINITY }).collect();
    let mut ready: Vec<usize> = (0..unknowns).filter(|&u| indegree[u] == 0).collect();
    let mut done = vec![false; unknowns];
    while let Some(u) = ready.pop() {
        done[u] = true;
        for &(to, d) in &after[u] {
            value[to] = value[to].max(value[u] + d);
            indegree[to] -= 1;
            if indegree[to] == 0 {
                ready.push(to);
            }
        }
    }
    for v in 0..vertices {
        if done[v] {
            x[v] = value[v];
        }
    }
}

/// The edges with every edge that closes a cycle reversed (iterative DFS, so a long chain cannot
/// overflow the stack).
fn break_cycles(n: usize, edges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out_edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (k, &(a, b)) in edges.iter().enumerate() {
        out_edges[a].push((b, k));
    }
    // 0 unvisited, 1 on stack, 2 done.
    let mut state = vec![0u8; n];
    let mut reversed = vec![false; edges.len()];
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&(w, k)) = out_edges[v].get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => reversed[k] = true,
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    edges.iter().zip(&reversed).map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) }).collect()
}

/// Longest-path layers of an acyclic edge list (Kahn's order).
fn layers(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut indegree = vec![0usize; n];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        out[a].push(b);
        indegree[b] += 1;
    }
    let mut layer = vec![0usize; n];
    let mut queue: Vec<usize> = (0..n).filter(|&v| indegree[v] == 0).collect();
    while let Some(v) = queue.pop() {
        for &w in &out[v] {
            layer[w] = layer[w].max(layer[v] + 1);
            indegree[w] -= 1;
            if indegree[w] == 0 {
                queue.push(w);
            }
        }
    }
    layer
}

/// Sorts a layer by barycentre, each cluster's vertices together at the cluster's key.
fn sort_row(row: &mut [usize], bary: &[f64], chains: &[Vec<usize>], cluster_key: &[f64]) {
    // A path from the outermost cluster down to the vertex, each step its key and an id that
    // breaks ties (clusters after every vertex id): compared lexicographically, a total order.
    let key = |i: usize, v: usize| -> Vec<(f64, usize)> {
        let mut k: Vec<(f64, usize)> = chains[v].iter().map(|&c| (cluster_key[c], usize::MAX - c)).collect();
        k.push((bary[i], v));
        k
    };
    let mut keyed: Vec<(Vec<(f64, usize)>, usize)> = row.iter().enumerate().map(|(i, &v)| (key(i, v), v)).collect();
    keyed.sort_by(|a, b| {
        for (x, y) in a.0.iter().zip(&b.0) {
            let o = x.0.total_cmp(&y.0).then(x.1.cmp(&y.1));
            if o.is_ne() {
                return o;
            }
        }
        a.0.len().cmp(&b.0.len())
    });
    for (slot, (_, v)) in row.iter_mut().zip(keyed) {
        *slot = v;
    }
}

/// Places a layer's vertices in order, each as near its wanted centre as the ones before allow, then
/// the whole row shifted so its mean offset from the wanted centres is zero. Without `want`, packed
/// from zero.
fn pack(row: &[usize], size: &[(f64, f64)], x: &mut [f64], want: Option<&[f64]>) {
    let mut right = f64::NEG_INFINITY;
    let mut offset = 0.0;
    for (i, &v) in row.iter().enumerate() {
        let w = size[v].0;
        let gap = if w == 0.0 { NODE_GAP / 2.0 } else { NODE_GAP };
        let wanted = want.map_or(if right.is_finite() { right + w / 2.0 } else { w / 2.0 }, |ws| ws[i]);
        let min = if right.is_finite() { right + gap + w / 2.0 } else { f64::NEG_INFINITY };
        x[v] = wanted.max(min);
        right = x[v] + w / 2.0;
        offset += x[v] - wanted;
    }
    if want.is_some() && !row.is_empty() {
        let shift = offset / row.len() as f64;
        for &v in row {
            x[v] -= shift;
        }
    }
}

/// Each cluster's box: around its nodes and nested clusters, padded; inner clusters first.
fn cluster_boxes(graph: &Graph, nodes: &[Rect]) -> Vec<Rect> {
    let k = graph.clusters.len();
    let mut bounds: Vec<Option<(f64, f64, f64, f64)>> = vec![None; k];
    let grow = |b: &mut Option<(f64, f64, f64, f64)>, r: (f64, f64, f64, f64)| {
        *b = Some(match *b {
            None => r,
            Some(o) => (o.0.min(r.0), o.1.min(r.1), o.2.max(r.2), o.3.max(r.3)),
        });
    };
    for (v, node) in graph.nodes.iter().enumerate() {
        if let Some(c) = node.cluster {
            let r = nodes[v];
            grow(&mut bounds[c], (r.x, r.y, r.x + r.w, r.y + r.h));
        }
    }
    // Children have larger ids than their parents (a cluster is created before its nested ones).
    for c in (0..k).rev() {
        if let (Some(p), Some(b)) = (graph.clusters[c].parent, bounds[c]) {
            let padded = (b.0 - CLUSTER_PAD, b.1 - CLUSTER_PAD * 2.0, b.2 + CLUSTER_PAD, b.3 + CLUSTER_PAD);
            if p < c {
                grow(&mut bounds[p], padded);
            }
        }
    }
    bounds
        .into_iter()
        .map(|b| {
            b.map_or(Rect { x: 0.0, y: 0.0, w: 0.0, h: 0.0 }, |(x0, y0, x1, y1)| Rect {
                x: x0 - CLUSTER_PAD,
                y: y0 - CLUSTER_PAD * 2.0,
                w: x1 - x0 + 2.0 * CLUSTER_PAD,
                h: y1 - y0 + CLUSTER_PAD * 3.0,
            })
        })
        .collect()
}
