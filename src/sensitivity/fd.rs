//! Central finite differences of ψ: a witness independent of every sensitivity equation.
//!
//! Every FD derivative is Richardson-extrapolated: central differences
//! `D(h) = (ψ(θ + h e_j) − ψ(θ − h e_j)) / 2h` at a step and at a fraction 1/r of it give
//! `R(h) = (r² D(h/r) − D(h)) / (r² − 1)`, whose truncation is O(h⁴) (Richardson 1911;
//! Nocedal & Wright, *Numerical Optimization*, 2nd ed., §8.1), next to the simulation's
//! noise O(ε_sim/h) (ε_sim: the simulation's error at its tolerances, far above round-off).
//!
//! **The default rule** ([`FdOptions::adaptive`]): per parameter, a ladder of steps
//! `h_k = 3·10⁻² · max(|θ_j|, 10⁻²) · 4⁻ᵏ`, k = 0, 1, …, 7 (r = 4). Each consecutive pair
//! of steps gives an extrapolation `R_k = R(h_k)`, and each objective keeps the `R_k` of
//! smallest spread `max(|R_k − R_{k−1}|, |R_k − R_{k+1}|)`, which is also its reported
//! error estimate. Going down the ladder the spread falls as h⁴ while truncation dominates
//! and rises as 1/h once noise does; the ladder stops two candidates past the best
//! (typically 6–8 levels, 12–16 runs per parameter), and a perturbed run that fails (a
//! large step taking a parameter out of its valid range) only removes its candidates. So
//! each entry gets a step that suits its own scale — an elastic modulus of 2·10⁵ next to a
//! strain amplitude of 2·10⁻³ in the same θ — with no flag. (The spread of three
//! extrapolations, rather than one pair's `|D(h) − D(h/r)|`, is what selects the step: the
//! latter measures the 2nd-order difference's error and so picks steps far below the
//! extrapolation's best.)
//!
//! **A fixed step** (`adaptive = false`; the CLI's `--fd-step`/`--fd-scale`):
//! `h_j = rel · max(1, |θ_j|)` ([`FdScale::Unit`]) or `rel · |θ_j|` ([`FdScale::Value`]);
//! the 4th-order stencil `(−ψ(θ+2h) + 8ψ(θ+h) − 8ψ(θ−h) + ψ(θ−2h))/12h` is `R(2h)` with
//! r = 2, reported with the estimate `|D(2h) − D(h)|`; the 2nd-order stencil is `D(h)`
//! alone, with no estimate.

use crate::error::Error;
use crate::integrate::Stats;
use crate::model::HybridSystem;
use crate::setup::Setup;
use rayon::prelude::*;

/// The ladder's first step relative to the entry's scale `max(|θ_j|, LADDER_FLOOR)`.
const LADDER_TOP: f64 = 3e-2;
/// The smallest scale an entry's ladder is measured on (entries at or near zero).
const LADDER_FLOOR: f64 = 1e-2;
/// The ratio between consecutive steps of the ladder.
const LADDER_RATIO: f64 = 4.0;
/// The ladder's most levels (central differences).
const LADDER_LEVELS: usize = 8;
/// Candidates in a row above the best after which the ladder stops.
const LADDER_PATIENCE: usize = 2;

/// What the relative FD step `rel` is scaled by, entry by entry (with a fixed step).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FdScale {
    /// `h_j = rel · max(1, |θ_j|)` (the default): parameters of order one and above.
    #[default]
    Unit,
    /// `h_j = rel · |θ_j|` (`rel` for θ_j = 0): parameters whose scale is far below one.
    Value,
}

impl FdScale {
    /// The step of an entry of value `v`.
    pub fn step(self, rel: f64, v: f64) -> f64 {
        match self {
            FdScale::Unit => rel * v.abs().max(1.0),
            FdScale::Value if v == 0.0 => rel,
            FdScale::Value => rel * v.abs(),
        }
    }
}

/// The step rule and the stencil order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FdOptions {
    /// The fixed relative step (used when `adaptive` is false). Default 1e-4.
    pub rel: f64,
    /// The fixed step's stencil, 2 or 4 (default 4).
    pub order: usize,
    /// The fixed step's scale. Default [`FdScale::Unit`].
    pub scale: FdScale,
    /// Default true: each entry's step chosen on the Richardson ladder of the module doc;
    /// false: the fixed step `scale.step(rel, θ_j)` with the `order` stencil.
    pub adaptive: bool,
}

impl Default for FdOptions {
    fn default() -> Self {
        FdOptions {
            rel: 1e-4,
            order: 4,
            scale: FdScale::Unit,
            adaptive: true,
        }
    }
}

