//! Natural-parameter continuation: the orbit followed as one parameter moves over a grid,
//! each solve started from the last orbit moved along its tangent
//! `x ≈ x* + (dx*/dp) Δp` (the implicit-function theorem of [`super::sensitivity`], with
//! `dx*/dp = (I − DP)⁻¹ ∂P/∂p` from the last solve's exact Jacobians), and the
//! bifurcations the multipliers show between grid points located by bisection:
//! a real multiplier through −1 (period doubling), through +1 (fold), or a complex pair
//! through the unit circle (Neimark–Sacker).

use super::orbit::{solve_orbit, Orbit};
use super::spec::PeriodicSpec;
use super::stability::{pairs, Multiplier};
use crate::error::Error;
use crate::model::{Dims, HybridSystem};
use nalgebra::{Complex, DMatrix};

/// `--continue NAME=LO:HI:N`.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub param: usize,
    pub name: String,
    pub lo: f64,
    pub hi: f64,
    /// Grid points (both ends included), at least 2.
    pub n: usize,
}

impl Range {
    /// Parses `NAME=LO:HI:N`; every failure says what would be valid.
    pub fn parse(s: &str, dims: &Dims) -> Result<Range, Error> {
        let bad = |m: String| Error::Flag {
            flag: "--continue".into(),
            value: s.into(),
            message: format!("{m} (expected NAME=LO:HI:N, e.g. gamma=0.009:0.02:45)"),
        };
        let (name, rest) = s.split_once('=').ok_or_else(|| bad("no `=`".into()))?;
        let name = name.trim();
        let param = dims.param_index(name).ok_or_else(|| {
            bad(format!(
                "parameter `{name}` is unknown; valid: {}",
                dims.params.join(", ")
            ))
        })?;
        let parts: Vec<&str> = rest.split(':').collect();
        if parts.len() != 3 {
            return Err(bad(format!("`{rest}` has {} field(s), not 3", parts.len())));
        }
        let num = |v: &str| -> Result<f64, Error> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad(format!("`{v}` is not a finite number")))
        };
        let (lo, hi) = (num(parts[0])?, num(parts[1])?);
        let n: usize = parts[2]
            .trim()
            .parse()
            .map_err(|_| bad(format!("N = `{}` is not a whole number", parts[2])))?;
        if n < 2 || lo == hi {
            return Err(bad("N must be at least 2 and LO ≠ HI".into()));
        }
        Ok(Range {
            param,
            name: name.to_string(),
            lo,
            hi,
            n,
        })
    }
    pub fn value(&self, i: usize) -> f64 {
        self.lo + (self.hi - self.lo) * i as f64 / (self.n - 1) as f64
    }
}

/// One solved point of the branch.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BranchPoint {
    pub value: f64,
    pub fixed_point: Vec<f64>,
    pub period: f64,
    pub multipliers: Vec<Multiplier>,
    pub spectral_radius: f64,
    pub stable: bool,
    pub newton_iterations: usize,
}

/// What crosses the unit circle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BifurcationKind {
    /// A real multiplier through −1.
    PeriodDoubling,
    /// A real multiplier through +1.
    Fold,
    /// A complex pair through the unit circle.
    NeimarkSacker,
}

/// A bifurcation between two grid points, located by bisection.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Bifurcation {
    pub kind: BifurcationKind,
    /// The parameter where it happens (midpoint of the final bracket).
    pub at: f64,
    /// The final bracket `[a, b]` of the parameter.
    pub bracket: [f64; 2],
    /// The section multipliers at the bracket's ends.
    pub multipliers: [Vec<Multiplier>; 2],
}

/// The branch followed over the range.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Branch {
    pub param: String,
    pub states: Vec<String>,
    pub points: Vec<BranchPoint>,
    pub bifurcations: Vec<Bifurcation>,
    /// Why the branch ended before the range's end (the solver's error), if it did.
    pub stopped: Option<String>,
}

/// Counts of multipliers outside the unit circle by kind: (real < −1, real > 1, complex).
fn outside(section: &[Complex<f64>]) -> [usize; 3] {
    let mut c = [0; 3];
    for l in section {
        if l.norm() <= 1.0 {
            continue;
        }
        if l.im.abs() > 1e-12 * l.norm() {
            c[2] += 1;
        } else if l.re < 0.0 {
            c[0] += 1;
        } else {
            c[1] += 1;
        }
    }
    c
}

