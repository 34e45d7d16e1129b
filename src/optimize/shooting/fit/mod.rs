//! Fitting measured data by multiple shooting (docs/guide/shooting.md, "Fitting data by
//! multiple shooting"; issue 45): Bock's generalized Gauss–Newton method on the data of
//! one or several experiments, min ½‖r(w)‖² subject to the continuity of every
//! experiment's nodes (problem.rs), from node states started from the data at node times
//! kept away from events (nodes.rs), with the statistics of the parameters at the end
//! (the null-space covariance of `least_squares::constrained_statistics`).
//!
//! Why: on a chaotic record (tens of impacts) single shooting's residuals are so rough in
//! θ that no local solver converges from a guess a few per cent off, and even the truth's
//! simulation leaves the record by round-off amplified over the horizon. Multiple shooting
//! restarts every segment from the data, so each segment's residuals are nearly linear
//! in (θ, s_k) and Gauss–Newton converges in a few steps.

mod nodes;
mod problem;

pub use nodes::NodeMove;

use super::error::ShootingError;
use super::nodes::Node;
use super::report::{segment_trajectories, stitch, NodeReport, ShootingReport};
use super::settings::Shooting;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::fit::{outcome_of, ExperimentFit, FitReport, FitRun};
use crate::optimize::least_squares::{
    constrained_statistics, generalized_gauss_newton, BoxBounds, ConstrainedResiduals, GgnResult,
    GgnSettings, Linearization, LsqOutcome, Statistics,
};
use crate::optimize::{HistoryRow, OptimizeResult, OptimizerSettings, ThetaEntry};
use crate::sensitivity::{evaluate, Evaluation, GradientMethod};
use problem::{segment_objective, Leg, ShootingFit};
use std::time::Instant;

