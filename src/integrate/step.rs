//! One step of any method: the dispatch to each method's step, in the three forms the
//! loops need (a new end value, the end written into the caller's buffers with or without
//! the interpolant). Generic over the scalar so that a whole simulation can run in dual
//! numbers; step-size decisions use real parts only, so a dual run takes exactly the steps
//! of the `f64` run.

use super::bdf::history::BdfHistory;
use super::dopri5::{dopri5_dense_into, dopri5_into, dopri5_step};
use super::method::Method;
use super::newton::Newton;
use super::ode::{Attempt, OdeRhs, Tolerances};
use super::sdirk3::sdirk3_step;
use crate::error::ModelError;
use crate::integrate::dense::DenseStep;
use crate::model::Scalar;

/// Tries one step of `method` from `(t, y)` with slope `f0 = F(t, y)` and step `h`. The
/// implicit methods use and update the run's [`Newton`] state (DOPRI5 ignores it); a BDF
/// step here is the first of a run (the loop passes its history to `try_step_from`).
#[allow(clippy::too_many_arguments)]
pub fn try_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    method: Method, rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, newton: &mut Newton,
) -> Result<Attempt<D>, ModelError> {
    try_step_from(method, rhs, t, y, f0, h, tol, (newton, None))
}

/// [`try_step`] with a multistep method's history (`None`: the first step of a run; the
/// one-step methods ignore it).
#[allow(clippy::too_many_arguments)]
pub fn try_step_from<D: Scalar, R: OdeRhs<D> + ?Sized>(
    method: Method, rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances,
    (newton, history): (&mut Newton, Option<&BdfHistory<D>>),
) -> Result<Attempt<D>, ModelError> {
    match method {
        Method::Dopri5 => dopri5_step(rhs, t, y, f0, h, tol),
        Method::Sdirk3 => sdirk3_step(rhs, t, y, f0, h, tol, newton),
        Method::Radau5 => super::radau::radau5_step(rhs, t, y, f0, h, tol, newton),
        Method::Bdf => super::bdf::bdf_step(rhs, t, y, f0, h, tol, newton, history),
    }
}

/// The result of [`try_step_dense_into`]: the step's end value and slope are in the
/// caller's buffers.
pub enum DenseAttempt<D> {
    /// The step was computed; `err` is its weighted error norm (accept when ≤ 1);
    /// `history` a multistep method's history after it.
    Done {
        err: f64,
        dense: DenseStep<D>,
        evals: usize,
        history: Option<Box<BdfHistory<D>>>,
    },
    /// The implicit stage equations did not converge: retry with a smaller step.
    NewtonFailed { evals: usize },
}

/// [`try_step_from`] with the end value and slope written into `y1`, `f1` (length n), for
/// the backward pass's replay of checkpointed steps, which swaps them in: DOPRI5 then
/// allocates only the interpolant it keeps (the same arithmetic as [`try_step`], so the
/// replayed interpolants are bit-identical to the forward run's).
#[allow(clippy::too_many_arguments)]
pub fn try_step_dense_into<D: Scalar, R: OdeRhs<D> + ?Sized>(
    method: Method, rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances,
    (y1, f1, newton, from): (&mut [D], &mut [D], &mut Newton, Option<&BdfHistory<D>>),
) -> Result<DenseAttempt<D>, ModelError> {
    if method == Method::Dopri5 {
        let (err, dense) = dopri5_dense_into(rhs, t, y, f0, h, tol, y1, f1)?;
        return Ok(DenseAttempt::Done {
            err,
            dense,
            evals: 6,
            history: None,
        });
    }
    Ok(
        match try_step_from(method, rhs, t, y, f0, h, tol, (newton, from))? {
            Attempt::Done {
                y1: a,
                f1: b,
                err,
                dense,
                evals,
                history,
            } => {
                y1.copy_from_slice(&a);
                f1.copy_from_slice(&b);
                DenseAttempt::Done {
                    err,
                    dense,
                    evals,
                    history,
                }
            }
            Attempt::NewtonFailed { evals } => DenseAttempt::NewtonFailed { evals },
        },
    )
}

/// The result of [`try_step_into`]: a step computed in place (no interpolant).
pub enum StepInPlace<D> {
    /// `y1`, `f1` hold the step's end; `err` is its weighted error norm; `history` a
    /// multistep method's history after it.
    Done {
        err: f64,
        evals: usize,
        history: Option<Box<BdfHistory<D>>>,
    },
    /// The implicit stage equations did not converge: retry with a smaller step.
    NewtonFailed { evals: usize },
}

/// [`try_step_from`] for callers that need no dense output (the adjoint's backward pass):
/// the end value and slope are written into `y1`, `f1` (length n), and DOPRI5 neither
/// builds an interpolant nor allocates (its stages on the stack for small systems).
#[allow(clippy::too_many_arguments)]
pub fn try_step_into<D: Scalar, R: OdeRhs<D> + ?Sized>(
    method: Method, rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances,
    step: (&mut [D], &mut [D], &mut Newton, Option<&BdfHistory<D>>),
) -> Result<StepInPlace<D>, ModelError> {
    if method == Method::Dopri5 {
        let err = dopri5_into(rhs, t, y, f0, h, tol, step.0, step.1)?;
        return Ok(StepInPlace::Done {
            err,
            evals: 6,
            history: None,
        });
    }
    Ok(
        match try_step_dense_into(method, rhs, t, y, f0, h, tol, step)? {
            DenseAttempt::Done {
                err,
                evals,
                history,
                ..
            } => StepInPlace::Done {
                err,
                evals,
                history,
            },
            DenseAttempt::NewtonFailed { evals } => StepInPlace::NewtonFailed { evals },
        },
    )
}
