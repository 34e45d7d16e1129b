//! Seed 001's adjoint transfer conditions for Hessenberg index-2 DAEs (§3.3, the equations
//! after (20); theory.md §6), checked on one event of the pendulum against a wall.
//!
//! hybridopt integrates the reduced formulation: λ_r lives on the differential states and
//! crosses an event by the jump of theory.md §4, `λ_r⁻ = Ξᵀλ_r⁺ + (g⁻ − g⁺)βᵀ` (the
//! running cost's jump through the quadrature row of Ξ). The seed's DAE adjoint λ instead
//! satisfies `λᵀB + g_z = 0` (20b) on every arc (A = f_y, B = f_z, C = k_y); both give the
//! same gradient because sensitivities keep `C s = −k_p`, so an adjoint matters only up to
//! the range of Cᵀ. The representative the seed picks is the projection
//!
//! ```text
//! π(λ) = λ − Cᵀ (CB)⁻ᵀ (Bᵀλ + g_zᵀ)
//! ```
//!
//! (its final condition `λ_fᵀ = −g_z (CB)⁻¹ C` is π(0)). The test takes random λ_r⁺ and
//! checks that the seed's transfer `(λ⁻)ᵀ = Xᵀ − (g_z + XᵀB)(CB)⁻¹C`, with
//! `Xᵀ = (g⁻ − g⁺)β + (π⁺(λ_r⁺))ᵀ Δ`, gives exactly π⁻ of our λ_r⁻, and that the seed's
//! event term of the gradient (21), `(g⁻ − g⁺)α + (λ⁺)ᵀΓ − (g_z + XᵀB)(CB)⁻¹k_p`, equals ours,
//! `Ξ_θᵀλ_r⁺` plus the quadrature rows. The cost depends on the algebraic state
//! (`∫ px² + 0.1 λ² dt`), so g_z ≠ 0 and the projection is not trivial.

use crate::common;

use common::assert_within;
use hybridopt::cost::{Objective, Quantity, Term};
use hybridopt::dae::Dae;
use hybridopt::setup::Setup;
use hybridopt::systems::PendulumWall;
use hybridopt::testing::Jump;
use hybridopt::HybridSystem;
use nalgebra::DVector;

/// B = f_z, C = k_y, g, g_y, g_z at a state of the pendulum (λ the algebraic state).
struct Blocks {
    b: DVector<f64>,
    c: DVector<f64>,
    g: f64,
    gz: f64,
}

const W_LAMBDA: f64 = 0.1;

fn blocks(dae: &Dae<PendulumWall>, t: f64, x: &[f64], p: &[f64]) -> Blocks {
    let lam = dae.algebraic(0, t, x, p).unwrap()[0];
    let m = p[0];
    Blocks {
        b: DVector::from_vec(vec![0.0, 0.0, -2.0 * x[0] / m, -2.0 * x[1] / m]),
        c: DVector::from_vec(vec![x[2], x[3], x[0], x[1]]),
        g: x[0] * x[0] + W_LAMBDA * lam * lam,
        gz: 2.0 * W_LAMBDA * lam,
    }
}

/// π(λ) = λ − Cᵀ (CB)⁻¹ (Bᵀλ + g_z) (one algebraic state: CB is a scalar).
fn project(bl: &Blocks, lam: &DVector<f64>) -> DVector<f64> {
    let cb = bl.c.dot(&bl.b);
    lam - &bl.c * ((bl.b.dot(lam) + bl.gz) / cb)
}

#[test]
fn index2_adjoint_transfer_equals_the_seed_formula_on_an_impact() {
    let dae = Dae::new(PendulumWall);
    let names = dae.dims().outputs;
    let out = |n: &str| names.iter().position(|s| s == n).unwrap();
    let setup = Setup::builder(&dae)
        .horizon(0.0, 5.0)
        .objective(Objective::new(
            "psi",
            vec![
                Term::squared(Quantity::Integral { output: out("px") }, 0.0, 1.0),
                Term::squared(
                    Quantity::Integral {
                        output: out("lambda"),
                    },
                    0.0,
                    W_LAMBDA,
                ),
            ],
        ))
        .tolerances(1e-10, 1e-10)
        .build();
    let p = PendulumWall::default_params();
    let traj = setup.simulate(&p).unwrap();
    let jumps = Jump::tape(&setup, &traj, &p).unwrap();
    let (ev, jump) = (&traj.events[0], &jumps[0]);
    let ny = 4;
    let n = setup.n();
    assert_eq!(n, ny + 2, "four states and two quadratures");
    let before = blocks(&dae, ev.t, &ev.before.y[..ny], &p);
    let after = blocks(&dae, ev.t, &ev.after.y[..ny], &p);
    // the seed's β: τ = α + β s⁻ with τ = −(h_y s⁻ + h_p)/ḣ
    let beta = -jump.guard.x.rows(0, ny) / jump.gdot;
    let alpha = -&jump.guard.theta / jump.gdot;
    // Δ and Γ: the differential block of the jump (s⁺ = Γ + Δ s⁻)
    let delta = jump.xi.to_dense().view((0, 0), (ny, ny)).into_owned();
    let gamma = jump.xi_theta.rows(0, ny).into_owned();
    let dg = before.g - after.g;
    assert!(
        before.gz.abs() > 1.0 && dg.abs() > 1e-3,
        "g_z and the jump of g are not trivial"
    );
    let mut rng = common::Rng(7);
    let mut worst_lam = 0.0f64;
    let mut worst_grad = 0.0f64;
    for _ in 0..5 {
        let lam_plus = DVector::from_vec(rng.vec(ny, -2.0, 2.0));
        // ours: the jump on the augmented vector (λ_r⁺, λ_q = 1 for both quadratures)
        let mut aug = DVector::zeros(n);
        aug.rows_mut(0, ny).copy_from(&lam_plus);
        aug.rows_mut(ny, n - ny).fill(1.0);
        let (ours_minus, ours_mu) = jump.adjoint(&aug, &DVector::zeros(p.len()), None);
        let ours = project(&before, &ours_minus.rows(0, ny).into_owned());
        // the seed's
        let seed_plus = project(&after, &lam_plus);
        let x = &beta * dg + delta.transpose() * &seed_plus;
        let cb = before.c.dot(&before.b);
        let zeta = (before.gz + x.dot(&before.b)) / cb;
        let seed_minus = &x - &before.c * zeta;
        worst_lam = worst_lam.max((&seed_minus - &ours).amax() / seed_minus.amax());
        // the event term of the gradient (21) (k_p = 0 here: the constraint x u + y v
        // has no parameter)
        let seed_term = &alpha * dg + gamma.transpose() * &seed_plus;
        worst_grad = worst_grad.max((&seed_term - &ours_mu).amax() / seed_term.amax());
    }
    // measured 1.02e-15 and 9.1e-16 (2026-12-07; both bounds were 1e-12), margins 25× and
    // 27×
    assert_within(
        "seed (λ⁻) vs π⁻(Ξᵀλ_r⁺ + …) on the first impact",
        worst_lam,
        2.5e-14,
    );
    assert_within("seed event term of (21) vs Ξ_θᵀλ⁺ + …", worst_grad, 2.5e-14);
}
