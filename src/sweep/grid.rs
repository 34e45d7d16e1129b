//! Grids over named entries of θ: `--grid NAME=LO:HI:N` (repeatable), the Cartesian
//! product of evenly spaced values, enumerated with the last axis fastest.

use crate::error::Error;
use crate::optimize::ThetaEntry;
use serde::{Deserialize, Serialize};

/// The most points one grid may have (a guard against a typo such as `N=1000000`).
pub const MAX_POINTS: usize = 10_000_000;

/// One axis: `n ≥ 2` evenly spaced values of the θ entry `name` from `lo` to `hi`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub name: String,
    pub lo: f64,
    pub hi: f64,
    pub n: usize,
}

fn flag_err(value: &str, message: String) -> Error {
    Error::Flag {
        flag: "--grid".into(),
        value: value.into(),
        message,
    }
}

impl Axis {
    /// The k-th value, `(lo·(n − 1 − k) + hi·k)/(n − 1)` (the weighted form keeps decimal
    /// grids decimal: 0.8:0.9:3 gives 0.85, not 0.8500000000000001); the ends are `lo`
    /// and `hi` exactly.
    pub fn value(&self, k: usize) -> f64 {
        let m = self.n - 1;
        if k == 0 {
            self.lo
        } else if k >= m {
            self.hi
        } else {
            (self.lo * (m - k) as f64 + self.hi * k as f64) / m as f64
        }
    }

    /// All `n` values in order.
    pub fn values(&self) -> Vec<f64> {
        (0..self.n).map(|k| self.value(k)).collect()
    }

    /// Parses `NAME=LO:HI:N` against the entries of θ: the name must be an entry, LO < HI
    /// finite, N ≥ 2, and both ends strictly inside the entry's bounds (where the cost is
    /// defined; the same rule as `--param`).
    pub fn parse(spec: &str, theta: &[ThetaEntry]) -> Result<Axis, Error> {
        let usage = "expected NAME=LO:HI:N, e.g. --grid e=0.5:0.95:10";
        let Some((name, range)) = spec.split_once('=') else {
            return Err(flag_err(spec, usage.into()));
        };
        let name = name.trim();
        let parts: Vec<&str> = range.split(':').map(str::trim).collect();
        let [lo, hi, n] = parts[..] else {
            return Err(flag_err(spec, usage.into()));
        };
        let num = |s: &str, what: &str| -> Result<f64, Error> {
            match s.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(flag_err(
                    spec,
                    format!("{what} `{s}` is not a finite number ({usage})"),
                )),
            }
        };
        let (lo, hi) = (num(lo, "LO")?, num(hi, "HI")?);
        let n: usize = n.parse().map_err(|_| {
            flag_err(
                spec,
                format!("N `{n}` is not a whole number of points ≥ 2 ({usage})"),
            )
        })?;
        if n < 2 {
            return Err(flag_err(spec, format!("N = {n}: a grid axis needs N ≥ 2 points (use --param NAME=VALUE to fix one value)")));
        }
        if !(lo < hi) {
            return Err(flag_err(spec, format!("LO = {lo} must be below HI = {hi}")));
        }
        let Some(entry) = theta.iter().find(|e| e.name == name) else {
            let names: Vec<&str> = theta.iter().map(|e| e.name.as_str()).collect();
            return Err(flag_err(
                spec,
                format!("`{name}` is not a parameter; valid: {}", names.join(", ")),
            ));
        };
        if entry.lower.is_some_and(|l| !(lo > l)) || entry.upper.is_some_and(|u| !(hi < u)) {
            return Err(flag_err(
                spec,
                format!(
                    "[{lo}, {hi}] must lie strictly inside the bounds of `{name}` in the problem file (lower {}, upper {})",
                    bound_text(entry.lower),
                    bound_text(entry.upper)
                ),
            ));
        }
        Ok(Axis {
            name: name.to_string(),
            lo,
            hi,
            n,
        })
    }
}

/// "none" or the bound's value.
pub(crate) fn bound_text(b: Option<f64>) -> String {
    b.map_or_else(|| "none".into(), |v| v.to_string())
}

/// Checks a set of axes (no name twice, at most [`MAX_POINTS`] points) and returns the
/// number of points, the product of the axes' `n`.
pub fn check_axes(axes: &[Axis]) -> Result<usize, Error> {
    if axes.is_empty() {
        return Err(flag_err("", "no axis given".into()));
    }
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.name == a.name) {
            return Err(flag_err(
                &a.name,
                format!("`{}` is given twice; one --grid per parameter", a.name),
            ));
        }
    }
    let mut total: usize = 1;
    for a in axes {
        total = total
            .checked_mul(a.n)
            .filter(|&t| t <= MAX_POINTS)
            .ok_or_else(|| {
                flag_err(
                    &a.name,
                    format!("the grid would have more than {MAX_POINTS} points"),
                )
            })?;
    }
    Ok(total)
}

/// The axis values of point `i` (row-major: the last axis varies fastest).
pub fn point(axes: &[Axis], i: usize) -> Vec<f64> {
    let mut rest = i;
    let mut v = vec![0.0; axes.len()];
    for (j, a) in axes.iter().enumerate().rev() {
        v[j] = a.value(rest % a.n);
        rest /= a.n;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, lower: Option<f64>, upper: Option<f64>) -> ThetaEntry {
        ThetaEntry {
            name: name.into(),
            value: 0.5,
            optimize: false,
            lower,
            upper,
        }
    }

    #[test]
    fn values_end_exactly_and_points_are_row_major() {
        let a = Axis {
            name: "a".into(),
            lo: 0.1,
            hi: 0.7,
            n: 7,
        };
        let v = a.values();
        assert_eq!(v[0], 0.1);
        assert_eq!(v[6], 0.7);
        assert!((v[3] - 0.4).abs() < 1e-15);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        let b = Axis {
            name: "b".into(),
            lo: 1.0,
            hi: 2.0,
            n: 2,
        };
        let axes = [a.clone(), b];
        assert_eq!(check_axes(&axes).unwrap(), 14);
        assert_eq!(point(&axes, 0), vec![0.1, 1.0]);
        assert_eq!(point(&axes, 1), vec![0.1, 2.0]);
        assert_eq!(point(&axes, 13), vec![0.7, 2.0]);
        assert!(check_axes(&[a.clone(), a]).is_err());
    }

    #[test]
    fn bad_axes_name_the_problem() {
        let th = [entry("e", Some(0.0), Some(1.0)), entry("g", None, None)];
        let msg = |s: &str| Axis::parse(s, &th).unwrap_err().to_string();
        assert!(msg("e").contains("expected NAME=LO:HI:N"));
        assert!(msg("e=0.1:0.9").contains("expected NAME=LO:HI:N"));
        assert!(msg("x=0.1:0.9:3").contains("valid: e, g"));
        assert!(msg("e=0.1:nan:3").contains("HI `nan`"));
        assert!(msg("e=0.1:0.9:1").contains("N ≥ 2"));
        assert!(msg("e=0.1:0.9:-3").contains("N `-3`"));
        assert!(msg("e=0.9:0.1:3").contains("must be below"));
        assert!(msg("e=0:0.9:3").contains("strictly inside the bounds"));
        assert!(msg("e=0.1:1.5:3").starts_with("--grid e=0.1:1.5:3:"));
        assert_eq!(
            Axis::parse("g = -1:1:3", &th).unwrap(),
            Axis {
                name: "g".into(),
                lo: -1.0,
                hi: 1.0,
                n: 3
            }
        );
    }
}
