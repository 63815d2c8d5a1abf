//! One profile: totals, the function table, the site table and the flame graph.

use super::stacks::*;
use super::*;

#[component]
pub(super) fn ProfileView(view: DeviceMemoryProfileView) -> impl IntoView {
    let u = ui();
    let r = view.report;
    let highlight = Signal::derive({
        let h = u.highlight.clone();
        move || h.get()
    });
    let notes = r.notes.clone();
    view! {
        <header class="summary-cards">
            <div class="card"><div class="label">"Live bytes"</div><div class="value"><Bytes metric="dm_total_bytes" value=r.total_bytes /></div></div>
            <div class="card"><div class="label">"Samples"</div><div class="value"><Count metric="dm_total_count" value=r.total_count.unsigned_abs() /></div></div>
            {r.by_kind.iter().map(|k| {
                let key = format!("{}|{}", k.kind, k.device);
                let label = if k.device.is_empty() { k.kind.clone() } else { format!("{} · {}", k.kind, k.device) };
                view! {
                    <div class="card"><div class="label">{label}</div><div class="value">
                        <Bytes metric="kind_bytes" value=k.bytes key=key.clone() />
                        <span class="muted small">" in "<Count metric="kind_count" value=k.count.unsigned_abs() key=key /></span>
                    </div></div>
                }
            }).collect_view()}
        </header>
        {(!notes.is_empty()).then(|| view! { <ul class="notes">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul> })}
        <section>
            <h2>"Live bytes by Python stack"</h2>
            <FlameGraph nodes=view.flame highlight=highlight />
        </section>
        <div class="dm-tables">
            <section>
                <h2>"Functions"</h2>
                <FunctionTable rows=r.functions />
            </section>
            <section>
                <h2>"Allocation sites"</h2>
                <SiteTable rows=r.stacks />
            </section>
        </div>
    }
}

/// The top table by function: flat (allocated here) and cumulative (on the stack) bytes and counts,
/// sortable, filterable by name; a click outlines the function in the flame graph.
#[component]
pub(super) fn FunctionTable(rows: Vec<FunctionRow>) -> impl IntoView {
    let u = ui();
    let key = |f: &FunctionRow| format!("{}@{}", f.function, f.file);
    let figure = move |metric: &'static str, value: fn(&FunctionRow) -> i64, bytes: bool| {
        move |f: &FunctionRow, _| {
            if bytes {
                view! { <Bytes metric value=value(f) key=key(f) /> }.into_any()
            } else {
                view! { <Count metric value=value(f).unsigned_abs() key=key(f) /> }.into_any()
            }
        }
    };
    let columns = vec![
        Column::new("Function", "Function", |f: &FunctionRow, _| {
            view! {
                <span title=f.file.clone()>
                    <code>{f.function.clone()}</code>" "<span class="muted">{basename(&f.file).to_string()}</span>
                    {f.library.then(|| view! { <span class="tag">"lib"</span> })}
                </span>
            }
            .into_any()
        })
        .sort_key(|f| f.function.clone()),
        Column::new("FlatBytes", "Flat bytes", figure("flat_bytes", |f| f.flat_bytes, true))
            .right()
            .width("110px")
            .sort_key(|f| f.flat_bytes),
        Column::new("FlatCount", "Flat count", figure("flat_count", |f| f.flat_count, false))
            .right()
            .width("95px")
            .sort_key(|f| f.flat_count),
        Column::new("CumBytes", "Cum bytes", figure("cum_bytes", |f| f.cum_bytes, true)).right().width("110px").sort_key(|f| f.cum_bytes),
        Column::new("CumCount", "Cum count", figure("cum_count", |f| f.cum_count, false)).right().width("110px").sort_key(|f| f.cum_count),
    ];
    let rows = Arc::new(rows);
    let (h, h2, by_index) = (u.highlight.clone(), u.highlight.clone(), rows.clone());
    let id = move |i: usize| by_index.get(i).map(|f: &FunctionRow| (f.function.clone(), f.file.clone()));
    let id2 = id.clone();
    let spec = TableSpec::new("dm-functions", columns)
        .filter("Filter functions or files", "dm-filter", |f: &FunctionRow| vec![f.function.as_str(), f.file.as_str()])
        .row_attrs(|f, _| vec![("data-function", f.function.clone())])
        .row_class(|f| if f.library { "lib" } else { "" })
        .selected(move |i| h.with(|cur| cur.is_some() && *cur == id(i)))
        .on_click(move |i| {
            let id = id2(i);
            h2.update(|cur| *cur = if *cur == id { None } else { id });
        });
    view! { <Table spec rows state=u.table.clone() /> }
}

/// Allocation sites (one row per distinct stack) with their bytes and counts; a click shows the stack.
#[component]
pub(super) fn SiteTable(rows: Vec<StackRow>) -> impl IntoView {
    let key = |s: &StackRow| stack_key(&s.kind, &s.device, &s.site);
    let columns = vec![
        Column::new("site", "Site (library call ← your code)", move |s: &StackRow, _| {
            view! { <span title=s.site.clone()><Text metric="site" value=s.site.clone() key=key(s) /></span> }.into_any()
        })
        .sort_key(|s| s.site.clone()),
        Column::new("kind", "Kind", |s: &StackRow, _| view! { <span class="muted">{kind_label(&s.kind, &s.device)}</span> }.into_any())
            .width("130px")
            .sort_key(|s| (s.kind.clone(), s.device.clone())),
        Column::new("bytes", "Bytes", move |s: &StackRow, _| view! { <Bytes metric="site_bytes" value=s.bytes key=key(s) /> }.into_any())
            .right()
            .width("110px")
            .sort_key(|s| s.bytes),
        Column::new("count", "Count", move |s: &StackRow, _| {
            view! { <Count metric="site_count" value=s.count.unsigned_abs() key=key(s) /> }.into_any()
        })
        .right()
        .width("80px")
        .sort_key(|s| s.count),
    ];
    let spec = TableSpec::new("dm-sites", columns).row_attrs(|s, _| vec![("data-site", s.site.clone()), ("data-kind", s.kind.clone())]);
    with_stack_panel(spec, rows, |s| &s.frames)
}
