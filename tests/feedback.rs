//! Feedback through impacts (issue 46): the time-varying LQR's gains on a linear flow with a
//! state-triggered impact against their closed form — the Riccati solution between events
//! from the Hamiltonian's matrix exponential, the jump `P⁻ = ΞᵀP⁺Ξ` with the saltation
//! written out for a linear reset — and the saltation products against a central
//! finite-difference linearization of the flow map through three impacts.

use crate::common;

use common::{assert_close, assert_within};
use hybridopt::feedback::{tvlqr, Weights};
use hybridopt::prelude::*;
use nalgebra::{DMatrix, DVector};

/// `ẋ = A x + B u` (an undamped oscillator pushed by u), the guard
/// `g = c·x − d` crossed falling (a stop at x₁ = d), the linear reset `x⁺ = R x` (the
/// velocity reversed and scaled by e, the position kept on the stop). θ = x0.
struct LinearImpact;

const E: f64 = 0.9;
const ZETA: f64 = 0.0;
/// ω² of the oscillator (ω = 2: an impact every ~2 s).
const W2: f64 = 4.0;
const STOP: f64 = -0.5;

fn a_mat() -> DMatrix<f64> {
    DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -W2, -2.0 * ZETA * W2.sqrt()])
}
fn b_mat() -> DMatrix<f64> {
    DMatrix::from_row_slice(2, 1, &[0.0, 1.0])
}
fn r_mat() -> DMatrix<f64> {
    DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -E])
}
fn c_vec() -> DVector<f64> {
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
fn expm(m: &DMatrix<f64>) -> DMatrix<f64> {
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
fn closed_form_events(x0: &DVector<f64>, tf: f64) -> Vec<(f64, DVector<f64>)> {
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
fn saltation(x_minus: &DVector<f64>) -> DMatrix<f64> {
    let (a, r, c) = (a_mat(), r_mat(), c_vec());
    let fm = &a * x_minus;
    let fp = &a * (&r * x_minus);
    &r + (fp - &r * &fm) * c.transpose() / c.dot(&fm)
}

/// P(t) by the Hamiltonian: `[X; Y](t) = e^{H (t − t_b)} [I; P_b]`, `P = Y X⁻¹`,
/// `H = [A, −B R⁻¹ Bᵀ; −Q, −Aᵀ]` (Anderson & Moore 1990, §2.3).
fn riccati_closed_form(w: &Weights, p_b: &DMatrix<f64>, dt: f64) -> DMatrix<f64> {
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
fn closed_form_gain(w: &Weights, events: &[(f64, DVector<f64>)], tf: f64, t: f64) -> DMatrix<f64> {
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

const TF: f64 = 12.0;
const X0: [f64; 2] = [1.0, 0.0];

fn weights() -> Weights {
    Weights::new(
        DMatrix::from_row_slice(2, 2, &[1.0, 0.2, 0.2, 0.5]),
        DMatrix::from_element(1, 1, 0.3),
        DMatrix::from_row_slice(2, 2, &[2.0, 0.0, 0.0, 1.0]),
    )
    .unwrap()
}

/// The first target: K(t) within 1e-9 relative of the closed form at 20 times
/// across 3+ impacts (rtol = atol = 1e-12).
#[test]
fn gains_match_the_closed_form_through_impacts() {
    let sys = LinearImpact;
    let setup = Setup::builder(&sys)
        .horizon(0.0, TF)
        .tolerances(1e-12, 1e-12)
        .build();
    let w = weights();
    let lqr = tvlqr(&setup, &X0, &w).unwrap();
    let events = closed_form_events(&DVector::from_column_slice(&X0), TF);
    println!(
        "impacts at {:?}",
        events.iter().map(|e| e.0).collect::<Vec<_>>()
    );
    assert!(events.len() >= 3, "{} impacts", events.len());
    assert_eq!(lqr.nominal.events.len(), events.len());
    let te: Vec<f64> = lqr.nominal.events.iter().map(|e| e.t).collect();
    let te_ref: Vec<f64> = events.iter().map(|e| e.0).collect();
    // measured 3.3e-13
    assert_close("event times", &te, &te_ref, 1e-11, 1.0);
    let mut ours = Vec::new();
    let mut dense = Vec::new();
    let mut reference = Vec::new();
    for i in 0..20 {
        // 20 times, none on an event
        let t = 0.31 + i as f64 * (TF - 0.62) / 19.0;
        ours.extend(lqr.gain_exact(t).unwrap().iter().copied());
        dense.extend(lqr.gain_at(t).unwrap().iter().copied());
        reference.extend(closed_form_gain(&w, &events, TF, t).iter().copied());
    }
    // measured 1.1e-10 (the target: 1e-9)
    assert_close("K(t), replayed", &ours, &reference, 1e-9, 1e-3);
    // measured 3.2e-10: the Hermite interpolant between the accepted steps
    assert_close("K(t), dense output", &dense, &reference, 1e-8, 1e-3);
    // the jump at an event: P(t_e⁻) = ΞᵀP(t_e⁺)Ξ as the two sides of the dense output
    let t1 = lqr.nominal.events[1].t;
    let p_after = lqr.p_exact(t1 + 1e-12).unwrap();
    let p_before = lqr.p_exact(t1 - 1e-12).unwrap();
    let xi = saltation(&events[1].1);
    let jumped = xi.transpose() * &p_after * &xi;
    // measured 5.8e-12
    assert_close(
        "P(t_e⁻)",
        p_before.as_slice(),
        jumped.as_slice(),
        2e-10,
        1e-3,
    );
    println!("{} backward steps", lqr.stats().steps);
}

/// The flow map's Jacobian through three impacts by central differences in x0 against the
/// product of the closed-form flows and saltations that the Riccati jump uses:
/// `∂x(t_f)/∂x0 = e^{A(t_f − t_m)} Ξ_m ⋯ Ξ_1 e^{A t_1}`.
#[test]
fn saltation_products_match_a_finite_difference_linearization() {
    let sys = LinearImpact;
    let tf = 9.0;
    let setup = Setup::builder(&sys)
        .horizon(0.0, tf)
        .tolerances(1e-12, 1e-12)
        .build();
    let events = closed_form_events(&DVector::from_column_slice(&X0), tf);
    assert!(events.len() >= 3, "{} impacts", events.len());
    let a = a_mat();
    let mut phi = DMatrix::<f64>::identity(2, 2);
    let mut tb = 0.0;
    for (te, xm) in &events {
        phi = saltation(xm) * expm(&(&a * (te - tb))) * phi;
        tb = *te;
    }
    phi = expm(&(&a * (tf - tb))) * phi;
    let h = 1e-5;
    let mut fd = DMatrix::zeros(2, 2);
    for j in 0..2 {
        let mut xp = X0;
        let mut xm = X0;
        xp[j] += h;
        xm[j] -= h;
        let yp = setup.simulate(&xp).unwrap().y_final;
        let ym = setup.simulate(&xm).unwrap().y_final;
        for i in 0..2 {
            fd[(i, j)] = (yp[i] - ym[i]) / (2.0 * h);
        }
    }
    // measured 2.1e-9 (the central stencil's h² and the runs' 1e-12 noise over h)
    assert_close("∂x(t_f)/∂x0", fd.as_slice(), phi.as_slice(), 5e-8, 1e-3);
    let err = (expm(&(&a * 0.0)) - DMatrix::identity(2, 2)).amax();
    assert_within("e^0 − I", err, 1e-15);
}
