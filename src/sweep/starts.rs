//! Multi-start points: uniform random points in a box over the optimized entries of θ,
//! from a seeded SplitMix64 stream that can be entered at any point (so that every shard
//! draws the same point i as an unsharded run).

use super::grid::bound_text;
use crate::error::Error;
use crate::optimize::ThetaEntry;
use crate::random::{splitmix64, unit_open};
use serde::{Deserialize, Serialize};

/// The most starts one run may have.
pub const MAX_STARTS: usize = 1_000_000;

/// The sampling interval of one optimized entry of θ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub name: String,
    pub lo: f64,
    pub hi: f64,
}

fn range_err(value: &str, message: String) -> Error {
    Error::Flag {
        flag: "--range".into(),
        value: value.into(),
        message,
    }
}

/// Parses `NAME=LO:HI` (finite, LO < HI).
fn parse_range(spec: &str) -> Result<Range, Error> {
    let usage = "expected NAME=LO:HI, e.g. --range k1=50:200";
    let (name, r) = spec
        .split_once('=')
        .ok_or_else(|| range_err(spec, usage.into()))?;
    let (lo, hi) = r
        .split_once(':')
        .ok_or_else(|| range_err(spec, usage.into()))?;
    let num = |s: &str, what: &str| -> Result<f64, Error> {
        match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(range_err(
                spec,
                format!("{what} `{}` is not a finite number ({usage})", s.trim()),
            )),
        }
    };
    let (lo, hi) = (num(lo, "LO")?, num(hi, "HI")?);
    if !(lo < hi) {
        return Err(range_err(
            spec,
            format!("LO = {lo} must be below HI = {hi}"),
        ));
    }
    Ok(Range {
        name: name.trim().to_string(),
        lo,
        hi,
    })
}

/// The sampling box over the optimized entries of θ (in θ order): the bounds of the
/// problem file where both are given, replaced by `--range NAME=LO:HI` flags (which must
/// lie within the bounds). An optimized entry without both bounds and without a range is
/// an error that says which `--range` to add.
pub fn sampling_box(theta: &[ThetaEntry], flags: &[String]) -> Result<Vec<Range>, Error> {
    let free: Vec<&ThetaEntry> = theta.iter().filter(|e| e.optimize).collect();
    if free.is_empty() {
        return Err(Error::Flag {
            flag: "--starts".into(),
            value: String::new(),
            message: "no parameter is marked `optimize = true` and there are no controls: nothing to start from".into(),
        });
    }
    let mut given: Vec<Range> = Vec::new();
    for spec in flags {
        let r = parse_range(spec)?;
        let Some(e) = free.iter().find(|e| e.name == r.name) else {
            let names: Vec<&str> = free.iter().map(|e| e.name.as_str()).collect();
            return Err(range_err(
                spec,
                format!(
                    "`{}` is not an optimized parameter; valid: {}",
                    r.name,
                    names.join(", ")
                ),
            ));
        };
        if given.iter().any(|g| g.name == r.name) {
            return Err(range_err(spec, format!("`{}` is given twice", r.name)));
        }
        if e.lower.is_some_and(|l| r.lo < l) || e.upper.is_some_and(|u| r.hi > u) {
            return Err(range_err(
                spec,
                format!(
                    "[{}, {}] must lie within the bounds of `{}` in the problem file (lower {}, upper {})",
                    r.lo,
                    r.hi,
                    r.name,
                    bound_text(e.lower),
                    bound_text(e.upper)
                ),
            ));
        }
        given.push(r);
    }
    free.iter()
        .map(|e| {
            if let Some(r) = given.iter().find(|g| g.name == e.name) {
                return Ok(r.clone());
            }
            match (e.lower, e.upper) {
                (Some(lo), Some(hi)) => Ok(Range {
                    name: e.name.clone(),
                    lo,
                    hi,
                }),
                _ => Err(Error::Flag {
                    flag: "--starts".into(),
                    value: String::new(),
                    message: format!(
                        "`{}` has no {} bound in the problem file, so its starts need a sampling interval: add --range {}=LO:HI",
                        e.name,
                        if e.lower.is_none() { "lower" } else { "upper" },
                        e.name
                    ),
                }),
            }
        })
        .collect()
}

