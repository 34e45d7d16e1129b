//! How a least-squares solve ended, its per-iteration history and its result: plain data
//! with serde, for `summary.json` and the Python package.

use super::bounds::BoundSide;
use nalgebra::DMatrix;
use std::fmt;

/// How a least-squares solve ended. Every ending comes with the best point found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LsqOutcome {
    /// The relative step test held: ‖Δx‖ ≤ xtol (‖x‖ + xtol) (and, constrained, ‖c‖∞ ≤ ctol).
    ConvergedStep,
    /// The relative reduction test held: the actual and the predicted reduction of ‖r‖²
    /// are both at most ftol relative.
    ConvergedReduction,
    /// The gradient test held: the projected ‖Jᵀr‖∞ ≤ gtol (constrained: the KKT
    /// stationarity ‖Jᵀr + Cᵀν‖∞ ≤ gtol with ‖c‖∞ ≤ ctol).
    ConvergedGradient,
    /// The iteration budget ran out.
    MaxIterations,
    /// No acceptable step could be found (the trust radius or the line search collapsed,
    /// or trial points kept failing to evaluate) before a convergence test held.
    Stalled,
    /// Constrained only: stalled with the constraints still violated (‖c‖∞ > ctol).
    Infeasible,
    /// The start point could not be evaluated; the result holds the start.
    StartFailed,
}

impl LsqOutcome {
    /// The name in `summary.json` (`converged_step`, `max_iterations`, …).
    pub fn name(self) -> &'static str {
        match self {
            LsqOutcome::ConvergedStep => "converged_step",
            LsqOutcome::ConvergedReduction => "converged_reduction",
            LsqOutcome::ConvergedGradient => "converged_gradient",
            LsqOutcome::MaxIterations => "max_iterations",
            LsqOutcome::Stalled => "stalled",
            LsqOutcome::Infeasible => "infeasible",
            LsqOutcome::StartFailed => "start_failed",
        }
    }

    /// Whether a convergence test held.
    pub fn converged(self) -> bool {
        matches!(
            self,
            LsqOutcome::ConvergedStep
                | LsqOutcome::ConvergedReduction
                | LsqOutcome::ConvergedGradient
        )
    }
}

impl fmt::Display for LsqOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One trial step of Levenberg–Marquardt (several trials may share an iteration's
/// Jacobian; `iteration` numbers the Jacobians, starting at 0).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LmIteration {
    pub iteration: usize,
    /// ½‖r‖² at the iterate the step starts from.
    pub cost: f64,
    /// ½‖r‖² at the trial point (NaN when its evaluation failed).
    pub trial_cost: f64,
    /// The projected ‖Jᵀr‖∞ at the iterate.
    pub gradient_norm: f64,
    /// The damping μ of the step (0: a pure Gauss–Newton step).
    pub mu: f64,
    /// The trust radius Δ the step was computed for (scaled norm ‖D p‖).
    pub radius: f64,
    /// ‖Δx‖ (after projection onto the bounds).
    pub step_norm: f64,
    /// Actual over predicted reduction.
    pub rho: f64,
    pub accepted: bool,
    /// The number of variables held at their bounds for this step.
    pub held: usize,
    /// The iterate the step starts from.
    pub x: Vec<f64>,
}

/// Levenberg–Marquardt's result.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LmResult {
    pub outcome: LsqOutcome,
    /// What ended the run in words (the test that held, or the evaluation error).
    pub message: String,
    pub x_initial: Vec<f64>,
    /// The best point found (the last accepted iterate: every accepted step lowers ½‖r‖²).
    pub x: Vec<f64>,
    pub cost_initial: f64,
    /// ½‖r‖² at `x`.
    pub cost: f64,
    /// The residuals at `x`.
    pub residuals: Vec<f64>,
    /// The projected ‖Jᵀr‖∞ at `x`.
    pub gradient_norm: f64,
    /// Accepted steps.
    pub iterations: usize,
    /// Calls of the problem (with or without the Jacobian).
    pub residual_evaluations: usize,
    /// Calls that computed the Jacobian.
    pub jacobian_evaluations: usize,
    /// Per variable: the bound it ends held at (at the bound, the gradient pushing out).
    pub active: Vec<Option<BoundSide>>,
    /// How many of the last accepted steps were pure Gauss–Newton steps (μ = 0).
    pub final_gauss_newton_steps: usize,
    pub history: Vec<LmIteration>,
    /// J at `x` (for the statistics), if it was evaluated there.
    #[serde(skip)]
    pub jacobian: Option<DMatrix<f64>>,
}

impl LmResult {
    /// The indices of the variables not held at a bound (the statistics' parameters).
    pub fn free(&self) -> Vec<usize> {
        (0..self.x.len())
            .filter(|&i| self.active[i].is_none())
            .collect()
    }
}

/// One iteration of the generalized Gauss–Newton method.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GgnIteration {
    pub iteration: usize,
    /// ½‖r‖² at the iterate.
    pub cost: f64,
    /// max |cᵢ| at the iterate.
    pub max_violation: f64,
    /// ‖Jᵀr + Cᵀν‖∞ on the free variables at the iterate (ν its least-squares multipliers).
    pub stationarity: f64,
    /// The Levenberg damping μ of the step (0: the undamped generalized Gauss–Newton step).
    pub mu: f64,
    /// The penalty weight ρ of the merit ½‖r‖² + ρ‖c‖₁.
    pub penalty: f64,
    /// ‖Δw‖ of the full step (before the line search).
    pub step_norm: f64,
    /// The line search's step length α (0 when it failed).
    pub alpha: f64,
    pub accepted: bool,
    /// The number of variables held at their bounds for this step.
    pub held: usize,
    /// The iterate the step starts from (not in `summary.json`: node states included, it
    /// is long).
    #[serde(skip)]
    pub w: Vec<f64>,
}

/// The generalized Gauss–Newton method's result.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GgnResult {
    pub outcome: LsqOutcome,
    pub message: String,
    pub w_initial: Vec<f64>,
    /// The last accepted iterate (each lowers the merit).
    pub w: Vec<f64>,
    /// The constraints' multipliers ν at `w` (Jᵀr + Cᵀν = 0 at a KKT point).
    pub multipliers: Vec<f64>,
    pub cost_initial: f64,
    pub cost: f64,
    pub max_violation_initial: f64,
    pub max_violation: f64,
    /// ‖Jᵀr + Cᵀν‖∞ on the free variables at `w`.
    pub stationarity: f64,
    pub residuals: Vec<f64>,
    pub iterations: usize,
    pub residual_evaluations: usize,
    pub jacobian_evaluations: usize,
    pub active: Vec<Option<BoundSide>>,
    /// How many of the last accepted steps were full (α = 1) undamped steps.
    pub final_full_steps: usize,
    pub history: Vec<GgnIteration>,
    #[serde(skip)]
    pub jacobian: Option<DMatrix<f64>>,
    #[serde(skip)]
    pub constraint_jacobian: Option<DMatrix<f64>>,
}

impl GgnResult {
    /// The indices of the variables not held at a bound.
    pub fn free(&self) -> Vec<usize> {
        (0..self.w.len())
            .filter(|&i| self.active[i].is_none())
            .collect()
    }
}