impl FdOptions {
    /// A fixed step `scale.step(rel, θ_j)` with the 4th-order stencil.
    pub fn fixed(rel: f64, scale: FdScale) -> FdOptions {
        FdOptions {
            rel,
            scale,
            adaptive: false,
            ..FdOptions::default()
        }
    }
}

/// FD gradients with what they rest on.
#[derive(Debug, Clone, PartialEq)]
pub struct FdGradients {
    /// dψ_i/dθ_j for each objective i.
    pub gradients: Vec<Vec<f64>>,
    /// Each entry's error estimate (absolute, in the gradient's units): the ladder's
    /// spread of three extrapolations, or the fixed stencil's `|D(2h) − D(h)|`; `None`
    /// for the 2nd-order stencil.
    pub error_estimates: Option<Vec<Vec<f64>>>,
    /// The step each entry was taken with: the larger step h of the ladder's pair (h, h/4),
    /// or the fixed stencil's h.
    pub steps: Vec<Vec<f64>>,
    /// The summed counters of every perturbed run.
    pub stats: Stats,
}

/// dψ_i/dθ_j by central differences (the rule of `opt`, see the module doc), all j in
/// parallel.
pub fn fd_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], opt: FdOptions,
) -> Result<Vec<Vec<f64>>, Error> {
    fd_gradients_with_stats(setup, theta, opt).map(|(g, _)| g)
}

/// Number of perturbed simulations per parameter of a fixed step's stencil (2 or 4), or
/// the most the adaptive ladder can take (16).
pub fn runs_per_parameter(opt: FdOptions) -> usize {
    if opt.adaptive {
        2 * LADDER_LEVELS
    } else if opt.order == 2 {
        2
    } else {
        4
    }
}

/// [`fd_gradients`] together with the summed counters of every perturbed simulation (the
/// unperturbed run is not among them).
pub fn fd_gradients_with_stats<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], opt: FdOptions,
) -> Result<(Vec<Vec<f64>>, Stats), Error> {
    fd_gradients_detailed(setup, theta, opt).map(|r| (r.gradients, r.stats))
}

/// [`fd_gradients`] with each entry's error estimate and step.
pub fn fd_gradients_detailed<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], opt: FdOptions,
) -> Result<FdGradients, Error> {
    if !opt.adaptive {
        let steps: Vec<f64> = theta.iter().map(|&v| opt.scale.step(opt.rel, v)).collect();
        return fixed_steps(setup, theta, &steps, opt.order);
    }
    let cols: Vec<Result<Column, Error>> = (0..theta.len())
        .into_par_iter()
        .map(|j| ladder(setup, theta, j))
        .collect();
    assemble(setup.objectives.len(), theta.len(), cols, true)
}

/// `fd_gradients_with_stats` with a fixed step given per parameter (`steps[j]` for θ_j)
/// and the stencil `order` (2 or 4).
pub fn fd_gradients_with_steps<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], steps: &[f64], order: usize,
) -> Result<(Vec<Vec<f64>>, Stats), Error> {
    fixed_steps(setup, theta, steps, order).map(|r| (r.gradients, r.stats))
}

/// One parameter's derivatives of every objective: value, estimate, step.
struct Column {
    derivative: Vec<f64>,
    estimate: Vec<f64>,
    step: Vec<f64>,
    stats: Stats,
}

/// The objectives at θ + s e_j, with the run's counters added to `stats`.
fn perturbed<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], j: usize, s: f64, stats: &mut Stats,
) -> Result<Vec<f64>, Error> {
    let mut t = theta.to_vec();
    t[j] += s;
    let tr = setup.simulate(&t)?;
    *stats += tr.stats;
    setup.objective_values(&tr, &t)
}

/// `D(h)` of every objective: `(ψ(θ + h e_j) − ψ(θ − h e_j)) / 2h`.
fn central<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], j: usize, h: f64, stats: &mut Stats,
) -> Result<Vec<f64>, Error> {
    let p = perturbed(setup, theta, j, h, stats)?;
    let m = perturbed(setup, theta, j, -h, stats)?;
    Ok(p.iter().zip(&m).map(|(a, b)| (a - b) / (2.0 * h)).collect())
}

