//! Sensitivity analysis through events: the jump (the only one), forward (direct)
//! sensitivities, the continuous adjoint, and the two independent witnesses (central
//! finite differences and a whole-simulation dual-number run).

pub(crate) mod adjoint;
mod columns;
pub mod corner;
pub(crate) mod dual;
pub(crate) mod fd;
pub(crate) mod forward;
pub(crate) mod jump;
mod options;
mod residuals;
pub(crate) mod seeds;
pub mod simultaneous;
pub(crate) mod timing;

use crate::cost::Term;
use crate::error::{Error, ModelError};
use crate::integrate::trajectory::Ctx;
use crate::integrate::{Stats, Trajectory};
use crate::model::HybridSystem;
use crate::setup::{ScalarJac, Setup};
pub use fd::{
    fd_gradients, fd_gradients_with_steps, runs_per_parameter, FdGradients, FdOptions, FdScale,
};
use nalgebra::DVector;
use num_dual::Dual64;
pub use options::{EvaluateOptions, Witness};
pub use residuals::{least_squares_obstacle, residuals, ResidualRun};
use std::time::Instant;
pub use timing::{EvalTiming, TimingReport};

/// How a gradient is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GradientMethod {
    /// Continuous adjoint (theory §4): one backward pass per objective.
    Adjoint,
    /// Forward (direct) sensitivities (theory §2–3): one column per parameter.
    Direct,
    /// Central finite differences of ψ (a witness).
    Fd,
    /// The whole simulation in dual numbers, one run per parameter (a witness: the exact
    /// derivative of the discretised solution).
    Dual,
}

impl GradientMethod {
    pub fn name(self) -> &'static str {
        match self {
            GradientMethod::Adjoint => "adjoint",
            GradientMethod::Direct => "direct",
            GradientMethod::Fd => "fd",
            GradientMethod::Dual => "dual",
        }
    }
    pub fn all() -> [GradientMethod; 4] {
        [
            GradientMethod::Adjoint,
            GradientMethod::Direct,
            GradientMethod::Dual,
            GradientMethod::Fd,
        ]
    }
}

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
    /// The witnesses' gradients ([`EvaluateOptions::witnesses`]), in the order asked.
    pub witnesses: Vec<Witness>,
    /// `Fd` alone: each entry's error estimate and step, `[objective][parameter]`
    /// ([`FdGradients`]); `None` for the other methods.
    pub fd: Option<FdDetails>,
}

/// The FD method's error estimate and step of every entry.
#[derive(Debug, Clone, PartialEq)]
pub struct FdDetails {
    /// Each entry's error estimate (see [`FdGradients::error_estimates`]); `None`
    /// for the 2nd-order stencil.
    pub error_estimates: Option<Vec<Vec<f64>>>,
    /// The step of each entry (see [`FdGradients::steps`]).
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

/// Maps a model failure to a located error.
pub(crate) fn located<'s, S: HybridSystem>(
    setup: &'s Setup<'_, S>, t: f64, mode: usize,
) -> impl Fn(ModelError) -> Error + 's {
    move |e| Error::Model {
        t,
        mode: setup.dims.mode_name(mode),
        source: e,
    }
}

/// Value and gradients (t, X, θ) of an event or terminal cost term at `(t, X)` in the
/// context `ctx`: the term's own derivatives chained through the outputs' Jacobians.
/// `as_terminal`: evaluate a terminal term (Φ) rather than an event term (E).
pub fn term_jacobian<S: HybridSystem>(
    setup: &Setup<'_, S>, term: &Term, ctx: &Ctx, t: f64, xx: &[f64], theta: &[f64],
    as_terminal: bool,
) -> Result<ScalarJac, Error> {
    let outs = setup
        .output_jacobian(ctx, t, xx, theta)
        .map_err(located(setup, t, ctx.mode))?;
    let dims = (setup.n(), setup.ntheta());
    Ok(term_jacobian_from(term, t, &outs, dims, as_terminal))
}

