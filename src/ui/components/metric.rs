//! Figures on screen. Each carries `data-metric` (its name) and `data-value` (the exact raw value), so
//! tests — ours and anyone's — read numbers without scraping formatted text.

use crate::ui::state::AppState;
use crate::units::count as fmt_count;
use leptos::prelude::*;

/// A byte figure, shown in the page's chosen unit; the exact byte count is in `data-value` and the
/// tooltip.
#[component]
pub fn Bytes(
    /// The metric's name, e.g. `total_allocation_bytes`.
    metric: &'static str,
    value: i64,
    /// Which row the figure belongs to (a plane, a module, an allocator), when there are several.
    #[prop(optional, into)]
    key: Option<String>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <span class="num" data-metric=metric data-value=value.to_string() data-key=key title=format!("{} bytes", fmt_count(value.unsigned_abs()))>
            {move || state.unit.get().format(value)}
        </span>
    }
}

/// A count, with thousands separators.
#[component]
pub fn Count(
    metric: &'static str,
    value: u64,
    #[prop(optional, into)]
    key: Option<String>,
) -> impl IntoView {
    view! { <span class="num" data-metric=metric data-value=value.to_string() data-key=key>{fmt_count(value)}</span> }
}

/// A text figure (a format, a host name, a yes/no).
#[component]
pub fn Text(
    metric: &'static str,
    #[prop(into)]
    value: String,
    #[prop(optional, into)]
    key: Option<String>,
    /// What to show, when it differs from the raw value.
    #[prop(optional, into)]
    shown: Option<String>,
) -> impl IntoView {
    let shown = shown.unwrap_or_else(|| value.clone());
    view! { <span data-metric=metric data-value=value data-key=key>{shown}</span> }
}

/// A byte change (a diff, a growth): `+` on growth, and `data-sign` (`grow`, `shrink`, `zero`) so the
/// stylesheet colours growth red and shrinkage green.
#[component]
pub fn SignedBytes(
    metric: &'static str,
    value: i64,
    #[prop(optional, into)]
    key: Option<String>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let sign = match value.signum() {
        1 => "grow",
        -1 => "shrink",
        _ => "zero",
    };
    view! {
        <span class="num signed" data-sign=sign data-metric=metric data-value=value.to_string() data-key=key title=format!("{} bytes", crate::units::signed_count(value, true))>
            {move || format!("{}{}", if value > 0 { "+" } else { "" }, state.unit.get().format(value))}
        </span>
    }
}
