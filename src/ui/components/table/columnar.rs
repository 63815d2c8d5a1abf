//! Tables over replies that come as columns (one array per column, as the op tables' replies do):
//! a row is an index into the reply ([`Row`]), and the column builders ([`Cols`]) read its figure
//! from the reply's arrays, so no row object is ever built. Each figure carries `data-metric` (the
//! column's metric, also its CSV header), `data-value` (the raw value) and `data-key` (the row's key).

use super::Column;
use crate::ui::components::metric::{Count, Duration, Percent, Text};
use leptos::prelude::*;
use std::sync::Arc;

/// Row `i` of a columnar reply `T`.
pub struct Row<T> {
    pub cols: Arc<T>,
    pub i: usize,
}

/// The `n` rows of `cols`, in the reply's order.
pub fn rows<T>(cols: &Arc<T>, n: usize) -> Arc<Vec<Row<T>>> {
    Arc::new((0..n).map(|i| Row { cols: cols.clone(), i }).collect())
}

/// Builds the columns of a table over `T`; `key` names row `i` in `data-key` (what tests and the
/// page's other parts look a row up by).
pub struct Cols<T> {
    pub key: fn(&T, usize) -> String,
}

impl<T> Clone for Cols<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Cols<T> {}

impl<T: Send + Sync + 'static> Cols<T> {
    /// Row `r`'s key.
    pub fn row_key(&self, r: &Row<T>) -> String {
        (self.key)(&r.cols, r.i)
    }

    /// A right-aligned figure of `get`, drawn by `cell(value, row key)`, sorted and exported raw.
    fn float(
        &self,
        (id, label, metric): (&'static str, &'static str, &'static str),
        width: &'static str,
        get: fn(&T, usize) -> f64,
        cell: impl Fn(f64, String) -> AnyView + Send + Sync + 'static,
    ) -> Column<Row<T>> {
        let key = self.key;
        Column::new(id, label, move |r: &Row<T>, _| cell(get(&r.cols, r.i), key(&r.cols, r.i)))
            .right()
            .width(width)
            .sort_by(move |a, b| get(&a.cols, a.i).total_cmp(&get(&b.cols, b.i)))
            .csv(metric, move |r| get(&r.cols, r.i).to_string())
    }

    /// A duration in µs, shown in the page's time unit.
    pub fn time(&self, id: &'static str, label: &'static str, metric: &'static str, get: fn(&T, usize) -> f64) -> Column<Row<T>> {
        self.float((id, label, metric), "96px", get, move |v, key| view! { <Duration metric value_us=v key /> }.into_any())
    }

    /// A fraction, shown as a percentage.
    pub fn percent(&self, id: &'static str, label: &'static str, metric: &'static str, get: fn(&T, usize) -> f64) -> Column<Row<T>> {
        self.float((id, label, metric), "100px", get, move |v, key| view! { <Percent metric value=v key /> }.into_any())
    }

    /// A count, with thousands separators.
    pub fn count(&self, id: &'static str, label: &'static str, metric: &'static str, get: fn(&T, usize) -> u64) -> Column<Row<T>> {
        let key = self.key;
        Column::new(id, label, move |r: &Row<T>, _| view! { <Count metric value=get(&r.cols, r.i) key=key(&r.cols, r.i) /> }.into_any())
            .right()
            .width("80px")
            .sort_key(move |r| get(&r.cols, r.i))
            .csv(metric, move |r| get(&r.cols, r.i).to_string())
    }

    /// A figure in its own unit (GFLOP/s, GiB/s, FLOP/byte), shown with `decimals` decimals.
    pub fn number(
        &self,
        id: &'static str,
        label: &'static str,
        metric: &'static str,
        decimals: usize,
        get: fn(&T, usize) -> f64,
    ) -> Column<Row<T>> {
        self.float((id, label, metric), "104px", get, move |v, key| {
            view! { <Text metric value=v.to_string() key shown=format!("{v:.decimals$}") /> }.into_any()
        })
    }

    /// Text, cut with an ellipsis where it does not fit (the whole text in the tooltip).
    pub fn text(&self, id: &'static str, label: &'static str, metric: &'static str, get: fn(&T, usize) -> &str) -> Column<Row<T>> {
        let key = self.key;
        Column::new(id, label, move |r: &Row<T>, _| {
            let (v, title) = (get(&r.cols, r.i).to_string(), get(&r.cols, r.i).to_string());
            view! { <span class="cut" title=title><Text metric value=v key=key(&r.cols, r.i) /></span> }.into_any()
        })
        .class("text")
        .sort_by(move |a, b| get(&a.cols, a.i).cmp(get(&b.cols, b.i)))
        .csv(metric, move |r| get(&r.cols, r.i).to_string())
    }

    /// A yes/no flag (`data-value` `true`/`false`).
    pub fn flag(&self, id: &'static str, label: &'static str, metric: &'static str, get: fn(&T, usize) -> bool) -> Column<Row<T>> {
        let key = self.key;
        Column::new(id, label, move |r: &Row<T>, _| {
            let v = get(&r.cols, r.i);
            view! { <Text metric value=v.to_string() key=key(&r.cols, r.i) shown=if v { "Yes" } else { "No" } /> }.into_any()
        })
        .width("72px")
        .sort_key(move |r| get(&r.cols, r.i))
        .csv(metric, move |r| get(&r.cols, r.i).to_string())
    }
}
