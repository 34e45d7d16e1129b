//! A reference problem with closed forms for feedback through impacts (docs/theory.md §10),
//! shared by the tests (tests/feedback.rs) and the step-end bench
//! (benches/feedback_step_end.rs): the linear flow `ẋ = A x + B u` of an undamped
//! oscillator, a stop at x₁ = −0.5 met falling, and the linear reset `x⁺ = R x` (the
//! velocity reversed and scaled by e = 0.9). Between impacts the nominal is `e^{At}x`, the
//! events are found by bisection on it, the saltation is written out for the linear reset,
//! and the Riccati solution comes from the Hamiltonian's matrix exponential, so the
//! time-varying LQR gains K(t) are known to round-off across every impact.

use crate::feedback::Weights;
use crate::prelude::*;
use nalgebra::{DMatrix, DVector};

/// The horizon of the gains test: 5 impacts.
pub const TF: f64 = 12.0;
/// The start (at rest, 1 above the spring's rest position, 1.5 above the stop).
pub const X0: [f64; 2] = [1.0, 0.0];

/// The weights of the tests and the bench: `Q = [1 0.2; 0.2 0.5]`, `R = 0.3`,
/// `Q_f = diag(2, 1)`.
pub fn weights() -> Weights {
    Weights::new(
        DMatrix::from_row_slice(2, 2, &[1.0, 0.2, 0.2, 0.5]),
        DMatrix::from_element(1, 1, 0.3),
        DMatrix::from_row_slice(2, 2, &[2.0, 0.0, 0.0, 1.0]),
    )
    .expect("valid weights")
}

/// `ẋ = A x + B u` (an undamped oscillator pushed by u), the guard
/// `g = c·x − d` crossed falling (a stop at x₁ = d), the linear reset `x⁺ = R x` (the
/// velocity reversed and scaled by e, the position kept on the stop). θ = x0.
pub struct LinearImpact;

/// The coefficient of restitution at the stop.
pub const E: f64 = 0.9;
/// The damping ratio (none).
pub const ZETA: f64 = 0.0;
/// ω² of the oscillator (ω = 2: an impact every ~2 s).
pub const W2: f64 = 4.0;
/// The stop's position: the guard is `x₁ − STOP`.
pub const STOP: f64 = -0.5;

/// A = [0 1; −ω² −2ζω].
pub fn a_mat() -> DMatrix<f64> {
    DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -W2, -2.0 * ZETA * W2.sqrt()])
}
/// B = [0; 1].
pub fn b_mat() -> DMatrix<f64> {
    DMatrix::from_row_slice(2, 1, &[0.0, 1.0])
}
/// The reset R = diag(1, −e).
pub fn r_mat() -> DMatrix<f64> {
    DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -E])
}
/// The guard's gradient c = (1, 0).
pub fn c_vec() -> DVector<f64> {
    DVector::from_column_slice(&[1.0, 0.0])
}

impl HybridSystem for LinearImpact {
    fn dims(&self) -> Dims {
        Dims::new(["x1", "x2"], ["x10", "x20"])
            .controls(["u"])
            .guards([GuardInfo::new("stop", Direction::Falling)])
            .outputs(["x1"])
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(p[..2].to_vec())
    }
    fn flow<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], u: &[D], _p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = x[1];
        dx[1] = -x[0] * W2 - x[1] * (2.0 * ZETA * W2.sqrt()) + u[0];
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0] - STOP
    }
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, _t: D, x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((m, vec![x[0], x[1] * (-E)]))
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], y: &mut [D],
    ) -> Result<(), ModelError> {
        y[0] = x[0];
        Ok(())
    }
}

/// `e^M` by scaling and squaring with a Taylor series: `e^M = (e^{M/2^s})^{2^s}` with
/// `‖M‖₁/2^s ≤ 1/2` and 30 terms of the series (truncation below 1e-40 there; Moler &
/// Van Loan, "Nineteen dubious ways to compute the exponential of a matrix", 2003, §3).
pub fn expm(m: &DMatrix<f64>) -> DMatrix<f64> {
    let norm = m.column_iter().map(|c| c.lp_norm(1)).fold(0.0, f64::max);
    let s = if norm > 0.5 {
        (norm / 0.5).log2().ceil() as i32
    } else {
        0
    };
    let a = m / 2f64.powi(s);
    let n = m.nrows();
    let mut term = DMatrix::<f64>::identity(n, n);
    let mut sum = term.clone();
    for k in 1..=30 {
        term = &term * &a / k as f64;
        sum += &term;
    }
    for _ in 0..s {
        sum = &sum * &sum;
    }
    sum
}

