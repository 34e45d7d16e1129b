//! Typed failures of the periodic-orbit solver ([`crate::periodic`]): a leaf under [`crate::Error`]
//! ([`crate::Error::Periodic`]), as the other modules' errors are; a simulation's own
//! failure inside the solver is that [`crate::Error`] itself.

use serde::Serialize;

/// Every failure of the periodic-orbit module.
#[derive(Debug, thiserror::Error)]
pub enum PeriodicError {
    /// The orbit did not come back to the section within the horizon.
    #[error("no return to the section: guard '{guard}' fired {fired} of the {count} time(s) one period needs within t_max = {t_max} (from the state {state:?}); raise [periodic] t_max or start closer to a gait")]
    NoReturn {
        guard: String,
        fired: usize,
        count: usize,
        t_max: f64,
        state: Vec<f64>,
    },
    /// The start is on the side of the section's guard from which it fires, so the
    /// period would end at once (or, for a hyperplane section, off the hyperplane).
    #[error("the start {state:?} is not on the section: guard '{guard}' = {value:e} there (|g| ≤ {zero_tol:e} is on the section); {hint}")]
    OffSection {
        guard: String,
        value: f64,
        zero_tol: f64,
        state: Vec<f64>,
        /// What is wrong and what to give instead.
        hint: &'static str,
    },
    /// Newton's method did not reach the residual tolerance.
    #[error("Newton's method on P(x) − x = 0 did not converge: {reason:?} after {iterations} iteration(s); residual history ‖P(x) − x‖∞ = {history:?} (tolerance {tol:e})")]
    NoConvergence {
        reason: NewtonFailure,
        iterations: usize,
        history: Vec<f64>,
        tol: f64,
    },
    /// The free components do not chart the section at the orbit.
    #[error("the free components {free:?} do not chart the section: {detail}")]
    BadSection { free: Vec<String>, detail: String },
    /// A derivative that does not exist (a multiple eigenvalue, two of the largest
    /// modulus): reported rather than silently wrong.
    #[error("nonsmooth: {0}")]
    Nonsmooth(String),
    /// Invalid settings (a continuation range, a gait optimization without an
    /// objective, a flow tangent to the section).
    #[error("{0}")]
    Invalid(String),
}

/// Why Newton's method stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NewtonFailure {
    /// The iteration limit was reached.
    MaxIterations,
    /// The line search could not decrease the residual down to the smallest step.
    LineSearch,
    /// `DP − I` is singular (a multiplier at 1: a fold of the orbit family).
    SingularJacobian,
}
