//! The one jump formula of theory.md §3 against the seed's second-order formulas
//! (seed 000 (23a)–(23e)), written out here by hand for the impact pendulum, and the
//! adjoint map against the transpose identity of theory.md §4.
//!
//! The pendulum is x = (q, v) with q̈ = a(t, q, v, p) = −p₀ sin q − p₁ v + p₂ sin(p₃ t), the
//! event r(q, ρ) = q − q_w (q_w = p₅) and the reset v⁺ = h(t, q, v, p) =
//! −p₄ (1 + 0.05 sin(0.1 t) + 0.02 q) v. Two running costs L₁ = v² and L₂ = a/2 add two
//! quadrature rows Z to the sensitivity S = (Q, V, Z). Every partial derivative below is
//! computed by hand from these formulas, not by the library.

use crate::common;

use common::Rng;
use hybridopt::cost::{EventGuard, Objective, Quantity, Term};
use hybridopt::testing::Ctx;

use hybridopt::setup::Setup;
use hybridopt::systems::ImpactPendulum;
use hybridopt::testing::term_jacobian;
use hybridopt::testing::Jump;
use hybridopt::testing::ScalarJac;
use nalgebra::{DMatrix, DVector};

/// The library against the seed's formulas and the transpose identity: algebraically equal,
/// measured 3.6e-16 (2026-12-02; was 1e-12), margin 28×.
const TOL: f64 = 1e-14;

fn objective() -> Objective {
    Objective::new(
        "psi",
        vec![
            Term::squared(Quantity::Integral { output: 1 }, 0.0, 1.0),
            Term::plain(Quantity::Integral { output: 2 }, 0.5),
            Term::squared(
                Quantity::EventOutput {
                    guard: EventGuard::Guard(0),
                    occurrence: 1,
                    output: 1,
                },
                0.5,
                2.0,
            ),
            Term::squared(
                Quantity::EventTime {
                    guard: EventGuard::Guard(0),
                    occurrence: 1,
                },
                1.0,
                0.7,
            ),
        ],
    )
}

/// a(t, q, v, p)
fn accel(p: &[f64], t: f64, q: f64, v: f64) -> f64 {
    -p[0] * q.sin() - p[1] * v + p[2] * (p[3] * t).sin()
}

/// The restitution factor of h: 1 + 0.05 sin(0.1 t) + 0.02 q.
fn rest(t: f64, q: f64) -> f64 {
    1.0 + 0.05 * (0.1 * t).sin() + 0.02 * q
}

/// The seed's jump at (t, q⁻, v⁻): returns (τ, S⁺, f⁻) for S⁻ = rows (Q, V, Z₁, Z₂).
fn seed_jump(
    p: &[f64], t: f64, q: f64, v_minus: f64, s_minus: &DMatrix<f64>,
) -> (DVector<f64>, DMatrix<f64>, DVector<f64>) {
    let nth = p.len();
    let (qm, vm) = (s_minus.row(0).transpose(), s_minus.row(1).transpose());
    let zm = [s_minus.row(2).transpose(), s_minus.row(3).transpose()];
    // event function r = q − q_w
    let r_q = 1.0;
    let mut r_rho = DVector::zeros(nth);
    r_rho[5] = -1.0;
    // (23a)
    let tau = -(&qm * r_q + &r_rho) / (r_q * v_minus);
    // reset
    let e = p[4];
    let v_plus = -e * rest(t, q) * v_minus;
    let h_t = -e * 0.05 * 0.1 * (0.1 * t).cos() * v_minus;
    let h_q = -e * 0.02 * v_minus;
    let h_v = -e * rest(t, q);
    let mut h_rho = DVector::zeros(nth);
    h_rho[4] = -rest(t, q) * v_minus;
    let a_minus = accel(p, t, q, v_minus);
    let a_plus = accel(p, t, q, v_plus);
    // running costs on both sides
    let l_minus = [v_minus * v_minus, 0.5 * a_minus];
    let l_plus = [v_plus * v_plus, 0.5 * a_plus];
    // (23b)–(23e)
    let q_plus = &qm - &tau * (v_plus - v_minus);
    let v_new =
        &qm * h_q + &vm * h_v + &tau * (h_q * v_minus + h_v * a_minus + h_t - a_plus) + &h_rho;
    let mut s_plus = DMatrix::zeros(4, nth);
    s_plus.set_row(0, &q_plus.transpose());
    s_plus.set_row(1, &v_new.transpose());
    for j in 0..2 {
        let z = &zm[j] - &tau * (l_plus[j] - l_minus[j]);
        s_plus.set_row(2 + j, &z.transpose());
    }
    let f_minus = DVector::from_vec(vec![v_minus, a_minus, l_minus[0], l_minus[1]]);
    (tau, s_plus, f_minus)
}

