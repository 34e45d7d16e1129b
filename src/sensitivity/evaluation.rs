//! What an evaluation returns: the objectives' values and gradients at one θ, the run, the
//! work it took, the event-time sensitivities and the witnesses.

use super::options::Witness;
use super::timing::EvalTiming;
use crate::integrate::{Stats, Trajectory};

/// Objective values and gradients at one θ.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// ψ_i for each objective.
    pub values: Vec<f64>,
    /// dψ_i/dθ for each objective.
    pub gradients: Vec<Vec<f64>>,
    /// The trajectory of X (state and cost quadratures).
    pub trajectory: Trajectory,
    /// The counters of all the work of the method: the run of X plus the adjoint's
    /// backward passes, the perturbed runs of FD, or the dual runs (the plain run alone is
    /// `trajectory.stats`; for `Direct` both count the one run of X and S together).
    pub stats: Stats,
    /// The event-time sensitivities τ = dt_e/dθ of every event, when the method computed
    /// them: `Direct` (from S⁻ at each event) and `Dual` (the derivative of each located
    /// event time); `None` for `Adjoint` and `Fd`.
    pub tau: Option<Vec<EventSensitivity>>,
    /// Wall-clock phases of this evaluation.
    pub timing: EvalTiming,
    /// The witnesses' gradients ([`EvaluateOptions::witnesses`](super::EvaluateOptions::witnesses)), in the order asked.
    pub witnesses: Vec<Witness>,
    /// `Fd` alone: each entry's error estimate and step, `[objective][parameter]`
    /// ([`FdGradients`](super::FdGradients)); `None` for the other methods.
    pub fd: Option<FdDetails>,
}

/// The FD method's error estimate and step of every entry.
#[derive(Debug, Clone, PartialEq)]
pub struct FdDetails {
    /// Each entry's error estimate (see [`FdGradients::error_estimates`](super::FdGradients::error_estimates)); `None`
    /// for the 2nd-order stencil.
    pub error_estimates: Option<Vec<Vec<f64>>>,
    /// The step of each entry (see [`FdGradients::steps`](super::FdGradients::steps)).
    pub steps: Vec<Vec<f64>>,
}

/// Event report: time, guard, modes, and the event-time sensitivity τ = dt_e/dθ.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EventSensitivity {
    pub t: f64,
    pub guard: usize,
    pub mode_before: usize,
    pub mode_after: usize,
    pub group: usize,
    pub tau: Vec<f64>,
}
