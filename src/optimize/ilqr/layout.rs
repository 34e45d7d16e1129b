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
use std::ops::Range;

/// One stage: its interval and its coefficients, as indices into θ.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stage {
    pub t0: f64,
    /// Its end at the layout's horizon (a free final time moves the last one: [`Layout::end`]).
    pub t1: f64,
    /// The grid intervals it runs over (one, but the last stage of a free final time may
    /// reach into the next: below).
    pub intervals: Range<usize>,
    /// Coefficients decided at an earlier stage and active here (the state's tail).
    pub carried: Vec<usize>,
    /// Coefficients decided here (`u_k`); the last stage of a free final time decides T too.
    pub new: Vec<usize>,
}

/// The stages over the horizon, from the grid and the free entries of θ.
///
/// **A free final time** T is a decision of the last stage (docs/theory.md §11, "A free
/// final time"): θ is extended to `(θ, T)`, T at index [`Layout::time`], and the last stage
/// runs over `[τ_m, T]` with `m = max{j : τ_j ≤ T − h/2}` (h the grid's interval), so that
/// it is never shorter than h/2: T may then move down by h/2 in one step, and the next
/// layout (rebuilt whenever T's stage changes, [`Layout::at_time`]) starts the last stage
/// one node earlier; upwards it may run into the next interval, whose coefficients it then
/// decides too.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub stages: Vec<Stage>,
    pub nx: usize,
    /// The free entries of θ (control coefficients and T).
    pub free: Vec<usize>,
    /// T's index in the extended θ with a free final time.
    pub time: Option<usize>,
    /// A periodic problem's closing: the last stage runs to the closing event, its window
    /// placed at the nominal closing time as a free final time's last stage is at T.
    pub closing: bool,
    /// The free system parameters (indices < np): stage 0's decisions, carried on.
    pub params: Vec<usize>,
    np: usize,
    optimized: Vec<bool>,
}

impl Layout {
    /// The stages of `grid` over `[t0, t1]` with θ laid out as `(p, c)` (`np` parameters,
    /// c channel-major). Errors: the grid does not span the horizon.
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
        let mut layout = Layout::bare(theta, np, nx, None)?;
        layout.stages = layout.build(grid, None);
        Ok(layout)
    }

    /// The stages with a free final time T ∈ [`lower`, `upper`] at `value` (struct docs):
    /// θ extended by T at index `theta.len()`. Errors: the grid does not start at `t0` or
    /// ends before `upper`.
    pub fn free_time(
        grid: &ControlGrid, t0: f64, (value, upper): (f64, f64), theta: &[ThetaEntry], np: usize,
        nx: usize,
    ) -> Result<Layout, IlqrError> {
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
        if !same(grid.t0, t0) || grid.t1 < upper {
            return Err(IlqrError::Horizon {
                grid0: grid.t0,
                grid1: grid.t1,
                t0,
                t1: upper,
            });
        }
        let mut layout = Layout::bare(theta, np, nx, Some(theta.len()))?;
        layout.stages = layout.build(grid, Some(value));
        Ok(layout)
    }

    /// The stages of a periodic problem whose horizon ends at the closing event, found at
    /// `t_close` on the nominal: the last stage is the one a free final time at `t_close`
    /// would have (struct docs), and runs to the event (stage.rs). Errors: the grid does
    /// not start at `t0` or ends before `t_close`.
    pub fn closing(
        grid: &ControlGrid, t0: f64, t_close: f64, theta: &[ThetaEntry], np: usize, nx: usize,
    ) -> Result<Layout, IlqrError> {
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
        if !same(grid.t0, t0) || grid.t1 < t_close {
            return Err(IlqrError::Horizon {
                grid0: grid.t0,
                grid1: grid.t1,
                t0,
                t1: t_close,
            });
        }
        let mut layout = Layout::bare(theta, np, nx, None)?;
        layout.closing = true;
        layout.stages = layout.build(grid, Some(t_close));
        Ok(layout)
    }

    fn bare(
        theta: &[ThetaEntry], np: usize, nx: usize, time: Option<usize>,
    ) -> Result<Layout, IlqrError> {
        let params = (0..np).filter(|&i| theta[i].optimize).collect();
        let mut optimized: Vec<bool> = theta.iter().map(|e| e.optimize).collect();
        optimized.extend(time.map(|_| true));
        let free = (0..optimized.len()).filter(|&i| optimized[i]).collect();
        Ok(Layout {
            stages: vec![],
            nx,
            free,
            time,
            closing: false,
            params,
            np,
            optimized,
        })
    }

    /// The layout of the same problem with the final time (or the closing event) at `t`
    /// (the same stages without either).
    pub fn at_time(&self, grid: &ControlGrid, t: f64) -> Layout {
        let mut out = self.clone();
        out.stages = self.build(grid, (self.time.is_some() || self.closing).then_some(t));
        out
    }

    /// Whether `other` has the same stages, the last one's end aside.
    pub fn same_stages(&self, other: &Layout) -> bool {
        self.stages.len() == other.stages.len()
            && self
                .stages
                .iter()
                .zip(&other.stages)
                .all(|(a, b)| a.intervals == b.intervals && a.new == b.new)
    }

    /// The stages over the grid, or over `[t0, T]` with a free final time T (struct docs).
    fn build(&self, grid: &ControlGrid, t_end: Option<f64>) -> Vec<Stage> {
        let nodes = grid.nodes();
        let n = grid.intervals;
        let (last, reach) = match t_end {
            None => (n - 1, n),
            Some(t) => {
                let h = (grid.t1 - grid.t0) / n as f64;
                let m = (0..n).rev().find(|&j| nodes[j] <= t - 0.5 * h).unwrap_or(0);
                let reach = (m + 1..=n).find(|&j| nodes[j] >= t).unwrap_or(n);
                (m, reach)
            }
        };
        let nc = grid.n_coef();
        let mut decided = BTreeSet::new();
        let mut stages = Vec::with_capacity(last + 1);
        for i in 0..=last {
            let intervals = if i == last { i..reach } else { i..i + 1 };
            let mut active: Vec<usize> = intervals
                .clone()
                .flat_map(|j| {
                    let act = grid.active::<f64>(j, nodes[j]);
                    (0..grid.channels).flat_map(move |c| {
                        act.idx[..act.n]
                            .iter()
                            .map(move |&a| self.np + c * nc + a)
                            .collect::<Vec<_>>()
                    })
                })
                .filter(|&q| self.optimized[q])
                .chain(self.params.iter().copied())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if i == last {
                active.extend(self.time);
            }
            let (carried, new): (Vec<usize>, Vec<usize>) =
                active.iter().partition(|q| decided.contains(*q));
            decided.extend(new.iter().copied());
            let t1 = match t_end {
                Some(t) if i == last => t,
                _ => nodes[i + 1],
            };
            stages.push(Stage {
                t0: nodes[i],
                t1,
                intervals,
                carried,
                new,
            });
        }
        stages
    }

    /// Where stage k ends at (extended) θ: its node, or T for the last stage of a free
    /// final time.
    pub fn end(&self, k: usize, theta: &[f64]) -> f64 {
        match self.time {
            Some(t) if k + 1 == self.stages.len() => theta[t],
            _ => self.stages[k].t1,
        }
    }

    /// `z_k` at θ and the stage's start state x.
    pub fn z(&self, k: usize, x: &[f64], theta: &[f64]) -> Vec<f64> {
        let mut z = x[..self.nx].to_vec();
        z.extend(self.stages[k].carried.iter().map(|&q| theta[q]));
        z
    }
}
