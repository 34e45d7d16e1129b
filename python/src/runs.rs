//! The computations behind the Python methods, free of Python objects so that they run
//! with the GIL released: each takes the engine's setup (built once, [`crate::prepared`])
//! and returns plain data.

use hybridopt::error::Error;
use hybridopt::integrate::Stats;
use hybridopt::output::artifacts::{trajectory_table, Table};
use hybridopt::output::gradient::{run_gradient, GradientOptions};
use hybridopt::output::optimize::write_optimize_results;
use hybridopt::output::optimize::{EventSummary, OptimizeSummary};
use hybridopt::output::periodic::{write_gait_results, GaitSummary};
use hybridopt::output::simulate::SimulateReport;
use hybridopt::output::to_value;
use hybridopt::problem::{Optimized, Problem};
use hybridopt::sensitivity::FdOptions;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::Builtin;
use std::path::Path;
use std::time::Instant;

/// A simulation: the tabulated trajectory (as the CLI's trajectory.csv), its events, and
/// the objectives' values (or why they are undefined); `report` is the CLI's
/// `simulate --json` ([`SimulateReport`]) as JSON text.
pub struct SimRun {
    pub table: Table,
    pub events: Vec<EventSummary>,
    pub t_final: f64,
    pub stats: Stats,
    pub costs: Result<Vec<f64>, String>,
    pub report: String,
}

/// Simulates at `theta`.
pub fn simulate(
    setup: &Setup<'_, Builtin>, theta: &[f64], objective_names: &[String],
) -> Result<SimRun, Error> {
    let traj = setup.simulate(theta)?;
    let table = trajectory_table(setup, &traj, theta)?;
    // The costs are reported, not required (as `hybridopt simulate` does): a simulation
    // whose cost is undefined still runs, and says why.
    let costs = setup
        .objective_values(&traj, theta)
        .map_err(|e| e.to_string());
    let report = SimulateReport::new(setup, &traj, &table, theta, objective_names);
    Ok(SimRun {
        events: report.events.clone(),
        t_final: traj.t_final,
        stats: traj.stats,
        costs,
        report: to_value(&report)?.to_string(),
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
    pub tau_from: Option<String>,
    /// The CLI's `gradient --json --method <method>` report as JSON text.
    pub report: String,
}

/// The computation of `hybridopt gradient --method <method>` (one run, `repeat` 1) at θ;
/// with `tau`, the event-time sensitivities from the method's run when it computed them
/// (direct, dual), else from one forward-sensitivity pass.
pub fn gradient(
    setup: &Setup<'_, Builtin>, theta: &[f64], method: GradientMethod, tau: bool,
    objective_names: &[String],
) -> Result<GradRun, Error> {
    let started = Instant::now();
    let opts = GradientOptions {
        methods: vec![method],
        repeat: 1,
        tau,
        tau_pass: tau,
        figures: false,
        fd: FdOptions::default(),
    };
    let run = run_gradient(setup, theta, &opts)?;
    let report = run.report(setup, objective_names, started);
    let taus: Vec<Option<Vec<f64>>> = match run.tau_events() {
        Some(evs) => evs.iter().map(|e| Some(e.tau.clone())).collect(),
        None => vec![None; report.events.len()],
    };
    let events = report
        .events
        .iter()
        .zip(taus)
        .map(|(e, tau)| EventRun {
            event: e.event.clone(),
            tau,
        })
        .collect();
    let text = to_value(&report)?.to_string();
    let tau_from = serde_json::to_value(report.tau_from)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string));
    let ev = run.runs.into_iter().next().map(|r| r.evaluation);
    let ev = ev.ok_or_else(|| Error::Invalid("gradient: no method was run".into()))?;
    Ok(GradRun {
        values: ev.values,
        gradients: ev.gradients,
        events,
        stats: ev.stats,
        tau_from,
        report: text,
    })
}

/// ψ₀ (the first objective) and dψ₀/dθ at θ, as the optimizer evaluates them (the other
/// objectives are not computed).
pub fn first_objective(
    setup: &Setup<'_, Builtin>, theta: &[f64], method: GradientMethod,
) -> Result<(f64, Vec<f64>), Error> {
    let only = setup.only_objective(0);
    let mut ev = evaluate(&only, theta, method)?;
    Ok((ev.values[0], ev.gradients.swap_remove(0)))
}

/// Runs the optimizer with `p.optimizer` from `p`'s values on `setup` (built from `p`,
/// whose optimizer settings it does not hold) through [`Problem::optimize`], as the
/// CLI does (the gait optimizer for a `[periodic]` problem); the summary as JSON text (the
/// CLI's `summary.json`), and the results folder written when `out` is given.
pub fn optimize(
    p: &Problem, setup: &Setup<'_, Builtin>, out: Option<&Path>,
) -> Result<String, Error> {
    let json = |e: serde_json::Error| Error::Optimizer(format!("summary as JSON: {e}"));
    let r = match p.optimize(setup, None)? {
        Optimized::Trajectory(r) => r,
        Optimized::Gait(r) => {
            if let Some(dir) = out {
                write_gait_results(p, &r, dir)?;
            }
            return serde_json::to_string(&GaitSummary::new(p, &r)).map_err(json);
        }
    };
    let summary = OptimizeSummary::new(p, setup, &r);
    if let Some(dir) = out {
        write_optimize_results(p, setup, &r, &summary, dir)?;
    }
    serde_json::to_string(&summary.to_value().map_err(json)?).map_err(json)
}

/// The cost and the constraint rows with gradients over `x` (the optimized entries, then
/// t_end when it is free), as the constrained solver sees them.
pub fn constrained(
    p: &Problem, setup: &Setup<'_, Builtin>, x: &[f64],
) -> Result<hybridopt::optimize::ConstrainedPoint, Error> {
    let free = p.free_indices();
    let with_time = p.constraints.free_time.is_some();
    let n = free.len() + usize::from(with_time);
    if x.len() != n {
        return Err(Error::Invalid(format!(
            "x has {} entries; the constrained problem's variables are the {} optimized entries{}",
            x.len(),
            free.len(),
            if with_time { " and t_end" } else { "" }
        )));
    }
    let mut theta = p.theta.clone();
    for (&i, &v) in free.iter().zip(x) {
        theta[i].value = v;
    }
    let mut constraints = p.constraints.clone();
    if let Some(ft) = constraints.free_time.as_mut() {
        ft.value = x[n - 1];
    }
    hybridopt::optimize::constrained_point(setup, &theta, &constraints, p.optimizer.gradient)
}

/// Multiple shooting's cost and rows with gradients at `x` (the optimized entries, then
/// the interior nodes' states; default: the start), for a problem with a `[shooting]`
/// table.
pub fn shooting(
    p: &Problem, setup: &Setup<'_, Builtin>, x: Option<&[f64]>,
) -> Result<hybridopt::optimize::ConstrainedPoint, Error> {
    let Some(shooting) = &p.shooting else {
        return Err(Error::Invalid(format!(
            "problem '{}' has no [shooting] table: shooting_point evaluates multiple shooting (add `[shooting] segments = K`); constraint_rows gives single shooting's rows",
            p.name
        )));
    };
    hybridopt::optimize::shooting_point(setup, &p.theta, &p.constraints, shooting, x)
}
