//! The constrained solver (docs/constrained.md): minimize the first objective of a setup
//! subject to [`Constraints`] (equalities, inequalities, path constraints, a free final
//! time) and the bounds of θ, by SQP with Clarabel's QP subproblems. The steps, one file
//! each: the problem as the solver sees it (nlp.rs), the path constraints' points
//! (path.rs), the QP subproblem (qp.rs), the iteration (sqp.rs), the KKT conditions
//! (kkt.rs) and the errors (error.rs).
//!
//! ```
//! use hybridopt::prelude::*;
//! use hybridopt::systems::BouncingBall;
//!
//! // the smallest throw v0 (min v0²) whose 2nd impact comes at t ≥ 1.5 s (no drag)
//! let cost = Objective::new("effort", vec![Term::squared(Quantity::Parameter { index: 4 }, 0.0, 1.0)]);
//! let setup = Setup::builder(&BouncingBall).horizon(0.0, 4.0).objective(cost)
//!     .tolerances(1e-11, 1e-12).build();
//! let theta = [
//!     ThetaEntry::fixed("g", 9.81), ThetaEntry::fixed("e", 0.8), ThetaEntry::fixed("c", 0.0),
//!     ThetaEntry::fixed("y0", 1.0), ThetaEntry::free("v0", 1.0).with_bounds(Some(0.0), Some(10.0)),
//! ];
//! let constraints = Constraints {
//!     list: vec![Constraint::new(
//!         ConstraintKind::Quantity(Quantity::EventTime { guard: EventGuard::Guard(0), occurrence: 2 }),
//!         ConstraintBounds::Range { lower: Some(1.5), upper: None },
//!     )],
//!     free_time: None,
//! };
//! let r = optimize_constrained(&setup, &theta, &constraints, &OptimizerSettings::default(), None)?;
//! let report = r.constrained.as_ref().unwrap();
//! assert!(r.converged() && report.kkt_residual <= 1e-8, "{r}");
//! assert!((report.constraints[0].value - 1.5).abs() < 1e-9);
//! # Ok::<(), hybridopt::Error>(())
//! ```

mod bfgs;
pub(crate) mod error;
pub(super) mod kkt;
mod line_search;
mod merit;
pub(super) mod nlp;
pub(super) mod path;
pub(super) mod point;
pub(super) mod problem;
mod qp;
pub(super) mod sqp;
mod trust_region;

pub use error::ConstrainedError;
pub use kkt::Kkt;

use super::history::HistoryRow;
use super::{OptimizeResult, OptimizerSettings, Outcome, ThetaEntry};
use crate::constraint::{ConstraintKind, Constraints};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::sensitivity::GradientMethod;
use crate::setup::Setup;
use nlp::{Nlp, Point, Row};
use sqp::{sqp, SqpEnd};
use std::sync::Arc;
use std::time::Instant;

/// One constraint at the final point, as `summary.json` lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ConstraintReport {
    pub name: String,
    pub kind: &'static str,
    /// The functional's value (a path constraint: the output's extreme over the run on the
    /// side that binds most).
    pub value: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// `max(lower − value, value − upper, 0)`.
    pub violation: f64,
    /// The Lagrange multiplier λ in `∇f + Σ λ ∇c + ν = 0`: positive where the upper bound
    /// binds, negative where the lower one does (a path constraint: the sum over its points).
    pub multiplier: f64,
    /// An equality, or an inequality at its bound (within 1e-6 relative).
    pub active: bool,
}

/// What a constrained run adds to [`OptimizeResult`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ConstrainedReport {
    pub constraints: Vec<ConstraintReport>,
    /// The KKT residual at the final point: the largest of `kkt`'s parts.
    pub kkt_residual: f64,
    pub kkt: Kkt,
    /// The largest violation of any constraint at the final point.
    pub max_violation: f64,
    /// The free final time at the start and at the end.
    pub t_end_initial: Option<f64>,
    pub t_end_final: Option<f64>,
    /// How the constraint Jacobian was computed (`adjoint`, or `direct` when θ has fewer
    /// entries than there are objectives and constraints).
    pub jacobian_method: GradientMethod,
    /// The number of rows of the final point's constraint vector (a path constraint has
    /// one per point it is imposed at).
    pub rows: usize,
}

