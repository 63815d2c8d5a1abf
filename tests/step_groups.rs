//! XProf's step grouping as Tidemark computes it (nesting kept as ranges, contexts bucketed, fan-in
//! through hub nodes) against a plain transcription of XProf's algorithm (an explicit parent → child
//! edge list, every producer joined to every consumer, breadth-first searches over lists), on many
//! random traces: nested and overlapping events over several lines, asynchronous events, contexts of
//! every fan-in and fan-out (past XProf's limit of 64 too), and roots of several levels nested in one
//! another. Some events are allocator events (`MemoryAllocation`), some of them with grouping stats
//! of their own: the groups of just those, as the Memory Profile asks for them, and its result read in
//! one pass or by two threads, must agree too.

use prost::Message;
use tidemark::analysis::memory_profile::{self, Scan};
use tidemark::analysis::step_groups::Grouper;
use tidemark::decode::wire::put_len_field;
use tidemark::decode::xplane::{IdTable, XSpace};
use tidemark::proto::xplane as xp;

/// One generated event: its line, times, flags and stats.
#[derive(Clone, Debug)]
struct Ev {
    line: usize,
    begin: i64,
    end: i64,
    is_async: bool,
    root_level: i64,
    producer: Option<u64>,
    consumer: Option<u64>,
    /// The process of its context ends (`_pid`), if it names one (the plane names none).
    pid: Option<i64>,
    /// A `MemoryAllocation` event (else an op).
    memory: bool,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Events of one line in start order: nested intervals (children inside parents), sometimes
/// overlapping their neighbour instead, sometimes asynchronous.
fn line_events(rng: &mut Rng, line: usize, count: usize, contexts: u64, out: &mut Vec<Ev>) {
    let mut t = 0i64;
    let mut stack: Vec<i64> = Vec::new();
    for _ in 0..count {
        while let Some(&end) = stack.last() {
            if rng.below(3) == 0 || t >= end - 2 {
                stack.pop();
                t = t.max(end);
            } else {
                break;
            }
        }
        t += rng.below(3) as i64;
        let room = stack.last().map_or(1000, |&end| end - t);
        let len = if room <= 1 { 1 } else { 1 + rng.below(room as u64) as i64 };
        // Now and then an event that sticks out of its parent.
        let end = if rng.below(10) == 0 { t + len + 5 } else { t + len };
        let context = |rng: &mut Rng| (rng.below(3) == 0).then(|| rng.below(contexts));
        let ev = Ev {
            line,
            begin: t,
            end,
            is_async: rng.below(12) == 0,
            root_level: match rng.below(40) {
                0 => 1,
                1 => 2,
                _ => 0,
            },
            producer: context(rng),
            consumer: context(rng),
            pid: (rng.below(6) == 0).then(|| rng.below(2) as i64),
            memory: rng.below(4) == 0,
        };
        // Allocator events seldom have a grouping stat of their own (so that most traces have none,
        // and the two-thread scan keeps its fast way).
        let ev = if ev.memory && rng.below(16) != 0 {
            Ev { is_async: false, root_level: 0, producer: None, consumer: None, pid: None, ..ev }
        } else {
            ev
        };
        if !ev.is_async {
            stack.push(end);
        }
        out.push(ev);
    }
}

const STATS: [&str; 5] = ["_r", "_a", "_pt", "_p", "_c"];

/// The trace as an XSpace: one `/host:CPU` plane, stat metadata ids 1..=5 for [`STATS`] plus `_ct`
/// (6) and `_pid` (9); producers and consumers of context type 7. Memory events (event metadata 2) carry an
/// allocator name (stat 7) and their position in `events` as their heap size (stat 8). Event
/// `late_header`, if any, has its time fields written after its stats (protobuf allows any order).
fn encode(events: &[Ev], lines: usize, late_header: Option<usize>) -> Vec<u8> {
    let int = |id: i64, v: i64| xp::XStat { metadata_id: id, value: Some(xp::x_stat::Value::Int64Value(v)) };
    let mut stat_metadata: std::collections::BTreeMap<i64, xp::XStatMetadata> = STATS
        .iter()
        .enumerate()
        .map(|(i, n)| (i as i64 + 1, xp::XStatMetadata { id: i as i64 + 1, name: n.to_string(), ..Default::default() }))
        .collect();
    for (id, name) in [(6, "_ct"), (7, "allocator_name"), (8, "bytes_allocated"), (9, "_pid")] {
        stat_metadata.insert(id, xp::XStatMetadata { id, name: name.into(), ..Default::default() });
    }
    let event_metadata = [(1, "op"), (2, "MemoryAllocation")]
        .into_iter()
        .map(|(id, name)| (id, xp::XEventMetadata { id, name: name.into(), ..Default::default() }))
        .collect();
    let mut plane = xp::XPlane { id: 1, name: "/host:CPU".into(), event_metadata, stat_metadata, ..Default::default() }.encode_to_vec();
    for l in 0..lines {
        let evs: Vec<(usize, xp::XEvent)> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.line == l)
            .map(|(i, e)| {
                let mut stats = Vec::new();
                if e.memory {
                    let name = xp::XStat { metadata_id: 7, value: Some(xp::x_stat::Value::StrValue("bfc".into())) };
                    stats.extend([name, int(8, i as i64)]);
                }
                if e.root_level > 0 {
                    stats.push(int(1, e.root_level));
                }
                if e.is_async {
                    stats.push(int(2, 1));
                }
                if let Some(p) = e.producer {
                    stats.extend([int(3, 7), int(4, p as i64)]);
                }
                if let Some(c) = e.consumer {
                    stats.extend([int(6, 7), int(5, c as i64)]);
                }
                if let Some(pid) = e.pid {
                    stats.push(int(9, pid));
                }
                let event = xp::XEvent {
                    metadata_id: if e.memory { 2 } else { 1 },
                    data: Some(xp::x_event::Data::OffsetPs(e.begin)),
                    duration_ps: e.end - e.begin,
                    stats,
                };
                (i, event)
            })
            .collect();
        let mut line = xp::XLine { id: l as i64, name: format!("thread {l}"), ..Default::default() }.encode_to_vec();
        for (i, mut event) in evs {
            let bytes = if Some(i) == late_header {
                let (data, duration) = (event.data.take(), std::mem::take(&mut event.duration_ps));
                let mut bytes = event.encode_to_vec();
                bytes.extend(xp::XEvent { metadata_id: 0, data, duration_ps: duration, stats: Vec::new() }.encode_to_vec());
                bytes
            } else {
                event.encode_to_vec()
            };
            put_len_field(&mut line, 4, &bytes);
        }
        put_len_field(&mut plane, 3, &line);
    }
    let mut space = Vec::new();
    put_len_field(&mut space, 1, &plane);
    space
}