/// Row-wise relative difference (each row against its own norm), so that a small row
/// (a quadrature) cannot hide behind a large one.
fn rows_rel(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    let mut worst = 0.0f64;
    for r in 0..a.nrows() {
        let d = (a.row(r) - b.row(r)).norm();
        let s = b.row(r).norm().max(1e-300);
        worst = worst.max(d / s);
    }
    worst
}

fn vec_rel(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    (a - b).norm() / b.norm().max(1e-300)
}

fn random_matrix(rng: &mut Rng, r: usize, c: usize) -> DMatrix<f64> {
    DMatrix::from_fn(r, c, |_, _| rng.uniform(-2.0, 2.0))
}

fn random_vector(rng: &mut Rng, n: usize) -> DVector<f64> {
    DVector::from_fn(n, |_, _| rng.uniform(-2.0, 2.0))
}

/// The points where the jump is checked: the first three impacts of a simulation (with
/// their recorded X⁻ and context) and two made-up points on the wall with other
/// velocities and times (the formulas are algebraic in (t, X⁻)).
fn points(setup: &Setup<'_, ImpactPendulum>, p: &[f64]) -> Vec<(Ctx, f64, Vec<f64>)> {
    let traj = setup.simulate(p).unwrap();
    assert!(traj.events.len() >= 3, "{} impacts", traj.events.len());
    let mut pts: Vec<(Ctx, f64, Vec<f64>)> = (0..3)
        .map(|i| {
            let e = &traj.events[i];
            (traj.event_ctx(i), e.t, e.before.y.clone())
        })
        .collect();
    let ctx = Ctx {
        mode: 0,
        t_lo: setup.t0(),
        t_hi: setup.t_end(),
    };
    pts.push((ctx, 2.7, vec![p[5], 1.9, 0.3, -0.8]));
    pts.push((ctx, 0.35, vec![p[5], -0.6, 1.1, 0.2]));
    pts
}

#[test]
fn jump_matches_the_seed_second_order_formulas() {
    let sys = ImpactPendulum;
    let p = ImpactPendulum::default_params();
    let setup = Setup::new(&sys, 0.0, 8.0, None, vec![objective()]);
    assert_eq!(setup.n(), 4, "state (q, v) and two quadratures");
    let nth = setup.ntheta();
    let mut rng = Rng(2024);
    let mut worst = (0.0f64, 0.0f64);
    for (ctx, t, xm) in points(&setup, &p) {
        let jump = Jump::at(&setup, &ctx, 0, t, &xm, &p, false).unwrap();
        for _ in 0..3 {
            let s_minus = random_matrix(&mut rng, 4, nth);
            let (tau, s_plus, f_minus) = seed_jump(&p, t, xm[0], xm[1], &s_minus);
            let e_tau = vec_rel(&jump.tau(&s_minus), &tau);
            let e_s = rows_rel(&jump.forward(&s_minus), &s_plus);
            worst = (worst.0.max(e_tau), worst.1.max(e_s));
            assert!(e_tau <= TOL, "t = {t}: τ differs by {e_tau:e}");
            assert!(
                e_s <= TOL,
                "t = {t}: S⁺ differs by {e_s:e}\nlibrary {}\nseed {}",
                jump.forward(&s_minus),
                s_plus
            );
            assert!(vec_rel(&jump.f_minus, &f_minus) <= TOL);
        }
        // the reset value itself
        let v_plus = -p[4] * rest(t, xm[0]) * xm[1];
        assert!((jump.x_plus[1] - v_plus).abs() <= TOL * v_plus.abs());
        assert_eq!(jump.x_plus[0], xm[0]);
        assert_eq!(&jump.x_plus.as_slice()[2..], &xm[2..], "z⁺ = z⁻");
    }
    println!(
        "seed form: worst τ difference {:e}, worst S⁺ difference {:e}",
        worst.0, worst.1
    );
}

