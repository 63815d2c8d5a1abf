//! The view in the URL hash ([`HashView`]), parsed and written: what a reload, a shared link or a
//! bundle restores. Apart from the live state because it is plain data with its own grammar, which
//! the page applies to the state and derives from it in one place ([`crate::ui`]).

use super::{GraphShade, StepPick, Tool};

/// The view encoded in the URL hash:
/// `#tool=memory-viewer&file=<name>[&module=<name>][&space=<n>][&memory-id=<id>][&row=<n>]`
/// `[&window=<start_ps>_<end_ps>][&range=<from_ps>_<to_ps>][&step=<group id>&step-span=<begin_ps>_<end_ps>]`
/// `[&op=<name>][&search=<text>][&event=<n>][&device=<n>][&at=<n>][&hosts=all][&baseline=<run folder>][&ops=step][&node=<name>][&width=<n>][&group=input-shape][&demo]` (`hosts=all`: the host selector's
/// "all hosts", the run being the selected file's; `ops=step`: the op tables limited to the selected step;
/// `device`, `at`: a CUDA memory snapshot's device and chosen event).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HashView {
    pub tool: Option<Tool>,
    pub file: Option<String>,
    pub demo: bool,
    pub module: Option<String>,
    pub memory_space: Option<i64>,
    pub memory_id: Option<String>,
    pub row: Option<usize>,
    pub trace_window: Option<(i64, i64)>,
    pub trace_range: Option<(i64, i64)>,
    pub step: Option<StepPick>,
    pub highlight_op: Option<String>,
    pub trace_search: Option<String>,
    pub all_hosts: bool,
    pub trace_event: Option<u32>,
    pub baseline_run: Option<String>,
    pub step_ops: bool,
    /// The Graph tool's centre, width and colouring.
    pub graph_node: Option<String>,
    pub graph_width: Option<u32>,
    pub graph_shade: Option<GraphShade>,
    /// A CUDA memory snapshot's device and the event whose allocator state is shown.
    pub snapshot_device: Option<usize>,
    pub snapshot_event: Option<i64>,
    /// The PyTorch Operator view grouped by operator and input shape (`group=input-shape`).
    pub torch_ops_by_shape: bool,
}

/// `<a>_<b>`, two times in ps, `a < b`.
fn parse_span(s: &str) -> Option<(i64, i64)> {
    let (a, b) = s.split_once('_')?;
    let (a, b) = (a.parse().ok()?, b.parse().ok()?);
    (a < b).then_some((a, b))
}

impl HashView {
    pub fn parse(hash: &str) -> Self {
        let mut v = HashView::default();
        let (mut step, mut step_span) = (None, None);
        for part in hash.trim_start_matches('#').split('&').filter(|p| !p.is_empty()) {
            let (k, val) = part.split_once('=').unwrap_or((part, ""));
            let val = js_sys::decode_uri_component(val).ok().and_then(|s| s.as_string()).unwrap_or_default();
            match k {
                "tool" => v.tool = Tool::from_slug(&val),
                "file" if !val.is_empty() => v.file = Some(val),
                "demo" => v.demo = true,
                "module" if !val.is_empty() => v.module = Some(val),
                "space" => v.memory_space = val.parse().ok(),
                "memory-id" if !val.is_empty() => v.memory_id = Some(val),
                "row" => v.row = val.parse().ok(),
                "window" => v.trace_window = parse_span(&val),
                "range" => v.trace_range = parse_span(&val),
                "step" => step = val.parse::<i64>().ok(),
                "step-span" => step_span = parse_span(&val),
                "op" if !val.is_empty() => v.highlight_op = Some(val),
                "search" if !val.is_empty() => v.trace_search = Some(val),
                "hosts" => v.all_hosts = val == "all",
                "event" => v.trace_event = val.parse().ok(),
                "baseline" => v.baseline_run = Some(val),
                "ops" => v.step_ops = val == "step",
                "node" if !val.is_empty() => v.graph_node = Some(val),
                "width" => v.graph_width = val.parse().ok(),
                "color" => v.graph_shade = GraphShade::from_slug(&val),
                "device" => v.snapshot_device = val.parse().ok(),
                "at" => v.snapshot_event = val.parse().ok(),
                "group" => v.torch_ops_by_shape = val == "input-shape",
                _ => {}
            }
        }
        v.step = step.zip(step_span).map(|(group_id, (begin_ps, end_ps))| StepPick { group_id, begin_ps, end_ps });
        v
    }

    pub fn to_hash(&self) -> String {
        let mut parts = Vec::new();
        if self.demo {
            parts.push("demo".to_string());
        }
        if let Some(t) = self.tool {
            parts.push(format!("tool={}", t.slug()));
        }
        if let Some(f) = &self.file {
            parts.push(format!("file={}", String::from(js_sys::encode_uri_component(f))));
        }
        if let Some(m) = &self.module {
            parts.push(format!("module={}", String::from(js_sys::encode_uri_component(m))));
        }
        if let Some(n) = self.memory_space {
            parts.push(format!("space={n}"));
        }
        if let Some(m) = &self.memory_id {
            parts.push(format!("memory-id={}", String::from(js_sys::encode_uri_component(m))));
        }
        if let Some(r) = self.row {
            parts.push(format!("row={r}"));
        }
        if let Some((a, b)) = self.trace_window {
            parts.push(format!("window={a}_{b}"));
        }
        if let Some((a, b)) = self.trace_range {
            parts.push(format!("range={a}_{b}"));
        }
        if let Some(s) = self.step {
            parts.push(format!("step={}&step-span={}_{}", s.group_id, s.begin_ps, s.end_ps));
        }
        if let Some(op) = &self.highlight_op {
            parts.push(format!("op={}", String::from(js_sys::encode_uri_component(op))));
        }
        if let Some(q) = &self.trace_search {
            parts.push(format!("search={}", String::from(js_sys::encode_uri_component(q))));
        }
        if self.all_hosts {
            parts.push("hosts=all".to_string());
        }
        if let Some(e) = self.trace_event {
            parts.push(format!("event={e}"));
        }
        if let Some(b) = &self.baseline_run {
            parts.push(format!("baseline={}", String::from(js_sys::encode_uri_component(b))));
        }
        if self.step_ops {
            parts.push("ops=step".to_string());
        }
        if let Some(n) = &self.graph_node {
            parts.push(format!("node={}", String::from(js_sys::encode_uri_component(n))));
        }
        if let Some(w) = self.graph_width {
            parts.push(format!("width={w}"));
        }
        if let Some(s) = self.graph_shade {
            parts.push(format!("color={}", s.slug()));
        }
        if let Some(d) = self.snapshot_device {
            parts.push(format!("device={d}"));
        }
        if let Some(e) = self.snapshot_event {
            parts.push(format!("at={e}"));
        }
        if self.torch_ops_by_shape {
            parts.push("group=input-shape".to_string());
        }
        format!("#{}", parts.join("&"))
    }
}
