//! Constraints by an augmented-Lagrangian outer loop around the hybrid iLQR / DDP
//! (Hestenes 1969, Powell 1969, Rockafellar 1973; as ALTRO and AL-iLQR do: Howell, Jackson
//! & Manchester 2019; docs/theory.md §11, "Constraints"):
//!
//! ```text
//! L_A(θ; λ, ρ) = J(θ) + Σ_r φ(c_r(θ); l_r, u_r, λ_r, ρ)          (φ: costs::augmented)
//! repeat:  θ ← argmin_θ L_A  (the stage solver, warm-started, ‖∇L_A‖ ≤ tol_kkt / 10)
//!          λ_r ← ρ d_r = φ'(c_r)       (the first-order update; λ signed as the SQP's)
//!          ρ ← 10 ρ unless the largest violation fell by 4× or is ≤ tol_kkt
//! until the SQP's KKT residual (kkt.rs, same rows, same multipliers' sign) ≤ tol_kkt
//! ```
//!
//! The rows are those the SQP sees, from its own evaluation ([`Nlp::evaluate_at`]: the
//! cost and every constraint with its exact gradient): an event time or output, a terminal
//! value, an entry of θ — each the cost of one stage; a path constraint's points — its
//! pre-event values and its end likewise, its interior extrema as values at the instant
//! found at the outer iterate (points.rs; at the outer loop's fixed point the instant is
//! the extremum's, where the envelope theorem makes the fixed-instant gradient the
//! moving extremum's). At the inner solution `∇L_A = ∇f + Σ λ⁺_r ∇c_r`, so the KKT
//! stationarity with the updated multipliers is the inner solve's gradient.
//! Multipliers follow their rows across outer iterations by the SQP's row labels.

use super::costs::{Form, Piece, Plan};
use super::layout::Layout;
use super::stage::Stages;
use super::IlqrError;
use crate::constraint::{ConstraintKind, Constraints};
use crate::cost::{EventGuard, Quantity, Term};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::constrained::kkt::{kkt, Kkt};
use crate::optimize::constrained::nlp::{Nlp, Point, RowAt, RowLabel};
use crate::optimize::constrained::{path, report, ConstrainedReport};
use crate::optimize::ThetaEntry;
use crate::optimize::{HistoryRow, OptimizeResult, OptimizerSettings, Outcome, SolverKind};
use crate::setup::Setup;
use std::sync::Arc;
use std::time::Instant;

/// The first penalty. The problems are not convex and the outer loop's path decides the
/// KKT point it reaches: on thrust_constrained from θ = 0, ρ₀ = 10, 10², 10³ and 10⁵ lead
/// to other KKT points (ψ = 118.3, 118.3, 56.9, 56.9), ρ₀ = 10⁴ to the SQP's (13.69)
/// (measured; docs/theory.md §11).
const RHO0: f64 = 1e4;
/// Its growth when the violation did not fall by `DECREASE`.
const GROWTH: f64 = 10.0;
/// Its largest value: the DDP's second-order terms are differences of the exact first
/// ones (second.rs), whose integration error (rtol / h) ρ multiplies.
const RHO_MAX: f64 = 1e6;
const DECREASE: f64 = 0.25;
/// At most this many outer iterations.
const MAX_OUTER: usize = 40;

/// Each row's multiplier, by the SQP's row label.
type Multipliers = Vec<(RowLabel, f64)>;

fn multiplier(m: &Multipliers, label: RowLabel) -> f64 {
    m.iter().find(|(l, _)| *l == label).map_or(0.0, |(_, v)| *v)
}

/// The first-order update at `p` (module docs): each row's `ρ d` from its old multiplier.
fn update(p: &Point, old: &Multipliers, rho: f64) -> Multipliers {
    p.rows
        .iter()
        .map(|r| {
            let lam = multiplier(old, r.label);
            let (_, slope, _) = super::costs::augmented(r.value, r.lower, r.upper, lam, rho);
            (r.label, slope)
        })
        .collect()
}

