//! The PyTorch Profiler's Kernel view: the GPU kernels by name (calls, total, mean, min and max
//! duration, blocks per SM, achieved occupancy, Tensor Cores), or by name and the operator that
//! launched them with their launch shape, and the pies of kernel time by kernel and on Tensor Cores.

use super::{pie, time_text, torch_page};
use crate::engine::protocol::request;
use crate::engine::torch_page::{KernelColumns, KernelOpColumns, KernelTimes, KernelsPage};
use crate::engine::FileDetails;
use crate::ui::components::metric::{Bytes, Count, Percent};
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::views::op_page;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn TorchKernels(file_id: u32, details: FileDetails) -> impl IntoView {
    let csv_name = op_page::csv_name(&details, "torch_kernels");
    torch_page(
        ("torch-kernels", "PyTorch Kernels", "Reading the kernels…"),
        &details,
        move || request::TorchKernels { file_id },
        move |v| view! { <Page v csv_name=csv_name.clone() /> }.into_any(),
    )
}

/// The table's grouping, as the plugin's "Group By".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grouping {
    Kernel,
    KernelAndOp,
}

#[component]
fn Page(v: Arc<KernelsPage>, csv_name: String) -> impl IntoView {
    let grouping = RwSignal::new(Grouping::Kernel);
    let percent = Arc::new(|f: f64| format!("{:.2} %", f * 100.0)) as Arc<dyn Fn(f64) -> String + Send + Sync>;
    let launches: u64 = v.kernels.times.calls.iter().sum();
    let seg = move |g: Grouping, label: &'static str, slug: &'static str| {
        view! { <button class="seg" data-grouping=slug aria-pressed=move || (grouping.get() == g).to_string() on:click=move |_| grouping.set(g)>{label}</button> }
    };
    let (kernels, by_op) = (Arc::new(v.kernels.clone()), Arc::new(v.by_op.clone()));
    let table = move || match grouping.get() {
        Grouping::Kernel => view! { <KernelTable v=kernels.clone() csv_name=csv_name.clone() /> }.into_any(),
        Grouping::KernelAndOp => view! { <KernelOpTable v=by_op.clone() csv_name=csv_name.replace(".csv", "_by_op.csv") /> }.into_any(),
    };
    view! {
        <div class="fos-summary" data-testid="torch-kernels-summary">
            <span><Count metric="kernel_count" value=v.kernels.name.len() as u64 /> " kernels by name"</span>
            <span><Count metric="kernel_calls" value=launches /> " launches"</span>
            <span><Percent metric="tensor_core_fraction" value=v.tensor_core_fraction /> " of kernel time on Tensor Cores"</span>
        </div>
        <div class="fos-charts">
            {pie("Total time by kernel", "torch-kernel-pie", ("kernel_time_fraction", Some("kernel_time_us")), &v.time_by_kernel, time_text())}
            {pie("Tensor Cores", "torch-tc-pie", ("tensor_cores_fraction", None), &v.tensor_cores, percent)}
        </div>
        <div class="torch-chart-head">
            <h2>"Kernels"</h2>
            <div class="segmented" role="group" aria-label="Group by">
                {seg(Grouping::Kernel, "By kernel", "kernel")}
                {seg(Grouping::KernelAndOp, "By kernel and operator", "kernel_op")}
            </div>
        </div>
        {table}
    }
}

/// A kernel table's columns: [`KernelTimes`] beside the table's own.
trait WithTimes: Send + Sync + 'static {
    fn times(&self) -> &KernelTimes;
}

impl WithTimes for KernelColumns {
    fn times(&self) -> &KernelTimes {
        &self.times
    }
}

impl WithTimes for KernelOpColumns {
    fn times(&self) -> &KernelTimes {
        &self.times
    }
}

/// The columns both kernel tables have, after the table's own: calls, durations, then blocks per SM
/// and occupancy where the trace records them. Tensor Cores use is the first (`tc_label`), as the
/// plugin places it per table.
fn time_columns<T: WithTimes>(k: &Cols<T>, tc_label: &'static str, v: &T) -> (Column<Row<T>>, Vec<Column<Row<T>>>) {
    let tc = k.flag("tc_used", tc_label, "tc_used", |c, i| c.times().tc_used[i]).width("60px");
    let mut columns = vec![
        k.count("calls", "Calls", "calls", |c, i| c.times().calls[i]).width("60px"),
        k.time("total", "Total", "total_duration_us", |c, i| c.times().total_us[i]).width("82px"),
        k.time("mean", "Mean", "mean_duration_us", |c, i| c.times().mean_us[i]).width("82px"),
        k.time("max", "Max", "max_duration_us", |c, i| c.times().max_us[i]).width("82px"),
        k.time("min", "Min", "min_duration_us", |c, i| c.times().min_us[i]).width("82px"),
    ];
    if v.times().blocks_per_sm.is_some() {
        let get = |c: &T, i: usize| c.times().blocks_per_sm.as_ref().map_or(0.0, |b| b[i]);
        columns.push(k.number("bps", "Mean blocks per SM", "blocks_per_sm", 2, get).width("68px"));
    }
    if v.times().occupancy_pct.is_some() {
        let get = |c: &T, i: usize| c.times().occupancy_pct.as_ref().map_or(0.0, |o| o[i]);
        columns.push(k.number("occupancy", "Mean est. occu\u{ad}pancy %", "occupancy_pct", 2, get).width("76px"));
    }
    (tc, columns)
}