/// The events of the closed-form nominal from x0 (u = 0): `x(t) = e^{A(t − t_k)} x_k⁺`
/// between them, each crossing of `c·x = d` (falling) bracketed on a 1e-2 scan and
/// refined by bisection to round-off. Returns `(t_e, x⁻)` in order.
pub fn closed_form_events(x0: &DVector<f64>, tf: f64) -> Vec<(f64, DVector<f64>)> {
    let a = a_mat();
    let g = |x: &DVector<f64>| c_vec().dot(x) - STOP;
    let (mut tk, mut xk) = (0.0, x0.clone());
    let mut out = Vec::new();
    let mut t = 0.0;
    let dt = 1e-2;
    while t < tf {
        let (ta, tb) = (t, (t + dt).min(tf));
        let xa = expm(&(&a * (ta - tk))) * &xk;
        let xb = expm(&(&a * (tb - tk))) * &xk;
        // the stop is left rising right after a reset: only a fall from above counts
        if g(&xa) > 1e-9 && g(&xb) <= 0.0 {
            let (mut lo, mut hi) = (ta, tb);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if g(&(expm(&(&a * (mid - tk))) * &xk)) > 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
                if hi - lo <= 4.0 * f64::EPSILON * hi {
                    break;
                }
            }
            let te = 0.5 * (lo + hi);
            let xm = expm(&(&a * (te - tk))) * &xk;
            out.push((te, xm.clone()));
            tk = te;
            xk = r_mat() * xm;
            t = te;
            continue;
        }
        t = tb;
    }
    out
}

/// The saltation of a linear flow, guard and reset: `Ξ = R + (f⁺ − R f⁻) g_xᵀ / (g_x·f⁻)`,
/// `f⁻ = A x⁻`, `f⁺ = A R x⁻` (Kong et al. 2021, eq. (9), with R_t = 0).
pub fn saltation(x_minus: &DVector<f64>) -> DMatrix<f64> {
    let (a, r, c) = (a_mat(), r_mat(), c_vec());
    let fm = &a * x_minus;
    let fp = &a * (&r * x_minus);
    &r + (fp - &r * &fm) * c.transpose() / c.dot(&fm)
}

/// P(t) by the Hamiltonian: `[X; Y](t) = e^{H (t − t_b)} [I; P_b]`, `P = Y X⁻¹`,
/// `H = [A, −B R⁻¹ Bᵀ; −Q, −Aᵀ]` (Anderson & Moore 1990, §2.3).
pub fn riccati_closed_form(w: &Weights, p_b: &DMatrix<f64>, dt: f64) -> DMatrix<f64> {
    let (a, b) = (a_mat(), b_mat());
    let n = 2;
    let mut h = DMatrix::zeros(2 * n, 2 * n);
    h.view_mut((0, 0), (n, n)).copy_from(&a);
    h.view_mut((0, n), (n, n))
        .copy_from(&(-(&b * w.r.clone().try_inverse().unwrap() * b.transpose())));
    h.view_mut((n, 0), (n, n)).copy_from(&(-&w.q));
    h.view_mut((n, n), (n, n)).copy_from(&(-a.transpose()));
    let mut xy0 = DMatrix::zeros(2 * n, n);
    xy0.view_mut((0, 0), (n, n)).fill_with_identity();
    xy0.view_mut((n, 0), (n, n)).copy_from(p_b);
    let xy = expm(&(h * dt)) * xy0;
    let x = xy.rows(0, n).into_owned();
    let y = xy.rows(n, n).into_owned();
    y * x.try_inverse().unwrap()
}

/// The closed-form gain at t: P swept back from `P(t_f) = Q_f` through the events.
pub fn closed_form_gain(
    w: &Weights, events: &[(f64, DVector<f64>)], tf: f64, t: f64,
) -> DMatrix<f64> {
    let mut p = w.qf.clone();
    let mut tb = tf;
    for (te, xm) in events.iter().rev() {
        if *te <= t {
            break;
        }
        p = riccati_closed_form(w, &p, te - tb);
        let xi = saltation(xm);
        p = xi.transpose() * p * xi;
        tb = *te;
    }
    let p = riccati_closed_form(w, &p, t - tb);
    -(w.r.clone().try_inverse().unwrap() * b_mat().transpose() * p)
}
