//! Time-range arithmetic of the plugin (`torch_tb_profiler/profiler/range_utils.py`), step for
//! step, so that its float sums come out bit for bit.

pub type Range = (f64, f64);

/// Sorts by start (stably) and merges overlapping or touching ranges.
pub fn merge(mut src: Vec<Range>) -> Vec<Range> {
    if src.is_empty() {
        return src;
    }
    src.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = vec![src[0]];
    for r in &src[1..] {
        let last = out.last_mut().expect("starts with one range");
        if r.1 > last.1 {
            if r.0 <= last.1 {
                last.1 = r.1;
            } else {
                out.push(*r);
            }
        }
    }
    out
}

/// The parts of the sorted, disjoint `a` that the sorted, disjoint `b` covers.
pub fn intersection(a: &[Range], b: &[Range]) -> Vec<Range> {
    let tagged: Vec<(f64, f64, ())> = a.iter().map(|r| (r.0, r.1, ())).collect();
    intersection_with_value(&tagged, b).into_iter().map(|r| (r.0, r.1)).collect()
}

/// The parts of the sorted, disjoint `a` that the sorted, disjoint `b` does not cover.
pub fn subtract(a: &[Range], b: &[Range]) -> Vec<Range> {
    if a.is_empty() {
        return Vec::new();
    }
    if b.is_empty() {
        return a.to_vec();
    }
    let mut out = Vec::new();
    let (mut i1, mut i2) = (0, 0);
    let (mut r1, mut r2) = (a[0], b[0]);
    while i1 < a.len() {
        if i2 == b.len() {
            out.push(r1);
            i1 += 1;
            if i1 < a.len() {
                r1 = a[i1];
            }
        } else if r2.1 <= r1.0 {
            i2 += 1;
            if i2 < b.len() {
                r2 = b[i2];
            }
        } else if r2.0 <= r1.0 && r2.1 < r1.1 {
            r1 = (r2.1, r1.1);
            i2 += 1;
            if i2 < b.len() {
                r2 = b[i2];
            }
        } else if r2.0 <= r1.0 {
            r2 = (r1.1, r2.1);
            i1 += 1;
            if i1 < a.len() {
                r1 = a[i1];
            }
        } else if r2.0 < r1.1 {
            out.push((r1.0, r2.0));
            r1 = (r2.0, r1.1);
        } else {
            out.push(r1);
            i1 += 1;
            if i1 < a.len() {
                r1 = a[i1];
            }
        }
    }
    out
}

/// The summed length, and whether Python's sum stayed the integer 0 (no ranges).
pub fn sum(ranges: &[Range]) -> super::PyNum {
    let mut s = 0.0;
    for r in ranges {
        s += r.1 - r.0;
    }
    super::PyNum { v: s, int: ranges.is_empty() }
}

/// Ranges carrying a value (blocks per SM), cut where they overlap, each piece with the summed value
/// capped at 1 (`merge_ranges_with_value`).
pub fn merge_with_value(src: &[(f64, f64, f64)]) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    if src.is_empty() {
        return out;
    }
    let mut ends: Vec<(f64, u8, f64)> = Vec::with_capacity(src.len() * 2);
    for r in src {
        ends.push((r.0, 0, r.2));
        ends.push((r.1, 1, r.2));
    }
    ends.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut last_time = ends[0].0;
    let mut last_value = ends[0].2;
    for ep in &ends[1..] {
        if ep.0 > last_time && last_value > 0.0 {
            out.push((last_time, ep.0, last_value.min(1.0)));
        }
        last_time = ep.0;
        if ep.1 == 0 {
            last_value += ep.2;
        } else {
            last_value -= ep.2;
        }
    }
    out
}

/// [`intersection`] of ranges carrying a value (blocks per SM, or none) with plain ones, each piece
/// keeping its range's value: the plugin's `intersection_ranges_lists` and its valued twin, one walk.
pub fn intersection_with_value<V: Copy>(a: &[(f64, f64, V)], b: &[Range]) -> Vec<(f64, f64, V)> {
    let mut out = Vec::new();
    if a.is_empty() || b.is_empty() {
        return out;
    }
    let (mut i1, mut i2) = (0, 0);
    let (mut r1, mut r2) = (a[0], b[0]);
    while i1 < a.len() {
        if i2 == b.len() {
            break;
        } else if r2.1 <= r1.0 {
            i2 += 1;
            if i2 < b.len() {
                r2 = b[i2];
            }
        } else if r2.0 <= r1.0 && r2.1 < r1.1 {
            out.push((r1.0, r2.1, r1.2));
            r1 = (r2.1, r1.1, r1.2);
            i2 += 1;
            if i2 < b.len() {
                r2 = b[i2];
            }
        } else if r2.0 <= r1.0 {
            out.push(r1);
            r2 = (r1.1, r2.1);
            i1 += 1;
            if i1 < a.len() {
                r1 = a[i1];
            }
        } else if r2.1 < r1.1 {
            out.push((r2.0, r2.1, r1.2));
            r1 = (r2.1, r1.1, r1.2);
            i2 += 1;
            if i2 < b.len() {
                r2 = b[i2];
            }
        } else if r2.0 < r1.1 {
            out.push((r2.0, r1.1, r1.2));
            r2 = (r1.1, r2.1);
            i1 += 1;
            if i1 < a.len() {
                r1 = a[i1];
            }
        } else {
            i1 += 1;
            if i1 < a.len() {
                r1 = a[i1];
            }
        }
    }
    out
}