fn kernel_key(c: &KernelColumns, i: usize) -> String {
    c.name[i].clone()
}

#[component]
fn KernelTable(v: Arc<KernelColumns>, csv_name: String) -> impl IntoView {
    let k = Cols::<KernelColumns> { key: kernel_key };
    let (tc, times) = time_columns(&k, "Tensor Cores used", &*v);
    let mut columns = vec![k.text("name", "Name", "name", |c, i| &c.name[i]).class("op"), tc];
    columns.extend(times);
    let n = v.name.len();
    let spec = TableSpec::new("ops-table compact torch-kernel-table", columns)
        .testid("torch-kernel-table")
        .filter("Filter by kernel", "torch-kernel-filter", |r: &Row<KernelColumns>| vec![r.cols.name[r.i].as_str()])
        .filter_always()
        .counts("torch-kernel-counts", "shown_kernels", "total_kernels")
        .csv(csv_name, "torch-kernel-csv")
        .row_title(|r| r.cols.name[r.i].clone());
    view! { <Table spec rows=rows(&v, n) state=TableState::new() /> }
}

/// Rows of the table by kernel and operator are named by rank: a kernel repeats with other
/// operators and launch shapes.
fn op_key(_: &KernelOpColumns, i: usize) -> String {
    (i + 1).to_string()
}

#[component]
fn KernelOpTable(v: Arc<KernelOpColumns>, csv_name: String) -> impl IntoView {
    let k = Cols::<KernelOpColumns> { key: op_key };
    let (tc, times) = time_columns(&k, "Kernel uses TC", &*v);
    let mut columns = vec![
        // Wide enough to read a kernel's name: the table scrolls sideways rather than cut it to a word.
        k.text("name", "Name", "name", |c, i| &c.name[i]).class("op").width("260px"),
        k.text("op", "Operator", "operator", |c, i| &c.op[i]).width("170px"),
        k.text("grid", "Grid", "grid", |c, i| &c.grid[i]).width("86px"),
        k.text("block", "Block", "block", |c, i| &c.block[i]).width("86px"),
        k.count("regs", "Regs per thread", "registers_per_thread", |c, i| c.registers_per_thread[i]).width("56px"),
        Column::new("shmem", "Shared mem.", |r: &Row<KernelOpColumns>, _| {
            let b = i64::try_from(r.cols.shared_memory_bytes[r.i]).unwrap_or(i64::MAX);
            view! { <Bytes metric="shared_memory_bytes" value=b key=op_key(&r.cols, r.i) /> }.into_any()
        })
        .right()
        .width("64px")
        .sort_key(|r| r.cols.shared_memory_bytes[r.i])
        .csv("shared_memory_bytes", |r| r.cols.shared_memory_bytes[r.i].to_string()),
        tc,
        k.flag("op_tc", "Op TC elig\u{ad}ible", "op_tc_eligible", |c, i| c.op_tc_eligible[i]).width("56px"),
    ];
    columns.extend(times);
    let n = v.name.len();
    let spec = TableSpec::new("ops-table compact torch-kernel-op-table", columns)
        .testid("torch-kernel-op-table")
        .filter("Filter by kernel or operator", "torch-kernel-op-filter", |r: &Row<KernelOpColumns>| {
            vec![r.cols.name[r.i].as_str(), r.cols.op[r.i].as_str()]
        })
        .filter_always()
        .counts("torch-kernel-op-counts", "shown_rows", "total_rows")
        .csv(csv_name, "torch-kernel-op-csv")
        .row_attrs(|r, _| vec![("data-rank", op_key(&r.cols, r.i))])
        .row_title(|r| format!("{} ← {}", r.cols.name[r.i], r.cols.op[r.i]));
    view! { <Table spec rows=rows(&v, n) state=TableState::new() /> }
}