/// Fits the free entries of θ (`theta`'s `optimize` flags and bounds) to every
/// experiment's record by multiple shooting with the nodes of `shooting` (module docs).
/// The result's `least_squares` holds the solver's run, each experiment's nodes and the
/// statistics; `shooting` the first experiment's nodes and gaps. Segments run in parallel
/// on the current rayon pool.
///
/// Errors: what single shooting's fit returns, and [`ShootingError`] for a periodic
/// closing or `stop_after` (not available in a fit) and unusable node times or guesses.
pub fn optimize_shooting_fit<S: HybridSystem>(
    runs: &[FitRun<'_, S>], theta: &[ThetaEntry], shooting: &Shooting, settings: &OptimizerSettings,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    let (fit, moves) = build(runs, theta, shooting)?;
    let w0 = start_point(&fit);
    let bounds = bounds(&fit, runs, theta)?;
    let ggn_settings = GgnSettings {
        max_iterations: settings.max_iters as usize,
        ..GgnSettings::default()
    };
    let ggn = generalized_gauss_newton(&fit, &w0, &bounds, &ggn_settings)
        .map_err(|e| Error::Invalid(format!("least squares: {e}")))?;
    if ggn.outcome == LsqOutcome::StartFailed {
        // the start's own error, typed
        fit.evaluate(&w0, true)?;
    }
    let runs0 = fit.runs(&w0, false)?;
    let runs1 = fit.runs(&ggn.w, false)?;
    let (lin0, lin1) = (fit.assemble(&w0, &runs0), fit.assemble(&ggn.w, &runs1));
    let (ranges0, ranges1) = (fit.ranges(&runs0), fit.ranges(&runs1));
    let mut experiments = Vec::new();
    for (e, leg) in fit.legs.iter().enumerate() {
        let gap = |c: &nalgebra::DVector<f64>, r: &std::ops::Range<usize>| {
            c.rows(r.start, r.len()).amax()
        };
        let report = ShootingReport {
            segments: leg.nodes.len(),
            states: leg.setup.dims.states.clone(),
            nodes: node_reports(&fit, e, &w0, &ggn.w),
            max_defect_initial: gap(&lin0.c, &ranges0[e].1),
            max_defect: gap(&lin1.c, &ranges1[e].1),
            t_end: leg.setup.t_end,
            closure: None,
            threads: rayon::current_num_threads(),
        };
        let r = &ranges1[e].0;
        experiments.push(ExperimentFit {
            name: leg.name.clone(),
            residuals: r.len(),
            sum_of_squares: lin1.r.rows(r.start, r.len()).norm_squared(),
            shooting: Some(report),
            node_moves: moves[e].clone(),
        });
    }
    let (statistics, statistics_error) = match statistics(&fit, &ggn) {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e)),
    };
    let th0 = fit.theta_of(0, &w0);
    let th1 = fit.theta_of(0, &ggn.w);
    let shooting_report = experiments[0].shooting.clone();
    let first = &fit.legs[0];
    let mut initial = evaluate(first.setup, &th0, GradientMethod::Direct)?;
    let mut last = evaluate(first.setup, &th1, GradientMethod::Direct)?;
    if let Some(rep) = &shooting_report {
        for (ev, th, init) in [(&mut initial, &th0, true), (&mut last, &th1, false)] {
            shooting_evaluation(first.setup, rep, th, init, ev);
        }
        initial.values[0] = lin0.r.norm_squared();
        last.values[0] = lin1.r.norm_squared();
    }
    Ok(OptimizeResult {
        outcome: outcome_of(ggn.outcome),
        termination: ggn.message.clone(),
        iterations: ggn.iterations as u64,
        evaluations: ggn.residual_evaluations,
        cost_calls: ggn.residual_evaluations as u64,
        gradient_calls: ggn.jacobian_evaluations as u64,
        initial_cost: 2.0 * ggn.cost_initial,
        final_cost: 2.0 * ggn.cost,
        theta_initial: th0,
        theta_final: th1.clone(),
        final_grad_norm: 2.0 * ggn.stationarity,
        wall_time_s: start.elapsed().as_secs_f64(),
        history: history(&fit, &ggn, &th1),
        restarts: vec![],
        kinks: vec![],
        initial,
        last,
        constrained: None,
        shooting: shooting_report,
        least_squares: Some(Box::new(FitReport {
            solver: "generalized_gauss_newton",
            outcome: ggn.outcome,
            residuals: ggn.residuals.len(),
            residual_evaluations: ggn.residual_evaluations,
            jacobian_evaluations: ggn.jacobian_evaluations,
            final_gauss_newton_steps: ggn.final_full_steps,
            experiments,
            statistics,
            statistics_error,
            steps: vec![],
            constrained_steps: ggn.history.clone(),
        })),
    })
}

