//! The SQP iteration (docs/constrained.md, "The solver"; Nocedal & Wright, *Numerical
//! Optimization*, 2nd ed., Algorithm 18.3): at each iterate the elastic QP subproblem
//! ([`super::qp`]) gives the step d and the multipliers; the l1 merit function
//! `φ(x; μ) = f(x) + μ Σ_r viol_r(x)` with `μ ≥ 1.1 ‖λ‖∞` accepts a step by Armijo
//! backtracking (a second-order correction first, against the Maratos effect, §18.3);
//! the Hessian of the Lagrangian is approximated by damped BFGS (Powell's damping,
//! Procedure 18.2, scaled after the first step, eq. 6.20). It stops when the KKT residual
//! ([`super::kkt`]) is below the tolerance.

use super::kkt::{kkt, Kkt};
use super::point::Point;
pub(crate) use super::problem::Problem;
use super::qp::{dot, Qp, QpStep};
use crate::error::Error;
use nalgebra::{DMatrix, DVector};
use std::sync::Arc;

/// Armijo's sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// The smallest step fraction the line search tries.
const MIN_ALPHA: f64 = 1e-10;
/// The merit function's round-off allowance, relative to |φ| (the simulation's values
/// carry the integrator's error, ~1e-12 relative at tight tolerances).
const NOISE: f64 = 1e-12;
/// The elastic penalty's start (times max(1, ‖∇f‖∞)), growth and ceiling.
const RHO_START: f64 = 1e3;
const RHO_GROWTH: f64 = 100.0;
const RHO_MAX: f64 = 1e10;

/// How the iteration ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SqpEnd {
    Converged,
    /// The linearized constraints cannot be met and no step reduces the violation: the
    /// point with the least violation is returned.
    Infeasible,
    MaxIterations,
    /// The line search found no acceptable step.
    Stalled(String),
    /// The problem asked to stop ([`Problem::halt`]) at this iterate.
    Halted(String),
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
}

