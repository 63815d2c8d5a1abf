//! Numbers written as XProf's C++ writes them, in one place: C's `%.{p}g` (XLA's HLO text) and
//! `absl::StrCat` of a double (XProf's stat values and table properties: `%g` at six digits, NaN
//! without a sign). Every figure that must read as XProf's text goes through here, so the edge cases
//! (−0, NaN, infinities, the exponent switch) are decided once.

/// C's `%.{precision}g`: `precision` significant digits (at least 1), trailing zeros dropped, the
/// exponent form below 1e-4 and from 10^precision on; `-0` for −0.0, `-nan` for a NaN with its sign
/// bit set (glibc's).
pub fn format_g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let p = precision.max(1);
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    if exp < -4 || exp >= p as i32 {
        let mantissa = strip_zeros(mantissa);
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

/// A double as `absl::StrCat` writes it: `%g` at six significant digits, but a NaN is `nan` whatever
/// its sign.
pub fn six_digits(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    format_g(v, 6)
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_absl_does() {
        let cases = [
            (0.5, "0.5"),
            (1.0, "1"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (1.234567891, "1.23457"),
            (-2.5, "-2.5"),
            (99999.95, "99999.9"),
            (999999.5, "1e+06"),
            (0.0, "0"),
            (-0.0, "-0"),
            (f64::NAN, "nan"),
            (-f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (d, want) in cases {
            assert_eq!(six_digits(d), want, "{d}");
        }
    }

    #[test]
    fn precision_as_printf() {
        assert_eq!(format_g(1.0, 6), "1");
        assert_eq!(format_g(0.5, 6), "0.5");
        assert_eq!(format_g(1e-7, 6), "1e-07");
        assert_eq!(format_g(123456789.0, 6), "1.23457e+08");
        assert_eq!(format_g(f64::NEG_INFINITY, 6), "-inf");
        assert_eq!(format_g(-f64::NAN, 6), "-nan");
        assert_eq!(format_g(0.1, 17), "0.10000000000000001");
        assert_eq!(format_g(3.0, 0), "3");
    }
}