/// The cost's plan with one augmented term per row of `p` (module docs).
fn augmented_plan<S: HybridSystem>(
    nlp: &Nlp<'_, '_, S>, p: &Point, base: &Plan, lambda: &Multipliers, rho: f64,
) -> Result<Plan, Error> {
    let mut plan = base.clone();
    let mut found: Vec<Option<Vec<path::Extremum>>> = vec![None; nlp.constraints.list.len()];
    for row in &p.rows {
        let ci = row.label.constraint;
        let c = &nlp.constraints.list[ci];
        let form = Form::Augmented {
            lower: row.lower,
            upper: row.upper,
            lambda: multiplier(lambda, row.label),
            rho,
        };
        let output = match (c.kind, row.label.at) {
            (ConstraintKind::Path { output }, _) => output,
            (_, _) => {
                let term = c.objective().expect("a whole row has a functional").terms[0].clone();
                plan.constraint(term, form, &c.name)?;
                continue;
            }
        };
        if found[ci].is_none() {
            let traj = nlp.setup.simulate(&p.theta)?;
            found[ci] = Some(path::extrema(&nlp.setup, &traj, &p.theta, output)?);
        }
        let e = found[ci]
            .as_ref()
            .and_then(|v| v.iter().find(|e| e.at == row.label.at).copied());
        let terminal = Term::plain(Quantity::Terminal { output }, 1.0);
        match (row.label.at, e) {
            (RowAt::Interior { .. }, Some(e)) => plan.points.push((
                e.t,
                Piece {
                    term: terminal,
                    form,
                },
            )),
            (RowAt::BeforeEvent { .. }, Some(e)) => {
                let term = Term::plain(
                    Quantity::EventOutput {
                        guard: EventGuard::Any,
                        occurrence: e.event + 1,
                        output,
                    },
                    1.0,
                );
                plan.constraint(term, form, &c.name)?
            }
            (RowAt::End, _) => plan.constraint(terminal, form, &c.name)?,
            // the start is the initial state's: no stage decides it
            _ => {}
        }
    }
    Ok(plan)
}

/// The state of the outer loop.
struct Outer {
    point: Point,
    lambda: Multipliers,
    kkt: Kkt,
    rho: f64,
    iterations: u64,
    calls: (u64, u64),
    history: Vec<HistoryRow>,
}

impl Outer {
    fn record(&mut self) {
        self.history.push(HistoryRow {
            iteration: self.iterations,
            cost: self.point.f,
            grad_norm: self.kkt.stationarity,
            step: 0.0,
            theta: self.point.theta.clone(),
            max_violation: Some(self.point.max_violation()),
            defect: None,
        });
    }
}

/// Minimizes the first objective of `setup` subject to `constraints` (and over a free final
/// time, the last stage's decision: layout.rs)
/// by the augmented Lagrangian around the iLQR / DDP of `settings.solver` (module docs).
/// The result carries the SQP's constrained report (multipliers, KKT residual); its
/// history has one row per outer iteration.
///
/// Errors: those of [`super::optimize_ilqr`]; [`IlqrError::Constraint`] for an integral
/// constraint.
pub fn optimize_ilqr_constrained<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints,
    settings: &OptimizerSettings, progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    let only = setup.only_objective(0);
    let theta = &only.resolve_theta(theta)?;
    let nlp = Nlp::new(&only, theta, constraints, settings.gradient)?;
    let grid = only.controls.clone().ok_or(IlqrError::NoControls)?;
    let (np, nx) = (only.np(), only.nx());
    // a free final time: θ extended by T, the last stage's decision (layout.rs)
    let (layout, time) = match constraints.free_time {
        None => (
            Layout::new(&grid, (only.t0, only.t_end), theta, np, nx)?,
            None,
        ),
        Some(ft) => {
            let at = (ft.value, ft.upper);
            let layout = Layout::free_time(&grid, only.t0, at, theta, np, nx)?;
            (layout, Some((ft.lower, ft.upper)))
        }
    };
    let base = Plan::new(&only.objectives[0], layout.time)?;
    let bound = |f: fn(&ThetaEntry) -> Option<f64>, open: f64, side: fn((f64, f64)) -> f64| {
        let mut b: Vec<f64> = theta.iter().map(|e| f(e).unwrap_or(open)).collect();
        b.extend(time.map(side));
        b
    };
    let (lower, upper) = (
        bound(|e| e.lower, f64::NEG_INFINITY, |(lo, _)| lo),
        bound(|e| e.upper, f64::INFINITY, |(_, hi)| hi),
    );
    let stages_with = |plan, t_end: f64| Stages {
        setup: &only,
        layout: layout.at_time(&grid, t_end),
        plan,
        grid: grid.clone(),
        lower: lower.clone(),
        upper: upper.clone(),
        second_order: settings.solver == SolverKind::Ddp,
    };
    let point = nlp.evaluate_at(&nlp.x0())?;
    let initial = point.evaluation.clone();
    let zero = vec![0.0; point.rows.len()];
    let mut o = Outer {
        kkt: kkt(&point, &zero, &nlp.lower, &nlp.upper),
        point,
        lambda: vec![],
        rho: RHO0,
        iterations: 0,
        calls: (0, 0),
        history: vec![],
    };
    o.record();
    let (outcome, text) = outer_loop(&nlp, &base, &stages_with, settings, progress, &mut o)?;
    let mut rep = report(
        &o.point,
        &o.lambda_vec(),
        o.kkt,
        constraints,
        nlp.method,
        |out, b| path::extreme(&nlp, &o.point, out, b),
    );
    rep.t_end_initial = constraints.free_time.map(|f| f.value);
    Ok(result(
        o,
        outcome,
        text,
        initial,
        rep,
        nlp.theta_of(&nlp.x0()).0,
        start,
    ))
}

