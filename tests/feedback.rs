//! Feedback through impacts (issue 46): the time-varying LQR's gains on a linear flow with a
//! state-triggered impact against their closed form — the Riccati solution between events
//! from the Hamiltonian's matrix exponential, the jump `P⁻ = ΞᵀP⁺Ξ` with the saltation
//! written out for a linear reset — and the saltation products against a central
//! finite-difference linearization of the flow map through three impacts. The reference
//! problem is `hybridopt::testing::linear_impact` (shared with the step-end bench).

use crate::common;

use common::{assert_close, assert_within};
use hybridopt::feedback::tvlqr;
use hybridopt::prelude::*;
use hybridopt::testing::linear_impact::{
    a_mat, closed_form_events, closed_form_gain, expm, saltation, weights, LinearImpact, TF, X0,
};
use nalgebra::{DMatrix, DVector};

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
