//! The computations behind the Python methods, free of Python objects so that they run
//! with the GIL released: each takes the engine's setup (built once, [`crate::prepared`])
//! and returns plain data.

use hybridopt::artifacts::{trajectory_table, Table};
use hybridopt::error::Error;
use hybridopt::integrate::{Stats, Trajectory};
use hybridopt::optimize::optimize as run_optimizer;
use hybridopt::optimize_output::write_optimize_results;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, forward, EventSensitivity, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::output::summary::{EventSummary, OptimizeSummary};
use hybridopt::systems::builtin::Builtin;
use std::path::Path;

/// A simulation: the tabulated trajectory (as the CLI's trajectory.csv), its events, and
/// the objectives' values (or why they are undefined).
pub struct SimRun {
    pub table: Table,
    pub events: Vec<EventSummary>,
    pub t_final: f64,
    pub stats: Stats,
    pub costs: Result<Vec<f64>, String>,
}

/// Simulates at `theta`.
pub fn simulate(setup: &Setup<'_, Builtin>, theta: &[f64]) -> Result<SimRun, Error> {
    let traj = setup.simulate(theta)?;
    let table = trajectory_table(setup, &traj, theta)?;
    // The costs are reported, not required (as `hybridopt simulate` does): a simulation
    // whose cost is undefined still runs, and says why.
    let costs = setup
        .objective_values(&traj, theta)
        .map_err(|e| e.to_string());
    Ok(SimRun {
        events: EventSummary::list(setup, &traj),
        t_final: traj.t_final,
        stats: traj.stats,
        costs,
        table,
    })
}

/// An event by name, with τ = dt_e/dθ when it was asked for.
pub struct EventRun {
    pub event: EventSummary,
    pub tau: Option<Vec<f64>>,
}

/// Values and gradients of every objective at θ by one method.
pub struct GradRun {
    pub values: Vec<f64>,
    pub gradients: Vec<Vec<f64>>,
    pub events: Vec<EventRun>,
    /// All the work of the method.
    pub stats: Stats,
    /// Where τ came from: the method's own run (direct, dual) or one direct pass.
    pub tau_from: Option<&'static str>,
}

/// `evaluate` at θ; with `tau`, the event-time sensitivities from the method's run when it
/// computed them (direct, dual), else from one forward-sensitivity pass (as
/// `hybridopt gradient` does).
pub fn gradient(
    setup: &Setup<'_, Builtin>,
    theta: &[f64],
    method: GradientMethod,
    tau: bool,
) -> Result<GradRun, Error> {
    let ev = evaluate(setup, theta, method)?;
    let (events, tau_from) = if !tau {
        (plain_events(setup, &ev.trajectory), None)
    } else if let Some(t) = &ev.tau {
        (tau_events(setup, t), Some(method.name()))
    } else {
        let fw = forward::forward_sensitivity(setup, theta)?;
        (tau_events(setup, &fw.events), Some("direct_pass"))
    };
    Ok(GradRun {
        values: ev.values,
        gradients: ev.gradients,
        events,
        stats: ev.stats,
        tau_from,
    })
}

fn plain_events(setup: &Setup<'_, Builtin>, traj: &Trajectory) -> Vec<EventRun> {
    EventSummary::list(setup, traj)
        .into_iter()
        .map(|event| EventRun { event, tau: None })
        .collect()
}

fn tau_events(setup: &Setup<'_, Builtin>, evs: &[EventSensitivity]) -> Vec<EventRun> {
    evs.iter()
        .map(|e| EventRun {
            event: EventSummary {
                t: e.t,
                guard: setup.dims.guard_name(e.guard),
                mode_before: setup.dims.mode_name(e.mode_before),
                mode_after: setup.dims.mode_name(e.mode_after),
            },
            tau: Some(e.tau.clone()),
        })
        .collect()
}

/// ψ₀ (the first objective) and dψ₀/dθ at θ, as the optimizer evaluates them (the other
/// objectives are not computed).
pub fn first_objective(
    setup: &Setup<'_, Builtin>,
    theta: &[f64],
    method: GradientMethod,
) -> Result<(f64, Vec<f64>), Error> {
    let only = setup.only_objective(0);
    let mut ev = evaluate(&only, theta, method)?;
    Ok((ev.values[0], ev.gradients.swap_remove(0)))
}

/// Runs the optimizer with `p.optimizer` from `p`'s values on `setup` (built from `p`,
/// whose optimizer settings it does not hold); the summary as JSON text (the CLI's
/// `summary.json`), and the results folder written when `out` is given.
pub fn optimize(
    p: &Problem,
    setup: &Setup<'_, Builtin>,
    out: Option<&Path>,
) -> Result<String, Error> {
    let r = run_optimizer(setup, &p.theta, &p.optimizer, None)?;
    let summary = OptimizeSummary::new(p, setup, &r);
    if let Some(dir) = out {
        write_optimize_results(p, setup, &r, &summary, dir)?;
    }
    let json = |e: serde_json::Error| Error::Optimizer(format!("summary as JSON: {e}"));
    serde_json::to_string(&summary.to_value().map_err(json)?).map_err(json)
}
