//! The Op Profile page's row logic and colours, run natively: which nodes are rows (XProf's ops limit,
//! "top 90%" and "left out" counts, the search showing matches with their ancestors) and XProf's
//! utilisation colours. Both modules live under `src/ui` (compiled only for wasm) but use no web API,
//! so they are included here by path.

#[path = "../src/ui/views/op_profile/colors.rs"]
mod colors;
#[path = "../src/ui/views/op_profile/rows.rs"]
mod rows;

use rows::{initial_expanded, lines, Line, Options, Shape};
use std::collections::HashSet;

/// root(0) → program(1) → category(2) → ops 3..=6 (50, 30, 15, 5 ps); root → program(7) with twelve
/// ops 8..=19 (1 ps each).
struct Tree {
    raw_time_ps: Vec<u64>,
    num_children: Vec<u32>,
    children: Vec<Vec<u32>>,
}

fn tree() -> Tree {
    let mut children = vec![vec![1, 7], vec![2], vec![3, 4, 5, 6], vec![], vec![], vec![], vec![], (8..20).collect()];
    children.resize(20, vec![]);
    let mut raw_time_ps = vec![112, 100, 100, 50, 30, 15, 5, 12];
    raw_time_ps.resize(20, 1);
    let num_children = children.iter().map(|c| c.len() as u32).collect();
    Tree { raw_time_ps, num_children, children }
}

fn shape(t: &Tree) -> Shape<'_> {
    Shape { raw_time_ps: &t.raw_time_ps, num_children: &t.num_children, children: &t.children }
}

fn opts<'a>(expanded: &'a HashSet<u32>, limit: usize, top90: bool, matches: Option<&'a [bool]>) -> Options<'a> {
    Options { limit, top90, expanded, matches, show_root: false }
}

fn nodes(ls: &[Line]) -> Vec<u32> {
    ls.iter().filter_map(|l| if let Line::Node { node, .. } = l { Some(*node) } else { None }).collect()
}

fn left_out(ls: &[Line]) -> Vec<u32> {
    ls.iter().filter_map(|l| if let Line::LeftOut { count, .. } = l { Some(*count) } else { None }).collect()
}

#[test]
fn the_first_view_opens_the_path_to_the_longest_op() {
    let t = tree();
    let expanded = initial_expanded(&shape(&t));
    assert_eq!(expanded, HashSet::from([1, 2]));
    let ls = lines(&shape(&t), &opts(&expanded, 10, false, None));
    assert_eq!(nodes(&ls), [1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(ls[0], Line::Node { node: 1, depth: 0, has_children: true, expanded: true });
    assert_eq!(ls[2], Line::Node { node: 3, depth: 2, has_children: false, expanded: false });
}

#[test]
fn the_ops_limit_leaves_children_out_and_says_how_many() {
    let t = tree();
    let expanded = HashSet::from([7]);
    let ls = lines(&shape(&t), &opts(&expanded, 10, false, None));
    assert_eq!(nodes(&ls), [1, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]);
    assert_eq!(left_out(&ls), [2]);
    assert_eq!(*ls.last().unwrap(), Line::LeftOut { depth: 1, count: 2 });
    let ls = lines(&shape(&t), &opts(&expanded, 20, false, None));
    assert_eq!(nodes(&ls).len(), 14);
    assert!(left_out(&ls).is_empty());
}

#[test]
fn top_90_percent_stops_once_the_shown_children_reach_90_percent() {
    let t = tree();
    let expanded = HashSet::from([1, 2]);
    // 50 + 30 = 80 < 90, 50 + 30 + 15 = 95 ≥ 90: three ops, one left out (XProf's count).
    let ls = lines(&shape(&t), &opts(&expanded, 10, true, None));
    assert_eq!(nodes(&ls), [1, 2, 3, 4, 5, 7]);
    assert_eq!(left_out(&ls), [1]);
    // The twelve 1 ps ops never reach 90 % within the limit: the limit decides.
    let expanded = HashSet::from([7]);
    let ls = lines(&shape(&t), &opts(&expanded, 10, true, None));
    assert_eq!(nodes(&ls).len(), 12);
}

#[test]
fn a_search_shows_the_matches_and_their_ancestors_whatever_the_limit() {
    let t = tree();
    let mut matches = vec![false; 20];
    matches[5] = true;
    matches[19] = true;
    let none = HashSet::new();
    let ls = lines(&shape(&t), &opts(&none, 10, false, Some(&matches)));
    assert_eq!(nodes(&ls), [1, 2, 5, 7, 19]);
    assert_eq!(ls[1], Line::Node { node: 2, depth: 1, has_children: true, expanded: true });
    assert!(left_out(&ls).is_empty());
    let nothing = vec![false; 20];
    assert!(lines(&shape(&t), &opts(&none, 10, false, Some(&nothing))).is_empty());
}

#[test]
fn a_tree_that_is_one_op_shows_its_root() {
    let t = Tree { raw_time_ps: vec![7], num_children: vec![0], children: vec![vec![]] };
    let none = HashSet::new();
    let ls = lines(&shape(&t), &Options { limit: 10, top90: false, expanded: &none, matches: None, show_root: true });
    assert_eq!(ls, [Line::Node { node: 0, depth: 0, has_children: false, expanded: true }]);
}

#[test]
fn utilisation_colours_are_xprofs() {
    use colors::{bandwidth_color, flops_color};
    // flameColor(f, 0.7, 1, sqrt): red at 0, yellow at 1/4, green at 1; grey where there is no figure.
    assert_eq!(flops_color(Some(0.0)), "rgba(179,0,0,1)");
    assert_eq!(flops_color(Some(0.25)), "rgba(179,179,0,1)");
    assert_eq!(flops_color(Some(1.0)), "rgba(0,179,0,1)");
    assert_eq!(flops_color(Some(3.0)), "rgba(0,179,0,1)", "capped at 1 as flopsColor");
    assert_eq!(flops_color(None), "rgba(179,179,179,1)");
    // bwColor: the other way round.
    assert_eq!(bandwidth_color(Some(1.0)), "rgba(179,0,0,1)");
    assert_eq!(bandwidth_color(Some(0.0)), "rgba(0,179,0,1)");
    assert_eq!(bandwidth_color(None), "rgba(179,179,179,1)");
}