/// The multiple-shooting fit's problem at `w` (default: its start): the variables'
/// names and values, then the residuals r, the continuity gaps c and, with `jacobian`,
/// their exact Jacobians — what the generalized Gauss–Newton method of
/// [`optimize_shooting_fit`] sees, for a check by finite differences or a solver of your
/// own. The nodes are placed as the fit places them (from θ's values), so every call with
/// the same arguments has the same variables.
pub fn shooting_fit_point<S: HybridSystem>(
    runs: &[FitRun<'_, S>], theta: &[ThetaEntry], shooting: &Shooting, w: Option<&[f64]>,
    jacobian: bool,
) -> Result<(Vec<String>, Vec<f64>, Linearization), Error> {
    let (fit, _) = build(runs, theta, shooting)?;
    let names = variable_names(&fit);
    let w = match w {
        Some(w) if w.len() == fit.n => w.to_vec(),
        Some(w) => {
            return Err(Error::VariableCount {
                found: w.len(),
                variables: names,
            })
        }
        None => start_point(&fit),
    };
    let lin = fit.evaluate(&w, jacobian)?;
    Ok((names, w, lin))
}

/// The variables' names: θ's free entries, then `experiment:state@k` per node.
fn variable_names<S: HybridSystem>(fit: &ShootingFit<'_, '_, S>) -> Vec<String> {
    let names = fit.legs[0].setup.theta_names();
    let mut out: Vec<String> = fit.free.iter().map(|&k| names[k].clone()).collect();
    for leg in &fit.legs {
        for k in 1..leg.nodes.len() {
            out.extend(
                leg.setup
                    .dims
                    .states
                    .iter()
                    .map(|s| format!("{}:{s}@{k}", leg.name)),
            );
        }
    }
    out
}

/// The problem: each experiment's nodes placed and its segments' objectives, and the
/// nodes moved per experiment.
#[allow(clippy::type_complexity)]
fn build<'r, 'a, S: HybridSystem>(
    runs: &'r [FitRun<'a, S>], theta: &[ThetaEntry], shooting: &Shooting,
) -> Result<(ShootingFit<'r, 'a, S>, Vec<Vec<NodeMove>>), Error> {
    let first = runs
        .first()
        .ok_or_else(|| Error::Invalid("a fit needs at least one experiment".into()))?;
    if shooting.closure.is_some() {
        return Err(ShootingError::Unsupported {
            what: "a periodic closing in a data fit",
            instead: "fit the data over a fixed horizon (drop `periodic` from [shooting])",
        }
        .into());
    }
    let entries = first.setup.resolve_theta(theta)?;
    let free: Vec<usize> = (0..entries.len())
        .filter(|&k| entries[k].optimize)
        .collect();
    let mut position = vec![None; entries.len()];
    for (i, &k) in free.iter().enumerate() {
        position[k] = Some(i);
    }
    let mut legs = Vec::new();
    let mut moves = Vec::new();
    let mut offset = free.len();
    for run in runs {
        let setup = &run.setup;
        if setup.events.stop_after.is_some() {
            return Err(ShootingError::Unsupported {
                what: "`stop_after`",
                instead: "end the horizon at a time",
            }
            .into());
        }
        let objective = setup.objectives.first().ok_or(Error::NoObjective)?;
        let (nodes, moved) = nodes::place(setup, &run.theta, shooting, objective)?;
        let k = nodes.len();
        let parts = (0..k)
            .map(|i| {
                let lo = nodes[i].t;
                let hi = nodes.get(i + 1).map_or(setup.t_end, |n| n.t);
                segment_objective(objective, lo, hi, i, i + 1 == k)
            })
            .collect();
        legs.push(Leg {
            name: run.name.clone(),
            setup,
            theta: run.theta.clone(),
            nodes,
            parts,
            offset,
        });
        offset += (k - 1) * setup.nx();
        moves.push(moved);
    }
    Ok((
        ShootingFit {
            legs,
            free,
            position,
            n: offset,
        },
        moves,
    ))
}

/// w at the start: θ's free values, then every experiment's node states.
fn start_point<S: HybridSystem>(fit: &ShootingFit<'_, '_, S>) -> Vec<f64> {
    let mut w: Vec<f64> = fit.free.iter().map(|&k| fit.legs[0].theta[k]).collect();
    for leg in &fit.legs {
        for node in &leg.nodes[1..] {
            w.extend_from_slice(&node.state);
        }
    }
    w
}

