//! The SQP iteration (docs/constrained.md, "The solver"; Nocedal & Wright, *Numerical
//! Optimization*, 2nd ed., Algorithm 18.3): at each iterate the elastic QP subproblem
//! ([`super::qp`]) gives the step d and the multipliers, and a globalization
//! ([`Globalization`]) makes the step acceptable on the l1 merit function
//! `φ(x; μ) = f(x) + μ Σ_r viol_r(x)`: Armijo backtracking ([`super::line_search`]) or a
//! trust region on the QP ([`super::trust_region`]), each with a second-order correction
//! against the Maratos effect (§18.3). The Hessian of the Lagrangian is approximated by
//! damped BFGS ([`super::bfgs`]). It stops when the KKT residual ([`super::kkt`]) is below
//! the tolerance.

use super::bfgs::update_bfgs;
use super::error::ConstrainedError;
use super::kkt::{kkt, Kkt};
use super::line_search::line_search;
use super::point::Point;
pub(crate) use super::problem::Problem;
use super::qp::{inf_norm, Qp, QpStep};
use crate::error::Error;
use crate::optimize::Globalization;
use nalgebra::DMatrix;
use std::sync::Arc;

/// The elastic penalty's start (times max(1, ‖∇f‖∞)), growth and ceiling.
const RHO_START: f64 = 1e3;
const RHO_GROWTH: f64 = 100.0;
const RHO_MAX: f64 = 1e10;
/// The fraction of the attainable reduction of the linearized violation a trust-region
/// step must achieve (the steering rule's ε₁).
const STEER: f64 = 0.1;
/// The trust region's first radius and its largest, times `max(1, ‖x₀‖∞)`: wide enough
/// that the first step is the plain QP's wherever that step is bounded.
const RADIUS_START: f64 = 1e3;
/// An accepted step with `‖x⁺ − x‖∞ ≤ ZERO_STEP (1 + ‖x‖∞)` moves x by a few ulps: no
/// progress. `ZERO_STEPS` of them in a row end the iteration as stalled (a quasi-Newton
/// matrix grown so large that every step vanishes, while the KKT residual stays put).
const ZERO_STEP: f64 = 1e-14;
const ZERO_STEPS: u32 = 3;

/// How the iteration ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SqpEnd {
    Converged,
    /// The linearized constraints cannot be met and no step reduces the violation: the
    /// point with the least violation is returned.
    Infeasible,
    MaxIterations,
    /// No acceptable step was found (line search or trust region).
    Stalled(String),
    /// The problem asked to stop ([`Problem::halt`]) at this iterate.
    Halted(String),
    /// The QP subproblem could not be solved (Clarabel's status, after the fallbacks):
    /// the iterate reached so far is returned.
    QpFailed(String),
}

/// One iterate of the history.
#[derive(Debug, Clone)]
pub(crate) struct Iterate {
    pub iteration: u64,
    pub f: f64,
    pub kkt: Kkt,
    pub step: f64,
    pub x: Vec<f64>,
    pub max_violation: f64,
    /// The largest continuity gap of a multiple-shooting iterate (0 without nodes).
    pub defect: f64,
}

impl Iterate {
    /// The history's entry of iterate `p` (`step`: the step that reached it).
    fn at(iteration: u64, p: &Point, kkt: Kkt, step: f64) -> Iterate {
        Iterate {
            iteration,
            f: p.f,
            kkt,
            step,
            x: p.x.clone(),
            max_violation: p.max_violation(),
            defect: p.defect(),
        }
    }
}

/// Why the globalization found no acceptable step.
fn stall_text(globalization: Globalization, dnorm: f64, residual: f64) -> String {
    let why = match globalization {
        Globalization::LineSearch => "the line search found no acceptable step",
        Globalization::TrustRegion => {
            "the trust region shrank to its minimum without an acceptable step"
        }
    };
    format!("{why} (‖d‖∞ = {dnorm:.3e}, KKT residual {residual:.3e})")
}

