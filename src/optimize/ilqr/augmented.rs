//! Constraints by an augmented-Lagrangian outer loop around the hybrid iLQR / DDP
//! (Hestenes 1969, Powell 1969, Rockafellar 1973; as ALTRO and AL-iLQR do: Howell, Jackson
//! & Manchester 2019; docs/theory.md §11, "Constraints"):
//!
//! ```text
//! L_A(θ; λ, ρ) = J(θ) + Σ_r φ(c_r(θ); l_r, u_r, λ_r, ρ)          (φ: costs::augmented)
//! repeat:  θ ← argmin_θ L_A  (the stage solver, warm-started, ‖∇L_A‖ ≤ tol_kkt / 10)
//!          λ_r ← ρ d_r = φ'(c_r)       (the first-order update; λ signed as the SQP's)
//!          near feasible (≤ 10⁻⁴): θ, λ ← one Newton–KKT step if it lowers the residual
//!          ρ ← 10 ρ unless the largest violation fell by 4× or is ≤ tol_kkt
//! until the SQP's KKT residual (kkt.rs, same rows, same multipliers' sign) ≤ tol_kkt
//! ```
//!
//! The Newton step (polish.rs) turns the first-order update's linear convergence into a
//! fast one: on compass_gait_periodic_walk 13 outer iterations to KKT 4.7·10⁻¹¹ (θ within
//! 2.4·10⁻¹⁰ of the SQP's optimum) where the loop alone took 34 to 7.8·10⁻⁹ (6·10⁻⁷).
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
use super::measure::Measure;
use super::polish;
use super::stage::Stages;
use super::IlqrError;
use crate::constraint::{ConstraintKind, Constraints};
use crate::cost::{EventGuard, Quantity, Term};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::constrained::kkt::{free_variables, kkt, Kkt};
use crate::optimize::constrained::nlp::{Nlp, Point, RowAt, RowLabel};
use crate::optimize::constrained::{path, report, ConstrainedReport};
use crate::optimize::shooting::{closing_problem, closing_result, Closure};
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
/// An outer iterate this close to feasible that has not converged is polished by a Newton
/// step on the KKT conditions (polish.rs): closer, and the rows' linear model holds over
/// the step.
const PROJECT_BELOW: f64 = 1e-4;
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

/// The least-squares multipliers at `p` (Nocedal & Wright §18.3, eq. 18.21): over the
/// rows that `first` (the first-order update) keeps active and the variables off their
/// bounds F,
///
/// ```text
/// λ_LS = argmin_λ ‖(∇f + Σ_r λ_r ∇c_r)_F‖₂
/// ```
///
/// — the multipliers that best explain the gradient whatever the inner solve left in the
/// constraints' normal directions (at ρ = 10⁶ the inner solves stall with ρ·10⁻⁹ there).
/// `None` when an inequality's estimate has the wrong sign or the rows are dependent.
fn least_squares(
    p: &Point, first: &Multipliers, lower: &[f64], upper: &[f64],
) -> Option<Multipliers> {
    let free = free_variables(p, lower, upper);
    let active: Vec<usize> = (0..p.rows.len())
        .filter(|&r| p.rows[r].is_equality() || multiplier(first, p.rows[r].label) != 0.0)
        .collect();
    if active.is_empty() || active.len() > free.len() {
        return None;
    }
    let jt = nalgebra::DMatrix::from_fn(free.len(), active.len(), |i, a| {
        p.rows[active[a]].grad[free[i]]
    });
    let g = nalgebra::DVector::from_iterator(free.len(), free.iter().map(|&j| -p.g[j]));
    let mu = jt.svd(true, true).solve(&g, 1e-12).ok()?;
    let mut out: Multipliers = p.rows.iter().map(|r| (r.label, 0.0)).collect();
    for (a, &r) in active.iter().enumerate() {
        let row = &p.rows[r];
        let wrong = !row.is_equality() && mu[a] * multiplier(first, row.label) < 0.0;
        if wrong || !mu[a].is_finite() {
            return None;
        }
        out[r].1 = mu[a];
    }
    Some(out)
}

