//! The one table of the page. Its columns are described once ([`Column`]: label, alignment, how to
//! sort, how to render a cell, its CSV field) and every view's table is a [`TableSpec`] of them.
//!
//! It sorts by a click on a header (one arrow, on the sorted column, and `aria-sort`), filters by a
//! text box, exports the filtered rows as CSV, and keeps only the rows on screen plus a margin in the
//! DOM ([`window`]): every row is [`ROW_H_PX`] tall, spacers stand for the rest, so 10,000 rows scroll
//! as smoothly as 10 and the scroll bar never jumps. The header sticks to the top of the scroll box.
//! A new table builds only its visible rows at first and the margin in a task after the first frame,
//! so that laying out and painting a tool's reply stay short tasks.

pub mod columnar;
mod csv;
mod window;

pub use csv::{download, download_part};
pub use window::{rows_in_dom, rows_on_first_paint, ROW_H_PX};

use crate::ui::components::metric::Count;
use leptos::attr::any_attribute::{AnyAttribute, IntoAnyAttribute};
use leptos::attr::custom::custom_attribute;
use leptos::prelude::*;
use std::cmp::Ordering;
use std::sync::Arc;

type CellFn<R> = Arc<dyn Fn(&R, usize) -> AnyView + Send + Sync>;
type SortFn<R> = Arc<dyn Fn(&R, &R) -> Ordering + Send + Sync>;
type TextFn<R> = Arc<dyn Fn(&R) -> String + Send + Sync>;
type RowFn<R, T> = Arc<dyn Fn(&R) -> T + Send + Sync>;
type IndexFn<T> = Arc<dyn Fn(usize) -> T + Send + Sync>;
type AttrsFn<R> = Arc<dyn Fn(&R, usize) -> Vec<(&'static str, String)> + Send + Sync>;
type TextsFn<R> = Arc<dyn for<'a> Fn(&'a R) -> Vec<&'a str> + Send + Sync>;

/// Where a column's content sits: text on the left, figures on the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// One column: its header, how a cell of row `R` is drawn, and optionally how rows sort by it and
/// what it writes to the CSV export.
pub struct Column<R> {
    id: &'static str,
    label: &'static str,
    align: Align,
    width: Option<&'static str>,
    class: &'static str,
    sort: Option<SortFn<R>>,
    cell: CellFn<R>,
    csv: Option<(&'static str, TextFn<R>)>,
}

impl<R> Column<R> {
    /// A left-aligned column named `id` (its `data-sort`), headed `label`, whose cell for row `r`
    /// (at index `i` of the table's rows) is `cell(r, i)`. Figures in cells carry `data-metric`
    /// through the metric components.
    pub fn new(id: &'static str, label: &'static str, cell: impl Fn(&R, usize) -> AnyView + Send + Sync + 'static) -> Self {
        Column { id, label, align: Align::Left, width: None, class: "", sort: None, cell: Arc::new(cell), csv: None }
    }

    /// Right-aligned: a figure. Sorting by it starts largest first.
    pub fn right(mut self) -> Self {
        self.align = Align::Right;
        self
    }

    /// A fixed CSS width (`"110px"`); columns without one share what is left.
    pub fn width(mut self, css: &'static str) -> Self {
        self.width = Some(css);
        self
    }

    /// A class on every cell of the column (`"op"`, `"bar-col"`).
    pub fn class(mut self, class: &'static str) -> Self {
        self.class = class;
        self
    }

    /// Sortable by `cmp` (ascending order; a second click reverses it).
    pub fn sort_by(mut self, cmp: impl Fn(&R, &R) -> Ordering + Send + Sync + 'static) -> Self {
        self.sort = Some(Arc::new(cmp));
        self
    }

    /// Sortable by the key `key` of each row.
    pub fn sort_key<K: Ord>(self, key: impl Fn(&R) -> K + Send + Sync + 'static) -> Self {
        self.sort_by(move |a, b| key(a).cmp(&key(b)))
    }