fn point(value: f64, o: &Orbit) -> BranchPoint {
    BranchPoint {
        value,
        fixed_point: o.fixed.x.iter().copied().collect(),
        period: o.fixed.ret.period,
        multipliers: pairs(&o.spectrum.section),
        spectral_radius: o.spectrum.spectral_radius,
        stable: o.spectrum.spectral_radius < 1.0,
        newton_iterations: o.fixed.iterations,
    }
}

/// The start for parameter `to` from the orbit at `from`: `x* + (dx*/dp_j)(to − from)`.
fn predict(o: &Orbit, j: usize, delta: f64) -> Vec<f64> {
    let n = o.fixed.x.len();
    let a = DMatrix::identity(n, n) - &o.fixed.ret.monodromy;
    match a.lu().solve(&o.fixed.ret.dp.column(j).into_owned()) {
        Some(dx) => (&o.fixed.x + dx * delta).iter().copied().collect(),
        None => o.fixed.x.iter().copied().collect(),
    }
}

/// Bisection steps locating a bifurcation (the bracket shrinks 2⁻²⁰ of a grid step).
pub const BISECTIONS: usize = 20;

/// Follows the orbit over `range` from `guess` at the range's first value.
pub fn continue_orbit<S: HybridSystem>(
    sys: &S, spec: &PeriodicSpec, p0: &[f64], guess: &[f64], range: &Range,
) -> Result<Branch, Error> {
    let j = range.param;
    let mut p = p0.to_vec();
    let mut branch = Branch {
        param: range.name.clone(),
        states: sys.dims().states,
        points: Vec::new(),
        bifurcations: Vec::new(),
        stopped: None,
    };
    let mut prev: Option<(f64, Orbit)> = None;
    for i in 0..range.n {
        let v = range.value(i);
        p[j] = v;
        let start = match &prev {
            Some((pv, o)) => predict(o, j, v - pv),
            None => guess.to_vec(),
        };
        let orbit = match solve_orbit(sys, spec, &p, &start, false) {
            Ok(o) => o,
            Err(e) if prev.is_some() => {
                branch.stopped = Some(format!("at {} = {v}: {e}", range.name));
                break;
            }
            Err(e) => return Err(e),
        };
        if let Some((pv, po)) = &prev {
            let (a, b) = (
                outside(&po.spectrum.section),
                outside(&orbit.spectrum.section),
            );
            for (k, kind) in [
                BifurcationKind::PeriodDoubling,
                BifurcationKind::Fold,
                BifurcationKind::NeimarkSacker,
            ]
            .into_iter()
            .enumerate()
            {
                if a[k] != b[k] {
                    let bif = locate(
                        sys,
                        spec,
                        &p,
                        j,
                        (*pv, po.clone()),
                        (v, orbit.clone()),
                        k,
                        kind,
                    )?;
                    branch.bifurcations.push(bif);
                }
            }
        }
        branch.points.push(point(v, &orbit));
        prev = Some((v, orbit));
    }
    Ok(branch)
}

/// Bisection on the parameter between two orbits whose count of multipliers of kind `k`
/// outside the unit circle differs.
#[allow(clippy::too_many_arguments)]
fn locate<S: HybridSystem>(
    sys: &S, spec: &PeriodicSpec, p: &[f64], j: usize, lo: (f64, Orbit), hi: (f64, Orbit),
    k: usize, kind: BifurcationKind,
) -> Result<Bifurcation, Error> {
    let mut p = p.to_vec();
    let (mut lo, mut hi) = (lo, hi);
    let count_lo = outside(&lo.1.spectrum.section)[k];
    for _ in 0..BISECTIONS {
        let mid = 0.5 * (lo.0 + hi.0);
        p[j] = mid;
        let start = predict(&lo.1, j, mid - lo.0);
        let o = solve_orbit(sys, spec, &p, &start, false)?;
        if outside(&o.spectrum.section)[k] == count_lo {
            lo = (mid, o);
        } else {
            hi = (mid, o);
        }
    }
    Ok(Bifurcation {
        kind,
        at: 0.5 * (lo.0 + hi.0),
        bracket: [lo.0, hi.0],
        multipliers: [pairs(&lo.1.spectrum.section), pairs(&hi.1.spectrum.section)],
    })
}
