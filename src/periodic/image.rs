//! Whether a state is on the section "just after guard `k`'s reset".
//!
//! That section is the reset's image of the guard's surface, `R_k(S_k)` with
//! `S_k = {y : g_k(y) = 0}`, not the surface itself: a reset may map the state off the
//! surface (the rimless wheel's strike at `θ = γ + α` restarts the stance at `θ = γ − α`,
//! where `g = −2α`). A start `x` belongs to it when some `y` in a mode `m` where guard `k`
//! is active, with `R_{m,k}` landing in the section's mode, solves
//!
//! ```text
//! r(y) = ( R_{m,k}(y) − x ,  g_{m,k}(y) ) = 0        (n + 1 equations, n unknowns)
//! ```
//!
//! found by Gauss–Newton `y ← y − r_y⁺ r` with the exact Jacobians
//! ([`crate::model::reset_jacobian`], [`crate::model::guard_jacobian`]) from two seeds, `x`
//! itself and `R(x)` (a reset that swaps legs is its own inverse). The reset is evaluated at
//! `t = 0`, the start's time on the section. `‖r‖∞ ≤ tol` at the end is membership.

use crate::model::{guard_jacobian, reset_jacobian, HybridSystem};
use nalgebra::{DMatrix, DVector};

/// Gauss–Newton iterations per seed.
const ITERATIONS: usize = 30;

/// `true` when `x` (in mode `mode`) is `R_{m,k}(y)` for some `y` with `|g_{m,k}(y)| ≤ tol`
/// and `‖R_{m,k}(y) − x‖∞ ≤ tol·max(1, ‖x‖∞)` (module docs).
pub fn is_reset_image<S: HybridSystem>(
    sys: &S, k: usize, mode: usize, p: &[f64], x: &[f64], tol: f64,
) -> bool {
    let n = x.len();
    let modes = sys.dims().modes.len().max(1);
    let scale = x.iter().fold(1.0_f64, |a, v| a.max(v.abs()));
    (0..modes).filter(|&m| sys.guard_active(m, k)).any(|m| {
        let seeds = match sys.reset(m, k, 0.0, x, p) {
            Ok((_, rx)) if rx.len() == n => vec![x.to_vec(), rx],
            _ => vec![x.to_vec()],
        };
        seeds
            .into_iter()
            .any(|y0| solve(sys, (m, k, mode), p, x, y0, tol, scale))
    })
}

/// Gauss–Newton on `r(y) = 0` from `y0`; `true` when it reaches `tol`.
fn solve<S: HybridSystem>(
    sys: &S, (m, k, mode): (usize, usize, usize), p: &[f64], x: &[f64], mut y: Vec<f64>, tol: f64,
    scale: f64,
) -> bool {
    let n = x.len();
    for _ in 0..=ITERATIONS {
        let Ok((next, rj)) = reset_jacobian(sys, n, m, k, 0.0, &y, p) else {
            return false;
        };
        let Ok(gj) = guard_jacobian(sys, m, k, 0.0, &y, &[], p) else {
            return false;
        };
        if next != mode || rj.value.len() != n {
            return false;
        }
        let mut r = DVector::zeros(n + 1);
        let mut jac = DMatrix::zeros(n + 1, n);
        for i in 0..n {
            r[i] = rj.value[i] - x[i];
            for j in 0..n {
                jac[(i, j)] = rj.x[(i, j)];
            }
        }
        r[n] = gj.value[0];
        for j in 0..n {
            jac[(n, j)] = gj.x[(0, j)];
        }
        if !r.iter().all(|v| v.is_finite()) {
            return false;
        }
        let gap = r.rows(0, n).amax();
        if gap <= tol * scale && r[n].abs() <= tol {
            return true;
        }
        let Ok(step) = jac.svd(true, true).solve(&r, 1e-14) else {
            return false;
        };
        for (yi, si) in y.iter_mut().zip(step.iter()) {
            *yi -= si;
        }
    }
    false
}