/// [`term_jacobian`] from the outputs' Jacobians at `(t, X)` (computed once for every
/// term at the same point), `(n, nθ)` the sizes of X and θ: with `y = h(t, X, θ)` and the
/// term `T(t, y)`, `T_t = ∂T/∂t + Σ_k ∂T/∂y_k h_{k,t}`, `T_X = Σ_k ∂T/∂y_k h_{k,X}`, `T_θ`
/// likewise.
pub(crate) fn term_jacobian_from(
    term: &Term, t: f64, outs: &[ScalarJac], (n, nth): (usize, usize), as_terminal: bool,
) -> ScalarJac {
    let ny = outs.len();
    let f = |td: Dual64, yd: &[Dual64]| -> Dual64 {
        if as_terminal {
            term.terminal(yd)
        } else {
            term.event_value(td, yd)
        }
    };
    let lift = |seed: Option<usize>| -> Vec<Dual64> {
        (0..ny)
            .map(|i| Dual64::new(outs[i].value, if seed == Some(i) { 1.0 } else { 0.0 }))
            .collect()
    };
    let v0 = f(Dual64::new(t, 1.0), &lift(None));
    let mut jac = ScalarJac {
        value: v0.re,
        t: v0.eps,
        x: DVector::zeros(n),
        theta: DVector::zeros(nth),
    };
    for (k, o) in outs.iter().enumerate() {
        let dk = f(Dual64::from(t), &lift(Some(k))).eps;
        if dk != 0.0 {
            jac.t += dk * o.t;
            jac.x += &o.x * dk;
            jac.theta += &o.theta * dk;
        }
    }
    jac
}

/// Computes the objectives and their gradients by the chosen method (the adjoint, direct,
/// central-FD or dual gradient of every objective, theory.md §2–4):
/// `evaluate_with(setup, theta, &EvaluateOptions::new(method))`.
///
/// ```
/// use hybridopt::prelude::*;
/// use hybridopt::systems::BouncingBall;
///
/// // ψ = (t₃ − 2)²: the ball's third impact at t = 2 s; θ = (g, e, c, y0, v0)
/// let cost = Objective::new("timing", vec![Term::EventTimeSquared {
///     guard: EventGuard::Guard(0), occurrence: 3, target: 2.0, weight: 1.0 }]);
/// let setup = Setup::new(&BouncingBall, 0.0, 3.0, None, vec![cost]);
/// let theta = [9.81, 0.8, 0.0, 1.0, 0.5];
/// let adjoint = evaluate(&setup, &theta, GradientMethod::Adjoint).unwrap();
/// let direct = evaluate(&setup, &theta, GradientMethod::Direct).unwrap();
/// assert_eq!(adjoint.values[0], direct.values[0]);
/// for (a, d) in adjoint.gradients[0].iter().zip(&direct.gradients[0]) {
///     assert!((a - d).abs() <= 1e-6 * a.abs().max(1e-6));
/// }
/// // the direct pass gives the event times' sensitivities τ = dt_e/dθ
/// assert_eq!(direct.tau.unwrap().len(), adjoint.trajectory.events.len());
/// ```
pub fn evaluate<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], method: GradientMethod,
) -> Result<Evaluation, Error> {
    evaluate_with(setup, theta, &EvaluateOptions::new(method))
}

/// Computes the objectives and their gradients by `options.method`, with its FD step, the
/// witnesses it asks for (each compared with the method's gradient) and τ when asked
/// (one direct pass if the method does not give it). The timing covers the method alone.
pub fn evaluate_with<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], options: &EvaluateOptions,
) -> Result<Evaluation, Error> {
    setup.validate()?;
    let mut ev = evaluate_by(setup, theta, options.method, options.fd)?;
    if options.tau && ev.tau.is_none() {
        ev.tau = Some(forward::forward_sensitivity_lean(setup, theta)?.events);
    }
    for &method in options.witnesses.iter().filter(|&&m| m != options.method) {
        let w = evaluate_by(setup, theta, method, options.fd)?;
        ev.witnesses.push(Witness {
            method,
            max_relative_difference: options::max_relative_difference(&w.gradients, &ev.gradients),
            gradients: w.gradients,
            stats: w.stats,
            fd: w.fd,
        });
    }
    Ok(ev)
}

