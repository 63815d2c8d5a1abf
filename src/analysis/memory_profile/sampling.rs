//! XProf's timeline reduction: a max box filter that keeps at most `max_points` snapshots, each the
//! largest (heap + stack) of its box. Used for the ≤1000-point overview and for zoomed windows.

/// Indices (ascending) of the points kept out of `n`, where `in_use_bytes(i)` is point `i`'s height.
///
/// With `w = n / max_points`, the first `max_points·(w+1) − n` boxes are `w` wide and the rest `w+1`,
/// so every point falls in exactly one box. Within a box the first of equal maxima wins. When
/// `n <= max_points` every point is kept.
pub fn max_filter(n: usize, max_points: usize, in_use_bytes: impl Fn(usize) -> i64) -> Vec<usize> {
    if n <= max_points {
        return (0..n).collect();
    }
    // Keeping no point is the only sane answer to a zero budget (and avoids dividing by zero).
    if max_points == 0 {
        return Vec::new();
    }
    let width = n / max_points;
    let narrow_boxes = max_points * (width + 1) - n;
    let mut kept = Vec::with_capacity(max_points);
    let mut box_max = |start: usize, len: usize| {
        let mut best = start;
        for i in start + 1..start + len {
            if in_use_bytes(i) > in_use_bytes(best) {
                best = i;
            }
        }
        kept.push(best);
    };
    for b in 0..narrow_boxes {
        box_max(b * width, width);
    }
    let wide_start = narrow_boxes * width;
    for b in 0..max_points - narrow_boxes {
        box_max(wide_start + b * (width + 1), width + 1);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::max_filter;

    #[test]
    fn keeps_everything_when_small() {
        assert_eq!(max_filter(3, 5, |i| i as i64), vec![0, 1, 2]);
    }

    #[test]
    fn boxes_cover_all_points_and_take_first_max() {
        // n = 7, max = 3: w = 2, narrow boxes = 3·3 − 7 = 2 → [0,1] [2,3] [4,5,6].
        let h = [1, 1, 5, 2, 0, 9, 9];
        assert_eq!(max_filter(7, 3, |i| h[i]), vec![0, 2, 5]);
        assert!(max_filter(7, 0, |i| h[i]).is_empty());
    }
}
