//! The kernel table over the page's one table component: XProf's columns, read from the reply's
//! column arrays by row index.

use crate::engine::kernel_stats::KernelStatsView as C;
use crate::ui::components::metric::{Bytes, Count, Text};
use crate::ui::components::op_links::OpLinks;
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use leptos::prelude::*;
use std::sync::Arc;

/// Rows are named by rank (a kernel name repeats with other launch shapes and ops).
fn key(_: &C, i: usize) -> String {
    (i + 1).to_string()
}

fn dims(d: [u32; 3]) -> String {
    format!("{},{},{}", d[0], d[1], d[2])
}

/// A launch dimension column (`x,y,z`, as XProf writes it), sorted by thread count.
fn dim_column(id: &'static str, label: &'static str, metric: &'static str, get: fn(&C, usize) -> [u32; 3]) -> Column<Row<C>> {
    Column::new(id, label, move |r: &Row<C>, _| view! { <Text metric value=dims(get(&r.cols, r.i)) key=key(&r.cols, r.i) /> }.into_any())
        .right()
        .width("62px")
        .sort_key(move |r| get(&r.cols, r.i).iter().map(|&d| u64::from(d)).product::<u64>())
        .csv(metric, move |r| dims(get(&r.cols, r.i)))
}

/// Widths for the table to fit beside the file panel at 1280 px, as the other op tables do: every
/// column but the kernel's name is as narrow as its figures (12 px text, headers wrapping at spaces and
/// soft hyphens); the kernel's name takes what is left, cut with an ellipsis, the whole name on hover.
/// Without any op name (a TensorFlow GPU trace names none), the empty column is left out.
fn columns(has_op_names: bool) -> Vec<Column<Row<C>>> {
    let k = Cols::<C> { key };
    let op = has_op_names.then(|| k.text("op", "Op name", "op_name", |c, i| &c.columns.op_name[i]).width("96px"));
    let mut columns = vec![
        Column::new("rank", "#", |r: &Row<C>, _| view! { <Count metric="rank" value=r.i as u64 + 1 key=key(&r.cols, r.i) /> }.into_any())
            .right()
            .width("30px")
            .sort_key(|r| r.i)
            .csv("rank", |r| (r.i + 1).to_string()),
        k.text("kernel", "Kernel name", "kernel_name", |c, i| &c.columns.kernel_name[i]).class("op"),
        k.count("registers", "Regs per thread", "registers_per_thread", |c, i| u64::from(c.columns.registers_per_thread[i])).width("50px"),
        Column::new("shmem", "Shared mem.", |r: &Row<C>, _| {
            let b = i64::try_from(r.cols.columns.shmem_bytes[r.i]).unwrap_or(i64::MAX);
            view! { <Bytes metric="shmem_bytes" value=b key=key(&r.cols, r.i) /> }.into_any()
        })
        .right()
        .width("58px")
        .sort_key(|r| r.cols.columns.shmem_bytes[r.i])
        .csv("shmem_bytes", |r| r.cols.columns.shmem_bytes[r.i].to_string()),
        dim_column("block", "Block dim", "block_dim", |c, i| c.columns.block_dim[i]),
        dim_column("grid", "Grid dim", "grid_dim", |c, i| c.columns.grid_dim[i]),
        k.number("occupancy", "Occu\u{ad}pancy %", "occupancy_pct", 1, |c, i| c.columns.occupancy_pct[i]).width("50px"),
        k.flag("eligible", "TC elig\u{ad}ible", "is_op_tensor_core_eligible", |c, i| c.columns.op_tensor_core_eligible[i]).width("52px"),
        k.flag("uses_tc", "Uses TC", "is_kernel_using_tensor_core", |c, i| c.columns.kernel_uses_tensor_core[i]).width("42px"),
        k.count("occurrences", "Occur\u{ad}rences", "occurrences", |c, i| c.columns.occurrences[i]).width("56px"),
        k.time("total", "Total", "total_duration_us", |c, i| c.columns.total_duration_us[i]).width("78px"),
        k.time("avg", "Avg.", "avg_duration_us", |c, i| c.columns.avg_duration_us[i]).width("78px"),
        k.time("min", "Min.", "min_duration_us", |c, i| c.columns.min_duration_us[i]).width("78px"),
        k.time("max", "Max.", "max_duration_us", |c, i| c.columns.max_duration_us[i]).width("78px"),
        // A kernel's occurrences are its events on the GPU's streams, named by the kernel.
        Column::new("links", "Show", |r: &Row<C>, _| {
            view! { <OpLinks module=None op=r.cols.columns.kernel_name[r.i].clone() /> }.into_any()
        })
        .width("80px"),
    ];
    // The op beside the kernel, so both names show without scrolling sideways.
    columns.splice(2..2, op);
    columns
}

/// The table of `v`'s rows; sort and filter in `state`.
#[component]
pub fn KernelTable(v: Arc<C>, state: TableState, csv_name: String) -> impl IntoView {
    let n = v.columns.kernel_name.len();
    let has_op_names = v.columns.op_name.iter().any(|n| !n.is_empty());
    let spec = TableSpec::new("ops-table kernel-table compact", columns(has_op_names))
        .testid("kernel-table")
        .filter("Filter by kernel or op", "kernel-filter", |r: &Row<C>| {
            vec![r.cols.columns.kernel_name[r.i].as_str(), r.cols.columns.op_name[r.i].as_str()]
        })
        .filter_always()
        .counts("kernel-counts", "shown_kernels", "total_kernels")
        .csv(csv_name, "kernel-csv")
        .row_attrs(|r, _| vec![("data-rank", key(&r.cols, r.i))])
        .row_title(|r| r.cols.columns.kernel_name[r.i].clone());
    view! { <Table spec rows=rows(&v, n) state /> }
}
