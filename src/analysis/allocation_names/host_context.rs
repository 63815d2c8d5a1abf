//! Where each allocator event happened: the host events around it on its own thread's line.
//!
//! XLA's allocator events carry no op on a JAX trace, but they are recorded on the thread that asked for
//! the memory, inside the profiler's own host events (TraceMe): `Build buffer allocations` inside a
//! `…LoadedExecutable::Execute` (a module's run), `BufferFromHostBuffer` under `DevicePut` (an input
//! copied to the device), `create redzone buffers` or any event on a `tf_pjrt_compile_thread_pool` line
//! (the compiler autotuning), and the Python tracer's `$file.py:line function` frames above them. A
//! line's events are written when they end, not in start order, so each line is sorted by start before
//! the enclosing events of an allocator event are read off a stack.

use crate::analysis::memory_events::{Activity, MemoryEvent, Reader};
use crate::decode::xplane::{IdTable, Plane, XSpace};
use crate::decode::DecodeError;
use crate::fast_hash::FastMap;
use std::borrow::Cow;
use std::cmp::Reverse;

/// What the host was doing when an allocator event happened. Host events are named by their metadata
/// id ([`Scanned::event_name`]): an allocator event's place is read for every event, its text only
/// for each distinct name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Place {
    /// Inside a module's run: `run` indexes [`Scanned::runs`]; `building` is whether the event lies in
    /// the run's `Build buffer allocations`, where the run allocates its buffer assignment.
    Run { run: usize, building: bool },
    /// On a compiler thread or inside the compiler's autotuning (`create redzone buffers`): the
    /// compiler's event, else the innermost one; `None` on a compiler thread inside nothing.
    Compile { event: Option<i64> },
    /// Copying an input to the device (`BufferFromHostBuffer`, `DevicePut`, `LinearizeHostBufferInto`).
    Transfer { event: i64 },
    /// Inside host events of no kind above: the innermost one that is not a Python frame; `None`
    /// inside Python frames only.
    Other { event: Option<i64> },
    /// Inside no host event at all.
    Outside,
}

/// One module run: the `Build buffer allocations` (else the `Execute`) event that encloses its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HostRun {
    /// The module's name where the events around say it (`CommonPjRtLoadedExecutable::Execute
    /// (jit_train_step)`, else `PjitFunction(train_step)` → `jit_train_step`).
    pub(super) module_name: Option<String>,
    /// The enclosing event's start in the trace (its line's start plus its offset), ps.
    pub(super) start_trace_ps: i64,
}

/// One allocator event and where it happened, in the file order XProf reads them in.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct HostEvent<'a> {
    pub(super) memory_id: Cow<'a, str>,
    pub(super) activity: Activity,
    pub(super) offset_ps: i64,
    pub(super) address: u64,
    pub(super) allocation_bytes: i64,
    pub(super) requested_bytes: i64,
    pub(super) place: Place,
    /// The innermost Python frame around it (its event's metadata id), where the Python tracer ran.
    pub(super) python_frame: Option<i64>,
}

/// Every allocator event of the host plane with its place, and the module runs found.
#[derive(Default)]
pub(super) struct Scanned<'a> {
    /// The host plane, which names the places' events.
    plane: Option<&'a Plane>,
    pub(super) events: Vec<HostEvent<'a>>,
    pub(super) runs: Vec<HostRun>,
    /// Whether any line holds Python tracer frames.
    pub(super) python_tracer: bool,
}

impl<'a> Scanned<'a> {
    /// The name of host event metadata `id`.
    pub(super) fn event_name(&self, id: i64) -> &'a str {
        self.plane.map_or("", |p| p.event_name(id))
    }

    /// The text of a Python frame (`pxla.py:399 __call__`).
    pub(super) fn python_frame(&self, id: i64) -> String {
        self.event_name(id).trim_start_matches('$').to_string()
    }
}

/// What an event's name says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Class {
    Python,
    Build,
    Execute,
    Compile,
    Transfer,
    #[default]
    Plain,
}

fn class_of(name: &str) -> Class {
    if name.starts_with('$') {
        Class::Python
    } else if name == "Build buffer allocations" {
        Class::Build
    } else if name.contains("LoadedExecutable::Execute") || name.contains("EnqueueExecution") {
        Class::Execute
    } else if name.contains("redzone") || name.contains("utotun") || name.starts_with("Compile") {
        Class::Compile
    } else if name.contains("BufferFromHostBuffer") || name.starts_with("DevicePut") || name.contains("LinearizeHostBufferInto") {
        Class::Transfer
    } else {
        Class::Plain
    }
}

