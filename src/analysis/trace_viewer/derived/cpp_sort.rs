//! `std::sort` as GNU libstdc++ implements it (introsort: median-of-three quicksort down to runs of
//! 16, heapsort past a depth of 2·log2 n, then insertion sort), which XProf is built with.
//!
//! XProf derives its lines from events it sorts with `std::sort` by start then duration, an unstable
//! sort: events with the same start and duration (a `copy-done` of no duration at the picosecond
//! another ends) come out in the order this algorithm leaves them, which decides how XProf pairs and
//! places them. Sorting the same input in the same order reproduces that order exactly.

/// Runs shorter than this are left to the final insertion sort (`_S_threshold`).
const THRESHOLD: usize = 16;

/// Sorts `v` by `less` exactly as libstdc++'s `std::sort` would permute it.
pub fn sort<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    if v.len() < 2 {
        return;
    }
    let depth_limit = 2 * v.len().ilog2() as usize;
    introsort_loop(v, depth_limit, &less);
    final_insertion_sort(v, &less);
}

fn introsort_loop<T: Copy>(mut v: &mut [T], mut depth_limit: usize, less: &impl Fn(&T, &T) -> bool) {
    while v.len() > THRESHOLD {
        if depth_limit == 0 {
            heap_sort(v, less);
            return;
        }
        depth_limit -= 1;
        let cut = partition_pivot(v, less);
        let (left, right) = v.split_at_mut(cut);
        introsort_loop(right, depth_limit, less);
        v = left;
    }
}

/// `__unguarded_partition_pivot`: the median of the second, middle and last elements moved first,
/// then the rest partitioned around it; returns the cut.
fn partition_pivot<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) -> usize {
    let (mid, last) = (v.len() / 2, v.len() - 1);
    let (a, b, c) = (1, mid, last);
    let median = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(0, median);
    let pivot = v[0];
    let (mut first, mut end) = (1, v.len());
    loop {
        while less(&v[first], &pivot) {
            first += 1;
        }
        end -= 1;
        while less(&pivot, &v[end]) {
            end -= 1;
        }
        if first >= end {
            return first;
        }
        v.swap(first, end);
        first += 1;
    }
}

fn final_insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    if v.len() > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        for i in THRESHOLD..v.len() {
            linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

fn insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            let value = v[i];
            v.copy_within(0..i, 1);
            v[0] = value;
        } else {
            linear_insert(v, i, less);
        }
    }
}

/// `__unguarded_linear_insert`: moves `v[i]` down past the larger elements before it.
fn linear_insert<T: Copy>(v: &mut [T], mut i: usize, less: &impl Fn(&T, &T) -> bool) {
    let value = v[i];
    while less(&value, &v[i - 1]) {
        v[i] = v[i - 1];
        i -= 1;
    }
    v[i] = value;
}

/// `__partial_sort(first, last, last)`: `make_heap` then `sort_heap`.
fn heap_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[parent];
            adjust_heap(v, parent, len, value, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust_heap(&mut v[..last], 0, last, value, less);
    }
}

fn adjust_heap<T: Copy>(v: &mut [T], mut hole: usize, len: usize, value: T, less: &impl Fn(&T, &T) -> bool) {
    let top = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    let mut parent = hole.saturating_sub(1) / 2;
    while hole > top && less(&v[parent], &value) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.saturating_sub(1) / 2;
    }
    v[hole] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_and_orders_ties_as_libstdcxx() {
        // Keys with ties; the payload shows where each tied element ends up.
        let mut v: Vec<(u32, u32)> = (0..40).map(|i| ((i * 7) % 5, i)).collect();
        sort(&mut v, |a, b| a.0 < b.0);
        assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
        let mut payload: Vec<u32> = v.iter().map(|e| e.1).collect();
        payload.sort_unstable();
        assert_eq!(payload, (0..40).collect::<Vec<_>>());
        // Unstable: libstdc++'s partitioning moves tied elements out of input order.
        assert!(v.windows(2).any(|w| w[0].0 == w[1].0 && w[0].1 > w[1].1));
    }

    #[test]
    fn the_heap_fallback_sorts() {
        let mut v: Vec<i32> = (0..100).rev().collect();
        heap_sort(&mut v, &|a: &i32, b: &i32| a < b);
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }
}