/// `‖a − b‖₂` and `‖a − b‖∞`.
fn step_lengths(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (sq, inf) = a
        .iter()
        .zip(b)
        .fold((0.0, 0.0), |(sq, inf): (f64, f64), (x, y)| {
            (sq + (x - y).powi(2), inf.max((x - y).abs()))
        });
    (sq.sqrt(), inf)
}

/// A QP subproblem's failure (Clarabel's status) as a value (`Err(why)`), so that the
/// iteration ends with [`SqpEnd::QpFailed`] at its last iterate; every other error passes.
fn qp_outcome<T>(r: Result<T, Error>) -> Result<Result<T, String>, Error> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(Error::Constrained(ConstrainedError::Qp(why))) => Ok(Err(why)),
        Err(e) => Err(e),
    }
}

/// The result of the iteration.
pub(crate) struct SqpRun {
    pub end: SqpEnd,
    /// The start point.
    pub initial: Point,
    pub point: Point,
    pub lambda: Vec<f64>,
    pub kkt: Kkt,
    pub iterations: u64,
    pub evaluations: usize,
    pub history: Vec<Iterate>,
    /// The iteration of the returned point when it is not the last iterate: a run that ends
    /// without converging (out of iterations, stalled) returns the iterate with the least
    /// KKT residual it met ([`Best`]).
    pub returned: Option<u64>,
}

/// The iterate with the least KKT residual so far, with its multipliers: what a run that
/// ends out of iterations or stalled returns. Near the noise floor of its gradients (the
/// simulation's tolerance) the SQP can wander: on the periodic walk at `tol_kkt = 1e-10`
/// it met a residual of 5.5e-9 at iteration 129 and ended 3,000 iterations later at 3.3e-6.
struct Best {
    point: Point,
    lambda: Vec<f64>,
    kkt: Kkt,
    iteration: u64,
}

impl Best {
    /// Keeps `p` if its residual is the least so far.
    fn offer(best: &mut Option<Best>, p: &Point, lambda: &[f64], kkt: Kkt, iteration: u64) {
        if best
            .as_ref()
            .is_none_or(|b| kkt.residual() < b.kkt.residual())
        {
            *best = Some(Best {
                point: p.clone(),
                lambda: lambda.to_vec(),
                kkt,
                iteration,
            });
        }
    }

    /// `run` as it ends, or, when it ran out of iterations or stalled, with the least-KKT
    /// iterate `best` in its place if that was an earlier one (`returned` says which).
    fn instead_of(best: Option<Best>, mut run: SqpRun) -> SqpRun {
        if matches!(run.end, SqpEnd::MaxIterations | SqpEnd::Stalled(_)) {
            if let Some(b) = best.filter(|b| b.iteration != run.iterations) {
                (run.point, run.lambda, run.kkt) = (b.point, b.lambda, b.kkt);
                run.returned = Some(b.iteration);
            }
        }
        run
    }
}