/// Runs the SQP from x0 (clamped into the bounds).
pub(crate) fn sqp(
    nlp: &impl Problem, max_iters: u64, tol: f64,
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
    let n = lower.len();
    // start from the cost's known curvature (the effort term's), else the identity scaled
    // after the first step
    let (mut b, mut scaled) = match nlp.known_hessian() {
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
    let mut mu = 0.0f64;
    let mut rho = RHO_START * inf_norm(&p.g).max(1.0);
    let mut history = Vec::new();
    let mut last_step = 0.0;
    let mut iteration = 0u64;
    loop {
        let step = match elastic_step(&b, &p, lower, upper, &mut rho) {
            Ok(step) => step,
            // a quasi-Newton matrix the QP solver cannot work with (ill-conditioned after
            // many updates): once more from its diagonal's mean times the identity
            Err(_) if iteration > 0 => {
                let mean = b.diagonal().iter().map(|v| v.abs()).sum::<f64>() / n as f64;
                b = DMatrix::identity(n, n)
                    * if mean > 0.0 && mean.is_finite() {
                        mean
                    } else {
                        1.0
                    };
                elastic_step(&b, &p, lower, upper, &mut rho)?
            }
            Err(e) => return Err(e),
        };
        let k = kkt(&p, &step.lambda, lower, upper);
        history.push(Iterate {
            iteration,
            f: p.f,
            kkt: k,
            step: last_step,
            x: p.x.clone(),
            max_violation: p.max_violation(),
            defect: p.defect(),
        });
        let end = |end: SqpEnd, p: Point, evaluations: usize, history: Vec<Iterate>| SqpRun {
            end,
            initial: initial.clone(),
            lambda: step.lambda.clone(),
            point: p,
            kkt: k,
            iterations: iteration,
            evaluations,
            history,
        };
        if k.residual() <= tol {
            return Ok(end(SqpEnd::Converged, p, evaluations, history));
        }
        let dnorm = inf_norm(&step.d);
        let tiny = dnorm <= 1e-12 * (1.0 + inf_norm(&p.x));
        let infeasible = step.elastic > elastic_tol(&p) && p.max_violation() > elastic_tol(&p);
        if infeasible && rho >= RHO_MAX && tiny {
            return Ok(end(SqpEnd::Infeasible, p, evaluations, history));
        }
        if iteration >= max_iters {
            return Ok(end(SqpEnd::MaxIterations, p, evaluations, history));
        }
        if let Some(why) = nlp.halt(&p) {
            return Ok(end(SqpEnd::Halted(why), p, evaluations, history));
        }
        // Powell's rule: at least 1.1‖λ‖∞, and otherwise halfway down towards it
        let need = 1.1 * inf_norm(&step.lambda) + 1e-8;
        mu = if mu < need { need } else { 0.5 * (mu + need) };
        let accepted = match line_search(nlp, &p, &step, mu, &mut evaluations)? {
            Some(q) => q,
            None if infeasible && rho >= RHO_MAX => {
                return Ok(end(SqpEnd::Infeasible, p, evaluations, history));
            }
            None => {
                let why = format!(
                    "the line search found no acceptable step (‖d‖∞ = {dnorm:.3e}, KKT residual {:.3e})",
                    k.residual()
                );
                return Ok(end(SqpEnd::Stalled(why), p, evaluations, history));
            }
        };
        update_bfgs(&mut b, &mut scaled, &p, &accepted, &step.lambda);
        last_step = accepted
            .x
            .iter()
            .zip(&p.x)
            .map(|(a, c)| (a - c).powi(2))
            .sum::<f64>()
            .sqrt();
        p = accepted;
        iteration += 1;
        if let Some(cb) = &progress {
            cb(iteration, p.f);
        }
    }
}

/// The QP step, with the elastic penalty raised until the slacks vanish or it reaches its
/// ceiling (then the step minimizes the linearized violation).
fn elastic_step(
    b: &DMatrix<f64>, p: &Point, lower: &[f64], upper: &[f64], rho: &mut f64,
) -> Result<QpStep, Error> {
    loop {
        let qp = Qp {
            b,
            g: &p.g,
            rows: &p.rows,
            dl: lower.iter().zip(&p.x).map(|(l, x)| l - x).collect(),
            du: upper.iter().zip(&p.x).map(|(u, x)| u - x).collect(),
            rho: *rho,
        };
        let step = qp.solve()?;
        if step.elastic <= elastic_tol(p) || *rho >= RHO_MAX {
            return Ok(step);
        }
        *rho = (*rho * RHO_GROWTH).min(RHO_MAX);
    }
}

/// The slack (or violation) below which the linearized constraints count as met: the QP
/// solver's accuracy relative to the rows' values.
fn elastic_tol(p: &Point) -> f64 {
    1e-9 * (1.0 + p.rows.iter().map(|r| r.value.abs()).fold(0.0, f64::max))
}

/// The l1 merit function `f + μ Σ viol`.
fn merit(p: &Point, mu: f64) -> f64 {
    p.f + mu * p.total_violation()
}

/// Armijo backtracking on the l1 merit function along d, with one second-order correction
/// after a rejected full step. Trial points that leave the cost's domain (an event the
/// constraints need disappears) halve the step. `None` when no step is acceptable.
fn line_search(
    nlp: &impl Problem, p: &Point, step: &QpStep, mu: f64, evaluations: &mut usize,
) -> Result<Option<Point>, Error> {
    let phi0 = merit(p, mu);
    let slope = dot(&p.g, &step.d) - mu * (p.total_violation() - step.linear_violation);
    let noise = NOISE * phi0.abs().max(1.0);
    let mut alpha = 1.0;
    while alpha >= MIN_ALPHA {
        let x = snap(nlp, &p.x, &step.d, alpha, &step.nu);
        let trial = match nlp.evaluate(&x) {
            Ok(t) => t,
            Err(e) if e.is_domain_error() => {
                *evaluations += 1;
                alpha *= 0.5;
                continue;
            }
            Err(e) => return Err(e),
        };
        *evaluations += 1;
        if merit(&trial, mu) <= phi0 + ARMIJO * alpha * slope.min(0.0) + noise {
            return Ok(Some(trial));
        }
        if alpha == 1.0 {
            if let Some(x) = second_order_correction(nlp, p, &trial, step) {
                if let Ok(t) = nlp.evaluate(&x) {
                    *evaluations += 1;
                    if merit(&t, mu) <= phi0 + ARMIJO * slope.min(0.0) + noise {
                        return Ok(Some(t));
                    }
                }
            }
        }
        alpha *= 0.5;
    }
    Ok(None)
}

/// `x + α d` inside the bounds; a variable that the QP puts at a bound (its multiplier has
/// the bound's sign) and that lands within round-off of it is placed on it exactly.
fn snap(nlp: &impl Problem, x: &[f64], d: &[f64], alpha: f64, nu: &[f64]) -> Vec<f64> {
    x.iter()
        .zip(d)
        .enumerate()
        .map(|(j, (&xj, &dj))| {
            let (l, u) = (nlp.bounds().0[j], nlp.bounds().1[j]);
            let v = (xj + alpha * dj).clamp(l, u);
            let near = |b: f64, wide: bool| {
                let tol = if wide { 1e-6 } else { 1e-10 };
                b.is_finite() && (v - b).abs() <= tol * b.abs().max(1.0)
            };
            if near(u, nu[j] > 1e-10) {
                u
            } else if near(l, nu[j] < -1e-10) {
                l
            } else {
                v
            }
        })
        .collect()
}

/// The second-order correction (Nocedal & Wright eq. 18.51, in its least-norm form):
/// `d̂ = −J_Aᵀ (J_A J_Aᵀ)⁻¹ r_A`, with `r_A` the residuals at x + d of the rows that bind
/// (equalities, and inequalities with a multiplier or violated there), `J_A` their
/// gradients at x. Rows are matched between the two points by their labels.
fn second_order_correction(
    nlp: &impl Problem, p: &Point, trial: &Point, step: &QpStep,
) -> Option<Vec<f64>> {
    let mut grads = Vec::new();
    let mut res = Vec::new();
    for (i, row) in p.rows.iter().enumerate() {
        let Some(t) = trial.rows.iter().find(|r| r.label == row.label) else {
            continue;
        };
        let target = if row.is_equality() || step.lambda[i] > 0.0 || t.value > t.upper {
            row.upper
        } else if step.lambda[i] < 0.0 || t.value < t.lower {
            row.lower
        } else {
            continue;
        };
        if !target.is_finite() {
            continue;
        }
        grads.push(row.grad.clone());
        res.push(t.value - target);
    }
    if grads.is_empty() {
        return None;
    }
    let n = p.x.len();
    let m = grads.len();
    let j = DMatrix::from_fn(m, n, |r, c| grads[r][c]);
    let jjt = &j * j.transpose();
    let y = jjt.lu().solve(&DVector::from_vec(res))?;
    let dc = -(j.transpose() * y);
    let d: Vec<f64> = step.d.iter().zip(dc.iter()).map(|(a, b)| a + b).collect();
    Some(snap(nlp, &p.x, &d, 1.0, &step.nu))
}

/// Damped BFGS on the Hessian of the augmented Lagrangian (Nocedal & Wright Procedure
/// 18.2 and §18.3): `s = x⁺ − x`, `y = ∇L(x⁺, λ) − ∇L(x, λ)` over the rows present at both
/// points. Where `sᵀy < 0.2 sᵀBs` (the Lagrangian's curvature along s is small or
/// negative), `y += ρ_A Σ_r ∇c_r(x⁺) (c_r(x⁺) − c_r(x))` over the binding rows — the
/// gradient change of `½ρ_A‖c‖²`, which leaves the QP's step in the constraints' tangent
/// space unchanged — with ρ_A the smallest value that restores `sᵀy = 0.2 sᵀBs`; Powell's
/// damping `r = θy + (1 − θ)Bs` covers what remains. `B ← B − Bs sᵀB/sᵀBs + r rᵀ/sᵀr`.
/// Before the first update B = (yᵀy/sᵀy) I.
fn update_bfgs(b: &mut DMatrix<f64>, scaled: &mut bool, p: &Point, q: &Point, lambda: &[f64]) {
    let n = p.x.len();
    let s = DVector::from_fn(n, |j, _| q.x[j] - p.x[j]);
    let mut y = DVector::from_fn(n, |j, _| q.g[j] - p.g[j]);
    let mut w = DVector::zeros(n);
    for (i, row) in p.rows.iter().enumerate() {
        let Some(r) = q.rows.iter().find(|r| r.label == row.label) else {
            continue;
        };
        for j in 0..n {
            y[j] += lambda[i] * (r.grad[j] - row.grad[j]);
        }
        if row.is_equality() || lambda[i] != 0.0 {
            let dc = r.value - row.value;
            for j in 0..n {
                w[j] += r.grad[j] * dc;
            }
        }
    }
    let ss = s.dot(&s);
    if !(ss > 0.0) || !y.iter().all(|v| v.is_finite()) {
        return;
    }
    if !*scaled {
        let sy = s.dot(&y);
        if sy > 0.0 {
            *b = DMatrix::identity(n, n) * (y.dot(&y) / sy);
            *scaled = true;
        }
    }
    let bs = &*b * &s;
    let sbs = s.dot(&bs);
    if !(sbs > 0.0) {
        return;
    }
    let sy = s.dot(&y);
    let sw = s.dot(&w);
    if sy < 0.2 * sbs && sw > 0.0 && w.iter().all(|v| v.is_finite()) {
        y += &w * ((0.2 * sbs - sy) / sw);
    }
    let sy = s.dot(&y);
    let r = if sy >= 0.2 * sbs {
        y
    } else {
        let th = 0.8 * sbs / (sbs - sy);
        &y * th + &bs * (1.0 - th)
    };
    let sr = s.dot(&r);
    if !(sr > 0.0) {
        return;
    }
    *b -= &bs * bs.transpose() / sbs;
    *b += &r * r.transpose() / sr;
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |a, x| a.max(x.abs()))
}
