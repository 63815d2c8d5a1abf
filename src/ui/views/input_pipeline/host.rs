//! The host side: the input time by kind (XProf's breakdown of input processing on the host), XProf's
//! recommendations, and the input op table. A trace without input ops says so, as XProf does.

use super::input_ops::InputOpTable;
use crate::analysis::input_pipeline::xprof_json::RECOMMENDATIONS;
use crate::engine::input_pipeline::InputPipelineView;
use crate::ui::components::metric::Text;
use crate::ui::components::table::TableState;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn HostSide(v: Arc<InputPipelineView>, table_state: TableState, csv_name: String) -> impl IntoView {
    if v.input_ops.names.is_empty() {
        return view! {
            <section class="ipa-section" data-testid="ipa-host">
                <h2>"Host-side input time"</h2>
                <p data-testid="ipa-no-input-ops">
                    "No input ops on the host: the trace has no tf.data, infeed or host-to-device copy events, so the host's input time cannot be broken down."
                </p>
            </section>
        }
        .into_any();
    }
    let (b, f) = (&v.input_time, &v.input_time_fraction);
    let kinds: [(&str, &str, f64, f64); 5] = [
        ("Reading data on demand", "demanded_file_read_us", b.demanded_file_read_us, f.demanded_file_read),
        ("Reading data in advance", "advanced_file_read_us", b.advanced_file_read_us, f.advanced_file_read),
        ("Preprocessing", "preprocessing_us", b.preprocessing_us, f.preprocessing),
        ("Enqueuing to the device", "enqueue_us", b.enqueue_us, f.enqueue),
        ("Other reading or processing", "unclassified_nonequeue_us", b.unclassified_non_enqueue_us, f.unclassified_non_enqueue),
    ];
    let bars = kinds
        .into_iter()
        .map(|(label, metric, us, share)| {
            view! {
                <div class="ipa-bar-row" data-kind=metric>
                    <span class="ipa-bar-label">{label}</span>
                    <span class="ipa-bar"><span style=format!("width:{:.2}%", 100.0 * share)></span></span>
                    <Text metric value=us.to_string() shown=format!("{:.3} ms", us / 1000.0) />
                    <span class="muted"><Text metric="input_time_fraction" key=metric value=share.to_string() shown=format!("{:.1} %", 100.0 * share) /></span>
                </div>
            }
        })
        .collect_view();
    let rows = Arc::new(super::input_ops::rows(&v.input_ops));
    view! {
        <section class="ipa-section" data-testid="ipa-host">
            <h2>"Host-side input time"</h2>
            <div class="ipa-bars" data-testid="ipa-host-breakdown">{bars}</div>
            <details class="ipa-tips">
                <summary>"Recommendations to reduce the host's input time (if using tf.data)"</summary>
                // XProf's fixed tips with their links; the text is the engine's own constant.
                <ul>{RECOMMENDATIONS.iter().map(|r| view! { <li inner_html=*r></li> }).collect_view()}</ul>
            </details>
            <h2>"Input op statistics"</h2>
            <InputOpTable rows state=table_state csv_name />
        </section>
    }
    .into_any()
}
