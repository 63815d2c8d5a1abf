//! XProf's recommendation rows: where to look next, by tip type (`faq`, `host`, `device`, `doc`). Kept
//! as data (the tool a tip names, its text, the document it links) so the page can link the tool, and
//! [`Tip::xprof_link`] writes the row's link cell as XProf does.

use serde::{Deserialize, Serialize};

/// One recommendation row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tip {
    /// XProf's tip type: `faq`, `host`, `device` or `doc`.
    pub tip_type: String,
    /// The XProf tool the tip names (`trace_viewer`, `input_pipeline_analyzer`, ...), if any.
    pub tool: Option<String>,
    /// What to look at (after the tool's name), or the link's text.
    pub text: String,
    /// The document a `doc` tip links.
    pub url: Option<String>,
    /// XProf's row description (the tip's heading).
    pub description: String,
}

impl Tip {
    /// XProf's link cell: `tool (text)`, an HTML anchor for a document, else the text.
    pub fn xprof_link(&self) -> String {
        match (&self.tool, &self.url) {
            (Some(tool), _) => format!("{tool} ({})", self.text),
            (None, Some(url)) => format!("<a href=\"{url}\" target=\"_blank\">{}</a>", self.text),
            (None, None) => self.text.clone(),
        }
    }
}

/// The rows for `hardware_type` (XProf's name: `CPU_ONLY`, `GPU`, `TPU`), in XProf's order.
pub fn tips(hardware_type: &str) -> Vec<Tip> {
    // XProf points TPU users at op_profile and names their timelines "TPU core".
    let (op_tool, timeline) = if hardware_type == "TPU" { ("op_profile", "TPU core") } else { ("framework_op_stats", hardware_type) };
    let host_time = "Next steps for reducing the Host time";
    let device_time = "Next steps for reducing the Device time";
    let docs = "Other useful resources";
    let tip = |tip_type: &str, tool: Option<&str>, text: String, url: Option<&str>, description: &str| Tip {
        tip_type: tip_type.into(),
        tool: tool.map(str::to_string),
        text,
        url: url.map(str::to_string),
        description: description.into(),
    };
    vec![
        tip("faq", None, "Refer to the TF2 Profiler FAQ".into(), None, "Tool troubleshooting / FAQ"),
        tip(
            "host",
            Some("input_pipeline_analyzer"),
            "especially Section 3 for the breakdown of input operations on the Host".into(),
            None,
            host_time,
        ),
        tip(
            "host",
            Some("trace_viewer"),
            "look at the activities on the timeline of each Host Thread near the bottom of the trace view".into(),
            None,
            host_time,
        ),
        tip("device", Some(op_tool), format!("identify the time-consuming operations executed on the {hardware_type}"), None, device_time),
        tip(
            "device",
            Some("trace_viewer"),
            format!("look at the activities on the timeline of each {timeline} in the trace view"),
            None,
            device_time,
        ),
        tip(
            "doc",
            None,
            "Analyze tf.data performance with the TF Profiler".into(),
            Some("https://www.tensorflow.org/guide/data_performance_analysis"),
            docs,
        ),
        tip("doc", None, "Better performance with the tf.data API".into(), Some("https://www.tensorflow.org/guide/data_performance"), docs),
    ]
}
