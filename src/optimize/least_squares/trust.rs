//! The Levenberg–Marquardt step of Moré (1978), "The Levenberg–Marquardt algorithm:
//! implementation and theory": p(μ) minimizes ‖J p + r‖² + μ‖D p‖², and μ ≥ 0 is chosen so
//! that the scaled step ‖D p‖ is the trust radius Δ (within 10 %), or μ = 0 — the pure
//! Gauss–Newton step — when that step already lies inside.
//!
//! Computed without forming JᵀJ: J = Q R (Householder), then the SVD of the small R D⁻¹ =
//! U S Vᵀ, after which every μ costs O(n²): with c = Uᵀ(Qᵀr), p̃ = D p = −V diag(sᵢ/(sᵢ²+μ)) c
//! (the least-squares solution of the stacked [J; √μ D] p ≈ [−r; 0], without its
//! squared condition number). At μ = 0 singular values below n·ε·s_max are dropped (the
//! minimum-norm Gauss–Newton step of a rank-deficient J).

use nalgebra::{DMatrix, DVector};

/// The scaled Jacobian's SVD at one point, for steps of any μ.
pub(super) struct StepModel {
    /// Vᵀ (s×k) of R D⁻¹ = U S Vᵀ.
    v_t: DMatrix<f64>,
    /// The singular values (s).
    s: DVector<f64>,
    /// c = Uᵀ Qᵀ r (s).
    c: DVector<f64>,
    /// D (k): the scaling of the free variables.
    d: DVector<f64>,
    /// Singular values at or below this count as zero in the Gauss–Newton step.
    cut: f64,
}

impl StepModel {
    /// The model for J (m×k, the free columns), r and the scaling d (all dᵢ > 0).
    pub(super) fn new(j: &DMatrix<f64>, r: &DVector<f64>, d: &DVector<f64>) -> StepModel {
        let (m, k) = j.shape();
        // R D⁻¹ and Qᵀr: from the QR when tall, J itself otherwise (same least squares)
        let (mut a, b) = if m > k {
            let qr = j.clone().qr();
            let mut qtr = r.clone();
            qr.q_tr_mul(&mut qtr);
            (qr.r(), qtr.rows(0, k).into_owned())
        } else {
            (j.clone(), r.clone())
        };
        for (col, dj) in d.iter().enumerate() {
            a.column_mut(col).scale_mut(1.0 / dj);
        }
        let svd = a.svd(true, true);
        let u = svd.u.expect("SVD with U");
        let v_t = svd.v_t.expect("SVD with Vᵀ");
        let c = u.transpose() * b;
        let s = svd.singular_values;
        let smax = s.iter().fold(0.0f64, |a, &v| a.max(v));
        StepModel {
            v_t,
            s,
            c,
            d: d.clone(),
            cut: smax * f64::EPSILON * m.max(k) as f64,
        }
    }

    /// The coefficients sᵢ/(sᵢ² + μ) (zero for dropped singular values at μ = 0).
    fn weights(&self, mu: f64) -> DVector<f64> {
        self.s.map(|si| {
            if mu == 0.0 && si <= self.cut {
                0.0
            } else {
                si / (si * si + mu)
            }
        })
    }

    /// ‖D p(μ)‖ = ‖diag(sᵢ/(sᵢ²+μ)) c‖ (V is orthonormal).
    fn scaled_norm(&self, mu: f64) -> f64 {
        self.weights(mu).component_mul(&self.c).norm()
    }

    /// d‖D p(μ)‖/dμ = −Σ sᵢ²cᵢ²/(sᵢ²+μ)³ / ‖D p‖.
    fn scaled_norm_slope(&self, mu: f64) -> f64 {
        let q = self.scaled_norm(mu);
        let sum: f64 = self
            .s
            .iter()
            .zip(self.c.iter())
            .map(|(&si, &ci)| (si * ci).powi(2) / (si * si + mu).powi(3))
            .sum();
        -sum / q.max(f64::MIN_POSITIVE)
    }

    /// The step p(μ) in the free variables (unscaled).
    pub(super) fn step(&self, mu: f64) -> DVector<f64> {
        let pt = -(self.v_t.transpose() * self.weights(mu).component_mul(&self.c));
        pt.component_div(&self.d)
    }

    /// μ and p(μ) for the radius Δ: μ = 0 if ‖D p(0)‖ ≤ 1.1 Δ, else the μ > 0 with
    /// ‖D p(μ)‖ within [0.9, 1.1]·Δ, found by Newton's method on 1/Δ − 1/‖D p(μ)‖ (nearly
    /// linear in μ; Moré 1978 §5), safeguarded by bisection in [0, ‖S c‖/Δ].
    pub(super) fn for_radius(&self, radius: f64) -> (f64, DVector<f64>) {
        if self.scaled_norm(0.0) <= 1.1 * radius {
            return (0.0, self.step(0.0));
        }
        let (mut lo, mut hi) = (0.0, self.s.component_mul(&self.c).norm() / radius);
        let mut mu = hi * 1e-3;
        for _ in 0..100 {
            let q = self.scaled_norm(mu);
            if (q - radius).abs() <= 0.1 * radius {
                break;
            }
            if q > radius {
                lo = mu;
            } else {
                hi = mu;
            }
            // ψ(μ) = 1/Δ − 1/q, ψ'(μ) = q'/q²
            let psi = 1.0 / radius - 1.0 / q;
            let dpsi = self.scaled_norm_slope(mu) / (q * q);
            let next = mu - psi / dpsi;
            mu = if next > lo && next < hi && next.is_finite() {
                next
            } else {
                0.5 * (lo + hi)
            };
        }
        (mu, self.step(mu))
    }
}
