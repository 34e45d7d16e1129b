//! An evaluation by one method, with the witnesses and τ asked for: the entry point of
//! every gradient (theory.md §2–4).

use super::evaluation::{Evaluation, EventSensitivity, FdDetails};
use super::method::GradientMethod;
use super::options::{self, EvaluateOptions, Witness};
use super::timing::EvalTiming;
use super::{adjoint, dual, fd, forward};
use crate::error::Error;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::setup::Setup;
use std::time::Instant;

/// Computes the objectives and their gradients by the chosen method (the adjoint, direct,
/// central-FD or dual gradient of every objective, theory.md §2–4):
/// `evaluate_with(setup, theta, &EvaluateOptions::new(method))`.
///
/// ```
/// use hybridopt::prelude::*;
/// use hybridopt::systems::BouncingBall;
///
/// // ψ = (t₃ − 2)²: the ball's third impact at t = 2 s; θ = (g, e, c, y0, v0)
/// let third = Quantity::EventTime { guard: EventGuard::Guard(0), occurrence: 3 };
/// let cost = Objective::new("timing", vec![Term::squared(third, 2.0, 1.0)]);
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
                mode_before: e.mode_before(),
                mode_after: e.mode_after(),
                group: e.group,
                tau: tau.clone(),
            })
            .collect(),
    )
}
