//! The first-order (KKT) conditions at a point with multipliers (docs/constrained.md,
//! "Convergence"; Nocedal & Wright §12.3, Theorem 12.1): with
//! `r = ∇f + Σ_r λ_r ∇c_r`,
//!
//! ```text
//! stationarity     |r_j| for a free variable; the part of r_j of the wrong sign at a bound
//!                  (r_j ≥ 0 allowed at a lower bound, r_j ≤ 0 at an upper one)
//! feasibility      max_r viol(c_r)
//! complementarity  |λ_r| · (distance of c_r to the bound its sign acts on); |λ_r| when that
//!                  side is open
//! ```
//!
//! and the KKT residual is the largest of the three (absolute values, infinity norms).

use super::point::Point;

/// The parts of the KKT residual.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Kkt {
    pub stationarity: f64,
    pub feasibility: f64,
    pub complementarity: f64,
}

impl Kkt {
    /// The residual: the largest part.
    pub fn residual(&self) -> f64 {
        self.stationarity
            .max(self.feasibility)
            .max(self.complementarity)
    }
}

/// Whether `x` sits at the bound `b` (exactly, up to the last bits).
pub(crate) fn at_bound(x: f64, b: f64) -> bool {
    b.is_finite() && (x - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// The Lagrangian's gradient `∇f + Σ_r λ_r ∇c_r` at `p` with row multipliers `lambda`.
pub(crate) fn lagrangian_gradient(p: &Point, lambda: &[f64]) -> Vec<f64> {
    let mut r = p.g.clone();
    for (row, l) in p.rows.iter().zip(lambda) {
        for (rj, gj) in r.iter_mut().zip(&row.grad) {
            *rj += l * gj;
        }
    }
    r
}

/// The variables of `p` off their bounds (neither at `lower` nor at `upper`: [`at_bound`]).
pub(crate) fn free_variables(p: &Point, lower: &[f64], upper: &[f64]) -> Vec<usize> {
    (0..p.x.len())
        .filter(|&j| !at_bound(p.x[j], lower[j]) && !at_bound(p.x[j], upper[j]))
        .collect()
}

/// The KKT parts at `p` with row multipliers `lambda`, inside bounds `lower`, `upper`.
pub(crate) fn kkt(p: &Point, lambda: &[f64], lower: &[f64], upper: &[f64]) -> Kkt {
    let r = lagrangian_gradient(p, lambda);
    let stationarity = r
        .iter()
        .enumerate()
        .map(|(j, &rj)| {
            if at_bound(p.x[j], lower[j]) {
                (-rj).max(0.0)
            } else if at_bound(p.x[j], upper[j]) {
                rj.max(0.0)
            } else {
                rj.abs()
            }
        })
        .fold(0.0, f64::max);
    let complementarity = p
        .rows
        .iter()
        .zip(lambda)
        .filter(|(row, _)| !row.is_equality())
        .map(|(row, &l)| {
            let side = if l > 0.0 { row.upper } else { row.lower };
            if l == 0.0 {
                0.0
            } else if side.is_finite() {
                l.abs() * (row.value - side).abs()
            } else {
                l.abs()
            }
        })
        .fold(0.0, f64::max);
    Kkt {
        stationarity,
        feasibility: p.max_violation(),
        complementarity,
    }
}
