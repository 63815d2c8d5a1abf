//! The PyTorch Profiler's Operator view: the operators (aten ops and the rest the profiler records)
//! grouped by name, or by name and input shape (the plugin's "Group By"; in the URL), with calls,
//! host and device time (self and with the ops below) and their Tensor Cores shares, and the pie of
//! the top operators by the chosen time.

use super::{pie, time_text, torch_page};
use crate::analysis::torch::operators::OpGrouping;
use crate::engine::protocol::request;
use crate::engine::torch_page::OperatorsPage;
use crate::engine::FileDetails;
use crate::ui::components::metric::Count;
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::state::AppState;
use crate::ui::views::op_page;
use leptos::prelude::*;
use std::sync::Arc;

#[component]
pub fn TorchOperators(file_id: u32, details: FileDetails) -> impl IntoView {
    let csv_name = op_page::csv_name(&details, "torch_operators");
    let by_shape = expect_context::<AppState>().torch_ops_by_shape;
    let group_by = move || if by_shape.get() { OpGrouping::InputShape } else { OpGrouping::Name };
    torch_page(
        ("torch-operators", "PyTorch Operators", "Reading the operators…"),
        &details,
        move || request::TorchOperators { file_id, group_by: group_by() },
        move |v| {
            let csv_name =
                if v.grouping == OpGrouping::InputShape { csv_name.replace(".csv", "_by_input_shape.csv") } else { csv_name.clone() };
            view! { <Page v csv_name by_shape /> }.into_any()
        },
    )
}

#[component]
fn Page(v: Arc<OperatorsPage>, csv_name: String, by_shape: RwSignal<bool>) -> impl IntoView {
    let n = v.ops.name.len();
    let grouped_by_shape = v.grouping == OpGrouping::InputShape;
    let calls: u64 = v.ops.calls.iter().sum();
    // The chart the user picked of the plugin's four (device self time first, as the plugin opens).
    let picked = RwSignal::new(0usize);
    let chart = {
        let v = v.clone();
        move || {
            let top = v.top.get(picked.get())?;
            Some(pie(top.time.title(), "torch-top-ops", ("top_op_fraction", Some("top_op_us")), &top.ops, time_text()))
        }
    };
    let buttons = v
        .top
        .iter()
        .enumerate()
        .map(|(i, t)| {
            view! {
                <button class="seg" data-chart=t.time.metric() aria-pressed=move || (picked.get() == i).to_string() on:click=move |_| picked.set(i)>
                    {t.time.title()}
                </button>
            }
        })
        .collect_view();
    let group = move |shape: bool, label: &'static str, slug: &'static str| {
        view! { <button class="seg" data-grouping=slug aria-pressed=move || (by_shape.get() == shape).to_string() on:click=move |_| by_shape.set(shape)>{label}</button> }
    };
    view! {
        <div class="fos-summary" data-testid="torch-operators-summary">
            <span><Count metric="operator_count" value=n as u64 />{if grouped_by_shape { " operators by name and input shape" } else { " operators by name" }}</span>
            <span><Count metric="operator_calls" value=calls /> " calls"</span>
        </div>
        <div class="torch-chart-head">
            <h2>"Top operators"</h2>
            <div class="segmented" role="group" aria-label="Time">{buttons}</div>
        </div>
        <div class="torch-pie">{chart}</div>
        <div class="torch-chart-head">
            <h2>"Operators"</h2>
            <div class="segmented" role="group" aria-label="Group by">
                {group(false, "By operator", "name")}
                {group(true, "By operator and input shape", "input_shape")}
            </div>
        </div>
        <OperatorTable v csv_name />
    }
}

/// A row's key: the op's name, with its input shape when grouped by it (`name###shape`, the
/// plugin's own key).
fn key(c: &OperatorsPage, i: usize) -> String {
    match c.ops.input_shape.get(i) {
        Some(shape) => format!("{}###{shape}", c.ops.name[i]),
        None => c.ops.name[i].clone(),
    }
}

fn columns(has_device: bool, by_shape: bool) -> Vec<Column<Row<OperatorsPage>>> {
    let k = Cols::<OperatorsPage> { key };
    let mut columns = vec![k.text("name", "Name", "name", |c, i| &c.ops.name[i]).class("op")];
    if by_shape {
        columns.push(k.text("input_shape", "Input shape", "input_shape", |c, i| &c.ops.input_shape[i]).width("220px"));
    }
    columns.push(k.count("calls", "Calls", "calls", |c, i| c.ops.calls[i]).width("64px"));
    if has_device {
        columns.push(k.time("device_self", "Device self", "device_self_duration_us", |c, i| c.ops.device_self_us[i]).width("92px"));
        columns.push(k.time("device_total", "Device total", "device_total_duration_us", |c, i| c.ops.device_total_us[i]).width("92px"));
    }
    columns.extend([
        k.time("host_self", "Host self", "host_self_duration_us", |c, i| c.ops.host_self_us[i]).width("92px"),
        k.time("host_total", "Host total", "host_total_duration_us", |c, i| c.ops.host_total_us[i]).width("92px"),
        k.flag("tc_eligible", "TC elig\u{ad}ible", "tc_eligible", |c, i| c.ops.tc_eligible[i]).width("60px"),
        k.number("tc_self", "TC self %", "tc_self_ratio", 2, |c, i| c.ops.tc_self_pct[i]).width("72px"),
        k.number("tc_total", "TC total %", "tc_total_ratio", 2, |c, i| c.ops.tc_total_pct[i]).width("72px"),
    ]);
    columns
}

#[component]
fn OperatorTable(v: Arc<OperatorsPage>, csv_name: String) -> impl IntoView {
    let n = v.ops.name.len();
    let by_shape = v.grouping == OpGrouping::InputShape;
    let spec = TableSpec::new("ops-table compact torch-ops", columns(v.has_device, by_shape))
        .testid("torch-operator-table")
        .filter("Filter by operator", "torch-operator-filter", |r: &Row<OperatorsPage>| {
            let mut texts = vec![r.cols.ops.name[r.i].as_str()];
            texts.extend(r.cols.ops.input_shape.get(r.i).map(String::as_str));
            texts
        })
        .filter_always()
        .counts("torch-operator-counts", "shown_operators", "total_operators")
        .csv(csv_name, "torch-operator-csv")
        .row_attrs(|r, _| vec![("data-op", key(&r.cols, r.i))])
        .row_title(|r| match r.cols.ops.input_shape.get(r.i) {
            Some(shape) => format!("{} {shape}", r.cols.ops.name[r.i]),
            None => r.cols.ops.name[r.i].clone(),
        });
    view! { <Table spec rows=rows(&v, n) state=TableState::new() /> }
}