/// The module a run event's name gives: `CommonPjRtLoadedExecutable::Execute (jit_f)` → `jit_f`,
/// `PjitFunction(f)` → `jit_f` (JAX names a jitted function's module so).
fn module_named_by(name: &str) -> Option<String> {
    if let Some(rest) = name.strip_prefix("CommonPjRtLoadedExecutable::Execute (") {
        return rest.strip_suffix(')').map(str::to_string);
    }
    name.strip_prefix("PjitFunction(").and_then(|r| r.strip_suffix(')')).map(|f| format!("jit_{f}"))
}

/// A line whose every event is the compiler's (its autotuning runs candidate kernels there).
fn is_compile_line(name: &str) -> bool {
    name.contains("compile")
}

/// An interval of a line: start, end (ps, the line's offsets) and metadata id.
type Interval = (i64, i64, i64);

/// Reads every allocator event of plane `plane_index` (the host plane), which lie on lines
/// `with_events` (the Memory Profile found them there), with its place.
///
/// Only those lines are read whole; the others only for Python frames, where the plane names any and
/// none has been seen yet. An allocator event's place depends only on the intervals that contain it,
/// so of each line only those are sorted and swept (a line of a TensorFlow executor holds a few
/// allocations among thousands of ops); and each event's kind is looked up by its metadata id in a
/// table made once.
pub(super) fn scan<'a>(space: &'a XSpace, plane_index: usize, plane: &'a Plane, with_events: &[usize]) -> Result<Scanned<'a>, DecodeError> {
    let mut out = Scanned { plane: Some(plane), ..Scanned::default() };
    let Some(reader) = Reader::new(plane_index, plane) else { return Ok(out) };
    let classes = IdTable::new(plane.meta.event_metadata.iter().map(|(&id, m)| (id, class_of(&m.name))));
    let any_python = plane.meta.event_metadata.keys().any(|&id| classes.get(id) == Class::Python);
    let mut run_ids: FastMap<(usize, i64), usize> = FastMap::default();
    let no_stats = IdTable::new(std::iter::empty());
    let (mut intervals, mut around): (Vec<Interval>, Vec<Interval>) = (Vec::new(), Vec::new());
    let mut event = MemoryEvent::default();
    for (line_index, line) in with_events.iter().filter_map(|&i| Some((i, plane.lines.get(i)?))) {
        intervals.clear();
        // Room for the whole line at once, not by doubling (and copying) a vector of up to a million
        // intervals; one that cannot be had grows as usual.
        let _ = intervals.try_reserve(line.event_count);
        let first = out.events.len();
        space.for_each_raw_event(
            line,
            &no_stats,
            |_| true,
            |event_index, ev| {
                if reader.read_into(line, line_index, event_index, ev, &mut event)? {
                    out.events.push(HostEvent {
                        memory_id: std::mem::take(&mut event.memory_id),
                        activity: event.activity,
                        offset_ps: event.offset_ps,
                        address: event.address,
                        allocation_bytes: event.allocation_bytes,
                        requested_bytes: event.requested_bytes,
                        place: Place::Outside,
                        python_frame: None,
                    });
                } else if ev.header.duration_ps > 0 {
                    let h = ev.header;
                    intervals.push((h.offset_ps, h.offset_ps.saturating_add(h.duration_ps), h.metadata_id));
                }
                Ok(())
            },
        )?;
        if any_python && !out.python_tracer {
            out.python_tracer = intervals.iter().any(|&(_, _, id)| classes.get(id) == Class::Python);
        }
        let line_mems = &mut out.events[first..];
        if line_mems.is_empty() {
            continue;
        }
        let mut order: Vec<usize> = (0..line_mems.len()).collect();
        order.sort_by_key(|&i| line_mems[i].offset_ps);
        // Only the intervals around some allocator event: the first event at or after an interval's
        // start must not be after its end.
        let times: Vec<i64> = order.iter().map(|&i| line_mems[i].offset_ps).collect();
        intervals.retain(|&(start, end, _)| times.get(times.partition_point(|&t| t < start)).is_some_and(|&t| t <= end));
        intervals.sort_by_key(|&(start, end, _)| (start, Reverse(end)));
        let compile_line = is_compile_line(&line.header.name);
        let line_start_ps = line.header.timestamp_ns.saturating_mul(1000);
        let mut stack: Vec<Interval> = Vec::new();
        let mut next = 0;
        for i in order {
            let t = line_mems[i].offset_ps;
            while next < intervals.len() && intervals[next].0 <= t {
                let iv = intervals[next];
                while stack.last().is_some_and(|top| top.1 < iv.0) {
                    stack.pop();
                }
                stack.push(iv);
                next += 1;
            }
            while stack.last().is_some_and(|top| top.1 < t) {
                stack.pop();
            }
            // Innermost first; an interval that a longer child outlived is skipped, not trusted.
            around.clear();
            around.extend(stack.iter().rev().filter(|iv| iv.1 >= t));
            (line_mems[i].place, line_mems[i].python_frame) =
                place_of(&around, plane, &classes, compile_line, line_index, line_start_ps, &mut run_ids, &mut out.runs);
        }
    }
    let python = |id| classes.get(id) == Class::Python;
    for (i, line) in plane.lines.iter().enumerate() {
        if !any_python || out.python_tracer {
            break;
        }
        if with_events.binary_search(&i).is_err() {
            space.for_each_raw_event(line, &no_stats, python, |_, ev| {
                out.python_tracer |= ev.header.duration_ps > 0;
                Ok(())
            })?;
        }
    }
    Ok(out)
}

