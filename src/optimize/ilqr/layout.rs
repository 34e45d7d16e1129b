//! The stages of the hybrid iLQR: the control intervals `[τ_k, τ_{k+1}]` of the problem's
//! control grid, each a discrete step `z_{k+1} = Φ_k(z_k, u_k)` of an augmented state
//! (docs/theory.md §11):
//!
//! ```text
//! z_k = (x(τ_k), c_carried(k)),    u_k = c_new(k)
//! ```
//!
//! The coefficients active on interval k (1 per channel for piecewise constant controls,
//! 2 for piecewise linear, 4 for cubic B-splines) are those that enter at k, `u_k`, and
//! those that an earlier interval already decided, which the augmented state carries
//! (the shift register that makes overlapping bases a Markov chain). Only optimized
//! coefficients are decisions; a fixed one stays a constant of θ.

use super::error::IlqrError;
use crate::control::ControlGrid;
use crate::optimize::ThetaEntry;
use std::collections::BTreeSet;

/// One stage: its interval and its coefficients, as indices into θ.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stage {
    pub t0: f64,
    pub t1: f64,
    /// The grid interval.
    pub interval: usize,
    /// Coefficients decided at an earlier stage and active here (the state's tail).
    pub carried: Vec<usize>,
    /// Coefficients decided here (`u_k`).
    pub new: Vec<usize>,
}

/// The stages over the horizon, from the grid and the free entries of θ.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub stages: Vec<Stage>,
    pub nx: usize,
    /// The free entries of θ (all of them control coefficients).
    pub free: Vec<usize>,
}

impl Layout {
    /// The stages of `grid` over `[t0, t1]` with θ laid out as `(p, c)` (`np` parameters,
    /// c channel-major). Errors: the grid does not span the horizon, or a free entry is a
    /// parameter.
    pub fn new(
        grid: &ControlGrid, horizon: (f64, f64), theta: &[ThetaEntry], np: usize, nx: usize,
    ) -> Result<Layout, IlqrError> {
        let (t0, t1) = horizon;
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
        if !same(grid.t0, t0) || !same(grid.t1, t1) {
            return Err(IlqrError::Horizon {
                grid0: grid.t0,
                grid1: grid.t1,
                t0,
                t1,
            });
        }
        if let Some(e) = theta[..np].iter().find(|e| e.optimize) {
            return Err(IlqrError::FreeParameter {
                name: e.name.clone(),
            });
        }
        let free: Vec<usize> = (0..theta.len()).filter(|&i| theta[i].optimize).collect();
        let nodes = grid.nodes();
        let nc = grid.n_coef();
        let mut decided = BTreeSet::new();
        let mut stages = Vec::with_capacity(grid.intervals);
        for i in 0..grid.intervals {
            let act = grid.active::<f64>(i, nodes[i]);
            let mut active: Vec<usize> = (0..grid.channels)
                .flat_map(|j| act.idx[..act.n].iter().map(move |&a| np + j * nc + a))
                .filter(|&q| theta[q].optimize)
                .collect();
            active.sort_unstable();
            let (carried, new): (Vec<usize>, Vec<usize>) =
                active.iter().partition(|q| decided.contains(*q));
            decided.extend(new.iter().copied());
            stages.push(Stage {
                t0: nodes[i],
                t1: nodes[i + 1],
                interval: i,
                carried,
                new,
            });
        }
        Ok(Layout { stages, nx, free })
    }

    /// `z_k` at θ and the stage's start state x.
    pub fn z(&self, k: usize, x: &[f64], theta: &[f64]) -> Vec<f64> {
        let mut z = x[..self.nx].to_vec();
        z.extend(self.stages[k].carried.iter().map(|&q| theta[q]));
        z
    }
}
