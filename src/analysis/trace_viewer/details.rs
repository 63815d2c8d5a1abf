//! One event in full, read from the file when it is clicked: name, times, self time, every argument
//! as XProf shows it, and its flow (the `flow` stat XProf links events with).

use super::event_text::{EventText, PlaneText};
use super::store::{Source, TraceStore};
use super::summary::child_time_ps;
use crate::analysis::preprocess::threadpool;
use crate::decode::xplane::{EventAt, IdTable, Want, XSpace};
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
}

/// The details of `event` (an index into the store's columns); `None` for an index out of range.
pub fn details(space: &XSpace, store: &TraceStore, event: u32) -> Result<Option<EventDetails>, DecodeError> {
    let Some(thread) = store.thread_of(event) else { return Ok(None) };
    let text = match store.source(event) {
        Source::Region(_) => EventText { name: threadpool::REGION.into(), args: Vec::new() },
        Source::File { plane, line, index } => {
            let (plane, line) = (&space.planes[plane], &space.planes[plane].lines[line]);
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
                described = Some(text.describe(ev.header.metadata_id, &stats)?);
                Ok(())
            })?;
            match described {
                Some(d) => d,
                None => return Ok(None),
            }
        }
    };
    let i = event as usize;
    let duration_ps = store.duration_ps()[i];
    let flow = text.args.iter().find(|(k, _)| k == FLOW).and_then(|(_, v)| v.parse::<u64>().ok()).map(Flow::from_stat);
    Ok(Some(EventDetails {
        event,
        pid: thread.pid,
        tid: thread.tid,
        thread_name: thread.name.clone(),
        name: text.name,
        start_ps: store.start_ps()[i],
        duration_ps,
        self_time_ps: duration_ps.max(0) - child_time_ps(store, thread, event..event + 1)[0],
        depth: store.depth()[i],
        args: text.args,
        flow,
    }))
}