/// The Richardson ladder of θ_j (module doc).
fn ladder<S: HybridSystem>(setup: &Setup<'_, S>, theta: &[f64], j: usize) -> Result<Column, Error> {
    let r2 = LADDER_RATIO * LADDER_RATIO;
    let top = LADDER_TOP * theta[j].abs().max(LADDER_FLOOR);
    let no = setup.objectives.len();
    let mut stats = Stats::default();
    // per objective: (spread, extrapolated value, step, level of the pair's larger step)
    let mut best: Vec<Option<(f64, f64, f64, usize)>> = vec![None; no];
    // the last level's D, and the last two pairs' R (None where a run failed)
    let mut d_prev: Option<Vec<f64>> = None;
    let mut r_prev: [Option<Vec<f64>>; 2] = [None, None];
    let mut failure = None;
    for k in 0..LADDER_LEVELS {
        let h = top / LADDER_RATIO.powi(k as i32);
        let d = match central(setup, theta, j, h, &mut stats) {
            Ok(d) => Some(d),
            Err(Error::Interrupted) => return Err(Error::Interrupted),
            Err(e) => {
                failure.get_or_insert(e);
                None
            }
        };
        // R of the pair (h_{k−1}, h_k)
        let r = match (&d_prev, &d) {
            (Some(dp), Some(d)) => Some(
                (0..no)
                    .map(|i| (r2 * d[i] - dp[i]) / (r2 - 1.0))
                    .collect::<Vec<f64>>(),
            ),
            _ => None,
        };
        // R of the pair (h_{k−2}, h_{k−1}) between its neighbours
        if let ([Some(rpp), Some(rp)], Some(r)) = (&r_prev, &r) {
            for i in 0..no {
                let spread = (rp[i] - r[i]).abs().max((rp[i] - rpp[i]).abs());
                if spread.is_finite() && best[i].is_none_or(|b| spread < b.0) {
                    let step = top / LADDER_RATIO.powi(k as i32 - 2);
                    best[i] = Some((spread, rp[i], step, k - 2));
                }
            }
        }
        d_prev = d;
        r_prev = [r_prev[1].take(), r];
        // the last candidate was level k − 2: stop once every objective's best is
        // LADDER_PATIENCE candidates behind it
        let done = k >= 2
            && best
                .iter()
                .all(|b| b.is_some_and(|b| b.3 + LADDER_PATIENCE + 2 <= k));
        if done {
            break;
        }
    }
    if best.iter().any(Option::is_none) {
        return Err(failure.unwrap_or_else(|| {
            Error::Invalid(format!(
                "finite differences: no three consecutive steps of the ladder gave finite \
                 differences for parameter {j}"
            ))
        }));
    }
    let best: Vec<(f64, f64, f64, usize)> = best.into_iter().flatten().collect();
    Ok(Column {
        derivative: best.iter().map(|b| b.1).collect(),
        estimate: best.iter().map(|b| b.0).collect(),
        step: best.iter().map(|b| b.2).collect(),
        stats,
    })
}

/// The fixed-step stencils: `D(h)` (order 2), or the pair (2h, h) extrapolated (order 4).
fn fixed_steps<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], steps: &[f64], order: usize,
) -> Result<FdGradients, Error> {
    if steps.len() != theta.len() {
        return Err(Error::Invalid(format!(
            "finite differences: {} steps for {} parameters",
            steps.len(),
            theta.len()
        )));
    }
    let cols: Vec<Result<Column, Error>> = (0..theta.len())
        .into_par_iter()
        .map(|j| {
            let h = steps[j];
            let mut stats = Stats::default();
            let d1 = central(setup, theta, j, h, &mut stats)?;
            if order == 2 {
                let n = d1.len();
                return Ok(Column {
                    derivative: d1,
                    estimate: vec![f64::NAN; n],
                    step: vec![h; n],
                    stats,
                });
            }
            let d2 = central(setup, theta, j, 2.0 * h, &mut stats)?;
            Ok(Column {
                derivative: d1
                    .iter()
                    .zip(&d2)
                    .map(|(a, b)| (4.0 * a - b) / 3.0)
                    .collect(),
                estimate: d1.iter().zip(&d2).map(|(a, b)| (a - b).abs()).collect(),
                step: vec![h; d1.len()],
                stats,
            })
        })
        .collect();
    assemble(setup.objectives.len(), theta.len(), cols, order != 2)
}

/// The columns as `[objective][parameter]` arrays.
fn assemble(
    no: usize, nth: usize, cols: Vec<Result<Column, Error>>, estimates: bool,
) -> Result<FdGradients, Error> {
    let mut out = FdGradients {
        gradients: vec![vec![0.0; nth]; no],
        error_estimates: estimates.then(|| vec![vec![0.0; nth]; no]),
        steps: vec![vec![0.0; nth]; no],
        stats: Stats::default(),
    };
    for (j, c) in cols.into_iter().enumerate() {
        let c = c?;
        out.stats += c.stats;
        for i in 0..no {
            out.gradients[i][j] = c.derivative[i];
            out.steps[i][j] = c.step[i];
            if let Some(e) = out.error_estimates.as_mut() {
                e[i][j] = c.estimate[i];
            }
        }
    }
    Ok(out)
}