/// Start point `i`: entry j is `lo_j + (hi_j − lo_j)·U` with U uniform in (0, 1) from draw
/// `i·d + j` of the SplitMix64 stream of `seed` (random.rs) (d = the box's dimension), so strictly
/// inside the box.
pub fn start_point(bx: &[Range], seed: u64, i: usize) -> Vec<f64> {
    let d = bx.len() as u64;
    bx.iter()
        .enumerate()
        .map(|(j, r)| {
            let u = unit_open(splitmix64(seed, i as u64 * d + j as u64));
            r.lo + (r.hi - r.lo) * u
        })
        .collect()
}

/// Checks `--starts N`: 1 ≤ N ≤ [`MAX_STARTS`].
pub fn check_count(n: usize) -> Result<usize, Error> {
    if n == 0 || n > MAX_STARTS {
        return Err(Error::Flag {
            flag: "--starts".into(),
            value: n.to_string(),
            message: format!("the number of starts must be between 1 and {MAX_STARTS}"),
        });
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, optimize: bool, lower: Option<f64>, upper: Option<f64>) -> ThetaEntry {
        ThetaEntry {
            name: name.into(),
            value: 1.0,
            optimize,
            lower,
            upper,
        }
    }

    #[test]
    fn starts_lie_in_the_box_and_depend_only_on_seed_and_index() {
        let bx = vec![
            Range {
                name: "a".into(),
                lo: 0.7,
                hi: 0.99,
            },
            Range {
                name: "b".into(),
                lo: -3.0,
                hi: 5.0,
            },
        ];
        let mut mean = [0.0; 2];
        for i in 0..2000 {
            let p = start_point(&bx, 42, i);
            for (j, r) in bx.iter().enumerate() {
                assert!(p[j] > r.lo && p[j] < r.hi);
                mean[j] += p[j] / 2000.0;
            }
        }
        // uniform: the mean within 4 standard errors of the midpoint
        assert!((mean[0] - 0.845).abs() < 4.0 * 0.29 / (12f64 * 2000.0).sqrt());
        assert!((mean[1] - 1.0).abs() < 4.0 * 8.0 / (12f64 * 2000.0).sqrt());
        assert_eq!(start_point(&bx, 42, 17), start_point(&bx, 42, 17));
        assert_ne!(start_point(&bx, 42, 17), start_point(&bx, 43, 17));
    }

    #[test]
    fn the_box_comes_from_bounds_and_ranges() {
        let th = [
            entry("g", false, None, None),
            entry("e", true, Some(0.7), Some(0.99)),
            entry("k", true, Some(0.0), None),
        ];
        let err = sampling_box(&th, &[]).unwrap_err().to_string();
        assert!(err.contains("`k` has no upper bound") && err.contains("--range k=LO:HI"));
        let bx = sampling_box(&th, &["k=50:200".into()]).unwrap();
        assert_eq!(bx.len(), 2);
        assert_eq!((bx[0].lo, bx[0].hi), (0.7, 0.99));
        assert_eq!((bx[1].lo, bx[1].hi), (50.0, 200.0));
        let msg = |f: &str| sampling_box(&th, &[f.into()]).unwrap_err().to_string();
        assert!(msg("g=1:2").contains("not an optimized parameter; valid: e, k"));
        assert!(msg("k=-1:2").contains("within the bounds"));
        assert!(msg("k=2:1").contains("must be below"));
        assert!(msg("k=1").contains("expected NAME=LO:HI"));
        assert!(check_count(0).is_err());
    }
}
