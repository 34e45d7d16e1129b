//! The augmented Lagrangian's iterate polished by a Newton step on the KKT conditions.
//!
//! The outer loop's first-order multiplier update converges only linearly, and ρ stops
//! at 10⁶ (the ceiling the DDP's differenced second-order terms allow, augmented.rs): on
//! compass_gait_periodic_walk the violation fell by ≈ 0.65 an outer iteration to the
//! 2.8·10⁻⁹ it stopped at after 34, and that violation moved θ by 6·10⁻⁷ from the SQP's
//! optimum (the rows' small singular values magnify it). ALTRO ends its AL-iLQR the same
//! way, with a Newton phase that "polishes" the solution (Howell, Jackson & Manchester
//! 2019, §IV-C); here on the SQP's rows themselves, in the NLP's variables, from the
//! reported multipliers μ (Nocedal & Wright 2006, eq. 18.9 in the multipliers' change):
//!
//! ```text
//! [ H_FF  J_Fᵀ ] [ δ_F ]   [ −∇L(μ)_F ]     L = f + Σ_r μ_r c_r,   λ = μ + Δλ
//! [ J_F    0   ] [ Δλ  ] = [   −r     ]     H e_j ≈ (∇L(x + h_j e_j) − ∇L(x − h_j e_j)) / 2h_j
//! ```
//!
//! with r the active rows' residuals (an equality's `c − l`, a violated inequality's
//! distance to its bound, 0 for an inequality μ keeps active: it stays where it is), J_F
//! their gradients over the variables off their bounds F, and `h_j = 10⁻⁴ max(1, |x_j|)`
//! as the DDP's own second-order terms (second.rs). Written in Δλ the right-hand side is
//! the small ∇L(μ), not ∇f (4·10³ on the walk, whose cancellation against `J_Fᵀ λ` the
//! solve would otherwise have to reproduce through the matrix's condition); the matrix is
//! equilibrated (`D K D`, `D = diag(1/√max_j |K_ij|)`: H reaches 10⁶ where J is O(1)) and
//! solved by SVD with singular values below 10⁻¹² of the largest dropped — coefficients
//! past a periodic problem's closing event move neither the cost nor a row, and stay put.
//!
//! Tried first and dropped: the projection `δ = −J_F⁺ r` alone cut the violation to 10⁻¹⁵
//! but raised the stationarity by ≈ 50× the violation it removed (the cost's curvature
//! across the constraints). A step costs `2|F| + 1` evaluations (cost, rows and their
//! gradients); the caller keeps it only where it lowers the KKT residual, and hands its
//! multipliers λ to the next subproblem.

use super::measure::Measure;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::constrained::kkt::{free_variables, lagrangian_gradient};
use crate::optimize::constrained::nlp::Point;
use nalgebra::{DMatrix, DVector};

/// The differences' relative step.
const STEP: f64 = 1e-4;
/// Singular values of the KKT matrix below this fraction of the largest are dropped.
const SINGULAR: f64 = 1e-12;

