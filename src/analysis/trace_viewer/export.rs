//! XProf's trace_viewer JSON (the Chrome trace format): `tidemark trace-viewer --json` and the page's
//! "export visible range".
//!
//! As XProf writes it: `{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[`, then
//! per process (by pid) its `process_name` and `process_sort_index`, each of its threads' (by tid)
//! `thread_name` and `thread_sort_index`; then the events, line by line (the host plane first, then the
//! device planes, as XProf converts them), each thread-pool region after its line's events, a plane's
//! derived lines ([`super::derived`]) after its own; then `{}]}`.
//! An event is `{"ph":"X","pid","tid","ts","dur","name","args"}` with `ts`/`dur` in µs (ps / 10^6 as a
//! double, printed in the fewest digits that read back the same double) and its arguments sorted by
//! name ([`super::event_text`]); an event of zero duration is an instant, `{"ph":"i","s":"t",...}` with
//! no `dur`, as XProf 2.24 writes it.
//!
//! XProf keeps at most 5,000,000 events ([`XPROF_MAX_EVENTS`], the earliest ones); this export keeps
//! them all, and [`cap_cutoff`] says what XProf would have dropped.

use super::derived::{DerivedPlane, DerivedTimeline};
use super::event_text::PlaneText;
use super::layout::{self, Process};
use crate::analysis::preprocess::threadpool::{self, RegionFinder};
use crate::decode::xplane::{IdTable, XSpace};
use crate::decode::DecodeError;
use std::io::{self, Write};

/// XProf 2.24's cap on the events of a trace_viewer JSON (`GetTraceViewerMaxEvents`).
pub const XPROF_MAX_EVENTS: usize = 5_000_000;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("cannot write the JSON: {0}")]
    Io(#[from] io::Error),
}

/// Writes the trace viewer JSON of `space` to `out`: every event, or those that overlap `range_ps`
/// (start ≤ range end and end ≥ range start). Returns the number of events written.
pub fn write_json(space: &XSpace, range_ps: Option<(i64, i64)>, out: &mut impl Write) -> Result<usize, ExportError> {
    let derived = DerivedTimeline::build(space)?;
    let processes = layout::processes(space, &derived);
    out.write_all(br#"{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":["#)?;
    for p in &processes {
        write_metadata(p, out)?;
    }
    let mut written = 0;
    for p in &processes {
        written += write_events(space, p, derived.plane(p.plane), range_ps, out)?;
    }
    out.write_all(b"{}]}")?;
    Ok(written)
}

/// `s` as a JSON string, as serde_json writes it, without building it first: most names and values
/// need no escape and are written as they are.
fn write_str(out: &mut impl Write, s: &str) -> io::Result<()> {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return serde_json::to_writer(out, s).map_err(io::Error::other);
    }
    out.write_all(b"\"")?;
    out.write_all(s.as_bytes())?;
    out.write_all(b"\"")
}

fn write_int(out: &mut impl Write, n: impl itoa::Integer) -> io::Result<()> {
    out.write_all(itoa::Buffer::new().format(n).as_bytes())
}

