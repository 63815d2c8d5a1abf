//! A profile's events as columns: one array per field, each integer field as narrow as its values
//! allow. A long trace has millions of allocator events, and a row of every field took 104 bytes each
//! (most of a large file's Memory Profile); as columns they take about a third of that, and a pass
//! over one field (times, heights) reads only that field.

use super::{AggregationStats, Snapshot, SnapshotActivity, StrId};
use crate::analysis::memory_events::Activity;
use serde::ser::{Serialize, SerializeSeq, Serializer};

/// Integers kept as their difference from the first, each in the narrowest of 0 (all equal), 1, 2, 4
/// or 8 bytes that holds every difference so far: allocator sizes, addresses, heights and step ids
/// differ from one another by far less than their full range. A value that does not fit widens the
/// whole column once (at most four times in all); reading one is an add.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NarrowInts {
    /// The first value: every value is stored as its (wrapping) difference from it.
    base: i64,
    len: usize,
    data: Data,
}

#[derive(Debug, Clone, PartialEq, Default)]
enum Data {
    /// Every value equals `base`: nothing stored.
    #[default]
    Same,
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

impl NarrowInts {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value at `i` (`i < len`).
    #[inline]
    pub fn get(&self, i: usize) -> i64 {
        debug_assert!(i < self.len);
        let d = match &self.data {
            Data::Same => 0,
            Data::I8(v) => i64::from(v[i]),
            Data::I16(v) => i64::from(v[i]),
            Data::I32(v) => i64::from(v[i]),
            Data::I64(v) => v[i],
        };
        self.base.wrapping_add(d)
    }

    #[inline]
    pub fn push(&mut self, value: i64) {
        if self.len == 0 {
            self.base = value;
        }
        let d = value.wrapping_sub(self.base);
        if !self.store(self.len, d) {
            self.widen(d);
            self.store(self.len, d);
        }
        self.len += 1;
    }

    /// Replaces the value at `i` (`i < len`).
    #[inline]
    pub fn set(&mut self, i: usize, value: i64) {
        debug_assert!(i < self.len);
        let d = value.wrapping_sub(self.base);
        if !self.store(i, d) {
            self.widen(d);
            self.store(i, d);
        }
    }

    /// Writes difference `d` at `i` (pushing at `i == len` of the stored data); `false` if it does
    /// not fit the current width.
    #[inline]
    fn store(&mut self, i: usize, d: i64) -> bool {
        fn put<T: TryFrom<i64> + Copy>(v: &mut Vec<T>, i: usize, d: i64) -> bool {
            let Ok(x) = T::try_from(d) else { return false };
            match v.get_mut(i) {
                Some(slot) => *slot = x,
                None => v.push(x),
            }
            true
        }
        match &mut self.data {
            Data::Same => d == 0,
            Data::I8(v) => put(v, i, d),
            Data::I16(v) => put(v, i, d),
            Data::I32(v) => put(v, i, d),
            Data::I64(v) => put(v, i, d),
        }
    }

    /// Re-stores the column at the narrowest width that also holds `d`.
    fn widen(&mut self, d: i64) {
        let (base, n) = (self.base, self.len);
        let diffs = (0..n).map(|i| self.get(i).wrapping_sub(base));
        let width = |d: i64| match d {
            _ if i8::try_from(d).is_ok() => 1,
            _ if i16::try_from(d).is_ok() => 2,
            _ if i32::try_from(d).is_ok() => 4,
            _ => 8,
        };
        // Truncating casts below are exact: every difference fits the chosen width.
        self.data = match width(d).max(self.width()) {
            1 => Data::I8(diffs.map(|d| d as i8).collect()),
            2 => Data::I16(diffs.map(|d| d as i16).collect()),
            4 => Data::I32(diffs.map(|d| d as i32).collect()),
            _ => Data::I64(diffs.collect()),
        };
    }

    /// Bytes per value.
    fn width(&self) -> usize {
        match self.data {
            Data::Same => 0,
            Data::I8(_) => 1,
            Data::I16(_) => 2,
            Data::I32(_) => 4,
            Data::I64(_) => 8,
        }
    }

