//! The SQP's merit function and its trial points (docs/constrained.md, "The solver";
//! Nocedal & Wright, *Numerical Optimization*, 2nd ed., §15.4 and §18.3): the l1 merit
//! function, the trial point inside the bounds, and the second-order correction.

use super::point::Point;
use super::problem::Problem;
use super::qp::QpStep;
use nalgebra::{DMatrix, DVector};

/// The merit function's round-off allowance, relative to |φ| (the simulation's values
/// carry the integrator's error, ~1e-12 relative at tight tolerances).
pub(super) const NOISE: f64 = 1e-12;

/// The l1 merit function `f + μ Σ viol`.
pub(super) fn merit(p: &Point, mu: f64) -> f64 {
    p.f + mu * p.total_violation()
}

/// `x + α d` inside the bounds; a variable that the QP puts at a bound (its multiplier has
/// the bound's sign) and that lands within round-off of it is placed on it exactly.
pub(super) fn snap(nlp: &impl Problem, x: &[f64], d: &[f64], alpha: f64, nu: &[f64]) -> Vec<f64> {
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
pub(super) fn second_order_correction(
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