/// The place of an event inside `around` (innermost first), and its innermost Python frame.
#[allow(clippy::too_many_arguments)]
fn place_of(
    around: &[Interval],
    plane: &Plane,
    classes: &IdTable<Class>,
    compile_line: bool,
    line_index: usize,
    line_start_ps: i64,
    run_ids: &mut FastMap<(usize, i64), usize>,
    runs: &mut Vec<HostRun>,
) -> (Place, Option<i64>) {
    let first = |c: Class| around.iter().find(|iv| classes.get(iv.2) == c);
    let python_frame = first(Class::Python).map(|iv| iv.2);
    let innermost_plain = around.iter().find(|iv| classes.get(iv.2) != Class::Python).map(|iv| iv.2);
    if compile_line || first(Class::Compile).is_some() {
        let event = first(Class::Compile).map(|iv| iv.2).or(innermost_plain);
        return (Place::Compile { event }, python_frame);
    }
    let build = first(Class::Build);
    if let Some(anchor) = build.or(first(Class::Execute)) {
        let key = (line_index, anchor.0);
        let run = *run_ids.entry(key).or_insert_with(|| {
            let module_name = around.iter().find_map(|iv| module_named_by(plane.event_name(iv.2)));
            runs.push(HostRun { module_name, start_trace_ps: line_start_ps.saturating_add(anchor.0) });
            runs.len() - 1
        });
        return (Place::Run { run, building: build.is_some() }, python_frame);
    }
    if let Some(iv) = first(Class::Transfer) {
        return (Place::Transfer { event: iv.2 }, python_frame);
    }
    match innermost_plain {
        Some(event) => (Place::Other { event: Some(event) }, python_frame),
        None if python_frame.is_some() => (Place::Other { event: None }, python_frame),
        None => (Place::Outside, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_what_events_are() {
        assert_eq!(class_of("$pxla.py:399 __call__"), Class::Python);
        assert_eq!(class_of("Build buffer allocations"), Class::Build);
        assert_eq!(class_of("[0] PjRtStreamExecutorRawLoadedExecutable::Execute"), Class::Execute);
        assert_eq!(class_of("PjRtStreamExecutorLoadedExecutable::EnqueueExecution"), Class::Execute);
        assert_eq!(class_of("create redzone buffers"), Class::Compile);
        assert_eq!(class_of("PjRtCApiCompiler::BufferFromHostBuffer(s32[])"), Class::Transfer);
        assert_eq!(class_of("DevicePutWithSharding"), Class::Transfer);
        assert_eq!(class_of("train"), Class::Plain);
        assert_eq!(module_named_by("CommonPjRtLoadedExecutable::Execute (jit_train_step)").as_deref(), Some("jit_train_step"));
        assert_eq!(module_named_by("PjitFunction(matmul)").as_deref(), Some("jit_matmul"));
        assert_eq!(module_named_by("ExecuteReplicated.__call__"), None);
    }
}
