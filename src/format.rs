//! Numbers as the result files write them.

/// Formats a float so that it parses back to exactly the same value: Rust's `{}` and
/// `{:e}` print the shortest digits that round-trip. Plain notation for ordinary
/// magnitudes, scientific for very small or very large ones; `NaN`, `inf`, `-inf`.
pub fn format_f64(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip() {
        for v in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1.0 / 3.0,
            1e-300,
            5e-324,
            f64::MAX,
            -1.234_567_890_123_456_7e20,
            123456.789,
        ] {
            let s = format_f64(v);
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{s}");
        }
        assert_eq!(format_f64(1e-300), "1e-300");
        assert_eq!(format_f64(0.5), "0.5");
        assert!(format_f64(f64::NAN).parse::<f64>().unwrap().is_nan());
    }
}