/// XProf's grouping written out plainly, over `events` in file order (lines in order).
fn reference(events: &[Ev]) -> Vec<Option<i64>> {
    let n = events.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut parents: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut edge = |p: usize, c: usize| {
        children[p].push(c);
        parents[c].push(p);
    };
    // Nesting: the innermost open event on the same line that contains the event.
    let mut open: Vec<usize> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i > 0 && events[i - 1].line != e.line {
            open.clear();
        }
        if e.is_async {
            continue;
        }
        while let Some(&p) = open.last() {
            if events[p].begin <= e.begin && e.end <= events[p].end {
                edge(p, i);
                break;
            }
            open.pop();
        }
        open.push(i);
    }
    // Contexts: every producer is a parent of every consumer of its process, unless both sides have
    // 64 or more.
    let mut ids: Vec<(u64, Option<i64>)> =
        events.iter().flat_map(|e| [e.producer.map(|p| (p, e.pid)), e.consumer.map(|c| (c, e.pid))]).flatten().collect();
    ids.sort_unstable();
    ids.dedup();
    for (id, pid) in ids {
        let producers: Vec<usize> = (0..n).filter(|&i| events[i].producer == Some(id) && events[i].pid == pid).collect();
        let consumers: Vec<usize> = (0..n).filter(|&i| events[i].consumer == Some(id) && events[i].pid == pid).collect();
        if producers.len() >= 64 && consumers.len() >= 64 {
            continue;
        }
        for &p in &producers {
            for &c in &consumers {
                edge(p, c);
            }
        }
    }
    let mut roots: Vec<usize> = (0..n).filter(|&i| events[i].root_level > 0).collect();
    roots.sort_by_key(|&i| (std::cmp::Reverse(events[i].root_level), events[i].begin, i));
    let mut group: Vec<Option<i64>> = vec![None; n];
    let mut next = 0;
    for r in roots {
        if group[r].is_some() {
            continue;
        }
        // An ancestor root of the same level takes this one in.
        let mut seen = vec![false; n];
        seen[r] = true;
        let mut queue: std::collections::VecDeque<usize> = parents[r].iter().copied().collect();
        let mut covered = false;
        while let Some(a) = queue.pop_front() {
            if std::mem::replace(&mut seen[a], true) {
                continue;
            }
            if events[a].root_level == events[r].root_level {
                covered = true;
                break;
            }
            queue.extend(parents[a].iter().copied());
        }
        if covered {
            continue;
        }
        let mut seen = vec![false; n];
        let mut queue = std::collections::VecDeque::from([r]);
        seen[r] = true;
        while let Some(v) = queue.pop_front() {
            if group[v].is_some() {
                continue;
            }
            group[v] = Some(next);
            for &c in &children[v] {
                if !std::mem::replace(&mut seen[c], true) {
                    queue.push_back(c);
                }
            }
        }
        next += 1;
    }
    group
}

