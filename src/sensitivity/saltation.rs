//! The saltation matrix `Ξ = R_x − v g_xᵀ/ġ` (`v = R_x f⁻ + R_t − f⁺`, theory.md §3) as an
//! operator: formed densely when the reset's Jacobian is dense, else kept as its parts —
//! the reset's [`StateMap`] (the identity plus the rows the reset changes) and the rank-one
//! event-time term `v g_xᵀ/ġ` — so that `Ξ S`, `Ξᵀ Λ` on n×k blocks cost O(n·k) instead of
//! O(n²·k), and building Ξ costs O(n) instead of O(n²) (theory.md §3, "The jump as an
//! operator").

use crate::model::StateMap;
use nalgebra::{DMatrix, DVector};

/// Ξ of one event.
#[derive(Debug, Clone)]
pub enum Saltation {
    /// The n×n matrix `R_x − v g_xᵀ/ġ`, entry by entry (the reset's Jacobian was dense).
    Dense(DMatrix<f64>),
    /// `R_x − v g_xᵀ/ġ` kept as its parts.
    Structured {
        rx: StateMap,
        /// v = R_x f⁻ + R_t − f⁺
        v: DVector<f64>,
        /// g_x
        gx: DVector<f64>,
        /// ġ = g_t + g_x f⁻
        gdot: f64,
    },
}

impl Saltation {
    /// Ξ from the reset's `R_x`, `v = R_x f⁻ + R_t − f⁺`, the guard's `g_x` and `ġ`
    /// (theory.md §3): dense entry by entry `R_ij − v_i g_j/ġ` for a dense `R_x`, else
    /// structured.
    pub fn new(rx: StateMap, v: DVector<f64>, gx: &DVector<f64>, gdot: f64) -> Saltation {
        match rx {
            StateMap::Dense(r) => {
                Saltation::Dense(DMatrix::from_fn(r.nrows(), r.ncols(), |i, j| {
                    r[(i, j)] - v[i] * gx[j] / gdot
                }))
            }
            rx => Saltation::Structured {
                rx,
                v,
                gx: gx.clone(),
                gdot,
            },
        }
    }

    /// An empty map (what a consumer keeps once the sensitivities are mapped).
    pub fn empty() -> Saltation {
        Saltation::Dense(DMatrix::zeros(0, 0))
    }

    /// `Ξ S = R_x S − v (g_xᵀ S)/ġ` (S is n×k).
    pub fn mul(&self, s: &DMatrix<f64>) -> DMatrix<f64> {
        match self {
            Saltation::Dense(xi) => xi * s,
            Saltation::Structured { rx, v, gx, gdot } => {
                let mut out = rx.mul(s);
                let w = s.tr_mul(gx) / *gdot;
                out.ger(-1.0, v, &w, 1.0);
                out
            }
        }
    }

    /// `Ξᵀ Λ = R_xᵀ Λ − g_x (vᵀ Λ)/ġ` (Λ is n×k).
    pub fn tr_mul(&self, lam: &DMatrix<f64>) -> DMatrix<f64> {
        match self {
            Saltation::Dense(xi) => xi.tr_mul(lam),
            Saltation::Structured { rx, v, gx, gdot } => {
                let mut out = rx.tr_mul(lam);
                let w = lam.tr_mul(v) / *gdot;
                out.ger(-1.0, gx, &w, 1.0);
                out
            }
        }
    }

    /// The n×n matrix, entry by entry `R_ij − v_i g_j/ġ` (for the consumers that multiply
    /// maps densely: monodromy products, the Riccati jump, composed simultaneous events).
    pub fn to_dense(&self) -> DMatrix<f64> {
        match self {
            Saltation::Dense(xi) => xi.clone(),
            Saltation::Structured { rx, v, gx, gdot } => {
                let r = rx.to_dense();
                DMatrix::from_fn(r.nrows(), r.ncols(), |i, j| r[(i, j)] - v[i] * gx[j] / gdot)
            }
        }
    }
}