/// The cost's plan with one augmented term per row of `p` (module docs).
fn augmented_plan<S: HybridSystem>(
    measure: &Measure<'_, '_, S>, p: &Point, base: &Plan, lambda: &Multipliers, rho: f64,
) -> Result<Plan, Error> {
    let mut plan = base.clone();
    let constraints = measure.constraints();
    let mut found: Vec<Option<Vec<path::Extremum>>> = vec![None; constraints.list.len()];
    for row in &p.rows {
        let ci = row.label.constraint;
        let form = Form::Augmented {
            lower: row.lower,
            upper: row.upper,
            lambda: multiplier(lambda, row.label),
            rho,
        };
        if let RowAt::Continuity { state, .. } = row.label.at {
            // a periodic problem's closing row (start.rs)
            plan.closing.push((state, form));
            continue;
        }
        let c = &constraints.list[ci];
        let output = match (c.kind, row.label.at) {
            (ConstraintKind::Path { output }, _) => output,
            (_, _) => {
                let term = c.objective().expect("a whole row has a functional").terms[0].clone();
                plan.constraint(term, form, &c.name)?;
                continue;
            }
        };
        if found[ci].is_none() {
            found[ci] = Some(measure.extrema(p, output)?);
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
    /// The multipliers that drive the subproblems (the first-order update).
    lambda: Multipliers,
    /// The multipliers the KKT residual is measured and reported with: the first-order
    /// ones or the least-squares ones, whichever gives the smaller residual.
    reported: Vec<f64>,
    kkt: Kkt,
    rho: f64,
    iterations: u64,
    calls: (u64, u64),
    history: Vec<HistoryRow>,
    /// The outer iterate with the least KKT residual so far (its point, multipliers, the
    /// reported ones, its residual and iteration count): what a run out of iterations
    /// returns, as the SQP does (docs/constrained.md, "Convergence").
    best: Option<(Point, Multipliers, Vec<f64>, Kkt, u64)>,
}

impl Outer {
    /// Keeps the current iterate if its KKT residual is the least so far.
    fn keep_best(&mut self) {
        let least = self.best.as_ref().map_or(f64::INFINITY, |b| b.3.residual());
        if self.kkt.residual() < least {
            self.best = Some((
                self.point.clone(),
                self.lambda.clone(),
                self.reported.clone(),
                self.kkt,
                self.iterations,
            ));
        }
    }

    /// Returns to the kept iterate if it is not the current one: its iteration count.
    fn restore_best(&mut self) -> Option<u64> {
        let b = self.best.take()?;
        if b.3.residual() >= self.kkt.residual() {
            return None;
        }
        let at = b.4;
        (self.point, self.lambda, self.reported, self.kkt) = (b.0, b.1, b.2, b.3);
        Some(at)
    }

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
    constrained(setup, theta, constraints, None, settings, progress)
}

/// A periodic problem by the augmented Lagrangian around the iLQR / DDP: the horizon ends
/// at the first firing of `closure`'s guard, the state after its reset returns to the
/// start `x0(θ)` on its states (each closing row an augmented term of the last stage,
/// start.rs), the start charted by free parameters that stage 0 decides (layout.rs). The
/// rows and the KKT residual are those of the SQP on the same problem as one segment
/// (shooting/closing.rs), and the result carries its shooting report (the closing's
/// residual and Floquet multipliers).
///
/// Errors: those of [`optimize_ilqr_constrained`], and of multiple shooting's problem
/// (a free final time with a periodic closing, a path constraint, `stop_after`).
pub fn optimize_ilqr_periodic<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints, closure: &Closure,
    settings: &OptimizerSettings, progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    constrained(setup, theta, constraints, Some(closure), settings, progress)
}

/// The stages' layout at the start and the bounds of the (extended) θ: T the last stage's
/// decision with a free final time, the last stage placed at the closing event with a
/// closing (layout.rs).
fn layout_and_bounds<S: HybridSystem>(
    only: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints, closing: Option<f64>,
) -> Result<(Layout, Vec<f64>, Vec<f64>), Error> {
    let grid = only.controls.clone().ok_or(IlqrError::NoControls)?;
    let (np, nx) = (only.np(), only.nx());
    let (layout, time) = match (constraints.free_time, closing) {
        (Some(ft), _) => {
            let at = (ft.value, ft.upper);
            let layout = Layout::free_time(&grid, only.t0, at, theta, np, nx)?;
            (layout, Some((ft.lower, ft.upper)))
        }
        (None, Some(t)) => (Layout::closing(&grid, only.t0, t, theta, np, nx)?, None),
        (None, None) => (
            Layout::new(&grid, (only.t0, only.t_end), theta, np, nx)?,
            None,
        ),
    };
    let bound = |f: fn(&ThetaEntry) -> Option<f64>, open: f64, side: fn((f64, f64)) -> f64| {
        let mut b: Vec<f64> = theta.iter().map(|e| f(e).unwrap_or(open)).collect();
        b.extend(time.map(side));
        b
    };
    Ok((
        layout,
        bound(|e| e.lower, f64::NEG_INFINITY, |(lo, _)| lo),
        bound(|e| e.upper, f64::INFINITY, |(_, hi)| hi),
    ))
}

/// [`optimize_ilqr_constrained`], or with `closure` [`optimize_ilqr_periodic`].
fn constrained<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints,
    closure: Option<&Closure>, settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    let only = setup.only_objective(0);
    let theta = &only.resolve_theta(theta)?;
    let measure = match closure {
        None => Measure::Single(Nlp::new(&only, theta, constraints, settings.gradient)?),
        Some(c) => Measure::Closing(closing_problem(&only, theta, constraints, c)?, c.clone()),
    };
    let point = measure.evaluate(&measure.x0())?;
    let closing = closure.map(|_| point.t_end);
    let (layout, lower, upper) = layout_and_bounds(&only, theta, constraints, closing)?;
    let grid = only.controls.clone().ok_or(IlqrError::NoControls)?;
    let base = Plan::new(&only.objectives[0], layout.time)?;
    let stages_with = |plan, t_end: f64| Stages {
        setup: &only,
        layout: layout.at_time(&grid, t_end),
        plan,
        grid: grid.clone(),
        lower: lower.clone(),
        upper: upper.clone(),
        second_order: settings.solver == SolverKind::Ddp,
        closure: closure.map(|c| c.guard),
    };
    let initial = point.evaluation.clone();
    let zero = vec![0.0; point.rows.len()];
    let (lo, hi) = measure.bounds();
    let mut o = Outer {
        kkt: kkt(&point, &zero, lo, hi),
        reported: zero.clone(),
        point,
        lambda: vec![],
        rho: RHO0,
        iterations: 0,
        calls: (0, 0),
        history: vec![],
        best: None,
    };
    o.record();
    let x_initial = measure.x0();
    let (outcome, text) = outer_loop(&measure, &base, &stages_with, settings, progress, &mut o)?;
    let mut rep = report(
        &o.point,
        &o.reported,
        o.kkt,
        constraints,
        measure.method(),
        |out, b| measure.extreme(&o.point, out, b),
    );
    rep.t_end_initial = constraints.free_time.map(|f| f.value);
    let x_final = o.point.x.clone();
    let mut r = result(
        o,
        outcome,
        text,
        initial,
        rep,
        measure.theta_initial(),
        start,
    );
    if let Measure::Closing(nlp, c) = &measure {
        closing_result(&only, nlp, c, &x_initial, &x_final, &mut r)?;
    }
    Ok(r)
}

