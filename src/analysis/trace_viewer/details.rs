//! One event in full, read from the file when it is clicked: name, times, self time, every argument
//! as XProf shows it, its flow (a `flow` stat, where the file has one) and its producer / consumer
//! contexts (`_pt`/`_p`, `_ct`/`_c`: the links XProf turns into flow arrows between threads; XProf
//! hides these stats from the arguments).

use super::event_text::{EventText, PlaneText};
use super::store::{Source, TraceStore};
use super::summary::child_time_ps;
use crate::analysis::preprocess::threadpool;
use crate::decode::xplane::{EventAt, IdTable, StatValue, Want, XSpace};
use crate::decode::DecodeError;
use serde::{Deserialize, Serialize};

/// The stat XProf links events with (`StatType::kFlow`).
pub const FLOW: &str = "flow";

/// A `flow` stat's value unpacked (tsl `XFlow`: direction in the low 2 bits, then a 56-bit id, then a
/// 6-bit category).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    pub id: u64,
    /// 1: the flow ends here, 2: it starts here, 3: it passes through, 0: unspecified.
    pub direction: u8,
    pub category: u8,
}

impl Flow {
    pub fn from_stat(v: u64) -> Self {
        Flow { id: (v >> 2) & ((1 << 56) - 1), direction: (v & 3) as u8, category: (v >> 58) as u8 }
    }
}

/// One end of an inter-thread link: events with the same (type, id) as producer and consumer are linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextLink {
    /// `true` for a producer (`_pt`, `_p`), `false` for a consumer (`_ct`, `_c`).
    pub producer: bool,
    pub context_type: i64,
    pub id: u64,
}

/// The context stats, by role: producer type, producer id, consumer type, consumer id.
const CONTEXT_STATS: [&str; 4] = ["_pt", "_p", "_ct", "_c"];

/// The producer and consumer links among `stats` (metadata stats first, later ones win), as
/// (stat name, integer value) pairs.
fn context_links<'s>(stats: impl IntoIterator<Item = (&'s str, Option<i64>)>) -> Vec<ContextLink> {
    let mut v: [Option<i64>; 4] = [None; 4];
    for (name, value) in stats {
        if let (Some(role), Some(value)) = (CONTEXT_STATS.iter().position(|&n| n == name), value) {
            v[role] = Some(value);
        }
    }
    let link = |producer, t: Option<i64>, id: Option<i64>| Some(ContextLink { producer, context_type: t?, id: id? as u64 });
    [link(true, v[0], v[1]), link(false, v[2], v[3])].into_iter().flatten().collect()
}

/// An event in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventDetails {
    pub event: u32,
    pub pid: u32,
    pub tid: u32,
    pub thread_name: String,
    pub name: String,
    pub start_ps: i64,
    pub duration_ps: i64,
    /// Duration less the time of the events nested directly in it.
    pub self_time_ps: i64,
    pub depth: u16,
    /// As XProf shows them, sorted by name.
    pub args: Vec<(String, String)>,
    pub flow: Option<Flow>,
    pub contexts: Vec<ContextLink>,
    /// The event's category (`cat` of a Chrome trace event: `kernel`, `cpu_op`); empty for an XSpace
    /// event, which has none.
    #[serde(default)]
    pub category: String,
}

/// The details of `event` (an index into the store's columns); `None` for an index out of range.
pub fn details(space: &XSpace, store: &TraceStore, event: u32) -> Result<Option<EventDetails>, DecodeError> {
    let Some(source) = store.source(event) else { return Ok(None) };
    let (text, contexts) = match source {
        Source::Region(r) => {
            let stats = r.stats().map(|(name, value)| (name, Some(value)));
            (EventText { name: threadpool::REGION.into(), args: Vec::new() }, context_links(stats))
        }
        Source::Derived { plane, line, index } => {
            let Some(text) = store.derived().plane(plane).and_then(|d| d.text(line, index as usize)) else { return Ok(None) };
            (text, Vec::new())
        }
        // Not an XSpace's event (`super::kineto::details` reads those).
        Source::Given { .. } => return Ok(None),
        Source::File { plane: plane_index, line: line_index, index } => {
            let (plane, line) = (&space.planes[plane_index], &space.planes[plane_index].lines[line_index]);
            let mut at: Option<EventAt> = None;
            space.for_each_raw_event(
                line,
                &IdTable::new([]),
                |_| Want::Header,
                |i, ev| {
                    if i == index as usize {
                        at = Some(ev.at(i));
                    }
                    Ok(())
                },
            )?;
            let Some(at) = at else { return Ok(None) };
            let text = PlaneText::new(plane);
            let mut described = None;
            space.for_each_event_at(line, &[at], |_, ev| {
                let (stats, _) = ev.read_stats(|_| true)?;
                let metadata_stats = plane.meta.event_metadata.get(&ev.header.metadata_id).map(|m| m.stats.as_slice()).unwrap_or_default();
                // Context ids use all 64 bits: an unsigned one above i64::MAX keeps its bits.
                let int = |v: Option<StatValue>| v.and_then(|v| v.as_u64()).map(|x| x as i64);
                let mut named: Vec<(&str, Option<i64>)> =
                    metadata_stats.iter().map(|s| (plane.stat_name(s.metadata_id), int(plane.stat_value(s)))).collect();
                for s in &stats {
                    named.push((plane.stat_name(s.metadata_id), int(plane.raw_stat_value(s)?)));
                }
                described = Some((text.describe(ev.header.metadata_id, &stats)?, context_links(named), ev.header.metadata_id));
                Ok(())
            })?;
            let Some((mut text, contexts, metadata_id)) = described else { return Ok(None) };
            if let Some(d) = store.derived().plane(plane_index) {
                d.annotate(line_index, index as usize, metadata_id, &mut text);
            }
            (text, contexts)
        }
    };
    let flow = text.args.iter().find(|(k, _)| k == FLOW).and_then(|(_, v)| v.parse::<u64>().ok()).map(Flow::from_stat);
    let mut d = of_event(store, event, text.name, text.args, String::new());
    if let Some(d) = d.as_mut() {
        (d.flow, d.contexts) = (flow, contexts);
    }
    Ok(d)
}

/// The details of `event` named `name` with `args` (sorted by name) and `category`, its times, self
/// time and place read from the store; no flow or contexts. `None` for an index out of range.
pub fn of_event(store: &TraceStore, event: u32, name: String, args: Vec<(String, String)>, category: String) -> Option<EventDetails> {
    let thread = store.thread_of(event)?;
    let i = event as usize;
    let duration_ps = store.duration_ps(i);
    Some(EventDetails {
        event,
        pid: thread.pid,
        tid: thread.tid,
        thread_name: thread.name.clone(),
        name,
        start_ps: store.start_ps()[i],
        duration_ps,
        self_time_ps: duration_ps.max(0) - child_time_ps(store, thread, event..event + 1)[0],
        depth: store.depth()[i],
        args,
        flow: None,
        contexts: Vec::new(),
        category,
    })
}
