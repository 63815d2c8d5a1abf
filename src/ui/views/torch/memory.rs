//! The PyTorch Profiler's Memory view, per device: the peak, the allocated and reserved curve over
//! time, each allocation with its free (the memory events), and the memory each operator allocated,
//! with and without the operators below it.

use super::memory_chart::{MemoryChart, MB};
use super::torch_page;
use crate::engine::protocol::request;
use crate::engine::torch_page::{MemoryDevice, MemoryPage};
use crate::engine::FileDetails;
use crate::ui::components::metric::{BytesIn, Count, Duration};
use crate::ui::components::table::columnar::{rows, Cols, Row};
use crate::ui::components::table::{Column, Table, TableSpec, TableState};
use crate::ui::views::op_page;
use leptos::prelude::*;
use std::sync::Arc;

/// Bytes in the plugin's KB.
const KB: f64 = 1024.0;

#[component]
pub fn TorchMemory(file_id: u32, details: FileDetails) -> impl IntoView {
    let csv_name = op_page::csv_name(&details, "torch_memory");
    torch_page(
        ("torch-memory", "PyTorch Memory", "Reading the memory events…"),
        &details,
        move || request::TorchMemory { file_id },
        move |v| view! { <Page v csv_name=csv_name.clone() /> }.into_any(),
    )
}

#[component]
fn Page(v: Arc<MemoryPage>, csv_name: String) -> impl IntoView {
    let first = v.devices.iter().position(|d| d.name == v.default_device).unwrap_or(0);
    let picked = RwSignal::new(first);
    let buttons = v
        .devices
        .iter()
        .enumerate()
        .map(|(i, d)| {
            view! {
                <button class="seg" data-device=d.name.clone() aria-pressed=move || (picked.get() == i).to_string() on:click=move |_| picked.set(i)>
                    {d.name.clone()}
                </button>
            }
        })
        .collect_view();
    let device = move || {
        let at = picked.get();
        (at < v.devices.len()).then(|| view! { <Device d=Arc::new(DeviceOf { page: v.clone(), at }) csv_name=csv_name.clone() /> })
    };
    view! {
        <div class="torch-chart-head">
            <span class="muted">"Device"</span>
            <div class="segmented" role="group" aria-label="Device" data-testid="torch-memory-devices">{buttons}</div>
        </div>
        {device}
    }
}

/// One device of the reply, which the view's tables and chart read in place: a 1 GB trace's
/// device holds some 365,000 events and 780,000 curve points, and a copy of them took tens of ms of
/// the page's thread.
pub struct DeviceOf {
    page: Arc<MemoryPage>,
    at: usize,
}

impl std::ops::Deref for DeviceOf {
    type Target = MemoryDevice;

    fn deref(&self) -> &MemoryDevice {
        &self.page.devices[self.at]
    }
}

/// One device's figures, curve and tables.
#[component]
fn Device(d: Arc<DeviceOf>, csv_name: String) -> impl IntoView {
    let key = d.name.clone();
    let peak = match d.peak_mb {
        Some(mb) => {
            view! { <span>"Peak allocated " <BytesIn metric="peak_memory_mb" value=mb unit_bytes=MB key=key.clone() /></span> }.into_any()
        }
        None => view! { <span class="muted">"No curve for this device"</span> }.into_any(),
    };
    let base = csv_name.trim_end_matches(".csv").to_string();
    // The tables are built in a task of their own after the second frame, as the Memory Profile's
    // panel does: the first frame lays out the figures and the chart (whose width arrives then), the
    // second draws the chart, the task after it builds the tables and the third frame lays them out.
    // The reply is then not one long task of building, laying out and drawing all of them.
    let tables_built = RwSignal::new(false);
    request_animation_frame(move || {
        request_animation_frame(move || {
            set_timeout(
                move || {
                    tables_built.try_set(true);
                },
                std::time::Duration::ZERO,
            )
        })
    });
    let tables = {
        let (d, key) = (d.clone(), key.clone());
        move || {
            tables_built.get().then(|| {
                view! {
                    <section>
                        <h2>"Memory events"</h2>
                        <EventTable d=d.clone() csv_name=format!("{base}_{key}_events.csv") />
                    </section>
                    <section>
                        <h2>"Memory by operator"</h2>
                        <OperatorTable d=d.clone() csv_name=format!("{base}_{key}_operators.csv") />
                    </section>
                }
            })
        }
    };
    view! {
        <div class="fos-summary" data-testid="torch-memory-summary" data-device=key.clone()>
            {peak}
            <span><Count metric="memory_event_count" value=d.events.op.len() as u64 key=key.clone() /> " allocations and frees"</span>
            <span><Count metric="memory_operator_count" value=d.ops.name.len() as u64 key=key.clone() /> " operators allocated"</span>
        </div>
        {(!d.curve.time_ms.is_empty()).then(|| view! { <MemoryChart d=d.clone() device=key.clone() /> })}
        <div class="torch-memory-tables" data-testid="torch-memory-tables" data-loading=move || (!tables_built.get()).to_string()>{tables}</div>
    }
}