/// The outer iterations (module docs): how they ended.
fn outer_loop<'s, 'a: 's, S: HybridSystem + 'a, F: Fn(Plan, f64) -> Stages<'s, 'a, S>>(
    nlp: &Nlp<'_, '_, S>, base: &Plan, stages_with: &F, settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>, o: &mut Outer,
) -> Result<(Outcome, String), Error> {
    let mut violation = o.point.max_violation();
    for outer in 1..=MAX_OUTER {
        let plan = augmented_plan(nlp, &o.point, base, &o.lambda, o.rho)?;
        let mut stages = stages_with(plan, o.point.t_end);
        let mut inner = settings.clone();
        inner.max_iters = settings.max_iters.saturating_sub(o.iterations);
        let tol = Some(0.1 * settings.tol_kkt);
        // θ, extended by T with a free final time
        let mut start = o.point.theta.clone();
        start.extend(stages.layout.time.map(|_| o.point.t_end));
        let solved = stages.solve(&start, &inner, tol, progress.clone())?;
        o.iterations += solved.iterations;
        o.calls.0 += solved.rollouts;
        o.calls.1 += solved.linearizations;
        let mut x: Vec<f64> = nlp.free.iter().map(|&k| solved.best.theta[k]).collect();
        x.extend(stages.layout.time.map(|t| solved.best.theta[t]));
        let next = nlp.evaluate_at(&x)?;
        // the multipliers of the rows the inner solve saw, updated at its solution
        let lambda = update(&next, &o.lambda, o.rho);
        o.point = next;
        o.lambda = lambda;
        o.kkt = kkt(&o.point, &o.lambda_vec(), &nlp.lower, &nlp.upper);
        o.record();
        let now = o.point.max_violation();
        if o.kkt.residual() <= settings.tol_kkt {
            let text = format!(
                "KKT residual {:.3e} ≤ {:.1e} after {outer} augmented-Lagrangian iterations (ρ = {:.0e})",
                o.kkt.residual(),
                settings.tol_kkt,
                o.rho
            );
            return Ok((Outcome::Converged, text));
        }
        if o.iterations >= settings.max_iters {
            break;
        }
        // feasible to the tolerance: only the multipliers' update is left to do
        if now > settings.tol_kkt && now > DECREASE * violation {
            o.rho = (o.rho * GROWTH).min(RHO_MAX);
        }
        violation = now;
    }
    let text = format!(
        "KKT residual {:.3e} > {:.1e} at the iteration limit (ρ = {:.0e})",
        o.kkt.residual(),
        settings.tol_kkt,
        o.rho
    );
    Ok((Outcome::MaxIterations, text))
}

impl Outer {
    fn lambda_vec(&self) -> Vec<f64> {
        self.lambda.iter().map(|l| l.1).collect()
    }
}

/// The run's result from the outer loop's final state.
fn result(
    o: Outer, outcome: Outcome, termination: String, initial: crate::sensitivity::Evaluation,
    report: ConstrainedReport, theta_initial: Vec<f64>, start: Instant,
) -> OptimizeResult {
    OptimizeResult {
        outcome,
        termination,
        iterations: o.iterations,
        evaluations: (o.calls.0 + o.calls.1) as usize + o.history.len(),
        cost_calls: o.calls.0,
        gradient_calls: o.calls.1,
        initial_cost: initial.values[0],
        final_cost: o.point.f,
        theta_initial,
        theta_final: o.point.theta.clone(),
        final_grad_norm: o.kkt.stationarity,
        wall_time_s: start.elapsed().as_secs_f64(),
        history: o.history,
        restarts: vec![],
        kinks: vec![],
        initial,
        last: o.point.evaluation,
        constrained: Some(report),
        shooting: None,
        least_squares: None,
    }
}