/// Minimizes the first objective of `setup` over the entries of θ marked `optimize` (and
/// a free final time) inside their bounds (closed, held exactly), subject to
/// `constraints`, by SQP (module docs). `progress(iteration, cost)` is called after every
/// iteration. With no constraints and a fixed final time it runs the same SQP on the
/// bounds alone.
///
/// Errors: an entry's bounds ([`Error::Bounds`]), a constraint naming what the setup
/// lacks or an unusable free final time ([`ConstrainedError`]), an evaluation's error at
/// the start, [`Error::Interrupted`]. Trial points that leave the cost's domain shorten the
/// step instead.
pub fn optimize_constrained<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints,
    settings: &OptimizerSettings, progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    // entries by name, in θ's order; left-out parameters at the system's defaults
    let theta = &setup.resolve_theta(theta)?;
    let nlp = Nlp::new(setup, theta, constraints, settings.gradient)?;
    let run = sqp(
        &nlp,
        settings.max_iters,
        settings.tol_kkt,
        settings.globalization,
        progress,
    )?;
    let report = report(
        &run.point,
        &run.lambda,
        run.kkt,
        constraints,
        nlp.method,
        |o, b| path::extreme(&nlp, &run.point, o, b),
    );
    Ok(finish(
        run,
        settings,
        start,
        ConstrainedReport {
            t_end_initial: constraints.free_time.map(|f| f.value),
            ..report
        },
        |x| nlp.theta_of(x).0,
        nlp.x0(),
    ))
}

/// The result of an SQP run: its outcome and history (θ of each iterate by `theta_of`),
/// the final point and its report. One tail for every problem the SQP solves.
pub(super) fn finish(
    run: sqp::SqpRun, settings: &OptimizerSettings, start: Instant, report: ConstrainedReport,
    theta_of: impl Fn(&[f64]) -> Vec<f64>, x0: Vec<f64>,
) -> OptimizeResult {
    let initial = run.history.first().map(|h| h.f).unwrap_or(run.point.f);
    let (outcome, termination) = match &run.end {
        SqpEnd::Converged => (
            Outcome::Converged,
            format!(
                "KKT residual {:.3e} ≤ {:.1e}",
                run.kkt.residual(),
                settings.tol_kkt
            ),
        ),
        SqpEnd::Infeasible => (
            Outcome::Infeasible,
            format!(
                "the constraints cannot be met: least violation {:.6e} (no step reduces it)",
                run.point.max_violation()
            ),
        ),
        SqpEnd::MaxIterations => (
            Outcome::MaxIterations,
            "maximum number of iterations reached".to_string(),
        ),
        SqpEnd::Stalled(why) | SqpEnd::Halted(why) => (Outcome::Stalled, why.clone()),
        SqpEnd::QpFailed(why) => (Outcome::QpFailed, format!("QP subproblem failed: {why}")),
    };
    let termination = match run.returned {
        Some(i) => format!(
            "{termination}; the iterate with the least KKT residual ({:.3e}, iteration {i}) is returned",
            run.kkt.residual()
        ),
        None => termination,
    };
    let shooting = run
        .point
        .rows
        .iter()
        .any(|r| matches!(r.label.at, nlp::RowAt::Continuity { .. }));
    let history = run
        .history
        .iter()
        .map(|h| HistoryRow {
            iteration: h.iteration,
            cost: h.f,
            grad_norm: h.kkt.stationarity,
            step: h.step,
            theta: theta_of(&h.x),
            max_violation: Some(h.max_violation),
            defect: shooting.then_some(h.defect),
        })
        .collect();
    OptimizeResult {
        outcome,
        termination,
        iterations: run.iterations,
        evaluations: run.evaluations,
        cost_calls: run.evaluations as u64,
        gradient_calls: run.evaluations as u64,
        initial_cost: initial,
        final_cost: run.point.f,
        theta_initial: theta_of(&x0),
        theta_final: run.point.theta.clone(),
        final_grad_norm: run.kkt.stationarity,
        wall_time_s: start.elapsed().as_secs_f64(),
        history,
        restarts: vec![],
        kinks: vec![],
        initial: run.initial.evaluation,
        last: run.point.evaluation,
        constrained: Some(report),
        shooting: None,
        least_squares: None,
    }
}