/// The groups Tidemark gives the events that `tracked` picks by event metadata id, in file order.
fn grouped_by_tidemark(bytes: Vec<u8>, tracked: impl Fn(i64) -> bool) -> Vec<Option<i64>> {
    let space = XSpace::index(bytes, &mut |_, _| {}).unwrap();
    let plane = &space.planes[0];
    let mut grouper = Grouper::new(&space, plane, &tracked);
    let all = IdTable::new(plane.meta.stat_metadata.keys().map(|&id| (id, true)));
    let mut count = 0;
    for line in &plane.lines {
        grouper.start_line(line);
        space
            .for_each_raw_event(
                line,
                &all,
                |_| true,
                |_, ev| {
                    grouper.push(ev).unwrap();
                    count += usize::from(tracked(ev.header.metadata_id));
                    Ok(())
                },
            )
            .unwrap();
    }
    let groups = grouper.finish();
    (0..count).map(|i| groups.group_id(i)).collect()
}

#[test]
fn grouping_equals_xprofs_algorithm_on_random_traces() {
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    let (mut grouped, mut memory_grouped) = (0, 0);
    for trace in 0..300 {
        let lines = 1 + rng.below(4) as usize;
        // Few context ids make contexts with several producers and consumers (hub nodes).
        let contexts = 1 + rng.below(40);
        let mut events = Vec::new();
        for l in 0..lines {
            let count = 1 + rng.below(120) as usize;
            line_events(&mut rng, l, count, contexts, &mut events);
        }
        if trace % 50 == 0 {
            // A runaway context: 70 producers and 70 consumers, which XProf leaves unconnected.
            for e in events.iter_mut().take(140).enumerate() {
                let (i, e) = e;
                (e.producer, e.consumer) = if i % 2 == 0 { (Some(999), None) } else { (None, Some(999)) };
            }
        }
        let want = reference(&events);
        // Every third trace has a memory event whose time fields follow its stats, which the
        // two-thread scan's grouping pass does not read to (it must notice, and fall back).
        let late_header = (trace % 3 == 1).then(|| events.iter().position(|e| e.memory)).flatten();
        let bytes = encode(&events, lines, late_header);
        assert_eq!(grouped_by_tidemark(bytes.clone(), |_| true), want, "trace {trace}: {events:?}");
        // Only the memory events, as the Memory Profile asks: the other events are nodes only where
        // they can pass a group on, and the memory events' groups must not change for it.
        let memory_want: Vec<_> = want.iter().zip(&events).filter(|(_, e)| e.memory).map(|(g, _)| *g).collect();
        assert_eq!(grouped_by_tidemark(bytes.clone(), |m| m == 2), memory_want, "trace {trace}: memory events");
        // The two-thread scan skips the memory events' own stats in the grouping pass, and must fall
        // back to one pass when one of them has a context or root stat.
        let space = XSpace::index(bytes, &mut |_, _| {}).unwrap();
        let once = memory_profile::analyze_with(&space, Scan::Once).unwrap();
        assert_eq!(memory_profile::analyze_with(&space, Scan::Parallel).unwrap(), once, "trace {trace}: two threads");
        grouped += want.iter().filter(|g| g.is_some()).count();
        memory_grouped += memory_want.iter().filter(|g| g.is_some()).count();
    }
    assert!(grouped > 5_000, "the traces group enough events to mean something: {grouped}");
    assert!(memory_grouped > 1_000, "and enough memory events: {memory_grouped}");
}
