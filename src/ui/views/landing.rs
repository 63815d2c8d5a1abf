//! What a first-time visitor sees: where to drop files, what Tidemark reads, and the privacy promise.

use crate::ui::drop;
use crate::ui::state::AppState;
use leptos::prelude::*;

#[component]
pub fn Landing() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <section class="landing" data-testid="landing">
            <div class="dropzone">
                <h1>"Drop profiles here"</h1>
                <p>"One file, many files, or a whole run folder (one " <code>"*.xplane.pb"</code> " per host, or " <code>"memory1.prof … memory9.prof"</code> ")."</p>
                <p class="actions">
                    <button class="btn primary" on:click=move |_| { state.demo.set(true); drop::open_demo(state); }>"Open demo"</button>
                </p>
                <table class="formats">
                    <tr><td><code>"*.xplane.pb[.gz]"</code></td><td>"XProf / TensorBoard traces (JAX, TensorFlow): memory events, HLO modules"</td></tr>
                    <tr><td><code>"*.hlo.pb, *.hlo_proto.pb"</code></td><td>"XLA HloProto dumps with buffer assignment"</td></tr>
                    <tr><td><code>"*.prof"</code></td><td>"JAX device memory profiles (" <code>"save_device_memory_profile"</code> ")"</td></tr>
                </table>
                <p class="privacy">"Files are decoded by WebAssembly in this page. Nothing is uploaded anywhere."</p>
            </div>
        </section>
    }
}
