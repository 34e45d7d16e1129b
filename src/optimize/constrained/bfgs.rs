//! The quasi-Newton approximation of the SQP's Lagrangian Hessian (docs/constrained.md,
//! "The solver").

use super::point::Point;
use nalgebra::{DMatrix, DVector};

/// Damped BFGS on the Hessian of the augmented Lagrangian (Nocedal & Wright Procedure
/// 18.2 and §18.3): `s = x⁺ − x`, `y = ∇L(x⁺, λ) − ∇L(x, λ)` over the rows present at both
/// points. Where `sᵀy < 0.2 sᵀBs` (the Lagrangian's curvature along s is small or
/// negative), `y += ρ_A Σ_r ∇c_r(x⁺) (c_r(x⁺) − c_r(x))` over the binding rows — the
/// gradient change of `½ρ_A‖c‖²`, which leaves the QP's step in the constraints' tangent
/// space unchanged — with ρ_A the smallest value that restores `sᵀy = 0.2 sᵀBs`; Powell's
/// damping `r = θy + (1 − θ)Bs` covers what remains. `B ← B − Bs sᵀB/sᵀBs + r rᵀ/sᵀr`.
/// Before the first update B = (yᵀy/sᵀy) I.
pub(super) fn update_bfgs(
    b: &mut DMatrix<f64>, scaled: &mut bool, p: &Point, q: &Point, lambda: &[f64],
) {
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