/// One method's evaluation, timed.
fn evaluate_by<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], method: GradientMethod, fd_options: fd::FdOptions,
) -> Result<Evaluation, Error> {
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    let start = Instant::now();
    // The plain simulation that starts every method but `Direct`, timed on its own.
    let simulate = || -> Result<(Trajectory, f64), Error> {
        let t = Instant::now();
        let traj = setup.simulate(theta)?;
        Ok((traj, t.elapsed().as_secs_f64()))
    };
    let mut ev = match method {
        GradientMethod::Adjoint => {
            // the adjoint's forward run keeps its dense output under the setup's
            // checkpointing policy (the backward pass replays what was compacted)
            let t = Instant::now();
            let traj = setup.simulate_for_adjoint(theta)?;
            let forward_s = t.elapsed().as_secs_f64();
            let values = setup.objective_values(&traj, theta)?;
            let (gradients, astats) = adjoint::adjoint_gradients(setup, &traj, theta)?;
            let mut stats = traj.stats;
            stats += astats;
            Evaluation {
                values,
                gradients,
                trajectory: traj,
                stats,
                tau: None,
                timing: EvalTiming::forward(forward_s),
                witnesses: Vec::new(),
                fd: None,
            }
        }
        GradientMethod::Direct => {
            let r = forward::forward_sensitivity_lean(setup, theta)?;
            let trajectory = r.state_trajectory(setup.n());
            Evaluation {
                values: r.values,
                gradients: r.gradients,
                stats: r.trajectory.stats,
                trajectory,
                tau: Some(r.events),
                timing: EvalTiming::default(),
                witnesses: Vec::new(),
                fd: None,
            }
        }
        GradientMethod::Fd => {
            let (traj, forward_s) = simulate()?;
            let values = setup.objective_values(&traj, theta)?;
            let r = fd::fd_gradients_detailed(setup, theta, fd_options)?;
            let mut stats = traj.stats;
            stats += r.stats;
            Evaluation {
                values,
                gradients: r.gradients,
                stats,
                trajectory: traj,
                tau: None,
                timing: EvalTiming::forward(forward_s),
                witnesses: Vec::new(),
                fd: Some(FdDetails {
                    error_estimates: r.error_estimates,
                    steps: r.steps,
                }),
            }
        }
        GradientMethod::Dual => {
            let (traj, forward_s) = simulate()?;
            let values = setup.objective_values(&traj, theta)?;
            let r = dual::dual_gradients(setup, theta)?;
            let mut stats = traj.stats;
            stats += r.stats;
            let tau = dual_event_sensitivities(&traj, &r.event_tau, theta.len());
            Evaluation {
                values,
                gradients: r.gradients,
                stats,
                trajectory: traj,
                tau,
                timing: EvalTiming::forward(forward_s),
                witnesses: Vec::new(),
                fd: None,
            }
        }
    };
    ev.timing.total_s = start.elapsed().as_secs_f64();
    Ok(ev)
}

/// The dual runs' event-time derivatives as event reports on the plain run's events; `None`
/// when the dual runs did not locate the same number of events (they follow the plain run's
/// step sequence, so they do unless an event is at the edge of being missed).
fn dual_event_sensitivities(
    traj: &Trajectory, event_tau: &[Vec<f64>], ntheta: usize,
) -> Option<Vec<EventSensitivity>> {
    let empty = vec![Vec::new(); traj.events.len()];
    let taus = if ntheta == 0 { &empty[..] } else { event_tau };
    if taus.len() != traj.events.len() {
        return None;
    }
    Some(
        traj.events
            .iter()
            .zip(taus)
            .map(|(e, tau)| EventSensitivity {
                t: e.t,
                guard: e.guard,
                mode_before: e.before.mode,
                mode_after: e.after.mode,
                group: e.group,
                tau: tau.clone(),
            })
            .collect(),
    )
}