    /// Exported as the CSV column `header` with `value` for each row.
    pub fn csv(mut self, header: &'static str, value: impl Fn(&R) -> String + Send + Sync + 'static) -> Self {
        self.csv = Some((header, Arc::new(value)));
        self
    }
}

/// The sorted column (`id`, descending) and the filter text. Hand one to [`Table`] to keep them
/// beyond the table's life (a view that is rebuilt keeps the user's sort), or to set a first sort.
#[derive(Clone)]
pub struct TableState {
    pub sort: ArcRwSignal<Option<(&'static str, bool)>>,
    pub filter: ArcRwSignal<String>,
}

impl TableState {
    /// Unsorted (the rows' own order), unfiltered.
    pub fn new() -> Self {
        TableState { sort: ArcRwSignal::new(None), filter: ArcRwSignal::new(String::new()) }
    }

    /// Sorted by column `id` at first.
    pub fn sorted(id: &'static str, descending: bool) -> Self {
        TableState { sort: ArcRwSignal::new(Some((id, descending))), filter: ArcRwSignal::new(String::new()) }
    }
}

impl Default for TableState {
    fn default() -> Self {
        Self::new()
    }
}

/// A table: its columns and what its toolbar and rows offer. Built with the methods below.
pub struct TableSpec<R> {
    columns: Vec<Column<R>>,
    class: &'static str,
    testid: Option<&'static str>,
    filter: Option<(&'static str, &'static str, TextsFn<R>)>,
    filter_always: bool,
    keep: Option<RowFn<R, bool>>,
    counts: Option<(&'static str, &'static str, &'static str)>,
    csv: Option<(String, &'static str)>,
    row_attrs: Option<AttrsFn<R>>,
    row_class: Option<RowFn<R, &'static str>>,
    row_title: Option<TextFn<R>>,
    selected: Option<IndexFn<bool>>,
    on_click: Option<IndexFn<()>>,
    on_hover: Option<Arc<dyn Fn(Option<usize>) + Send + Sync>>,
    max_height_px: f64,
}

impl<R> TableSpec<R> {
    /// A table of `columns` with the page's `grid` look and `class` besides (`"dm-functions"`).
    pub fn new(class: &'static str, columns: Vec<Column<R>>) -> Self {
        TableSpec {
            columns,
            class,
            testid: None,
            filter: None,
            filter_always: false,
            keep: None,
            counts: None,
            csv: None,
            row_attrs: None,
            row_class: None,
            row_title: None,
            selected: None,
            on_click: None,
            on_hover: None,
            max_height_px: 560.0,
        }
    }

    /// `data-testid` of the `<table>`.
    pub fn testid(mut self, testid: &'static str) -> Self {
        self.testid = Some(testid);
        self
    }

    /// A filter box (`placeholder`, `data-testid`): a row is shown when one of `texts(row)` contains
    /// what is typed, ignoring case. Shown only when there are more rows than the scroll box holds.
    pub fn filter(
        mut self,
        placeholder: &'static str,
        testid: &'static str,
        texts: impl for<'a> Fn(&'a R) -> Vec<&'a str> + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some((placeholder, testid, Arc::new(texts)));
        self
    }

    /// The filter box whatever the number of rows (tables whose rows are looked up by name or
    /// category, however few).
    pub fn filter_always(mut self) -> Self {
        self.filter_always = true;
        self
    }

    /// Shows only rows for which `keep` holds; reactive: signals it reads refilter the table.
    pub fn keep(mut self, keep: impl Fn(&R) -> bool + Send + Sync + 'static) -> Self {
        self.keep = Some(Arc::new(keep));
        self
    }

    /// "N of M rows" in the toolbar (`data-testid`), the figures as metrics `shown` and `total`.
    pub fn counts(mut self, testid: &'static str, shown: &'static str, total: &'static str) -> Self {
        self.counts = Some((testid, shown, total));
        self
    }

    /// An "Export CSV" button (`data-testid`) saving the shown rows, in order, as `file_name`.
    pub fn csv(mut self, file_name: String, testid: &'static str) -> Self {
        self.csv = Some((file_name, testid));
        self
    }

    /// Attributes of each row's `<tr>` (`data-function`, ...), for the page's tests and scripts.
    pub fn row_attrs(mut self, attrs: impl Fn(&R, usize) -> Vec<(&'static str, String)> + Send + Sync + 'static) -> Self {
        self.row_attrs = Some(Arc::new(attrs));
        self
    }

    /// A class on each row's `<tr>` (`"lib"`), from the row.
    pub fn row_class(mut self, class: impl Fn(&R) -> &'static str + Send + Sync + 'static) -> Self {
        self.row_class = Some(Arc::new(class));
        self
    }

    /// A tooltip on each row.
    pub fn row_title(mut self, title: impl Fn(&R) -> String + Send + Sync + 'static) -> Self {
        self.row_title = Some(Arc::new(title));
        self
    }

    /// Rows (by index) drawn as selected; reactive.
    pub fn selected(mut self, selected: impl Fn(usize) -> bool + Send + Sync + 'static) -> Self {
        self.selected = Some(Arc::new(selected));
        self
    }

    /// A click selects a row (index in `picked`); a second click on it clears the selection.
    pub fn pick(self, picked: RwSignal<Option<usize>>) -> Self {
        self.selected(move |i| picked.get() == Some(i))
            .on_click(move |i| picked.update(|p| *p = if *p == Some(i) { None } else { Some(i) }))
    }

    /// Called with a row's index when it is clicked.
    pub fn on_click(mut self, on_click: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.on_click = Some(Arc::new(on_click));
        self
    }

    /// Called with a row's index when the pointer enters it, and `None` when it leaves.
    pub fn on_hover(mut self, on_hover: impl Fn(Option<usize>) + Send + Sync + 'static) -> Self {
        self.on_hover = Some(Arc::new(on_hover));
        self
    }

    /// The scroll box's height limit in CSS pixels (560 unless set).
    pub fn max_height(mut self, px: f64) -> Self {
        self.max_height_px = px;
        self
    }

    fn column(&self, id: &str) -> Option<&Column<R>> {
        self.columns.iter().find(|c| c.id == id)
    }

    /// The CSV text of rows `shown` (indices into `rows`): a header line and one line per row.
    fn csv_text(&self, rows: &[R], shown: &[usize]) -> String {
        let cols: Vec<&(&'static str, TextFn<R>)> = self.columns.iter().filter_map(|c| c.csv.as_ref()).collect();
        let mut out = cols.iter().map(|(h, _)| csv::field(h)).collect::<Vec<_>>().join(",");
        out.push('\n');
        for r in shown.iter().filter_map(|&i| rows.get(i)) {
            out.push_str(&cols.iter().map(|(_, f)| csv::field(&f(r))).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }
}

/// The indices of `rows` shown, in order: kept, matching `needle` (lowercase), sorted stably by
/// `sort` (so equal rows keep the rows' own order).
fn shown_rows<R>(spec: &TableSpec<R>, rows: &[R], needle: &str, sort: Option<(&'static str, bool)>) -> Vec<usize> {
    let matches = |r: &R| match (&spec.filter, needle.is_empty()) {
        (Some((_, _, texts)), false) => texts(r).iter().any(|t| t.to_lowercase().contains(needle)),
        _ => true,
    };
    let mut idx: Vec<usize> = (0..rows.len()).filter(|&i| spec.keep.as_ref().is_none_or(|k| k(&rows[i])) && matches(&rows[i])).collect();
    if let Some((cmp, desc)) = sort.and_then(|(id, desc)| Some((spec.column(id)?.sort.clone()?, desc))) {
        idx.sort_by(|&a, &b| {
            let o = cmp(&rows[a], &rows[b]);
            if desc {
                o.reverse()
            } else {
                o
            }
        });
    }
    idx
}

/// The header row's cells: a column with a sort key sorts the rows on a click (figures largest
/// first, text A→Z; the sorted column's second click reverses) and says how it sorts.
fn header<R>(spec: &TableSpec<R>, state: &TableState) -> impl IntoView {
    spec
    .columns
    .iter()
    .map(|c| {
        let (id, label, right) = (c.id, c.label, c.align == Align::Right);
        let width = c.width.map(|w| format!("width:{w}"));
        if c.sort.is_none() {
            return view! { <th class:r=right style=width>{label}</th> }.into_any();
        }
        let (sort, set) = (state.sort.clone(), state.sort.clone());
        let aria = move || match sort.get() {
            Some((s, true)) if s == id => "descending",
            Some((s, false)) if s == id => "ascending",
            _ => "none",
        };
        let arrow = aria.clone();
        // Figures start largest first, text A→Z; the sorted column's second click reverses.
        let click = move |_| set.update(|s| *s = Some(if let Some((c, d)) = *s { (id, if c == id { !d } else { right }) } else { (id, right) }));
        view! {
            <th class:r=right style=width aria-sort=aria data-sort=id>
                <button class="th-sort" on:click=click>
                    {label}
                    <span class="arrow" aria-hidden="true">{move || match arrow() { "descending" => "▼", "ascending" => "▲", _ => "" }}</span>
                </button>
            </th>
        }
        .into_any()
    })
    .collect_view()
}

/// Row `i` of `rows`: its cells, the spec's attributes, class and title, and the spec's selection,
/// click and hover handlers.
fn row_view<R: Send + Sync + 'static>(spec: &TableSpec<R>, rows: &[R], i: usize) -> impl IntoView {
    let r = &rows[i];
    let attrs: Vec<AnyAttribute> = spec
        .row_attrs
        .as_ref()
        .map(|f| f(r, i).into_iter().map(|(k, v)| custom_attribute(k, v).into_any_attr()).collect())
        .unwrap_or_default();
    let cells =
        spec.columns.iter().map(|c| view! { <td class=c.class class:r=c.align == Align::Right>{(c.cell)(r, i)}</td> }).collect_view();
    let (selected, click, hover, leave) = (spec.selected.clone(), spec.on_click.clone(), spec.on_hover.clone(), spec.on_hover.clone());
    let clickable = click.is_some();
    view! {
        <tr
            class=spec.row_class.as_ref().map(|f| f(r))
            class:selected=move || selected.as_ref().is_some_and(|f| f(i))
            class:clickable=clickable
            title=spec.row_title.as_ref().map(|f| f(r))
            on:click=move |_| if let Some(f) = &click { f(i) }
            on:mouseenter=move |_| if let Some(f) = &hover { f(Some(i)) }
            on:mouseleave=move |_| if let Some(f) = &leave { f(None) }
            {..attrs}
        >
            {cells}
        </tr>
    }
}

/// The table of `rows` as `spec` describes it. `state`: the sort and filter, when they should
/// outlive the table or start sorted. `children`: extra controls for the toolbar.
#[component]
pub fn Table<R: Send + Sync + 'static>(
    spec: TableSpec<R>,
    rows: Arc<Vec<R>>,
    #[prop(optional)] state: Option<TableState>,
    #[prop(optional)] children: Option<Children>,
) -> impl IntoView {
    let state = state.unwrap_or_default();
    let spec = Arc::new(spec);
    let total = rows.len();
    let n_cols = spec.columns.len().max(1).to_string();
    let shown = {
        let (spec, rows, sort, filter) = (spec.clone(), rows.clone(), state.sort.clone(), state.filter.clone());
        Memo::new(move |_| shown_rows(&spec, &rows, &filter.get().trim().to_lowercase(), sort.get()))
    };
    let scroll_top = RwSignal::new(0.0f64);
    let max_h = spec.max_height_px;
    // The first task draws only the rows on screen, and the first frame lays out only them; the
    // margin comes in a task of its own after that frame is painted.
    let settled = ArcRwSignal::new(false);
    request_animation_frame({
        let settled = settled.clone();
        move || set_timeout(move || settled.set(true), std::time::Duration::ZERO)
    });
    let in_dom = Memo::new(move |_| {
        let n = shown.with(Vec::len);
        if settled.get() {
            rows_in_dom(n, scroll_top.get(), max_h)
        } else {
            rows_on_first_paint(n, max_h)
        }
    });
    let scroller = NodeRef::<leptos::html::Div>::new();

    let header = header(&spec, &state);
    let row = {
        let (spec, rows) = (spec.clone(), rows.clone());
        move |i: usize| row_view(&spec, &rows, i)
    };
    let empty_cols = n_cols.clone();
    let spacer = move |px: f64| {
        (px > 0.0).then(
            || view! { <tr class="vt-spacer" aria-hidden="true"><td colspan=n_cols.clone() style=format!("height:{px}px")></td></tr> },
        )
    };
    let spacer_below = spacer.clone();

    // A filter box only where there is something to look for (more rows than the box shows, or a
    // table that asks for it), or a filter kept from before to clear.
    let worth_filtering = spec.filter_always || total as f64 * ROW_H_PX > max_h || !state.filter.get_untracked().is_empty();
    let filter_box = spec.filter.as_ref().filter(|_| worth_filtering).map(|(placeholder, testid, _)| {
        let (get, set) = (state.filter.clone(), state.filter.clone());
        view! {
            <input type="search" class="filter" placeholder=*placeholder data-testid=*testid
                prop:value=move || get.get() on:input=move |ev| set.set(event_target_value(&ev)) />
        }
    });
    let counts = spec.counts.map(|(testid, shown_metric, total_metric)| {
        view! {
            <span class="muted" data-testid=testid>
                {move || view! { <Count metric=shown_metric value=shown.with(Vec::len) as u64 /> }}
                " of " <Count metric=total_metric value=total as u64 /> " rows"
            </span>
        }
    });
    let export = spec.csv.clone().map(|(file_name, testid)| {
        let (spec, rows) = (spec.clone(), rows.clone());
        let on_export = move |_| {
            let text = shown.with_untracked(|s| spec.csv_text(&rows, s));
            if let Err(e) = download(&file_name, &text, "text/csv") {
                web_sys::console::error_1(&e);
            }
        };
        view! { <button class="btn" data-testid=testid on:click=on_export>"Export CSV"</button> }
    });
    let has_bar = filter_box.is_some() || counts.is_some() || export.is_some() || children.is_some();
    let empty = move || {
        (total > 0 && shown.with(Vec::is_empty))
            .then(|| view! { <tr class="vt-empty"><td colspan=empty_cols.clone()>"No row matches the filter."</td></tr> })
    };

    view! {
        {has_bar.then(|| view! {
            <div class="table-bar">
                {filter_box}
                {children.map(|c| c())}
                {counts}
                <span class="spacer"></span>
                {export}
            </div>
        })}
        <div
            class="vtable"
            node_ref=scroller
            style=format!("max-height:{max_h}px")
            on:scroll=move |_| {
                if let Some(el) = scroller.get_untracked() {
                    scroll_top.set(f64::from(el.scroll_top()));
                }
            }
        >
            <table class=format!("grid {}", spec.class) data-testid=spec.testid data-rows=move || shown.with(Vec::len).to_string()>
                <thead><tr>{header}</tr></thead>
                <tbody>
                    {move || spacer(in_dom.get().start as f64 * ROW_H_PX)}
                    <For
                        each=move || {
                            let range = in_dom.get();
                            shown.with(|s| s.get(range).map(<[usize]>::to_vec).unwrap_or_default())
                        }
                        key=|i| *i
                        children=row
                    />
                    {move || spacer_below(shown.with(Vec::len).saturating_sub(in_dom.get().end) as f64 * ROW_H_PX)}
                    {empty}
                </tbody>
            </table>
        </div>
    }
}
