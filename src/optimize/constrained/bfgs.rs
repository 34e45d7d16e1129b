//! The quasi-Newton approximation of the SQP's Lagrangian Hessian (docs/constrained.md,
//! "The solver").

use super::point::Point;
use nalgebra::{DMatrix, DVector};

/// How much larger than the step's own terms the augmentation ρ_A w may be.
const AUGMENT_CAP: f64 = 100.0;

/// Damped BFGS on the Hessian of the augmented Lagrangian (Nocedal & Wright Procedure
/// 18.2 and §18.3): `s = x⁺ − x`, `y = ∇L(x⁺, λ) − ∇L(x, λ)` over the rows present at both
/// points. Where `sᵀy < 0.2 sᵀBs` (the Lagrangian's curvature along s is small or
/// negative), `y += ρ_A Σ_r ∇c_r(x⁺) (c_r(x⁺) − c_r(x))` over the binding rows — the
/// gradient change of `½ρ_A‖c‖²`, which leaves the QP's step in the constraints' tangent
/// space unchanged — with ρ_A the smallest value that restores `sᵀy = 0.2 sᵀBs`; Powell's
/// damping `r = θy + (1 − θ)Bs` covers what remains. `B ← B − Bs sᵀB/sᵀBs + r rᵀ/sᵀr`.
/// Before the first update B = (yᵀy/sᵀy) I.
///
/// The augmentation is skipped (Powell's damping alone applies) when it would outweigh
/// the step's own terms, `ρ_A ‖w‖ > AUGMENT_CAP · max(‖Bs‖, ‖y‖)`: a step almost tangent
/// to the constraints changes them by little (`sᵀw` tiny), so ρ_A is huge and the update
/// adds a rank-one term of size ~ρ_A²‖w‖²/sᵀBs in the normal directions. Measured on a
/// ball on a vibrating table (multiple shooting, 56 segments, starts 0.25 % from the
/// truth, `tests/optimizer_defects.rs`): ρ_A reached 1e11–1e12 once the gaps were closed
/// to 1e-12, B's diagonal spread over 2e2 … 8e19, Clarabel failed on the QP, the
/// fallback `mean(diag B) I = 3e19 I` made every later step ~1e-20 long, and five of six
/// starts ended at the iteration limit (the sixth stalled); with the cap each converges
/// in 17–19 iterations.
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
        let rho_a = (0.2 * sbs - sy) / sw;
        if rho_a * w.norm() <= AUGMENT_CAP * bs.norm().max(y.norm()) {
            y += &w * rho_a;
        }
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
