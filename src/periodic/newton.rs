//! Newton's method on the fixed-point equation `F(x) = P(x) − x = 0` with the exact
//! Jacobian `DP − I` (from [`super::map::return_map`]) and a backtracking line search on
//! `‖F‖∞` (Dennis & Schnabel, *Numerical Methods for Unconstrained Optimization and
//! Nonlinear Equations*, §6.3: accept `α` when `‖F(x + αΔ)‖ ≤ (1 − 10⁻⁴ α) ‖F(x)‖`,
//! else halve it).
//!
//! The unknowns are the full state on the section. `DP` has rank equal to the section's
//! dimension (the reset and the stop at the guard collapse the other directions, which
//! give multipliers 0), so `DP − I` is invertible unless a multiplier is 1 (a fold).

use super::map::{
    fd_monodromy, return_map, return_map_with, return_value, Columns, MapOptions, Return, Stencil,
};
use super::projection::{onto_section, GuessProjection};
use super::section::Section;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::periodic_error::{NewtonFailure, PeriodicError};
use nalgebra::{DMatrix, DVector};

/// Settings of Newton's method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonOptions {
    /// Stop when `‖P(x) − x‖∞ ≤ tol`. Default 1e-12 (the acceptance figure; the
    /// residual's floor is the integration's round-off, ~1e-15 at rtol 1e-12).
    pub tol: f64,
    /// Iteration limit. Default 30 (quadratic convergence needs < 10 from a fair guess).
    pub max_iters: usize,
    /// Smallest line-search step before giving up. Default 2⁻¹⁰.
    pub min_step: f64,
}

impl Default for NewtonOptions {
    fn default() -> Self {
        NewtonOptions {
            tol: 1e-12,
            max_iters: 30,
            min_step: 1.0 / 1024.0,
        }
    }
}

/// Where `DP` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JacobianSource {
    /// The direct sensitivities through the events (exact).
    Exact,
    /// Central finite differences of `P` (the baseline of the benchmark).
    FiniteDifferences,
}

/// The outcome of a converged solve.
#[derive(Debug, Clone)]
pub struct FixedPoint {
    pub x: DVector<f64>,
    /// The return map at `x` with its exact Jacobians.
    pub ret: Return,
    /// `‖P(x) − x‖∞`.
    pub residual: f64,
    pub iterations: usize,
    /// `‖P(x_k) − x_k‖∞` per iterate.
    pub history: Vec<f64>,
    /// The guess moved onto the section before the first iterate, when it missed it by
    /// little (`projection.rs`).
    pub projection: Option<GuessProjection>,
}

/// Value and Jacobian of `P` at `x` by the chosen source.
fn evaluate<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64], jac: JacobianSource,
) -> Result<(DVector<f64>, DMatrix<f64>), Error> {
    match jac {
        JacobianSource::Exact => {
            let r = return_map_with(sys, sec, opts, p, x, Columns::State)?;
            Ok((r.x_next, r.monodromy))
        }
        JacobianSource::FiniteDifferences => {
            let (v, _, _) = return_value(sys, sec, opts, p, x)?;
            let m = fd_monodromy(sys, sec, opts, p, x, FD_STEP, Stencil::Second)?;
            Ok((v, m))
        }
    }
}

/// The relative step of the FD-Newton baseline's central differences: `ε^{1/3}` scaled
/// for the integration error (~1e-12 at the benchmark's tolerance) rather than round-off,
/// `(1e-12)^{1/3} = 1e-4`; measured best of 1e-3…1e-7 on the simplest walker (1e-5).
pub const FD_STEP: f64 = 1e-5;

/// Solves `P(x) = x` from `x0` (see the module docs). The returned [`FixedPoint`] carries
/// the exact Jacobians at the solution whatever `jac` the iteration used.
pub fn solve<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, nopt: &NewtonOptions, p: &[f64], x0: &[f64],
    jac: JacobianSource,
) -> Result<FixedPoint, Error> {
    let (x0, projection) = onto_section(sys, sec, opts, p, x0)?;
    let mut x = DVector::from_column_slice(&x0);
    let mut history = Vec::new();
    let fail = |reason, history: &Vec<f64>| -> Error {
        PeriodicError::NoConvergence {
            reason,
            iterations: history.len().saturating_sub(1),
            history: history.clone(),
            tol: nopt.tol,
        }
        .into()
    };
    let (mut px, mut m) = evaluate(sys, sec, opts, p, x.as_slice(), jac)?;
    for _ in 0..=nopt.max_iters {
        let r = &px - &x;
        let norm = r.amax();
        history.push(norm);
        if norm <= nopt.tol {
            // the solution's exact Jacobians in x and p (one more pass)
            let ret = return_map(sys, sec, opts, p, x.as_slice())?;
            return Ok(FixedPoint {
                iterations: history.len() - 1,
                residual: norm,
                x,
                ret,
                history,
                projection,
            });
        }
        if history.len() > nopt.max_iters {
            break;
        }
        let a = &m - DMatrix::identity(x.len(), x.len());
        let step = a
            .lu()
            .solve(&(-&r))
            .ok_or_else(|| fail(NewtonFailure::SingularJacobian, &history))?;
        let mut alpha = 1.0;
        loop {
            let trial = &x + &step * alpha;
            match evaluate(sys, sec, opts, p, trial.as_slice(), jac) {
                Ok((ptrial, mtrial))
                    if (&ptrial - &trial).amax() <= (1.0 - 1e-4 * alpha) * norm =>
                {
                    x = trial;
                    px = ptrial;
                    m = mtrial;
                    break;
                }
                // a trial without a return (or grazing) counts as no decrease
                Ok(_)
                | Err(Error::Periodic(PeriodicError::NoReturn { .. }))
                | Err(Error::Periodic(PeriodicError::OffSection { .. })) => {}
                Err(e) if e.is_domain_error() => {}
                Err(e) => return Err(e),
            }
            alpha *= 0.5;
            if alpha < nopt.min_step {
                return Err(fail(NewtonFailure::LineSearch, &history));
            }
        }
    }
    Err(fail(NewtonFailure::MaxIterations, &history))
}
