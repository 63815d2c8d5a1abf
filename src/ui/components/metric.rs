//! Figures on screen. Each carries `data-metric` (its name) and `data-value` (the exact raw value), so
//! tests — ours and anyone's — read numbers without scraping formatted text.

use crate::ui::state::AppState;
use crate::units::count as fmt_count;
use leptos::prelude::*;

/// The one markup of every figure: a span with `data-metric`, the raw `data-value`, `data-key` when
/// there are several, and the optional class, sign (for the stylesheet) and tooltip.
fn figure(
    metric: &'static str,
    value: String,
    key: Option<String>,
    class: Option<&'static str>,
    sign: Option<&'static str>,
    title: Option<String>,
    shown: impl IntoView + 'static,
) -> impl IntoView {
    view! { <span class=class data-sign=sign data-metric=metric data-value=value data-key=key title=title>{shown}</span> }
}

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
    let title = format!("{} bytes", fmt_count(value.unsigned_abs()));
    figure(metric, value.to_string(), key, Some("num"), None, Some(title), move || state.unit.get().format(value))
}

/// A duration, shown in the page's chosen time unit; the exact microseconds are in `data-value`.
#[component]
pub fn Duration(metric: &'static str, value_us: f64, #[prop(optional, into)] key: Option<String>) -> impl IntoView {
    let state = expect_context::<AppState>();
    figure(metric, value_us.to_string(), key, Some("num"), None, Some(format!("{value_us} µs")), move || {
        state.time_unit.get().format(value_us)
    })
}

/// A fraction shown as a percentage (`12.34 %`); the fraction itself is in `data-value`.
#[component]
pub fn Percent(metric: &'static str, value: f64, #[prop(optional, into)] key: Option<String>) -> impl IntoView {
    figure(metric, value.to_string(), key, Some("num"), None, None, format!("{:.2} %", value * 100.0))
}

/// A count, with thousands separators.
#[component]
pub fn Count(metric: &'static str, value: u64, #[prop(optional, into)] key: Option<String>) -> impl IntoView {
    figure(metric, value.to_string(), key, Some("num"), None, None, fmt_count(value))
}

/// A text figure (a format, a host name, a yes/no).
#[component]
pub fn Text(
    metric: &'static str,
    #[prop(into)] value: String,
    #[prop(optional, into)] key: Option<String>,
    /// What to show, when it differs from the raw value.
    #[prop(optional, into)]
    shown: Option<String>,
) -> impl IntoView {
    let shown = shown.unwrap_or_else(|| value.clone());
    figure(metric, value, key, None, None, None, shown)
}

/// A byte change (a diff, a growth): `+` on growth, and `data-sign` (`grow`, `shrink`, `zero`) so the
/// stylesheet colours growth red and shrinkage green.
#[component]
pub fn SignedBytes(metric: &'static str, value: i64, #[prop(optional, into)] key: Option<String>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let sign = sign(value as f64);
    let title = format!("{} bytes", crate::units::signed_count(value, true));
    figure(metric, value.to_string(), key, Some("num signed"), Some(sign), Some(title), move || {
        format!("{}{}", if value > 0 { "+" } else { "" }, state.unit.get().format(value))
    })
}

/// `grow`, `shrink` or `zero`: the stylesheet's colour of a change (red growth, green shrinkage; a
/// zero change has none, so its bar does not show).
pub fn sign(value: f64) -> &'static str {
    if value > 0.0 {
        "grow"
    } else if value < 0.0 {
        "shrink"
    } else {
        "zero"
    }
}

/// A time change (a run against its baseline), in the page's time unit: `+` when slower, and
/// `data-sign` as [`SignedBytes`] has it (slower red, faster green).
#[component]
pub fn SignedDuration(metric: &'static str, value_us: f64, #[prop(optional, into)] key: Option<String>) -> impl IntoView {
    let state = expect_context::<AppState>();
    figure(metric, value_us.to_string(), key, Some("num signed"), Some(sign(value_us)), Some(format!("{value_us} µs")), move || {
        format!("{}{}", if value_us > 0.0 { "+" } else { "" }, state.time_unit.get().format(value_us))
    })
}

/// A relative change, `ratio` − 1 as a signed percentage (`+12.3 %`), coloured as [`SignedDuration`];
/// `data-value` is the ratio. Without a ratio (nothing to compare with): `new` where there is a
/// figure now, else `–`.
#[component]
pub fn SignedRatio(metric: &'static str, ratio: Option<f64>, now: f64, #[prop(optional, into)] key: Option<String>) -> impl IntoView {
    let (value, sign, shown) = match ratio {
        Some(r) => (r.to_string(), sign(r - 1.0), format!("{:+.1} %", (r - 1.0) * 100.0)),
        None if now != 0.0 => (String::new(), "grow", "new".to_string()),
        None => (String::new(), "zero", "–".to_string()),
    };
    figure(metric, value, key, Some("num signed"), Some(sign), None, shown)
}

/// A byte figure its source gives in a larger unit (the PyTorch Profiler's KB and MB, which are 1024
/// and 1024² bytes), shown in the page's byte unit; `data-value` is the source's figure as written.
#[component]
pub fn BytesIn(
    metric: &'static str,
    value: f64,
    /// Bytes in one unit of `value`.
    unit_bytes: f64,
    #[prop(optional, into)] key: Option<String>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let bytes = (value * unit_bytes).round() as i64;
    let title = format!("{} bytes", fmt_count(bytes.unsigned_abs()));
    figure(metric, value.to_string(), key, Some("num"), None, Some(title), move || state.unit.get().format(bytes))
}
