//! The coefficients of the NDFs of orders 1–5 (Shampine & Reichelt 1997, §2; docs/theory.md
//! §8, "BDF"): κ_k, γ_k, α_k, the error constants and the Newton form of the
//! backward-difference polynomial.

/// The highest order.
pub(super) const MAX_ORDER: usize = 5;
/// The NDF coefficients κ_k (Shampine & Reichelt 1997, Table 1; κ_5 = 0: the order-5
/// formula is BDF5).
pub(super) const KAPPA: [f64; MAX_ORDER + 1] = [0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0];

/// `γ_k = Σ_{j=1}^{k} 1/j`.
pub(super) fn gamma(k: usize) -> f64 {
    (1..=k).map(|j| 1.0 / j as f64).sum()
}

/// `α_k = (1 − κ_k) γ_k`: the corrector is `α_k d − h F(t_{n+1}, y⁽⁰⁾ + d) + ψ = 0`.
pub(super) fn alpha(k: usize) -> f64 {
    (1.0 - KAPPA[k]) * gamma(k)
}

/// The error constant `κ_k γ_k + 1/(k + 1)`: the local error is estimated as this times
/// the corrector's total correction d (Shampine & Reichelt 1997, (2.4)).
pub(super) fn error_constant(k: usize) -> f64 {
    KAPPA[k] * gamma(k) + 1.0 / (k + 1) as f64
}

/// The Newton-form coefficients of the backward-difference polynomial,
/// `p(t_n + s h) = Σ_j ∇^j y_n · c_j(s)` with `c_j(s) = Π_{m<j} (s + m)/(m + 1)`, and
/// their derivatives in s, for j = 0 … k.
pub(super) fn newton_coefficients(
    k: usize, s: f64,
) -> ([f64; MAX_ORDER + 1], [f64; MAX_ORDER + 1]) {
    let (mut c, mut dc) = ([0.0; MAX_ORDER + 1], [0.0; MAX_ORDER + 1]);
    c[0] = 1.0;
    for j in 0..k {
        let m = j as f64;
        c[j + 1] = c[j] * (s + m) / (m + 1.0);
        dc[j + 1] = (dc[j] * (s + m) + c[j]) / (m + 1.0);
    }
    (c, dc)
}
