//! The graph as Graphviz DOT, shaped as XLA's `HloDotDumper` writes it for XProf (`format=dot`):
//! node statements inside `subgraph cluster_N { ... }  // cluster_N` blocks, then every edge, each
//! with the tooltip `from -> to` naming its ends. Ids are ours (`n<index>`, `root`), labels carry the
//! same lines; XLA's per-edge hover stylesheet and metadata tooltips are left out.

use super::{ColorScheme, EdgeKind, Graph, NodeKind};
use std::fmt::Write;

/// `<`, `>` and `"` escaped for a Graphviz HTML-like label (XLA's `HtmlLikeStringSanitize`).
fn html(s: &str) -> String {
    s.replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// XLA's `NodeColorsForScheme`: style, font colour, stroke colour, fill colour.
pub fn colors(scheme: ColorScheme) -> (&'static str, &'static str, &'static str, &'static str) {
    match scheme {
        ColorScheme::Blue => ("filled", "black", "#8aacc8", "#bbdefb"),
        ColorScheme::Brown => ("filled", "black", "#8c7b75", "#bcaaa4"),
        ColorScheme::DarkBlue => ("filled", "white", "#003c8f", "#1565c0"),
        ColorScheme::DarkGreen => ("filled", "white", "#005005", "#2e7d32"),
        ColorScheme::DarkOrange => ("filled", "black", "#c88719", "#ffb74d"),
        ColorScheme::DarkRed => ("filled", "white", "#7f0000", "#b71c1c"),
        ColorScheme::Gray => ("filled", "black", "#9ea7aa", "#cfd8dc"),
        ColorScheme::Green => ("filled", "black", "#97b498", "#c8e6c9"),
        ColorScheme::Orange => ("filled", "black", "#cbae82", "#ffe0b2"),
        ColorScheme::Purple => ("filled", "black", "#af8eb5", "#e1bee7"),
        ColorScheme::Red => ("filled", "black", "#cb9ca1", "#ffcdd2"),
        ColorScheme::White => ("filled", "black", "black", "white"),
        ColorScheme::Yellow => ("filled", "black", "#cbc693", "#fff9c4"),
        ColorScheme::DashedBorder => ("filled,dashed", "#757575", "#757575", "white"),
    }
}

/// The graph as DOT text.
pub fn to_dot(graph: &Graph) -> String {
    let mut out = String::from("digraph G {\nrankdir = TB;\ncompound = true;\n");
    let title: Vec<String> = graph.title.iter().map(|t| html(t)).collect();
    let _ = writeln!(out, "label = <<b>{}</b>>;\nlabelloc = t;\ntooltip = \" \";\n", title.join("<br/>"));
    write_cluster(&mut out, graph, None);
    for e in &graph.edges {
        let from = &graph.nodes[e.from];
        let to = &graph.nodes[e.to];
        let (a, b) = (node_id(graph, e.from), node_id(graph, e.to));
        let _ = match e.kind {
            EdgeKind::Root => writeln!(out, "{a} -> {b} [tooltip=\" \"];"),
            EdgeKind::Subcomputation => {
                let cluster = e.cluster.map_or(String::new(), |c| format!("cluster_{c}"));
                let computation = e.cluster.map_or("", |c| graph.clusters[c].computation.as_str());
                writeln!(out, "{a} -> {b} [ltail=\"{cluster}\", style=\"dashed\" tooltip=\"{computation} -> {}\"];", to.name)
            }
            EdgeKind::Control => writeln!(
                out,
                "{a} -> {b} [arrowhead={} tooltip=\"{} -> {}\" style=\"dotted\" color=\"gray\" label=\"ctrl\"];",
                arrowhead(e.small),
                from.name,
                to.name
            ),
            EdgeKind::Operand => {
                let head = e.operand.map_or(String::new(), |n| format!(" headlabel=\"{n}\", labeldistance=2"));
                writeln!(out, "{a} -> {b} [arrowhead={} tooltip=\"{} -> {}\"{head}];", arrowhead(e.small), from.name, to.name)
            }
        };
    }
    out.push_str("}\n");
    out
}

fn arrowhead(small: bool) -> &'static str {
    if small {
        "empty"
    } else {
        "normal"
    }
}

fn node_id(graph: &Graph, n: usize) -> String {
    if graph.nodes[n].kind == NodeKind::Root {
        "root".into()
    } else {
        format!("n{n}")
    }
}

/// The nodes and nested clusters directly inside `cluster` (`None`: the top level).
fn write_cluster(out: &mut String, graph: &Graph, cluster: Option<usize>) {
    for (c, cl) in graph.clusters.iter().enumerate().filter(|(_, cl)| cl.parent == cluster) {
        let (style, label) = if cl.fused {
            let (fill, stroke) = if cl.highlight { ("#ffcdd2", "#b71c1c") } else { ("#f5f5f5", "#c2c2c2") };
            (
                format!("style=\"rounded,filled,bold\"; fillcolor=\"{fill}\"; color=\"{stroke};\""),
                format!("Fused expression for <b>{}</b><br/>{}", html(&cl.caller), html(&cl.category)),
            )
        } else {
            (
                "style=rounded; color=black;".to_string(),
                format!("Subcomputation for <b>{}</b><br/>{}", html(&cl.caller), html(&cl.computation)),
            )
        };
        let _ = writeln!(out, "subgraph cluster_{c} {{\n{style}\nlabel = <{label}>;\nlabelloc = t;\ntooltip = \" \";");
        write_cluster(out, graph, Some(c));
        let _ = writeln!(out, "\n}}  // cluster_{c}\n");
    }
    for (n, node) in graph.nodes.iter().enumerate().filter(|(_, node)| node.cluster == cluster) {
        let (style, font, stroke, fill) = colors(node.color);
        let shape = if node.highlight {
            "diamond"
        } else if node.opcode == "while" {
            "ellipse"
        } else if node.kind == NodeKind::Root {
            "circle"
        } else {
            "rect"
        };
        let mut lines: Vec<String> = node.label.lines().map(html).collect();
        if let Some(first) = lines.first_mut() {
            *first = format!("<b>{first}</b>");
        }
        lines.extend(node.details.iter().flat_map(|d| d.lines()).map(html));
        let _ = writeln!(
            out,
            "{} [label=<{}>, shape={shape}, tooltip=\" \", style=\"{style}\", fontcolor=\"{font}\", color=\"{stroke}\", fillcolor=\"{fill}\"];",
            node_id(graph, n),
            lines.join("<br/>")
        );
    }
}
