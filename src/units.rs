//! Human-readable numbers, shared by the CLI and the page so both print the same figures.

/// Bytes in binary units: `12.25 MiB`.
pub fn bytes(n: i64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v.abs() >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// An integer with thousands separators: `1,234,567`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in microseconds in the largest unit that keeps it ≥ 1: `850 ns`, `12.34 µs`, `3.07 s`.
pub fn duration_us(us: f64) -> String {
    let a = us.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a < 1.0 {
        format!("{:.0} ns", us * 1e3)
    } else if a < 1e3 {
        format!("{us:.2} µs")
    } else if a < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A fixed byte unit, or `Auto` to pick the largest unit that keeps the value ≥ 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum ByteUnit {
    #[default]
    Auto,
    B,
    KiB,
    MiB,
    GiB,
}

impl ByteUnit {
    pub const ALL: [ByteUnit; 5] = [ByteUnit::Auto, ByteUnit::B, ByteUnit::KiB, ByteUnit::MiB, ByteUnit::GiB];

    pub fn label(self) -> &'static str {
        match self {
            ByteUnit::Auto => "auto",
            ByteUnit::B => "B",
            ByteUnit::KiB => "KiB",
            ByteUnit::MiB => "MiB",
            ByteUnit::GiB => "GiB",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|u| u.label().eq_ignore_ascii_case(s))
    }

    /// Bytes in one of this unit (1 for `Auto`, which picks per figure).
    pub fn divisor(self) -> f64 {
        match self {
            ByteUnit::Auto | ByteUnit::B => 1.0,
            ByteUnit::KiB => 1024.0,
            ByteUnit::MiB => 1024.0 * 1024.0,
            ByteUnit::GiB => 1024.0 * 1024.0 * 1024.0,
        }
    }

    /// `n` bytes in this unit: exact integers for `B`, two decimals otherwise.
    pub fn format(self, n: i64) -> String {
        match self {
            ByteUnit::Auto => bytes(n),
            ByteUnit::B => format!("{} B", signed_count(n, false)),
            u => format!("{:.2} {}", n as f64 / u.divisor(), u.label()),
        }
    }
}

/// A fixed time unit, or `Auto` to pick per figure as [`duration_us`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum TimeUnit {
    #[default]
    Auto,
    Ns,
    Us,
    Ms,
    S,
}

impl TimeUnit {
    pub const ALL: [TimeUnit; 5] = [TimeUnit::Auto, TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms, TimeUnit::S];

    pub fn label(self) -> &'static str {
        match self {
            TimeUnit::Auto => "auto",
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "µs",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|u| u.label() == s)
    }

    /// Microseconds in one of this unit (1 for `Auto`, which picks per figure).
    fn us(self) -> f64 {
        match self {
            TimeUnit::Auto | TimeUnit::Us => 1.0,
            TimeUnit::Ns => 1e-3,
            TimeUnit::Ms => 1e3,
            TimeUnit::S => 1e6,
        }
    }

    /// `us` microseconds in this unit: whole nanoseconds, two decimals otherwise (three for seconds).
    pub fn format(self, us: f64) -> String {
        match self {
            TimeUnit::Auto => duration_us(us),
            TimeUnit::Ns => format!("{:.0} ns", us / self.us()),
            TimeUnit::S => format!("{:.3} s", us / self.us()),
            u => format!("{:.2} {}", us / u.us(), u.label()),
        }
    }
}

/// A signed integer with thousands separators, and a `+` on positive values when `plus`: `+40,000`.
pub fn signed_count(n: i64, plus: bool) -> String {
    let sign = if n < 0 {
        "-"
    } else if plus && n > 0 {
        "+"
    } else {
        ""
    };
    format!("{sign}{}", count(n.unsigned_abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(super::duration_us(0.0), "0");
        assert_eq!(super::duration_us(0.85), "850 ns");
        assert_eq!(super::duration_us(12.344), "12.34 µs");
        assert_eq!(super::duration_us(3071709.07), "3.07 s");
        assert_eq!(super::duration_us(17065.05), "17.07 ms");
    }

    #[test]
    fn formats() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(12_845_056), "12.25 MiB");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(ByteUnit::B.format(-40_000), "-40,000 B");
        assert_eq!(ByteUnit::GiB.format(1 << 30), "1.00 GiB");
        assert_eq!(ByteUnit::parse("mib"), Some(ByteUnit::MiB));
        assert_eq!(TimeUnit::Ms.format(17065.05), "17.07 ms");
        assert_eq!(TimeUnit::Ns.format(0.85), "850 ns");
        assert_eq!(TimeUnit::S.format(3071709.07), "3.072 s");
        assert_eq!(TimeUnit::Auto.format(12.344), "12.34 µs");
        assert_eq!(TimeUnit::parse("µs"), Some(TimeUnit::Us));
    }
}