/// The outer iterations (module docs): how they ended.
fn outer_loop<'s, 'a: 's, S: HybridSystem + 'a, F: Fn(Plan, f64) -> Stages<'s, 'a, S>>(
    measure: &Measure<'_, '_, S>, base: &Plan, stages_with: &F, settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>, o: &mut Outer,
) -> Result<(Outcome, String), Error> {
    let mut violation = o.point.max_violation();
    let mut stalled = false;
    for outer in 1..=MAX_OUTER {
        let before = o.kkt.residual();
        let plan = augmented_plan(measure, &o.point, base, &o.lambda, o.rho)?;
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
        let mut x: Vec<f64> = measure
            .free()
            .iter()
            .map(|&k| solved.best.theta[k])
            .collect();
        x.extend(stages.layout.time.map(|t| solved.best.theta[t]));
        let next = measure.evaluate(&x)?;
        // the multipliers of the rows the inner solve saw, updated at its solution
        let lambda = update(&next, &o.lambda, o.rho);
        o.point = next;
        o.lambda = lambda;
        let (lo, hi) = measure.bounds();
        (o.kkt, o.reported) = measured(&o.point, &o.lambda, lo, hi);
        let now = o.point.max_violation();
        let polished_now =
            o.kkt.residual() > settings.tol_kkt && now <= PROJECT_BELOW && polished(measure, o)?;
        o.record();
        o.keep_best();
        if o.kkt.residual() <= settings.tol_kkt {
            let text = format!(
                "KKT residual {:.3e} ≤ {:.1e} after {outer} augmented-Lagrangian iterations (ρ = {:.0e}){}",
                o.kkt.residual(),
                settings.tol_kkt,
                o.rho,
                if polished_now { ", the last polished by a Newton step on the KKT conditions" } else { "" }
            );
            return Ok((Outcome::Converged, text));
        }
        let now = o.point.max_violation();
        // the subproblem took no step and the Newton step was refused: the next outer
        // iteration would be this one again
        stalled = solved.iterations == 0 && !polished_now && o.kkt.residual() >= before;
        if stalled || o.iterations >= settings.max_iters {
            break;
        }
        // feasible to the tolerance: only the multipliers' update is left to do
        if now > settings.tol_kkt && now > DECREASE * violation {
            o.rho = (o.rho * GROWTH).min(RHO_MAX);
        }
        violation = now;
    }
    let (outcome, why) = if stalled {
        (
            Outcome::Stalled,
            "no progress: the subproblem took no step and the Newton step did not lower the residual",
        )
    } else {
        (Outcome::MaxIterations, "at the iteration limit")
    };
    let mut text = format!(
        "KKT residual {:.3e} > {:.1e} {why} (ρ = {:.0e})",
        o.kkt.residual(),
        settings.tol_kkt,
        o.rho
    );
    if let Some(at) = o.restore_best() {
        text += &format!(
            "; the outer iterate with the least KKT residual ({:.3e}, after {at} inner iterations) is returned",
            o.kkt.residual()
        );
    }
    Ok((outcome, text))
}