/// A terminal event keeps the state and freezes it (f⁺ = 0), so that S⁺ is the
/// sensitivity of x(t_e(θ)): S⁺ = S⁻ + f⁻ τ.
#[test]
fn terminal_jump_is_the_sensitivity_at_the_event_time() {
    let sys = ImpactPendulum;
    let p = ImpactPendulum::default_params();
    let setup = Setup::new(&sys, 0.0, 8.0, None, vec![objective()]);
    let mut rng = Rng(99);
    for (ctx, t, xm) in points(&setup, &p) {
        let jump = Jump::at(&setup, &ctx, 0, t, &xm, &p, true).unwrap();
        let s_minus = random_matrix(&mut rng, 4, setup.ntheta());
        let (tau, _, f_minus) = seed_jump(&p, t, xm[0], xm[1], &s_minus);
        let expect = &s_minus + &f_minus * tau.transpose();
        let e = rows_rel(&jump.forward(&s_minus), &expect);
        assert!(e <= TOL, "t = {t}: terminal S⁺ differs by {e:e}");
    }
}

/// The invariant of theory §4 across an event: for any λ⁺, μ⁺ and S⁻,
/// (λ⁻)ᵀS⁻ + (μ⁻)ᵀ = (λ⁺)ᵀS⁺ + (μ⁺)ᵀ + dE/dθ, with (λ⁻, μ⁻) from `Jump::adjoint` with the
/// event cost's `c` (`Jump::event_cost`), S⁺ from the seed formulas and dE/dθ = E_t τ +
/// E_X (S⁻ + f⁻τ) + E_θ by hand (and `event_cost_forward` equal to it). The event cost is
/// both a random gradient and the real terms of the objective (`term_jacobian`).
#[test]
fn adjoint_jump_is_the_transpose() {
    let sys = ImpactPendulum;
    let p = ImpactPendulum::default_params();
    let setup = Setup::new(&sys, 0.0, 8.0, None, vec![objective()]);
    let n = setup.n();
    let nth = setup.ntheta();
    let mut rng = Rng(31337);
    let mut worst = 0.0f64;
    for (ctx, t, xm) in points(&setup, &p) {
        let jump = Jump::at(&setup, &ctx, 0, t, &xm, &p, false).unwrap();
        let mut costs: Vec<Option<ScalarJac>> = vec![None];
        costs.push(Some(ScalarJac {
            value: rng.uniform(-1.0, 1.0),
            t: rng.uniform(-2.0, 2.0),
            x: random_vector(&mut rng, n),
            theta: random_vector(&mut rng, nth),
        }));
        let mut sum: Option<ScalarJac> = None;
        for term in &objective().terms[2..] {
            let tj = term_jacobian(&setup, term, &ctx, t, &xm, &p, false).unwrap();
            sum = Some(match sum {
                None => tj,
                Some(s) => ScalarJac {
                    value: s.value + tj.value,
                    t: s.t + tj.t,
                    x: s.x + tj.x,
                    theta: s.theta + tj.theta,
                },
            });
        }
        let real = sum.unwrap();
        assert!(
            real.t != 0.0 && real.x.amax() > 0.0,
            "the real event cost depends on t and X"
        );
        costs.push(Some(real));
        for e in &costs {
            let lam_plus = random_vector(&mut rng, n);
            let mu_plus = random_vector(&mut rng, nth);
            let s_minus = random_matrix(&mut rng, n, nth);
            let (tau, s_plus, f_minus) = seed_jump(&p, t, xm[0], xm[1], &s_minus);
            let c = e.as_ref().map(|e| jump.event_cost(e));
            let (lam_minus, mu_minus) = jump.adjoint(&lam_plus, &mu_plus, c.as_ref());
            let before = s_minus.transpose() * &lam_minus + &mu_minus;
            let mut after = s_plus.transpose() * &lam_plus + &mu_plus;
            if let Some(e) = e {
                let de = &tau * (e.t + e.x.dot(&f_minus)) + s_minus.transpose() * &e.x + &e.theta;
                let lib = jump.event_cost_forward(e, &s_minus);
                assert!(vec_rel(&lib, &de) <= TOL, "event_cost_forward differs");
                after += de;
            }
            let r = vec_rel(&before, &after);
            worst = worst.max(r);
            assert!(r <= TOL, "t = {t}: invariant broken by {r:e}");
        }
    }
    println!("adjoint transpose identity: worst relative difference {worst:e}");
}
