//! The LQR weights: `J = ½ δx(t_f)ᵀ Q_f δx(t_f) + ½ ∫ (δxᵀ Q δx + δuᵀ R δu) dt`, with
//! `δx = x − x_ref(t)`, `δu = u − u_nom(t)` (docs/theory.md §10).

use crate::error::FeedbackError;
use nalgebra::DMatrix;

/// The weights Q (nx×nx), R (nu×nu, positive definite) and Q_f (nx×nx), with R⁻¹ kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    pub q: DMatrix<f64>,
    pub r: DMatrix<f64>,
    pub qf: DMatrix<f64>,
    r_inv: DMatrix<f64>,
}

impl Weights {
    /// Full matrices, checked: square, symmetric, finite, Q and Q_f positive semidefinite
    /// (diagonals ≥ 0 and eigenvalues ≥ −1e-12·‖Q‖), R positive definite (Cholesky).
    pub fn new(q: DMatrix<f64>, r: DMatrix<f64>, qf: DMatrix<f64>) -> Result<Self, FeedbackError> {
        for (what, m) in [("q", &q), ("r", &r), ("qf", &qf)] {
            if !m.is_square() {
                return Err(FeedbackError::WeightSize {
                    what,
                    expected: "a square matrix".into(),
                    found: format!("{}×{}", m.nrows(), m.ncols()),
                });
            }
            if m.iter().any(|v| !v.is_finite()) {
                return Err(value(what, "has a value that is not finite"));
            }
            if (m - m.transpose()).amax() > 1e-12 * m.amax().max(1.0) {
                return Err(value(what, "is not symmetric"));
            }
        }
        if q.nrows() != qf.nrows() {
            return Err(FeedbackError::WeightSize {
                what: "qf",
                expected: format!("{0}×{0} (the size of q)", q.nrows()),
                found: format!("{0}×{0}", qf.nrows()),
            });
        }
        for (what, m) in [("q", &q), ("qf", &qf)] {
            let lo = m.clone().symmetric_eigenvalues().min();
            if m.nrows() > 0 && lo < -1e-12 * m.amax().max(1.0) {
                return Err(value(
                    what,
                    "must be positive semidefinite (a weight is negative)",
                ));
            }
        }
        let r_inv =
            r.clone().cholesky().map(|c| c.inverse()).ok_or_else(|| {
                value("r", "must be positive definite (every control weight > 0)")
            })?;
        Ok(Weights { q, r, qf, r_inv })
    }

    /// Diagonal weights: `Q = diag(q)`, `R = diag(r)`, `Q_f = diag(qf)`.
    pub fn diagonal(q: &[f64], r: &[f64], qf: &[f64]) -> Result<Self, FeedbackError> {
        let d = |v: &[f64]| DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(v));
        Self::new(d(q), d(r), d(qf))
    }

    /// Checks the sizes against a system with `nx` states and `nu` controls.
    pub fn check(&self, nx: usize, nu: usize) -> Result<(), FeedbackError> {
        for (what, m, n) in [("q", &self.q, nx), ("qf", &self.qf, nx), ("r", &self.r, nu)] {
            if m.nrows() != n {
                return Err(FeedbackError::WeightSize {
                    what,
                    expected: format!(
                        "{n}×{n} (one row per {})",
                        if what == "r" { "control" } else { "state" }
                    ),
                    found: format!("{0}×{0}", m.nrows()),
                });
            }
        }
        if nu == 0 {
            return Err(value(
                "r",
                "the system has no control channel to feed back through",
            ));
        }
        Ok(())
    }

    /// R⁻¹.
    pub fn r_inv(&self) -> &DMatrix<f64> {
        &self.r_inv
    }

    /// The nx×nx number of states these weights are for.
    pub fn nx(&self) -> usize {
        self.q.nrows()
    }
}

fn value(what: &'static str, message: &str) -> FeedbackError {
    FeedbackError::WeightValue {
        what,
        message: message.into(),
    }
}