/// θ's bounds on its free entries; the node states are free.
fn bounds<S: HybridSystem>(
    fit: &ShootingFit<'_, '_, S>, runs: &[FitRun<'_, S>], theta: &[ThetaEntry],
) -> Result<BoxBounds, Error> {
    let entries = runs[0].setup.resolve_theta(theta)?;
    let mut lower: Vec<f64> = fit
        .free
        .iter()
        .map(|&k| entries[k].lower.unwrap_or(f64::NEG_INFINITY))
        .collect();
    let mut upper: Vec<f64> = fit
        .free
        .iter()
        .map(|&k| entries[k].upper.unwrap_or(f64::INFINITY))
        .collect();
    lower.resize(fit.n, f64::NEG_INFINITY);
    upper.resize(fit.n, f64::INFINITY);
    Ok(BoxBounds { lower, upper })
}

/// Experiment e's nodes at the start w0 and the end w.
fn node_reports<S: HybridSystem>(
    fit: &ShootingFit<'_, '_, S>, e: usize, w0: &[f64], w: &[f64],
) -> Vec<NodeReport> {
    let leg = &fit.legs[e];
    let dims = &leg.setup.dims;
    let state = |k: usize, w: &[f64], node: &Node| match k {
        0 => leg
            .setup
            .initial(&fit.theta_of(e, w))
            .map(|(_, x)| x[..leg.setup.nx()].to_vec())
            .unwrap_or_else(|_| node.state.clone()),
        _ => fit.node_state(e, k, w).to_vec(),
    };
    leg.nodes
        .iter()
        .enumerate()
        .map(|(k, node)| NodeReport {
            t: node.t,
            t_initial: node.t,
            mode: dims.mode_name(node.mode),
            mode_index: node.mode,
            mode_initial: dims.mode_name(node.mode),
            mode_index_initial: node.mode,
            side: node.side.clone(),
            state_initial: state(k, w0, node),
            state_final: state(k, w, node),
        })
        .collect()
}

/// An evaluation's trajectory replaced by the segments' runs end to end (the gaps at the
/// nodes visible), as the reports draw multiple shooting.
fn shooting_evaluation<S: HybridSystem>(
    setup: &crate::setup::Setup<'_, S>, report: &ShootingReport, theta: &[f64], initial: bool,
    ev: &mut Evaluation,
) {
    if let Ok(runs) = segment_trajectories(setup, report, None, theta, initial) {
        ev.trajectory = stitch(runs);
    }
}

/// The history: one row per accepted iterate (ψ = ‖r‖², the KKT stationarity ×2, the
/// largest gap), then the end point.
fn history<S: HybridSystem>(
    fit: &ShootingFit<'_, '_, S>, ggn: &GgnResult, theta_end: &[f64],
) -> Vec<HistoryRow> {
    let mut rows: Vec<HistoryRow> = Vec::new();
    for h in ggn.history.iter().filter(|h| h.accepted) {
        rows.push(HistoryRow {
            iteration: rows.len() as u64,
            cost: 2.0 * h.cost,
            grad_norm: 2.0 * h.stationarity,
            step: h.alpha * h.step_norm,
            theta: fit.theta_of(0, &h.w),
            max_violation: Some(h.max_violation),
            defect: Some(h.max_violation),
        });
    }
    rows.push(HistoryRow {
        iteration: rows.len() as u64,
        cost: 2.0 * ggn.cost,
        grad_norm: 2.0 * ggn.stationarity,
        step: 0.0,
        theta: theta_end.to_vec(),
        max_violation: Some(ggn.max_violation),
        defect: Some(ggn.max_violation),
    });
    rows
}

/// The statistics of the free entries of θ not held at a bound (node states are
/// nuisance variables: the null-space covariance accounts for them).
fn statistics<S: HybridSystem>(
    fit: &ShootingFit<'_, '_, S>, ggn: &GgnResult,
) -> Result<Statistics, String> {
    let (j, c) = match (&ggn.jacobian, &ggn.constraint_jacobian) {
        (Some(j), Some(c)) => (j.clone(), c.clone()),
        _ => {
            let l = fit.evaluate(&ggn.w, true).map_err(|e| e.to_string())?;
            (l.jr.ok_or("no Jacobian")?, l.jc.ok_or("no Jacobian")?)
        }
    };
    let free = ggn.free();
    let report: Vec<usize> = (0..fit.free.len()).filter(|i| free.contains(i)).collect();
    let var_names = variable_names(fit);
    constrained_statistics(&ggn.w, &ggn.residuals, &j, &c, &free, &report, &var_names)
        .map_err(|e| e.to_string())
}
