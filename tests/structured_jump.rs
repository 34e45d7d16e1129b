//! The jump at an event as a structured operator (docs/theory.md §3, "The jump as an
//! operator"): `Ξ = R_x − v g_xᵀ/ġ` with `R_x` the identity plus the rows the reset
//! changes (the reset's pattern, from a TOML system's reset table), applied in O(n·k).
//!
//! * the structured Ξ and Ξᵀ applied to blocks of vectors, and the matrix it forms, equal
//!   the dense Ξ built entry by entry from the reset's dense dual Jacobian — on the chain
//!   (one changed row reading one state) and on a system whose reset changes every state
//!   from every state (its pattern full);
//! * the chain's gradient through its impacts at a size where the jump was dense before
//!   (64 states, three impacts, rtol 1e-10): direct vs adjoint, and central differences
//!   (rtol 1e-12) vs adjoint (two witnesses).

use crate::common;

use common::chain::chain_problem;
use common::Rng;
use hybridopt::model::{reset_jacobian, StateMap};
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::testing::Jump;
use hybridopt::HybridSystem;
use nalgebra::{DMatrix, DVector};
use std::path::Path;

fn parse(text: &str) -> Problem {
    Problem::parse(text, Path::new("structured_jump.toml")).unwrap()
}

/// The chain of `masses` masses with its stop at `d` (0.05 in the generator; 0.001 gives
/// several impacts).
fn chain_at(masses: usize, d: f64) -> String {
    chain_problem(masses, "radau5")
        .replace("d = { value = 0.05,", &format!("d = {{ value = {d:?},"))
}

/// The worst relative difference `max|a − b| / max(1, max|b|)`.
fn rel(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax().max(1.0)
}

/// For every event of `p`'s run: the worst relative difference between the structured
/// jump (`Jump::from_record`) and the dense one built from the same record with the
/// reset's dense dual Jacobian, over Ξ S, Ξᵀ Λ (S, Λ random n×3), the formed Ξ, and Ξ_θ.
/// Also returns the number of events.
fn structured_vs_dense(p: &Problem) -> (f64, usize) {
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let (n, nx, np, nth) = (s.n(), s.nx(), s.np(), s.ntheta());
    let tr = s.simulate(&th).unwrap();
    let mut rng = Rng(47);
    let mut worst = 0.0f64;
    for (i, e) in tr.events.iter().enumerate() {
        let j = Jump::from_record(&s, &tr, i, &th).unwrap();
        assert!(
            matches!(j.xi, hybridopt::testing::Saltation::Structured { .. }),
            "{}: event {i} took the dense path",
            p.name
        );
        let (_, r) = reset_jacobian(
            s.sys(),
            nx,
            e.mode_before(),
            e.guard,
            e.t,
            &e.before.y[..nx],
            &th[..np],
        )
        .unwrap();
        let mut rt = DVector::zeros(n);
        rt.rows_mut(0, nx).copy_from(&r.t);
        let mut rth = DMatrix::zeros(n, nth);
        rth.view_mut((0, 0), (nx, np)).copy_from(&r.p);
        let dense = Jump::from_parts(
            j.mode_after,
            j.x_plus.clone(),
            j.f_minus.clone(),
            j.f_plus.clone(),
            j.guard.clone(),
            j.gdot,
            &rt,
            StateMap::Dense(r.x).kept_beyond(n),
            &rth,
        );
        let sm = DMatrix::from_fn(n, 3, |_, _| rng.uniform(-1.0, 1.0));
        let lam = DMatrix::from_fn(n, 3, |_, _| rng.uniform(-1.0, 1.0));
        worst = worst
            .max(rel(&j.xi.mul(&sm), &dense.xi.mul(&sm)))
            .max(rel(&j.xi.tr_mul(&lam), &dense.xi.tr_mul(&lam)))
            .max(rel(&j.xi.to_dense(), &dense.xi.to_dense()))
            .max(rel(&j.xi_theta, &dense.xi_theta));
    }
    (worst, tr.events.len())
}

#[test]
fn the_structured_jump_is_the_dense_one_on_the_chain() {
    let p = parse(&chain_at(32, 0.001));
    let pattern = p
        .system
        .reset_pattern(0, 0)
        .expect("a TOML reset's pattern");
    // one changed row (v31) reading one state (v31)
    assert_eq!(pattern.rows(), &[(63, vec![63])]);
    let (worst, events) = structured_vs_dense(&p);
    assert!(events >= 3, "{events} impacts");
    // measured 2.5e-16 (2026-12-07, 64 states, every impact of the run)
    common::assert_within("chain32: structured vs dense jump", worst, 6e-15);
}

#[test]
fn the_structured_jump_is_the_dense_one_for_a_full_reset() {
    // every state changed, each from every state: the pattern is full
    let all = "x0 + x1 + x2 + v0 + v1 + v2";
    let reset = format!(
        "reset = {{ x0 = \"x0 + 1e-3*({all})\", x1 = \"x1 - 2e-3*({all})\", \
         x2 = \"x2 + 1e-3*v2*({all})\", v0 = \"v0 + 0.01*({all})\", \
         v1 = \"v1*(1 + 0.01*({all}))\", v2 = \"-e*v2 + 0.02*({all})\" }}"
    );
    let text = chain_at(3, 0.05).replace("reset = { v2 = \"-e*v2\" }", &reset);
    let p = parse(&text);
    let pattern = p
        .system
        .reset_pattern(0, 0)
        .expect("a TOML reset's pattern");
    assert_eq!(pattern.rows().len(), 6);
    assert!(pattern.rows().iter().all(|(_, c)| c.len() == 6));
    let (worst, events) = structured_vs_dense(&p);
    assert!(events >= 1, "{events} impacts");
    // measured 3.0e-16 (2026-12-07)
    common::assert_within("chain3, full reset: structured vs dense jump", worst, 8e-15);
}

#[test]
fn the_chain_gradient_through_its_impacts_has_two_witnesses() {
    // the stop at 0.01: three impacts, each transversal enough that ψ is smooth at the
    // difference steps (at 0.001 the later impacts are shallow: ∂ψ/∂d by differences
    // moved by 1e-2 between steps 1e-5 and 1e-4)
    let mut p = parse(&chain_at(32, 0.01));
    (p.solver.rtol, p.solver.atol) = (1e-10, 1e-10);
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let adjoint = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
    let direct = evaluate(&s, &th, GradientMethod::Direct).unwrap();
    let events = s.simulate(&th).unwrap().events.len();
    assert!(events >= 3, "{events} impacts");
    // central differences, 4th order, on a tighter run
    let mut tight = p.clone();
    (tight.solver.rtol, tight.solver.atol) = (1e-12, 1e-12);
    let st = tight.setup().unwrap();
    let psi = |t: &[f64]| {
        let tr = st.simulate(t).unwrap();
        st.objective_values(&tr, t).unwrap()[0]
    };
    let fd = common::central4(&th, psi);
    let (a, d) = (&adjoint.gradients[0], &direct.gradients[0]);
    println!("{events} impacts; adjoint {a:?}");
    // measured 5.5e-10 (2026-12-07; at rtol 1e-8 the adjoint's own error, 2.4e-7 on
    // ∂ψ/∂d with the stop at 0.001, would hide a defect of this size)
    common::assert_close("chain32, impacts: direct vs adjoint", d, a, 1.5e-8, 1e-3);
    // measured 1.3e-9 (2026-12-07)
    common::assert_close("chain32, impacts: fd vs adjoint", &fd, a, 3e-8, 1e-3);
}
