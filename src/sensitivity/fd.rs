//! Central finite differences of ψ: a witness independent of every sensitivity equation.
//! The default 4th-order stencil `(−ψ(θ+2h) + 8ψ(θ+h) − 8ψ(θ−h) + ψ(θ−2h))/12h` has O(h⁴)
//! truncation and O(ε_sim/h) noise (ε_sim: the simulation's error, not round-off), so it
//! shows agreement to ~1e-7–1e-9 relative at tight tolerances; the 2nd-order stencil is
//! cheaper and coarser (costs with large third derivatives, like the five-bar's in its bar
//! lengths, leave it at ~1e-6).

use crate::error::Error;
use crate::integrate::Stats;
use crate::model::HybridSystem;
use crate::setup::Setup;
use rayon::prelude::*;

/// What the relative FD step `rel` is scaled by, entry by entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FdScale {
    /// `h_j = rel · max(1, |θ_j|)` (the default): parameters of order one and above.
    #[default]
    Unit,
    /// `h_j = rel · |θ_j|` (`rel` for θ_j = 0): parameters whose scale is far below one
    /// (a strain amplitude ε_a = 0.002, where `Unit`'s step is 5 % of the value).
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

/// Step rule (`rel` scaled per entry by `scale`) and the stencil order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FdOptions {
    /// Default 1e-4: balances the O(h⁴) truncation against O(ε_sim/h) noise for
    /// ε_sim ~ 1e-10 (tolerances of a gradient check).
    pub rel: f64,
    /// 2 or 4 (default 4).
    pub order: usize,
    /// Default [`FdScale::Unit`].
    pub scale: FdScale,
}

impl Default for FdOptions {
    fn default() -> Self {
        FdOptions {
            rel: 1e-4,
            order: 4,
            scale: FdScale::Unit,
        }
    }
}

/// dψ_i/dθ_j ≈ (ψ_i(θ + h e_j) − ψ_i(θ − h e_j)) / 2h, all j in parallel.
pub fn fd_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
    opt: FdOptions,
) -> Result<Vec<Vec<f64>>, Error> {
    fd_gradients_with_stats(setup, theta, opt).map(|(g, _)| g)
}

/// Number of perturbed simulations per parameter of the stencil of `opt` (2 or 4).
pub fn runs_per_parameter(opt: FdOptions) -> usize {
    if opt.order == 2 {
        2
    } else {
        4
    }
}

/// [`fd_gradients`] together with the summed counters of every perturbed simulation
/// (`runs_per_parameter(opt) · nθ` runs; the unperturbed run is not among them).
pub fn fd_gradients_with_stats<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
    opt: FdOptions,
) -> Result<(Vec<Vec<f64>>, Stats), Error> {
    let steps: Vec<f64> = theta.iter().map(|&v| opt.scale.step(opt.rel, v)).collect();
    fd_gradients_with_steps(setup, theta, &steps, opt.order)
}

/// [`fd_gradients_with_stats`] with a step given per parameter (`steps[j]` for θ_j) and
/// the stencil `order` (2 or 4): for parameters of very different scales (a steel
/// coupon's E ~ 2e5 next to its strain amplitude ε_a ~ 2e-3), where one rule
/// `rel · max(1, |θ_j|)` cannot balance truncation against noise for every entry.
pub fn fd_gradients_with_steps<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
    steps: &[f64],
    order: usize,
) -> Result<(Vec<Vec<f64>>, Stats), Error> {
    if steps.len() != theta.len() {
        return Err(Error::Invalid(format!(
            "finite differences: {} steps for {} parameters",
            steps.len(),
            theta.len()
        )));
    }
    let nth = theta.len();
    let eval = |th: &[f64]| -> Result<(Vec<f64>, Stats), Error> {
        let tr = setup.simulate(th)?;
        Ok((setup.objective_values(&tr, th)?, tr.stats))
    };
    type Column = Result<(Vec<f64>, Stats), Error>;
    let cols: Vec<Column> = (0..nth)
        .into_par_iter()
        .map(|j| {
            let h = steps[j];
            let mut stats = Stats::default();
            let mut at = |s: f64| -> Result<Vec<f64>, Error> {
                let mut t = theta.to_vec();
                t[j] += s * h;
                let (v, st) = eval(&t)?;
                stats += st;
                Ok(v)
            };
            let (vp, vm) = (at(1.0)?, at(-1.0)?);
            if order == 2 {
                let g = vp
                    .iter()
                    .zip(&vm)
                    .map(|(a, b)| (a - b) / (2.0 * h))
                    .collect();
                return Ok((g, stats));
            }
            let (vp2, vm2) = (at(2.0)?, at(-2.0)?);
            let g = (0..vp.len())
                .map(|i| (-vp2[i] + 8.0 * vp[i] - 8.0 * vm[i] + vm2[i]) / (12.0 * h))
                .collect();
            Ok((g, stats))
        })
        .collect();
    let mut grads = vec![vec![0.0; nth]; setup.objectives.len()];
    let mut stats = Stats::default();
    for (j, c) in cols.into_iter().enumerate() {
        let (g, st) = c?;
        stats += st;
        for (i, v) in g.into_iter().enumerate() {
            grads[i][j] = v;
        }
    }
    Ok((grads, stats))
}