    /// The values reordered: value `k` of the result is value `order[k]` of these (indices below
    /// `len`), at the same width.
    fn permuted(&self, order: &[u32]) -> NarrowInts {
        fn gather<T: Copy>(v: &[T], order: &[u32]) -> Vec<T> {
            order.iter().map(|&i| v[i as usize]).collect()
        }
        let data = match &self.data {
            Data::Same => Data::Same,
            Data::I8(v) => Data::I8(gather(v, order)),
            Data::I16(v) => Data::I16(gather(v, order)),
            Data::I32(v) => Data::I32(gather(v, order)),
            Data::I64(v) => Data::I64(gather(v, order)),
        };
        NarrowInts { base: self.base, len: order.len(), data }
    }

    /// Gives back the room no value took.
    pub fn shrink_to_fit(&mut self) {
        match &mut self.data {
            Data::Same => {}
            Data::I8(v) => v.shrink_to_fit(),
            Data::I16(v) => v.shrink_to_fit(),
            Data::I32(v) => v.shrink_to_fit(),
            Data::I64(v) => v.shrink_to_fit(),
        }
    }
}

impl FromIterator<i64> for NarrowInts {
    fn from_iter<I: IntoIterator<Item = i64>>(iter: I) -> Self {
        let mut c = NarrowInts::default();
        iter.into_iter().for_each(|v| c.push(v));
        c.shrink_to_fit();
        c
    }
}

/// Every event of one memory ID ([`Snapshot`]s), a column per field. Read one event with
/// [`Snapshots::get`] (a [`Snapshot`] by value), or one field with its accessor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshots {
    time_offset_ps: Vec<i64>,
    stack_reserved_bytes: NarrowInts,
    heap_allocated_bytes: NarrowInts,
    free_memory_bytes: NarrowInts,
    fragmentation: Vec<f64>,
    peak_bytes_in_use: NarrowInts,
    activity: Vec<Activity>,
    requested_bytes: NarrowInts,
    allocation_bytes: NarrowInts,
    /// The `u64` address's bits.
    address: NarrowInts,
    step_id: NarrowInts,
    /// Op, region, dtype and shape.
    strings: [NarrowInts; 4],
    /// Where the event's line starts in the trace, as an index into its profile's table of line starts
    /// ([`super::line_starts`]): the times above leave it out, as XProf's do. Nothing is stored while
    /// every event's line starts at the same time.
    line_start: NarrowInts,
}

impl Snapshots {
    pub fn len(&self) -> usize {
        self.time_offset_ps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_offset_ps.is_empty()
    }

    /// Room for `n` more events' times (the other columns' widths are not known yet).
    pub fn try_reserve_exact(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        self.time_offset_ps.try_reserve_exact(n)
    }

    pub fn push(&mut self, s: &Snapshot) {
        let (t, a) = (&s.stats, &s.activity);
        self.time_offset_ps.push(s.time_offset_ps);
        self.stack_reserved_bytes.push(t.stack_reserved_bytes);
        self.heap_allocated_bytes.push(t.heap_allocated_bytes);
        self.free_memory_bytes.push(t.free_memory_bytes);
        self.fragmentation.push(t.fragmentation);
        self.peak_bytes_in_use.push(t.peak_bytes_in_use);
        self.activity.push(a.activity);
        self.requested_bytes.push(a.requested_bytes);
        self.allocation_bytes.push(a.allocation_bytes);
        self.address.push(a.address as i64);
        self.step_id.push(a.step_id);
        for (c, id) in self.strings.iter_mut().zip(a.string_ids()) {
            c.push(i64::from(id));
        }
        // A line's own events: their line is the first of its table ([`Snapshots::append_mapped`]).
        self.line_start.push(0);
    }

