//! The first-run page, shown with no file: where to drop files, what Tidemark reads, how to record
//! each kind, the demo, and the privacy promise.

use crate::ui::drop;
use crate::ui::state::AppState;
use leptos::prelude::*;

/// Recording a JAX trace: the profiler writes `<logdir>/plugins/profile/<run>/<host>.xplane.pb`; a
/// step annotation gives the Overview its steps.
const JAX: &str = "import jax
with jax.profiler.trace(\"/tmp/tb\"):
    train(state, batches)  # each step in jax.profiler.StepTraceAnnotation(\"train\", step_num=i)";

/// Recording a TensorFlow trace (Keras marks the steps itself).
const TF: &str = "import tensorflow as tf
tf.profiler.experimental.start(\"/tmp/tb\")
model.fit(x, y, epochs=1)
tf.profiler.experimental.stop()";

/// A JAX device memory profile and an XLA dump with buffer assignment.
const MEMORY: &str = "jax.profiler.save_device_memory_profile(\"memory.prof\")
# XLA's buffer assignment, for the Memory Viewer:
XLA_FLAGS=\"--xla_dump_to=/tmp/dump --xla_dump_hlo_as_proto\" python train.py";

#[component]
pub fn Landing() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <section class="landing" data-testid="landing">
            <div class="first-run">
                <div class="dropzone">
                    <h1>"Drop profiles here"</h1>
                    <p>"One file, many files, or a whole run folder (one " <code>"*.xplane.pb"</code> " per host, or " <code>"memory1.prof … memory9.prof"</code> ")."</p>
                    <p class="actions">
                        <button class="btn primary" data-testid="landing-demo" on:click=move |_| { state.demo.set(true); drop::open_demo(state); }>"Open demo"</button>
                        <span class="muted">" a TensorFlow trace, HLO dumps and a JAX leak series"</span>
                    </p>
                    <table class="formats" data-testid="formats">
                        <tr><td><code>"*.xplane.pb[.gz]"</code></td><td>"XProf / TensorBoard traces (JAX, TensorFlow): steps, ops, kernels, memory events, HLO modules"</td></tr>
                        <tr><td><code>"*.hlo.pb, *.hlo_proto.pb"</code></td><td>"XLA HloProto dumps with buffer assignment"</td></tr>
                        <tr><td><code>"*.prof"</code></td><td>"JAX device memory profiles (" <code>"save_device_memory_profile"</code> ")"</td></tr>
                    </table>
                    <p class="privacy" data-testid="privacy">
                        "Files are decoded by WebAssembly in this page. Nothing is uploaded anywhere: no server, no analytics, nothing fetched from elsewhere; it works offline."
                    </p>
                </div>
                <div class="record" data-testid="record">
                    <h2>"Record a profile"</h2>
                    <div class="recipe" data-testid="record-jax">
                        <div class="recipe-head"><strong>"JAX"</strong><span class="muted">" — open " <code>"/tmp/tb/plugins/profile/<run>/"</code></span></div>
                        <pre><code>{JAX}</code></pre>
                    </div>
                    <div class="recipe" data-testid="record-tf">
                        <div class="recipe-head"><strong>"TensorFlow"</strong><span class="muted">" — the same folder layout"</span></div>
                        <pre><code>{TF}</code></pre>
                    </div>
                    <div class="recipe" data-testid="record-memory">
                        <div class="recipe-head"><strong>"Memory"</strong><span class="muted">" — device memory and buffer assignment"</span></div>
                        <pre><code>{MEMORY}</code></pre>
                    </div>
                    <p class="muted recipe-note" data-testid="record-pytorch">
                        <strong>"PyTorch"</strong>" — " <code>"torch.profiler"</code> " traces written by " <code>"tensorboard_trace_handler"</code>
                        " (" <code>"*.pt.trace.json"</code> ") open on the PyTorch Profiler's Overview, Operator, Kernel and Memory views; CUDA memory snapshots ("
                        <code>"snapshot.pickle"</code> ") on their timeline, allocator state, segments and leak suspects. The command line reads both ("
                        <code>"tidemark torch-overview"</code> ", " <code>"torch-snapshot"</code> "…)."
                    </p>
                </div>
            </div>
        </section>
    }
}
