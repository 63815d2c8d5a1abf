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