    /// The event at `i`, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Snapshot> {
        (i < self.len()).then(|| self.row(i))
    }

    pub fn first(&self) -> Option<Snapshot> {
        self.get(0)
    }

    pub fn last(&self) -> Option<Snapshot> {
        self.len().checked_sub(1).map(|i| self.row(i))
    }

    /// Every event in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Snapshot> + ExactSizeIterator + '_ {
        self.rows(0..self.len())
    }

    /// The events in `range` (clamped to the events there are).
    pub fn rows(&self, range: std::ops::Range<usize>) -> impl DoubleEndedIterator<Item = Snapshot> + ExactSizeIterator + '_ {
        let end = range.end.min(self.len());
        (range.start.min(end)..end).map(|i| self.row(i))
    }

    /// The index of the first event for which `pred` is false, the events being partitioned by it
    /// (as `slice::partition_point`).
    pub fn partition_point(&self, mut pred: impl FnMut(&Snapshot) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.row(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The events' times, in order.
    pub fn times(&self) -> &[i64] {
        &self.time_offset_ps
    }

    /// Heap + stack after event `i` (`i < len`): [`AggregationStats::in_use_bytes`].
    #[inline]
    pub fn in_use_bytes(&self, i: usize) -> i64 {
        self.stack_reserved_bytes.get(i).wrapping_add(self.heap_allocated_bytes.get(i))
    }

    #[inline]
    pub fn activity(&self, i: usize) -> Activity {
        self.activity[i]
    }

    #[inline]
    pub fn address(&self, i: usize) -> u64 {
        self.address.get(i) as u64
    }

    #[inline]
    pub fn allocation_bytes(&self, i: usize) -> i64 {
        self.allocation_bytes.get(i)
    }

    #[inline]
    pub fn requested_bytes(&self, i: usize) -> i64 {
        self.requested_bytes.get(i)
    }

    #[inline]
    pub fn step_id(&self, i: usize) -> i64 {
        self.step_id.get(i)
    }

    /// Which of its profile's line starts event `i`'s line has.
    #[inline]
    pub fn line_start_index(&self, i: usize) -> usize {
        self.line_start.get(i) as usize
    }

    /// Op, region, dtype and shape of event `i`.
    #[inline]
    pub fn string_ids(&self, i: usize) -> [StrId; 4] {
        self.strings.each_ref().map(|c| c.get(i) as StrId)
    }

    pub(super) fn set_string_ids(&mut self, i: usize, ids: [StrId; 4]) {
        for (c, id) in self.strings.iter_mut().zip(ids) {
            c.set(i, i64::from(id));
        }
    }

    /// Replaces every event's step id, in order.
    pub(super) fn set_step_ids(&mut self, steps: NarrowInts) {
        debug_assert_eq!(steps.len(), self.len());
        self.step_id = steps;
    }

    /// The events reordered: event `k` of the result is event `order[k]` of these. One column at a
    /// time, so only one column is ever held twice.
    pub(super) fn permute(&mut self, order: &[u32]) {
        fn ints(c: &mut NarrowInts, order: &[u32]) {
            *c = c.permuted(order);
        }
        fn plain<T: Copy>(v: &mut Vec<T>, order: &[u32]) {
            *v = order.iter().map(|&i| v[i as usize]).collect();
        }
        plain(&mut self.time_offset_ps, order);
        plain(&mut self.fragmentation, order);
        plain(&mut self.activity, order);
        for c in self.int_columns() {
            ints(c, order);
        }
    }

    /// Every integer column, the strings' included.
    fn int_columns(&mut self) -> [&mut NarrowInts; 13] {
        let [op, region, dtype, shape] = &mut self.strings;
        [
            &mut self.stack_reserved_bytes,
            &mut self.heap_allocated_bytes,
            &mut self.free_memory_bytes,
            &mut self.peak_bytes_in_use,
            &mut self.requested_bytes,
            &mut self.allocation_bytes,
            &mut self.address,
            &mut self.step_id,
            op,
            region,
            dtype,
            shape,
            &mut self.line_start,
        ]
    }

    /// Appends `other`'s events (one line's), each string id mapped by `string` and step id by `step`,
    /// their line's start being entry `line_start` of the profile's table, dropping `other` column by
    /// column.
    pub(super) fn append_mapped(
        &mut self,
        other: Snapshots,
        string: impl Fn(StrId) -> StrId,
        step: impl Fn(i64) -> i64,
        line_start: usize,
    ) {
        fn ints(c: &mut NarrowInts, other: NarrowInts, f: impl Fn(i64) -> i64) {
            (0..other.len()).for_each(|i| c.push(f(other.get(i))));
        }
        // The first events taken as they are where nothing is mapped.
        fn unmapped(c: &mut NarrowInts, other: NarrowInts) {
            if c.is_empty() {
                *c = other;
            } else {
                ints(c, other, |v| v);
            }
        }
        let Snapshots {
            time_offset_ps,
            stack_reserved_bytes,
            heap_allocated_bytes,
            free_memory_bytes,
            fragmentation,
            peak_bytes_in_use,
            activity,
            requested_bytes,
            allocation_bytes,
            address,
            step_id,
            strings,
            line_start: _,
        } = other;
        self.time_offset_ps.extend(time_offset_ps);
        self.fragmentation.extend(fragmentation);
        self.activity.extend(activity);
        unmapped(&mut self.stack_reserved_bytes, stack_reserved_bytes);
        unmapped(&mut self.heap_allocated_bytes, heap_allocated_bytes);
        unmapped(&mut self.free_memory_bytes, free_memory_bytes);
        unmapped(&mut self.peak_bytes_in_use, peak_bytes_in_use);
        unmapped(&mut self.requested_bytes, requested_bytes);
        unmapped(&mut self.allocation_bytes, allocation_bytes);
        unmapped(&mut self.address, address);
        ints(&mut self.step_id, step_id, step);
        for (c, o) in self.strings.iter_mut().zip(strings) {
            ints(c, o, |id| i64::from(string(id as StrId)));
        }
        let n = self.time_offset_ps.len() - self.line_start.len();
        (0..n).for_each(|_| self.line_start.push(line_start as i64));
    }

    /// Gives back the room no event took.
    pub fn shrink_to_fit(&mut self) {
        self.time_offset_ps.shrink_to_fit();
        self.fragmentation.shrink_to_fit();
        self.activity.shrink_to_fit();
        self.int_columns().into_iter().for_each(NarrowInts::shrink_to_fit);
    }

    /// The event at `i` (`i < len`).
    #[inline]
    pub(super) fn row(&self, i: usize) -> Snapshot {
        let [tf_op_name, region_type, data_type, tensor_shape] = self.string_ids(i);
        Snapshot {
            time_offset_ps: self.time_offset_ps[i],
            stats: AggregationStats {
                stack_reserved_bytes: self.stack_reserved_bytes.get(i),
                heap_allocated_bytes: self.heap_allocated_bytes.get(i),
                free_memory_bytes: self.free_memory_bytes.get(i),
                fragmentation: self.fragmentation[i],
                peak_bytes_in_use: self.peak_bytes_in_use.get(i),
            },
            activity: SnapshotActivity {
                activity: self.activity[i],
                requested_bytes: self.requested_bytes.get(i),
                allocation_bytes: self.allocation_bytes.get(i),
                address: self.address(i),
                step_id: self.step_id.get(i),
                tf_op_name,
                region_type,
                data_type,
                tensor_shape,
            },
        }
    }
}

impl FromIterator<Snapshot> for Snapshots {
    fn from_iter<I: IntoIterator<Item = Snapshot>>(iter: I) -> Self {
        let mut c = Snapshots::default();
        iter.into_iter().for_each(|s| c.push(&s));
        c.shrink_to_fit();
        c
    }
}

/// As the list of [`Snapshot`]s it holds.
impl Serialize for Snapshots {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for s in self.iter() {
            seq.serialize_element(&s)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of every width, widening in steps and straight from nothing to 8 bytes, read back
    /// exactly (extremes included), and replaced in place.
    #[test]
    fn narrow_ints_hold_every_value_exactly() {
        let values = [5, 5, 5, -100, 30_000, -40_000, 3_000_000_000, i64::MIN, i64::MAX, 0];
        let mut c = NarrowInts::default();
        for (k, &v) in values.iter().enumerate() {
            c.push(v);
            assert_eq!((0..=k).map(|i| c.get(i)).collect::<Vec<_>>(), values[..=k]);
        }
        assert_eq!(c.width(), 8);
        c.set(0, 7);
        assert_eq!(c.get(0), 7);
        let small: NarrowInts = [10, 11, 9, 10].into_iter().collect();
        assert_eq!((small.width(), small.len()), (1, 4));
        let same: NarrowInts = [3; 1000].into_iter().collect();
        assert_eq!((same.width(), same.get(999)), (0, 3));
        let mut jump: NarrowInts = [0].into_iter().collect();
        jump.push(i64::MIN);
        jump.set(0, i64::MAX);
        assert_eq!((jump.get(0), jump.get(1), jump.width()), (i64::MAX, i64::MIN, 8));
    }

    fn snapshot(k: i64) -> Snapshot {
        Snapshot {
            time_offset_ps: 1_000_000 * k,
            stats: AggregationStats {
                stack_reserved_bytes: 0,
                heap_allocated_bytes: (1 << 30) | (k * 256),
                free_memory_bytes: -k,
                fragmentation: k as f64 / 7.0,
                peak_bytes_in_use: i64::MAX - k,
            },
            activity: SnapshotActivity {
                activity: if k % 3 == 0 { Activity::Deallocation } else { Activity::Allocation },
                requested_bytes: k,
                allocation_bytes: 256 * k,
                address: u64::MAX - k as u64,
                step_id: k / 4,
                tf_op_name: k as StrId,
                region_type: 1,
                data_type: 2,
                tensor_shape: (k % 5) as StrId,
            },
        }
    }

    /// Rows go in and come out as they were, whole or field by field; appending (with string and step
    /// ids mapped), reordering and replacing strings and steps act on every column alike; the JSON is
    /// the rows' list.
    #[test]
    fn snapshots_keep_every_field() {
        let rows: Vec<Snapshot> = (0..300).map(snapshot).collect();
        let mut s: Snapshots = rows[..200].iter().copied().collect();
        // Strings and steps as another line would have them, mapped back while appending.
        let shifted = |r: &Snapshot| {
            let a = &r.activity;
            let activity = SnapshotActivity {
                tf_op_name: a.tf_op_name ^ 1,
                region_type: a.region_type ^ 1,
                data_type: a.data_type ^ 1,
                tensor_shape: a.tensor_shape ^ 1,
                step_id: a.step_id - 9,
                ..*a
            };
            Snapshot { activity, ..*r }
        };
        s.append_mapped(rows[200..].iter().map(shifted).collect(), |id| id ^ 1, |step| step + 9, 3);
        assert_eq!(s.iter().collect::<Vec<_>>(), rows);
        assert_eq!((s.len(), s.first(), s.last(), s.get(300)), (300, Some(rows[0]), Some(rows[299]), None));
        assert_eq!(s.iter().next_back(), Some(rows[299]));
        // The first 200 events were pushed, so on their line's own start; the rest on start 3.
        assert_eq!((s.line_start_index(199), s.line_start_index(200), s.line_start_index(299)), (0, 3, 3));
        assert_eq!(s.rows(298..400).collect::<Vec<_>>(), rows[298..]);
        assert_eq!(s.partition_point(|r| r.time_offset_ps < 5_500_000), 6);
        assert_eq!(
            (s.in_use_bytes(3), s.address(3), s.activity(3), s.step_id(9)),
            ((1 << 30) | 768, u64::MAX - 3, Activity::Deallocation, 2)
        );
        assert_eq!(serde_json::to_value(&s).unwrap(), serde_json::to_value(&rows).unwrap());
        let mut empty = Snapshots::default();
        empty.append_mapped(rows.iter().copied().collect(), |id| id, |step| step, 0);
        assert_eq!(empty.iter().collect::<Vec<_>>(), rows);

        let order: Vec<u32> = (0..300).rev().collect();
        s.permute(&order);
        assert_eq!(s.iter().collect::<Vec<_>>(), rows.iter().rev().copied().collect::<Vec<_>>());
        assert_eq!((s.line_start_index(0), s.line_start_index(99), s.line_start_index(100)), (3, 3, 0));
        s.set_string_ids(0, [7, 8, 9, 10]);
        assert_eq!(s.string_ids(0), [7, 8, 9, 10]);
        s.set_step_ids((0..300).collect());
        assert_eq!(s.step_id(299), 299);
    }
}
