//! The optimization summary (`summary.json` of `hybridopt optimize`) as a typed,
//! serializable struct, and the event list of a trajectory by name: one source for the
//! command line and the Python package.

use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::optimize::{KinkReport, OptimizeResult, Outcome};
use crate::problem::Problem;
use crate::setup::Setup;
use serde::Serialize;
use std::collections::BTreeMap;

/// One event by name: `{t, guard, mode_before, mode_after}`.
#[derive(Debug, Clone, Serialize)]
pub struct EventSummary {
    pub t: f64,
    pub guard: String,
    pub mode_before: String,
    pub mode_after: String,
}

impl EventSummary {
    /// The events of `traj`, named through the setup's dimensions.
    pub fn list<S: HybridSystem>(setup: &Setup<'_, S>, traj: &Trajectory) -> Vec<EventSummary> {
        traj.events
            .iter()
            .map(|e| EventSummary {
                t: e.t,
                guard: setup.dims.guard_name(e.guard),
                mode_before: setup.dims.mode_name(e.mode_before),
                mode_after: setup.dims.mode_name(e.mode_after),
            })
            .collect()
    }
}

/// The fields of `summary.json` (a contract: add, never rename or drop).
#[derive(Debug, Clone, Serialize)]
pub struct OptimizeSummary {
    pub problem: String,
    pub solver: &'static str,
    pub gradient: &'static str,
    /// The solver's termination text.
    pub termination: String,
    pub outcome: Outcome,
    pub converged: bool,
    pub iterations: u64,
    pub evaluations: usize,
    pub cost_evaluations: u64,
    pub gradient_evaluations: u64,
    pub initial_cost: f64,
    pub final_cost: f64,
    /// θ by name at the start and at the end.
    pub parameters_initial: BTreeMap<String, f64>,
    pub parameters_final: BTreeMap<String, f64>,
    /// The names of the optimized entries of θ.
    pub optimized: Vec<String>,
    pub final_gradient_norm: f64,
    pub restarts: Vec<String>,
    pub kinks_met: usize,
    /// The final point's kink, if it is one.
    pub final_kink: Option<KinkReport>,
    pub wall_time_s: f64,
    /// The events of the final trajectory.
    pub events: Vec<EventSummary>,
}

impl OptimizeSummary {
    /// The summary of `r`, a run of [`crate::optimize::optimize`] on `setup` (built from
    /// `p`) with `p.optimizer`.
    pub fn new(p: &Problem, setup: &Setup<'_, impl HybridSystem>, r: &OptimizeResult) -> Self {
        let names = setup.theta_names();
        let by_name = |v: &[f64]| -> BTreeMap<String, f64> {
            names.iter().cloned().zip(v.iter().copied()).collect()
        };
        OptimizeSummary {
            problem: p.name.clone(),
            solver: p.optimizer.solver.name(),
            gradient: p.optimizer.gradient.name(),
            termination: r.termination.clone(),
            outcome: r.outcome,
            converged: r.converged(),
            iterations: r.iterations,
            evaluations: r.evaluations,
            cost_evaluations: r.cost_calls,
            gradient_evaluations: r.gradient_calls,
            initial_cost: r.initial_cost,
            final_cost: r.final_cost,
            parameters_initial: by_name(&r.theta_initial),
            parameters_final: by_name(&r.theta_final),
            optimized: p.free_indices().iter().map(|&i| names[i].clone()).collect(),
            final_gradient_norm: r.final_grad_norm,
            restarts: r.restarts.clone(),
            kinks_met: r.kinks.len(),
            final_kink: r.kinks.last().filter(|k| k.theta == r.theta_final).cloned(),
            wall_time_s: r.wall_time_s,
            events: EventSummary::list(setup, &r.last.trajectory),
        }
    }

    /// As a JSON value, its keys in the order `summary.json` is written in.
    pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }
}