/// The report of the final point: each constraint's value, violation and multiplier.
/// `path_value(output, bounds)` gives a path constraint's reported value.
pub(super) fn report(
    p: &Point, lambda: &[f64], kkt: Kkt, constraints: &Constraints, method: GradientMethod,
    path_value: impl Fn(usize, (f64, f64)) -> f64,
) -> ConstrainedReport {
    let list = constraints
        .list
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let (lower, upper) = c.limits();
            let mine: Vec<(usize, &nlp::Row)> = p
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.label.constraint == ci)
                .collect();
            let multiplier = mine.iter().map(|(i, _)| lambda[*i]).sum();
            let value = match c.kind {
                ConstraintKind::Path { output } => path_value(output, (lower, upper)),
                _ => mine.first().map_or(f64::NAN, |(_, r)| r.value),
            };
            let open = |v: f64| v.is_finite().then_some(v);
            let near = |b: f64| b.is_finite() && (value - b).abs() <= 1e-6 * b.abs().max(1.0);
            ConstraintReport {
                name: c.name.clone(),
                kind: c.kind.name(),
                value,
                lower: open(lower),
                upper: open(upper),
                violation: c.violation(value),
                multiplier,
                active: c.is_equality() || near(lower) || near(upper),
            }
        })
        .collect::<Vec<_>>();
    ConstrainedReport {
        max_violation: list.iter().map(|c| c.violation).fold(0.0, f64::max),
        constraints: list,
        kkt_residual: kkt.residual(),
        kkt,
        t_end_initial: None,
        t_end_final: constraints.free_time.map(|_| p.t_end),
        jacobian_method: method,
        rows: p.rows.len(),
    }
}

/// One row of the constraint vector at a point, with its gradient.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ConstraintRow {
    /// The constraint's name (a path constraint has one row per point it is imposed at).
    pub name: String,
    pub value: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// d(value)/d(variables), over [`ConstrainedPoint::variables`].
    pub gradient: Vec<f64>,
}

/// The cost and the constraint rows with their exact gradients at one point: what the
/// constrained solver sees (for scipy's `trust-constr`/`SLSQP`, or a solver of your own).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ConstrainedPoint {
    /// The variables: the optimized entries of θ by name, then `t_end` if it is free.
    pub variables: Vec<String>,
    pub values: Vec<f64>,
    pub cost: f64,
    pub cost_gradient: Vec<f64>,
    pub rows: Vec<ConstraintRow>,
    /// How the Jacobian was computed (the adjoint, or the direct method when θ is shorter
    /// than the list of objectives).
    pub method: GradientMethod,
}

impl ConstrainedPoint {
    /// The report of the SQP's point `p` at `values`: its cost and rows, each row named by
    /// `name` and its infinite limits left open (`None`).
    pub(crate) fn at(
        variables: Vec<String>, values: Vec<f64>, p: &Point, method: GradientMethod,
        name: impl Fn(&Row) -> String,
    ) -> Self {
        let open = |v: f64| v.is_finite().then_some(v);
        ConstrainedPoint {
            variables,
            values,
            cost: p.f,
            cost_gradient: p.g.clone(),
            rows: p
                .rows
                .iter()
                .map(|r| ConstraintRow {
                    name: name(r),
                    value: r.value,
                    lower: open(r.lower),
                    upper: open(r.upper),
                    gradient: r.grad.clone(),
                })
                .collect(),
            method,
        }
    }
}

/// The cost (objective 0 of `setup`) and every constraint row with exact gradients at the
/// entries' values of `theta` (and the free final time's value), in one engine evaluation
/// (one forward run and one vector-adjoint or direct pass; a path constraint adds one
/// adjoint run per interior point near its bound).
pub fn constrained_point<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints, method: GradientMethod,
) -> Result<ConstrainedPoint, Error> {
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    let nlp = Nlp::new(setup, theta, constraints, method)?;
    let x = nlp.x0();
    let p = nlp.evaluate_at(&x)?;
    let mut variables: Vec<String> = nlp.free.iter().map(|&k| theta[k].name.clone()).collect();
    if constraints.free_time.is_some() {
        variables.push("t_end".into());
    }
    Ok(ConstrainedPoint::at(variables, x, &p, nlp.method, |r| {
        constraints.list[r.label.constraint].name.clone()
    }))
}