fn write_metadata(p: &Process, out: &mut impl Write) -> io::Result<()> {
    let pid = p.pid;
    if !p.name.is_empty() {
        write!(out, r#"{{"ph":"M","pid":{pid},"name":"process_name","args":{{"name":"#)?;
        write_str(out, &p.name)?;
        out.write_all(b"}},")?;
    }
    write!(out, r#"{{"ph":"M","pid":{pid},"name":"process_sort_index","args":{{"sort_index":{pid}}}}},"#)?;
    for t in &p.threads {
        let tid = t.tid;
        if !t.name.is_empty() {
            write!(out, r#"{{"ph":"M","pid":{pid},"tid":{tid},"name":"thread_name","args":{{"name":"#)?;
            write_str(out, &t.name)?;
            out.write_all(b"}},")?;
        }
        write!(out, r#"{{"ph":"M","pid":{pid},"tid":{tid},"name":"thread_sort_index","args":{{"sort_index":{tid}}}}},"#)?;
    }
    Ok(())
}

/// Picoseconds as XProf's microseconds (`PicoToMicro`): a double, printed to read back the same.
pub fn micros(ps: i64) -> f64 {
    ps as f64 / 1e6
}

/// [`micros`] as `{}` prints it, written from the integer where that gives the same text: below
/// 10^15 ps the decimal `ps / 10^6` has at most 15 significant digits, so it is the one shortest
/// decimal that reads back as the double nearest it, which is what `{}` prints (in fixed notation).
fn write_micros(out: &mut impl Write, ps: i64) -> io::Result<()> {
    const EXACT_BELOW_PS: u64 = 1_000_000_000_000_000;
    let abs = ps.unsigned_abs();
    if abs >= EXACT_BELOW_PS {
        return write!(out, "{}", micros(ps));
    }
    if ps < 0 {
        out.write_all(b"-")?;
    }
    write_int(out, abs / 1_000_000)?;
    let fraction = abs % 1_000_000;
    if fraction == 0 {
        return Ok(());
    }
    let mut digits = *b".000000";
    let mut f = fraction;
    for d in digits[1..].iter_mut().rev() {
        *d = b'0' + (f % 10) as u8;
        f /= 10;
    }
    // Without trailing zeros; the fraction is not 0, so a digit other than 0 ends it.
    let end = digits.iter().rposition(|&d| d != b'0').map_or(digits.len(), |i| i + 1);
    out.write_all(&digits[..end])
}

fn write_event(
    out: &mut impl Write,
    pid: u32,
    tid: u32,
    start_ps: i64,
    duration_ps: i64,
    name: &str,
    args: &[(String, String)],
) -> io::Result<()> {
    out.write_all(if duration_ps == 0 { br#"{"ph":"i","s":"t","pid":"# } else { br#"{"ph":"X","pid":"# })?;
    write_int(out, pid)?;
    out.write_all(br#","tid":"#)?;
    write_int(out, tid)?;
    out.write_all(br#","ts":"#)?;
    write_micros(out, start_ps)?;
    if duration_ps != 0 {
        out.write_all(br#","dur":"#)?;
        write_micros(out, duration_ps)?;
    }
    out.write_all(br#","name":"#)?;
    write_str(out, name)?;
    if !args.is_empty() {
        out.write_all(br#","args":{"#)?;
        for (i, (k, v)) in args.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write_str(out, k)?;
            out.write_all(b":")?;
            write_str(out, v)?;
        }
        out.write_all(b"}")?;
    }
    out.write_all(b"},")
}

fn write_events(
    space: &XSpace,
    p: &Process,
    derived: Option<&DerivedPlane>,
    range_ps: Option<(i64, i64)>,
    out: &mut impl Write,
) -> Result<usize, ExportError> {
    let plane = &space.planes[p.plane];
    let text = PlaneText::new(plane);
    let mut finder = RegionFinder::new(plane);
    let all_stats = IdTable::new(plane.meta.stat_metadata.keys().map(|&id| (id, true)));
    let in_range = |start: i64, duration: i64| range_ps.is_none_or(|(from, to)| start <= to && start.saturating_add(duration) >= from);
    let mut written = 0;
    // XProf converts line by line, in the plane's order.
    let mut lines: Vec<(usize, u32)> = p.threads.iter().flat_map(|t| t.lines.iter().map(move |&l| (l, t.tid))).collect();
    lines.sort_unstable();
    for (l, tid) in lines {
        let line = &plane.lines[l];
        if let Some(f) = finder.as_mut() {
            f.start_line(line);
        }
        let base_ps = line.header.timestamp_ns.saturating_mul(1000);
        let mut io_error = None;
        space.for_each_raw_event(
            line,
            &all_stats,
            |id| !text.is_internal(id),
            |index, ev| {
                if let Some(f) = finder.as_mut() {
                    f.push(plane, ev)?;
                }
                let start = base_ps.saturating_add(ev.header.offset_ps);
                if in_range(start, ev.header.duration_ps) {
                    let mut t = text.describe(ev.header.metadata_id, ev.stats)?;
                    if let Some(d) = derived {
                        d.annotate(l, index, ev.header.metadata_id, &mut t);
                    }
                    if let Err(e) = write_event(out, p.pid, tid, start, ev.header.duration_ps, &t.name, &t.args) {
                        io_error.get_or_insert(e);
                    }
                    written += 1;
                }
                Ok(())
            },
        )?;
        if let Some(e) = io_error {
            return Err(e.into());
        }
        for r in finder.as_mut().map(|f| f.take()).unwrap_or_default() {
            if in_range(r.start_ps, r.duration_ps) {
                // The region's stats (`_c`, `_ct`) are internal: it has no arguments.
                write_event(out, p.pid, tid, r.start_ps, r.duration_ps, threadpool::REGION, &[])?;
                written += 1;
            }
        }
    }
    if let Some(d) = derived {
        for t in &p.threads {
            for &k in &t.derived {
                for (i, e) in d.lines[k].events.iter().enumerate() {
                    if let Some(text) = d.text(k, i).filter(|_| in_range(e.start_ps, e.duration_ps)) {
                        write_event(out, p.pid, t.tid, e.start_ps, e.duration_ps, &text.name, &text.args)?;
                        written += 1;
                    }
                }
            }
        }
    }
    Ok(written)
}

/// What XProf's cap of `max_events` would drop from a trace with these event start times: XProf keeps
/// every event that starts no later than the `max_events`-th earliest start. `None` when nothing is
/// dropped, else (the cutoff in ps, the number of events dropped).
pub fn cap_cutoff(start_ps: &[i64], max_events: usize) -> Option<(i64, usize)> {
    if start_ps.len() <= max_events || max_events == 0 {
        return None;
    }
    let mut starts = start_ps.to_vec();
    let (_, &mut cutoff, _) = starts.select_nth_unstable(max_events - 1);
    let dropped = start_ps.iter().filter(|&&s| s > cutoff).count();
    (dropped > 0).then_some((cutoff, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_keeps_every_event_up_to_the_cutoff_start() {
        // Cap 3 over starts 5, 1, 3, 3, 9: the 3rd earliest start is 3; both events at 3 stay.
        assert_eq!(cap_cutoff(&[5, 1, 3, 3, 9], 3), Some((3, 2)));
        assert_eq!(cap_cutoff(&[5, 1, 3, 3, 9], 5), None);
        // Ties at the cutoff may keep more than the cap: nothing is dropped here.
        assert_eq!(cap_cutoff(&[1, 2, 2, 2], 2), None);
    }

    fn written(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        write(&mut out).expect("writes to memory");
        String::from_utf8(out).expect("UTF-8")
    }

    /// The microseconds written from the integer read as `{}` prints the double, on both sides of the
    /// 10^15 ps bound, negative ones and a spread of others included.
    #[test]
    fn micros_are_written_as_the_double_prints() {
        let mut values = vec![0, 1, -1, 999_999, 1_000_000, 1_000_001, 123_456_789, 1_939_402_000_000, i64::MIN, i64::MAX];
        for bound in [1_000_000_000_000_000i64, -1_000_000_000_000_000] {
            values.extend((-3..=3).map(|d| bound + d));
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let digits = (x >> 59) as u32 + 1; // 1..=32 bits' worth of magnitudes, up to 2^60
            values.push(((x >> 3) % (1u64 << (digits * 2).min(60))) as i64 * if x & 1 == 0 { 1 } else { -1 });
        }
        for ps in values {
            assert_eq!(written(|out| write_micros(out, ps)), format!("{}", micros(ps)), "{ps} ps");
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for s in ["", "plain", "quote \" in", "back\\slash", "tab\t newline\n \u{1} \u{1f}", "ünïcödé ∑ \u{7f}"] {
            assert_eq!(written(|out| write_str(out, s)), serde_json::to_string(s).expect("serializes"), "{s:?}");
        }
    }

    #[test]
    fn micros_are_picoseconds_over_a_million() {
        assert_eq!(micros(1_011_531_000), 1011.531);
        assert_eq!(format!("{}", micros(1_939_402_000_000)), "1939402");
    }
}