/// The outer iterate replaced by one Newton step on the KKT conditions (polish.rs) when
/// that lowers the KKT residual (measured with the step's multipliers or as [`measured`]
/// does, whichever is smaller); whether it was.
fn polished<S: HybridSystem>(measure: &Measure<'_, '_, S>, o: &mut Outer) -> Result<bool, Error> {
    let Some((p, step)) = polish::newton_kkt(measure, &o.point, &o.reported)? else {
        return Ok(false);
    };
    let (lo, hi) = measure.bounds();
    let (mut kkt_p, mut reported) = measured(&p, &o.lambda, lo, hi);
    let at_step = kkt(&p, &step, lo, hi);
    if at_step.residual() < kkt_p.residual() {
        (kkt_p, reported) = (at_step, step.clone());
    }
    if kkt_p.residual() >= o.kkt.residual() {
        return Ok(false);
    }
    // the step's multipliers drive the next subproblem: the outer loop's first-order
    // update reaches them only linearly
    o.lambda = p
        .rows
        .iter()
        .zip(&step)
        .map(|(r, &l)| (r.label, l))
        .collect();
    (o.point, o.kkt, o.reported) = (p, kkt_p, reported);
    Ok(true)
}

/// The KKT residual at `p` with the first-order multipliers `first` or the least-squares
/// ones ([`least_squares`]), whichever is smaller, and those multipliers.
fn measured(p: &Point, first: &Multipliers, lower: &[f64], upper: &[f64]) -> (Kkt, Vec<f64>) {
    let values = |m: &Multipliers| m.iter().map(|l| l.1).collect::<Vec<f64>>();
    let fo = values(first);
    let at_fo = kkt(p, &fo, lower, upper);
    match least_squares(p, first, lower, upper).map(|m| values(&m)) {
        Some(ls) => {
            let at_ls = kkt(p, &ls, lower, upper);
            if at_ls.residual() < at_fo.residual() {
                return (at_ls, ls);
            }
            (at_fo, fo)
        }
        None => (at_fo, fo),
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
