//! The banner over every tool of a trace cut short: one calm line saying where the cut is and that
//! what the tools show is what lies before it. The sentence is the engine's
//! ([`FileDetails::truncation_message`]), the same the command line prints.

use crate::engine::FileDetails;
use crate::ui::state::Shown;
use leptos::prelude::*;

/// The banner of the shown file, if it is a trace cut short; the byte offset of the cut (in the
/// inflated trace, for a gzipped one) is in `data-value` of `data-metric="truncated_at"`, and that
/// of a gzipped file's cut in its compressed bytes in `data-metric="gzip_cut_at"`.
pub fn truncated_banner(shown: &Shown) -> Option<impl IntoView> {
    let Shown::Ready { details, .. } = shown else { return None };
    banner(details)
}

fn banner(details: &FileDetails) -> Option<impl IntoView> {
    let message = details.truncation_message()?;
    let cut = details.gzip_cut;
    let truncated_at = details.truncation.as_ref().map(|t| t.truncated_at).or(cut.map(|c| c.inflated_bytes))?.to_string();
    let gzip_cut_at = cut.map(|c| view! { <span hidden data-metric="gzip_cut_at" data-value=c.compressed_len.to_string()></span> });
    Some(view! {
        <div class="banner warn" role="status" data-testid="truncated-banner" data-metric="truncated_at" data-value=truncated_at>
            <span class="message">{message}</span>
            {gzip_cut_at}
        </div>
    })
}