/// A size in KB, shown in the page's byte unit.
fn kb_column<T: Send + Sync + 'static>(
    (id, label, metric): (&'static str, &'static str, &'static str),
    key: fn(&T, usize) -> String,
    get: fn(&T, usize) -> f64,
) -> Column<Row<T>> {
    Column::new(id, label, move |r: &Row<T>, _| {
        view! { <BytesIn metric value=get(&r.cols, r.i) unit_bytes=KB key=key(&r.cols, r.i) /> }.into_any()
    })
    .right()
    .width("92px")
    .sort_by(move |a, b| get(&a.cols, a.i).total_cmp(&get(&b.cols, b.i)))
    .csv(metric, move |r| get(&r.cols, r.i).to_string())
}

/// A time since the profiler started, or `–` where the event has none (an allocation never freed, a
/// free of memory allocated before the trace).
fn time_column(
    (id, label, metric): (&'static str, &'static str, &'static str),
    get: fn(&DeviceOf, usize) -> Option<f64>,
) -> Column<Row<DeviceOf>> {
    Column::new(id, label, move |r: &Row<DeviceOf>, _| match get(&r.cols, r.i) {
        Some(us) => view! { <Duration metric value_us=us key=event_key(&r.cols, r.i) /> }.into_any(),
        None => view! { <span class="muted" data-metric=metric data-key=event_key(&r.cols, r.i) data-value="">"–"</span> }.into_any(),
    })
    .right()
    .width("92px")
    .sort_by(move |a, b| get(&a.cols, a.i).unwrap_or(-1.0).total_cmp(&get(&b.cols, b.i).unwrap_or(-1.0)))
    .csv(metric, move |r| get(&r.cols, r.i).map(|v| v.to_string()).unwrap_or_default())
}

/// Events are named by their place in the plugin's list (an operator allocates many times).
fn event_key(_: &DeviceOf, i: usize) -> String {
    (i + 1).to_string()
}

#[component]
fn EventTable(d: Arc<DeviceOf>, csv_name: String) -> impl IntoView {
    let k = Cols::<DeviceOf> { key: event_key };
    let columns = vec![
        k.text("op", "Operator", "operator", |c, i| c.events.op_name(i)).class("op"),
        kb_column(("size", "Size", "size_kb"), event_key, |c, i| c.events.size_kb[i]),
        time_column(("alloc", "Allocated at", "allocation_time_us"), |c, i| c.events.allocation_us[i]),
        time_column(("release", "Released at", "release_time_us"), |c, i| c.events.release_us[i]),
        time_column(("duration", "Duration", "duration_us"), |c, i| c.events.duration_us[i]),
    ];
    let n = d.events.op.len();
    let spec = TableSpec::new("ops-table compact torch-memory-events", columns)
        .testid("torch-memory-events")
        .filter("Filter by operator", "torch-memory-event-filter", |r: &Row<DeviceOf>| vec![r.cols.events.op_name(r.i)])
        .filter_always()
        .counts("torch-memory-event-counts", "shown_events", "total_events")
        .csv(csv_name, "torch-memory-events-csv")
        .row_attrs(|r, _| vec![("data-event", event_key(&r.cols, r.i))])
        .max_height(380.0);
    view! { <Table spec rows=rows(&d, n) state=TableState::new() /> }
}

fn op_key(c: &DeviceOf, i: usize) -> String {
    c.ops.name[i].clone()
}

#[component]
fn OperatorTable(d: Arc<DeviceOf>, csv_name: String) -> impl IntoView {
    let k = Cols::<DeviceOf> { key: op_key };
    let columns = vec![
        k.text("name", "Operator", "name", |c, i| &c.ops.name[i]).class("op"),
        k.count("calls", "Calls", "calls", |c, i| c.ops.calls[i]).width("60px"),
        kb_column(("increase", "Size increase", "size_increase_kb"), op_key, |c, i| c.ops.size_increase_kb[i]),
        kb_column(("self_increase", "Self size increase", "self_size_increase_kb"), op_key, |c, i| c.ops.self_size_increase_kb[i]),
        k.count("allocs", "Allocations", "allocation_count", |c, i| c.ops.allocation_count[i]).width("72px"),
        k.count("self_allocs", "Self allocations", "self_allocation_count", |c, i| c.ops.self_allocation_count[i]).width("72px"),
        kb_column(("alloc_size", "Allocation size", "allocation_size_kb"), op_key, |c, i| c.ops.allocation_size_kb[i]),
        kb_column(("self_alloc_size", "Self allocation size", "self_allocation_size_kb"), op_key, |c, i| c.ops.self_allocation_size_kb[i]),
    ];
    let n = d.ops.name.len();
    // The plugin's first sort: self size increase, largest first.
    let spec = TableSpec::new("ops-table compact torch-memory-ops", columns)
        .testid("torch-memory-operators")
        .filter("Filter by operator", "torch-memory-op-filter", |r: &Row<DeviceOf>| vec![r.cols.ops.name[r.i].as_str()])
        .filter_always()
        .counts("torch-memory-op-counts", "shown_operators", "total_operators")
        .csv(csv_name, "torch-memory-ops-csv")
        .max_height(380.0);
    view! { <Table spec rows=rows(&d, n) state=TableState::sorted("self_increase", true) /> }
}
