//! Tabs whose tool is not in this build yet: say what the selected file holds for that tool, so the
//! user knows whether the file is the right input.

use crate::decode::Format;
use crate::engine::FileOverview;
use crate::ui::state::Tool;
use leptos::prelude::*;

#[component]
pub fn ToolPending(tool: Tool, overview: FileOverview) -> impl IntoView {
    let o = overview;
    let (fits, what) = match tool {
        Tool::MemoryProfile => {
            let n: u64 = o.allocators.iter().map(|a| a.allocations + a.deallocations).sum();
            (n > 0, format!("{} allocator event(s) across {} memory ID(s)", n, o.allocators.len()))
        }
        Tool::MemoryViewer => {
            let n = o.hlo_modules.iter().filter(|m| m.has_buffer_assignment).count();
            (n > 0, format!("{n} HLO module(s) with buffer assignment"))
        }
        Tool::DeviceMemory => (o.format == Format::Pprof, format!("{} pprof sample(s)", o.pprof.as_ref().map_or(0, |p| p.sample_count))),
        Tool::Overview => (true, String::new()),
    };
    view! {
        <section class="pending" data-testid="tool-pending" data-tool=tool.slug()>
            <h2>{tool.title()}</h2>
            <p>{format!("{}: {what}.", o.name)}</p>
            <p class="muted">
                {if fits { "This file is an input for this tool. " } else { "This file holds nothing for this tool. " }}
                "The " {tool.title()} " view is not part of this build yet; the Overview tab shows what was decoded, and the CLI prints the same."
            </p>
        </section>
    }
}
