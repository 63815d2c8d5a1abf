//! Sample statistics of a per-step figure, computed as XProf's `tsl::Stat<double>` does (running sums,
//! so that a rounding that makes the variance negative gives XProf's NaN deviation too).

/// Average, sample standard deviation, minimum and maximum; all 0 for no samples.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    pub count: usize,
    pub average: f64,
    /// `sqrt` of the sample variance: NaN where XProf's is (one sample of 0, or a variance rounded
    /// below 0).
    pub standard_deviation: f64,
    pub minimum: f64,
    pub maximum: f64,
}

impl Summary {
    pub fn of(values: impl Iterator<Item = f64>) -> Self {
        let (mut n, mut sum, mut squares) = (0usize, 0.0f64, 0.0f64);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        // XProf's running maximum starts at the smallest positive double, not at the lowest one: a
        // set of zeros then does not count as "all the same" and its variance is computed.
        let mut xprof_max = f64::MIN_POSITIVE;
        for v in values {
            n += 1;
            sum += v;
            squares += v * v;
            min = min.min(v);
            max = max.max(v);
            xprof_max = xprof_max.max(v);
        }
        if n == 0 {
            return Summary::default();
        }
        let variance = if min == xprof_max { 0.0 } else { (squares - sum.powi(2) / n as f64) / (n - 1) as f64 };
        // A single zero gives 0 / 0, and rounding can make the variance negative: C's NaN there has
        // its sign bit set (printed `-nan`); Rust's may not on every target, so it is set here.
        let standard_deviation = if variance.is_nan() || variance < 0.0 { -f64::NAN } else { variance.sqrt() };
        Summary { count: n, average: sum / n as f64, standard_deviation, minimum: min, maximum: max }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::input_pipeline::one_digit;

    #[test]
    fn one_step_deviation_is_xprofs() {
        // XProf's V100 oracle, one step: a figure of 0 has deviation "-nan", any other "0.0".
        assert_eq!(one_digit(Summary::of([0.0].into_iter()).standard_deviation), "-nan");
        assert_eq!(one_digit(Summary::of([14.875539].into_iter()).standard_deviation), "0.0");
        // Several zeros: "0.0" (the d2 oracle's device figures over 58 steps).
        assert_eq!(one_digit(Summary::of([0.0; 58].into_iter()).standard_deviation), "0.0");
    }

    #[test]
    fn empty_is_all_zero_and_sample_deviation_divides_by_n_minus_one() {
        assert_eq!(Summary::of(std::iter::empty()), Summary::default());
        let s = Summary::of([1.0, 3.0].into_iter());
        assert_eq!((s.average, s.minimum, s.maximum), (2.0, 1.0, 3.0));
        assert_eq!(s.standard_deviation, 2f64.sqrt());
    }
}
