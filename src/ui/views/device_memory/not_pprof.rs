//! A selected file that is not a device memory profile: what this tool reads, and where to go.

use super::*;

/// A selected file that is not a device memory profile: say what this tool reads, and where to go.
#[component]
pub(super) fn NotPprof(details: FileDetails) -> impl IntoView {
    let state = expect_context::<AppState>();
    let (what, instead, tool) = match details.format {
        Format::XSpace => (
            "an XProf trace (xplane.pb)",
            "The Memory Profile tab reads its allocator events; the Memory Viewer reads the HLO modules it embeds.",
            Tool::MemoryProfile,
        ),
        Format::HloProto => ("an XLA HloProto dump", "The Memory Viewer tab reads its buffer assignment.", Tool::MemoryViewer),
        Format::Pprof => ("a pprof profile", "", Tool::DeviceMemory),
        Format::Kineto => ("a PyTorch profiler trace", "The PyTorch Profiler's Memory tab shows its allocations.", Tool::TorchMemory),
        Format::TorchSnapshot => (
            "a PyTorch CUDA memory snapshot",
            "The CUDA memory snapshot tab draws its timeline, segments and leak suspects.",
            Tool::TorchSnapshot,
        ),
    };
    let others = profiles(state).0;
    view! {
        <section class="pending" data-testid="dm-not-pprof">
            <h2>"Device memory"</h2>
            <p>{format!("{} is {what}. ", details.name)}"This tool reads JAX device memory profiles: the " <code>"*.prof"</code> " files that " <code>"jax.profiler.save_device_memory_profile"</code> " writes."</p>
            <p>{instead} " " <button class="btn" on:click=move |_| state.tool.set(tool)>{format!("Open {}", tool.title())}</button></p>
            {(!others.is_empty()).then(|| view! {
                <p class="muted">"Loaded profiles: "
                    {others.into_iter().map(|(n, _)| { let n2 = n.clone(); view! { <button class="btn link" on:click=move |_| state.selected.set(Some(n2.clone()))>{n}</button> } }).collect_view()}
                </p>
            })}
        </section>
    }
}