/// The point after one Newton–KKT step from `p` with the Hessian of the Lagrangian with
/// multipliers `mu` (one per row of `p`), and the step's multipliers (one per row, 0 on the
/// inactive ones); `None` when no row is active, no variable is free, a differenced run
/// changes the rows or the solve is not finite.
pub(super) fn newton_kkt<S: HybridSystem>(
    measure: &Measure<'_, '_, S>, p: &Point, mu: &[f64],
) -> Result<Option<(Point, Vec<f64>)>, Error> {
    let (lower, upper) = measure.bounds();
    let free = free_variables(p, lower, upper);
    let rows = active_rows(p, mu);
    if rows.is_empty() || free.is_empty() || rows.len() > free.len() {
        return Ok(None);
    }
    let Some(h) = hessian(measure, p, mu, &free)? else {
        return Ok(None);
    };
    let (nf, na) = (free.len(), rows.len());
    let mut kkt = DMatrix::zeros(nf + na, nf + na);
    kkt.view_mut((0, 0), (nf, nf)).copy_from(&h);
    let mut rhs = DVector::zeros(nf + na);
    let grad_l = lagrangian_gradient(p, mu);
    for (r, &i) in free.iter().enumerate() {
        rhs[r] = -grad_l[i];
    }
    for (a, &(k, res)) in rows.iter().enumerate() {
        for (c, &j) in free.iter().enumerate() {
            kkt[(nf + a, c)] = p.rows[k].grad[j];
            kkt[(c, nf + a)] = p.rows[k].grad[j];
        }
        rhs[nf + a] = -res;
    }
    let Some(sol) = equilibrated_solve(&kkt, &rhs) else {
        return Ok(None);
    };
    let mut x = p.x.clone();
    for (r, &j) in free.iter().enumerate() {
        x[j] = (x[j] + sol[r]).clamp(lower[j], upper[j]);
    }
    let mut lambda = vec![0.0; p.rows.len()];
    for (a, &(k, _)) in rows.iter().enumerate() {
        lambda[k] = mu[k] + sol[nf + a];
    }
    Ok(Some((measure.evaluate(&x)?, lambda)))
}

/// `H_FF` by central differences of `∇L` (module docs), symmetrized; `None` when a
/// differenced run has other rows than `p` (a path extremum appeared or vanished).
fn hessian<S: HybridSystem>(
    measure: &Measure<'_, '_, S>, p: &Point, mu: &[f64], free: &[usize],
) -> Result<Option<DMatrix<f64>>, Error> {
    let mut h = DMatrix::zeros(free.len(), free.len());
    for (c, &j) in free.iter().enumerate() {
        let step = STEP * p.x[j].abs().max(1.0);
        let side = |s: f64| -> Result<Option<Vec<f64>>, Error> {
            let mut x = p.x.clone();
            x[j] += s;
            let q = measure.evaluate(&x)?;
            Ok((q.rows.len() == p.rows.len()).then(|| lagrangian_gradient(&q, mu)))
        };
        let (Some(up), Some(down)) = (side(step)?, side(-step)?) else {
            return Ok(None);
        };
        for (r, &i) in free.iter().enumerate() {
            h[(r, c)] = (up[i] - down[i]) / (2.0 * step);
        }
    }
    Ok(Some((&h + h.transpose()) * 0.5))
}

/// `K⁻¹ b` as `D (D K D)⁺ D b` with `D = diag(1/√max_j |K_ij|)` and the pseudo-inverse
/// dropping singular values below [`SINGULAR`] of the largest (module docs); `None` when
/// not finite.
fn equilibrated_solve(k: &DMatrix<f64>, b: &DVector<f64>) -> Option<DVector<f64>> {
    let n = k.nrows();
    let d: Vec<f64> = (0..n)
        .map(|i| match k.row(i).amax() {
            m if m > 0.0 => 1.0 / m.sqrt(),
            _ => 1.0,
        })
        .collect();
    let scaled = DMatrix::from_fn(n, n, |i, j| d[i] * k[(i, j)] * d[j]);
    let svd = scaled.svd(true, true);
    let floor = SINGULAR * svd.singular_values.max();
    let y = svd
        .solve(&DVector::from_fn(n, |i, _| d[i] * b[i]), floor)
        .ok()?;
    let sol = DVector::from_fn(n, |i, _| d[i] * y[i]);
    sol.iter().all(|v| v.is_finite()).then_some(sol)
}

/// The active rows with their residuals (module docs).
fn active_rows(p: &Point, mu: &[f64]) -> Vec<(usize, f64)> {
    p.rows
        .iter()
        .enumerate()
        .filter_map(|(k, r)| {
            if r.is_equality() || r.value < r.lower {
                Some((k, r.value - r.lower))
            } else if r.value > r.upper {
                Some((k, r.value - r.upper))
            } else {
                (mu[k] != 0.0).then_some((k, 0.0))
            }
        })
        .collect()
}