/// Runs the SQP from x0 (clamped into the bounds).
pub(crate) fn sqp(
    nlp: &impl Problem, max_iters: u64, tol: f64, globalization: Globalization,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<SqpRun, Error> {
    let (lower, upper) = nlp.bounds();
    let x0: Vec<f64> = nlp
        .x0()
        .iter()
        .enumerate()
        .map(|(j, &v)| v.clamp(lower[j], upper[j]))
        .collect();
    let mut evaluations = 1;
    let mut p = nlp.evaluate(&x0)?;
    let initial = p.clone();
    let mut state = State::start(nlp, &p, globalization);
    let mut history = Vec::new();
    let mut last_step = 0.0;
    let mut zero_steps = 0u32;
    let mut iteration = 0u64;
    let mut best: Option<Best> = None;
    loop {
        let step = qp_outcome(state.solvable_step(&p, (lower, upper), iteration))?;
        let lambda = match &step {
            Ok(step) => state.multipliers(&p, step, lower, upper),
            Err(_) => vec![0.0; p.rows.len()],
        };
        let k = kkt(&p, &lambda, lower, upper);
        history.push(Iterate::at(iteration, &p, k, last_step));
        Best::offer(&mut best, &p, &lambda, k, iteration);
        let mut end = |end: SqpEnd, p: Point, evaluations: usize, history: Vec<Iterate>| {
            let run = SqpRun {
                end,
                initial: initial.clone(),
                lambda: lambda.clone(),
                point: p,
                kkt: k,
                iterations: iteration,
                evaluations,
                history,
                returned: None,
            };
            Best::instead_of(best.take(), run)
        };
        let step = match step {
            Ok(step) => step,
            Err(why) => return Ok(end(SqpEnd::QpFailed(why), p, evaluations, history)),
        };
        let dnorm = inf_norm(&step.d);
        let elastic = step.elastic > elastic_tol(&p);
        let infeasible = elastic && p.max_violation() > elastic_tol(&p);
        let counts = Counts {
            zero_steps,
            iteration,
            max_iters,
            tol,
        };
        if let Some(e) = end_before_step(nlp, &p, &state, k, dnorm, infeasible, counts) {
            return Ok(end(e, p, evaluations, history));
        }
        if globalization == Globalization::LineSearch || !elastic {
            state.raise_mu(&lambda);
        }
        let accepted = state.globalize(nlp, &p, step, iteration, &mut evaluations)?;
        let accepted = match accepted {
            Err(why) => return Ok(end(SqpEnd::QpFailed(why), p, evaluations, history)),
            Ok(Some(q)) => q,
            Ok(None) if infeasible && state.rho >= RHO_MAX => {
                return Ok(end(SqpEnd::Infeasible, p, evaluations, history));
            }
            Ok(None) => {
                let why = stall_text(globalization, dnorm, k.residual());
                return Ok(end(SqpEnd::Stalled(why), p, evaluations, history));
            }
        };
        update_bfgs(
            &mut state.b,
            &mut state.scaled,
            &p,
            &accepted,
            &state.lambda,
        );
        let moved;
        (last_step, moved) = step_lengths(&accepted.x, &p.x);
        if moved <= ZERO_STEP * (1.0 + inf_norm(&p.x)) {
            zero_steps += 1;
        } else {
            zero_steps = 0;
        }
        p = accepted;
        iteration += 1;
        if let Some(cb) = &progress {
            cb(iteration, p.f);
        }
    }
}

/// Where the iteration stands: zero-length steps in a row, iterations done and allowed,
/// and the KKT tolerance.
#[derive(Clone, Copy)]
struct Counts {
    zero_steps: u32,
    iteration: u64,
    max_iters: u64,
    tol: f64,
}

/// Why the iteration ends at `p` before its step of length `dnorm`, if it does — in this
/// order: the KKT residual at the tolerance, infeasible (the elastic QP keeps a violation, ρ at
/// its largest, the step tiny), stalled on zero-length steps, out of iterations, halted
/// by the problem.
fn end_before_step(
    nlp: &impl Problem, p: &Point, state: &State, k: Kkt, dnorm: f64, infeasible: bool, c: Counts,
) -> Option<SqpEnd> {
    let tiny = dnorm <= 1e-12 * (1.0 + inf_norm(&p.x));
    if k.residual() <= c.tol {
        return Some(SqpEnd::Converged);
    }
    if infeasible && state.rho >= RHO_MAX && tiny {
        return Some(SqpEnd::Infeasible);
    }
    if c.zero_steps >= ZERO_STEPS {
        let why = format!("{} zero-length steps in a row", c.zero_steps);
        return Some(SqpEnd::Stalled(format!(
            "{why} (‖d‖∞ = {dnorm:.3e}, KKT residual {:.3e})",
            k.residual()
        )));
    }
    if c.iteration >= c.max_iters {
        return Some(SqpEnd::MaxIterations);
    }
    nlp.halt(p).map(SqpEnd::Halted)
}

/// What the iteration carries from one iterate to the next.
pub(super) struct State {
    pub globalization: Globalization,
    /// The Hessian approximation, and whether it has been scaled by the first step.
    pub b: DMatrix<f64>,
    pub scaled: bool,
    /// The QP's elastic penalty: each step's start (the trust region starts every step
    /// from the first; the line search keeps what the last step needed), and the last
    /// step's.
    pub rho_base: f64,
    pub rho: f64,
    /// The merit function's penalty μ.
    pub mu: f64,
    /// The trust region's radius Δ (infinity norm) and its ceiling; infinite for the line
    /// search.
    pub radius: f64,
    pub radius_max: f64,
    /// The multipliers of the step taken (for the BFGS update).
    pub lambda: Vec<f64>,
}

impl State {
    fn start(nlp: &impl Problem, p: &Point, globalization: Globalization) -> State {
        let n = p.x.len();
        // start from the cost's known curvature (the effort term's), else the identity
        // scaled after the first step
        let (b, scaled) = match nlp.known_hessian() {
            Some(h) => (h, true),
            None => {
                // a first step of the variables' own size: B₀ = ‖∇f‖∞ / max(1, ‖x‖∞) I
                let sigma = inf_norm(&p.g) / inf_norm(&p.x).max(1.0);
                let sigma = if sigma > 0.0 && sigma.is_finite() {
                    sigma
                } else {
                    1.0
                };
                (DMatrix::<f64>::identity(n, n) * sigma, false)
            }
        };
        let radius = match globalization {
            Globalization::LineSearch => f64::INFINITY,
            Globalization::TrustRegion => RADIUS_START * inf_norm(&p.x).max(1.0),
        };
        let rho = RHO_START * inf_norm(&p.g).max(1.0);
        State {
            globalization,
            b,
            scaled,
            rho_base: rho,
            rho,
            mu: 0.0,
            radius,
            radius_max: radius,
            lambda: Vec::new(),
        }
    }

    /// The merit function's penalty by Powell's rule: at least 1.1‖λ‖∞, and otherwise
    /// halfway down towards it (the caller skips it in the trust region while the slacks
    /// are in use: λ are then the elastic penalty's and μ follows the QP's ρ).
    fn raise_mu(&mut self, lambda: &[f64]) {
        let need = 1.1 * inf_norm(lambda) + 1e-8;
        self.mu = if self.mu < need {
            need
        } else {
            0.5 * (self.mu + need)
        };
    }

    /// The next iterate by the globalization from `p` along `step`: `Ok(None)` when no
    /// step is acceptable, `Err(why)` when a QP subproblem failed on the way.
    fn globalize(
        &mut self, nlp: &impl Problem, p: &Point, step: QpStep, iteration: u64,
        evaluations: &mut usize,
    ) -> Result<Result<Option<Point>, String>, Error> {
        match self.globalization {
            Globalization::LineSearch => {
                self.lambda = step.lambda.clone();
                Ok(Ok(line_search(nlp, p, &step, self.mu, evaluations)?))
            }
            Globalization::TrustRegion => {
                let (lower, upper) = nlp.bounds();
                qp_outcome(self.trust_region(nlp, p, step, iteration, (lower, upper), evaluations))
            }
        }
    }

    /// The QP step (within the trust region); a quasi-Newton matrix the QP solver cannot
    /// work with (ill-conditioned after many updates) is replaced, after the first
    /// iteration, by its diagonal's mean times the identity.
    pub(super) fn step(
        &mut self, p: &Point, lower: &[f64], upper: &[f64], iteration: u64,
    ) -> Result<QpStep, Error> {
        let (base, steer) = match self.globalization {
            Globalization::LineSearch => (self.rho, false),
            Globalization::TrustRegion => (self.rho_base, true),
        };
        let region = (self.radius, steer);
        let solved = match elastic_step(&self.b, p, lower, upper, region, base) {
            Ok(solved) => solved,
            Err(_) if iteration > 0 => {
                let n = p.x.len();
                let mean = self.b.diagonal().iter().map(|v| v.abs()).sum::<f64>() / n as f64;
                self.b = DMatrix::identity(n, n)
                    * if mean > 0.0 && mean.is_finite() {
                        mean
                    } else {
                        1.0
                    };
                elastic_step(&self.b, p, lower, upper, region, base)?
            }
            Err(e) => return Err(e.into()),
        };
        self.rho = solved.1;
        Ok(solved.0)
    }

    /// The multipliers for the KKT test at `p`: the step's, unless the trust region
    /// bounds the step (its own multipliers then carry part of the stationarity), when
    /// they are the QP's without the region where that QP can be solved.
    fn multipliers(&self, p: &Point, step: &QpStep, lower: &[f64], upper: &[f64]) -> Vec<f64> {
        if inf_norm(&step.d) < 0.99 * self.radius || self.radius >= self.radius_max {
            return step.lambda.clone();
        }
        match elastic_step(
            &self.b,
            p,
            lower,
            upper,
            (self.radius_max, true),
            self.rho_base,
        ) {
            Ok((free, _)) => free.lambda,
            Err(_) => step.lambda.clone(),
        }
    }
}

/// The QP step within `‖d‖∞ ≤ radius`, and the elastic penalty it was solved with. The
/// penalty starts at `rho_base` and, where the slacks are needed, grows (×100, up to
/// `RHO_MAX`) until they vanish. With `steer` (the trust region, where the region itself
/// may keep the linearized constraints out of reach) it grows only until the step
/// achieves the fraction `STEER` of the largest reduction of the linearized violation the
/// region allows (Byrd, Nocedal & Waltz, "Steering exact penalty methods for nonlinear
/// programming", 2008); where no step reduces it, the step at the ceiling is returned.
fn elastic_step(
    b: &DMatrix<f64>, p: &Point, lower: &[f64], upper: &[f64], (radius, steer): (f64, bool),
    rho_base: f64,
) -> Result<(QpStep, f64), ConstrainedError> {
    let solve = |rho: f64| {
        Qp {
            b,
            g: &p.g,
            rows: &p.rows,
            dl: lower
                .iter()
                .zip(&p.x)
                .map(|(l, x)| (l - x).max(-radius))
                .collect(),
            du: upper
                .iter()
                .zip(&p.x)
                .map(|(u, x)| (u - x).min(radius))
                .collect(),
            rho,
        }
        .solve()
    };
    let tol = elastic_tol(p);
    let mut rho = rho_base.min(RHO_MAX);
    let mut step = solve(rho)?;
    if step.elastic <= tol || rho >= RHO_MAX {
        return Ok((step, rho));
    }
    let viol = p.total_violation();
    let least = if steer { Some(solve(RHO_MAX)?) } else { None };
    if let Some(least) = &least {
        if viol - least.linear_violation <= tol {
            return Ok((least.clone(), RHO_MAX));
        }
    }
    loop {
        let enough = match &least {
            Some(least) if least.elastic > tol => {
                viol - step.linear_violation >= STEER * (viol - least.linear_violation)
            }
            _ => step.elastic <= tol,
        };
        if enough {
            return Ok((step, rho));
        }
        rho = (rho * RHO_GROWTH).min(RHO_MAX);
        step = match (&least, rho >= RHO_MAX) {
            (Some(least), true) => least.clone(),
            _ => solve(rho)?,
        };
        if rho >= RHO_MAX {
            return Ok((step, rho));
        }
    }
}

/// The slack (or violation) below which the linearized constraints count as met: the QP
/// solver's accuracy relative to the rows' values.
pub(super) fn elastic_tol(p: &Point) -> f64 {
    1e-9 * (1.0 + p.rows.iter().map(|r| r.value.abs()).fold(0.0, f64::max))
}
