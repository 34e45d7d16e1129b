//! The vertical-plane biped (reference-models.md §3; seed 003 §3.2): geometry, events of the
//! symmetric and asymmetric drops, the saltation difference (3.9) at the double touchdown,
//! exact Jacobians, energy.

use crate::common;

use common::assert_within;
use hybridopt::cost::{Objective, Quantity, Term};
use hybridopt::model::{
    flow_jacobian, guard_jacobian, initial_jacobian, outputs_jacobian, HybridSystem,
};
use hybridopt::sensitivity::simultaneous::simultaneous_events;
use hybridopt::setup::Setup;
use hybridopt::systems::{Biped, BipedConfig};
use hybridopt::testing::{
    G_LIFT1, G_LIFT2, G_TOUCH1, G_TOUCH2, MODE_BOTH, MODE_FOOT1, MODE_FOOT2, MODE_NONE, P_BETA,
    P_BETA_S, P_THETA0,
};
use nalgebra::DMatrix;

const T_END: f64 = 0.5;

fn setup(sys: &Biped, objectives: Vec<Objective>) -> Setup<'_, Biped> {
    let mut s = Setup::new(sys, 0.0, T_END, None, objectives);
    s = s.to_builder().tolerances(1e-11, 1e-11).build();
    s
}

/// Free fall from rest at y0 = 1 down to y = h: t = sqrt(2 (1 − h) / g).
fn touchdown_time(sys: &Biped) -> f64 {
    let h = sys.symmetric_touchdown_height();
    (2.0 * (1.0 - h) / sys.config().gravity).sqrt()
}

#[test]
fn symmetric_touchdown_height() {
    let sys = Biped::default();
    let h = sys.symmetric_touchdown_height();
    // the reference quotes h to six digits (rounding ±5e-7); measured 3.9e-7: 1e-6 is
    // the reference's resolution
    assert_within("h vs 0.228553", (h - 0.228553).abs(), 1e-6);
    let [a1, a2] = sys.penetrations(&[0.0, h, 0.0]);
    // structural (measured 0)
    assert_within("penetrations at h", a1.abs().max(a2.abs()), 1e-15);
    // the feet are where the ground is: y_foot = −x_foot²
    for [fx, fy] in sys.foot_positions(&[0.0, h, 0.0]) {
        // structural (measured 0)
        assert_within("foot on the ground", (fy + fx * fx).abs(), 1e-15);
    }
    // foot 1 is on the right, foot 2 on the left
    let [f1, f2] = sys.foot_positions(&[0.0, h, 0.0]);
    assert!(f1[0] > 0.0 && f2[0] < 0.0);
}

#[test]
fn symmetric_drop_has_one_simultaneous_touchdown() {
    let sys = Biped::default();
    let s = setup(&sys, vec![]);
    let th = Biped::default_params();
    let tr = s.simulate(&th).unwrap();
    assert_eq!(tr.events.len(), 2, "events: {:?}", tr.events.len());
    let (e0, e1) = (&tr.events[0], &tr.events[1]);
    assert_eq!(e0.group, e1.group);
    assert_eq!((e0.guard, e1.guard), (G_TOUCH1, G_TOUCH2));
    assert_eq!(
        (e0.before.mode, e0.after.mode, e1.after.mode),
        (MODE_NONE, MODE_FOOT1, MODE_BOTH)
    );
    let t_td = touchdown_time(&sys);
    // free fall: measured 1.7e-16 (2026-12-02; was 1e-9), margin 30×
    assert_within("touchdown time vs closed form", (e0.t - t_td).abs(), 5e-15);
    assert_eq!(e0.t, e1.t);
    // measured 2.8e-17 (2026-12-02; was 1e-9), margin 36×
    assert_within(
        "touchdown height",
        (e0.before.y[1] - sys.symmetric_touchdown_height()).abs(),
        1e-15,
    );
    assert_eq!(tr.mode_final, MODE_BOTH);
    let groups = simultaneous_events(&s, &tr, &th).unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].guards, vec![G_TOUCH1, G_TOUCH2]);
    assert_eq!(groups[0].mode_after, MODE_BOTH);
    assert!(groups[0].identity_resets && groups[0].corner.is_some());
}

#[test]
fn asymmetric_drop_has_ordered_touchdowns() {
    let sys = Biped::default();
    let s = setup(&sys, vec![]);
    let mut th = Biped::default_params();
    th[P_THETA0] = 0.05;
    let tr = s.simulate(&th).unwrap();
    assert!(tr.events.len() >= 2);
    // tilted counter-clockwise: foot 2 (left) is lower and touches first
    let (e0, e1) = (&tr.events[0], &tr.events[1]);
    assert_eq!((e0.guard, e1.guard), (G_TOUCH2, G_TOUCH1));
    assert_eq!((e0.after.mode, e1.after.mode), (MODE_FOOT2, MODE_BOTH));
    assert_ne!(e0.group, e1.group);
    // not a tolerance: a lower bound separating ordered touchdowns from simultaneous ones
    // (the simultaneous check below uses its own 1e-10)
    assert!(e1.t - e0.t > 1e-3, "dt = {}", e1.t - e0.t);
    assert!(simultaneous_events(&s, &tr, &th).unwrap().is_empty());
    // and the mirror image
    th[P_THETA0] = -0.05;
    let tr = s.simulate(&th).unwrap();
    assert_eq!(
        (tr.events[0].guard, tr.events[1].guard),
        (G_TOUCH1, G_TOUCH2)
    );
}

/// The ẏ row of M(foot 1 first) − M(foot 2 first), reference-models.md §3 (3.9).
fn expected_row(cf: &BipedConfig, beta: f64, beta_s: f64) -> [f64; 6] {
    let (l, psi, m) = (cf.leg_length, cf.leg_angle, cf.mass);
    let d = beta - beta_s;
    [
        8.0 * l * d * psi.cos() / m,
        0.0,
        4.0 * l * d * (l * (2.0 * psi).sin() + psi.cos()) / m,
        0.0,
        0.0,
        0.0,
    ]
}

/// M(foot 1 first) − M(foot 2 first) at the symmetric touchdown, from the pieces.
fn saltation_difference(sys: &Biped, beta: f64, beta_s: f64) -> DMatrix<f64> {
    let s = setup(sys, vec![]);
    let mut th = Biped::default_params();
    th[P_BETA] = beta;
    th[P_BETA_S] = beta_s;
    let tr = s.simulate(&th).unwrap();
    let groups = simultaneous_events(&s, &tr, &th).unwrap();
    assert_eq!(groups.len(), 1);
    let g = &groups[0];
    assert_eq!(g.pieces.len(), 2);
    let first1 = g.piece_by_guards(&[G_TOUCH1, G_TOUCH2]).unwrap();
    let first2 = g.piece_by_guards(&[G_TOUCH2, G_TOUCH1]).unwrap();
    assert_eq!(first1.modes, vec![MODE_FOOT1, MODE_BOTH]);
    assert_eq!(first2.modes, vec![MODE_FOOT2, MODE_BOTH]);
    // the parameter parts agree (the guards do not depend on θ)
    // structural (measured 0; was 1e-12)
    assert_within(
        "pieces' θ parts",
        (&first1.saltation_theta - &first2.saltation_theta).amax(),
        1e-15,
    );
    let spread = g.max_piece_difference();
    let want = expected_row(sys.config(), beta, beta_s)
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    // measured 2.2e-16 (2026-12-02; was 1e-10), margin 45×
    assert_within("spread vs (3.9)", (spread - want).abs(), 1e-14);
    &first1.saltation - &first2.saltation
}

#[test]
fn saltation_difference_3_9() {
    let sys = Biped::default();
    for (beta, beta_s) in [(1.0, 0.5), (2.0, 0.3), (0.7, 1.1)] {
        let d = saltation_difference(&sys, beta, beta_s);
        let want = expected_row(sys.config(), beta, beta_s);
        println!(
            "β = {beta}, β_s = {beta_s}: ẏ row of the difference {:?}, (3.9) {want:?}",
            d.row(4).iter().collect::<Vec<_>>()
        );
        let mut worst = 0.0f64;
        for r in 0..6 {
            for c in 0..6 {
                let w = if r == 4 { want[c] } else { 0.0 };
                worst = worst.max((d[(r, c)] - w).abs());
            }
        }
        println!("  largest deviation from (3.9): {worst:e}");
        // measured 2.2e-16 (2026-12-02; was 1e-10), margin 45×
        assert_within("deviation from (3.9)", worst, 1e-14);
    }
    // with the defaults (ℓ = 0.5, ψ = π/4, m = 1, β = 1, β_s = 0.5) the row is
    // [√2, 0, 1/2 + √2/2, 0, 0, 0]
    let d = saltation_difference(&sys, 1.0, 0.5);
    let r2 = std::f64::consts::SQRT_2;
    // measured 4.4e-16 (2026-12-02; was 1e-10), margin 23×
    assert_within("ẏ row entry 0 vs √2", (d[(4, 0)] - r2).abs(), 1e-14);
    assert_within("ẏ row entry 2", (d[(4, 2)] - (0.5 + r2 / 2.0)).abs(), 1e-14);
}

#[test]
fn saltations_commute_when_damping_is_equal() {
    let sys = Biped::default();
    for beta in [1.0, 0.4] {
        let d = saltation_difference(&sys, beta, beta);
        println!("β = β_s = {beta}: ‖M12 − M21‖max = {:e}", d.amax());
        // measured 2.2e-16 (2026-12-02; was 1e-12), margin 23×
        assert_within("M12 − M21 at β = β_s", d.amax(), 5e-15);
    }
}

/// Central differences of a model function, column j of the Jacobian w.r.t. a vector.
fn fd_columns(f: &dyn Fn(&[f64]) -> Vec<f64>, at: &[f64], h: f64) -> DMatrix<f64> {
    let m = f(at).len();
    let mut out = DMatrix::zeros(m, at.len());
    for j in 0..at.len() {
        let mut a = at.to_vec();
        let mut b = at.to_vec();
        a[j] += h;
        b[j] -= h;
        let (fa, fb) = (f(&a), f(&b));
        for i in 0..m {
            out[(i, j)] = (fa[i] - fb[i]) / (2.0 * h);
        }
    }
    out
}

fn close(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64, what: &str) {
    let scale = 1.0 + b.amax();
    let d = (a - b).amax();
    println!("measured {what}: {:.2e}", d / scale);
    assert!(
        d <= tol * scale,
        "{what}: exact vs FD differ by {d:e}\n{a}\n{b}"
    );
}

#[test]
fn exact_jacobians_match_central_differences() {
    let sys = Biped::default();
    let p = vec![1.3, 0.6, 1.7, 0.1, 0.2, 0.3, 0.4, -1.2, 0.5];
    let x = vec![0.05, 0.15, 0.12, 0.3, -1.5, 0.7];
    let h = 1e-6;
    // measured 2.7e-10 (flow_x; 2026-12-02; was 1e-7), margin 19×
    let tol = 5e-9;
    for mode in [MODE_NONE, MODE_FOOT1, MODE_FOOT2, MODE_BOTH] {
        let j = flow_jacobian(&sys, 6, mode, 0.0, &x, &[], &p).unwrap();
        let fx = |xv: &[f64]| {
            let mut d = vec![0.0; 6];
            sys.flow(mode, 0.0, xv, &[], &p, &mut d).unwrap();
            d
        };
        let fp = |pv: &[f64]| {
            let mut d = vec![0.0; 6];
            sys.flow(mode, 0.0, &x, &[], pv, &mut d).unwrap();
            d
        };
        close(&j.x, &fd_columns(&fx, &x, h), tol, "flow_x");
        close(&j.p, &fd_columns(&fp, &p, h), tol, "flow_p");
        let o = outputs_jacobian(&sys, 13, mode, 0.0, &x, &[], &p).unwrap();
        let ox = |xv: &[f64]| {
            let mut d = vec![0.0; 13];
            sys.outputs(mode, 0.0, xv, &[], &p, &mut d).unwrap();
            d
        };
        let op = |pv: &[f64]| {
            let mut d = vec![0.0; 13];
            sys.outputs(mode, 0.0, &x, &[], pv, &mut d).unwrap();
            d
        };
        close(&o.x, &fd_columns(&ox, &x, h), tol, "outputs_x");
        close(&o.p, &fd_columns(&op, &p, h), tol, "outputs_p");
        for k in [G_TOUCH1, G_LIFT1, G_TOUCH2, G_LIFT2] {
            let g = guard_jacobian(&sys, mode, k, 0.0, &x, &[], &p).unwrap();
            let gx = |xv: &[f64]| vec![sys.guard(mode, k, 0.0, xv, &[], &p)];
            close(&g.x, &fd_columns(&gx, &x, h), tol, "guard_x");
            assert!(g.p.amax() == 0.0 && g.t[0] == 0.0);
        }
    }
    let (x0, dx0) = initial_jacobian(&sys, 6, &p).unwrap();
    assert_eq!(x0.as_slice(), &p[3..9]);
    let ix = |pv: &[f64]| sys.initial_state(pv).unwrap();
    close(&dx0, &fd_columns(&ix, &p, h), tol, "initial_p");
}

#[test]
fn contact_force_uses_the_penetration_gradient() {
    // independent check of the hand-written ∇a_j: rebuild q̈ from the guards' exact gradients
    let sys = Biped::default();
    let p = vec![1.3, 0.6, 1.7, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
    let x = vec![0.05, 0.15, 0.12, 0.3, -1.5, 0.7];
    let cf = *sys.config();
    for mode in [MODE_FOOT1, MODE_FOOT2, MODE_BOTH] {
        let mut f = [0.0, -cf.mass * cf.gravity, 0.0];
        let beta = if mode == MODE_BOTH { p[0] } else { p[1] };
        for (j, k) in [G_TOUCH1, G_TOUCH2].into_iter().enumerate() {
            if mode & (1 << j) == 0 {
                continue;
            }
            let g = guard_jacobian(&sys, mode, k, 0.0, &x, &[], &p).unwrap();
            let grad = [g.x[(0, 0)], g.x[(0, 1)], g.x[(0, 2)]];
            let rate = grad[0] * x[3] + grad[1] * x[4] + grad[2] * x[5];
            let s = p[2] * g.value[0] + beta * rate;
            for i in 0..3 {
                f[i] -= s * grad[i];
            }
        }
        let mut dx = vec![0.0; 6];
        sys.flow(mode, 0.0, &x, &[], &p, &mut dx).unwrap();
        let want = [
            x[3],
            x[4],
            x[5],
            f[0] / cf.mass,
            f[1] / cf.mass,
            f[2] / cf.inertia,
        ];
        for i in 0..6 {
            // structural: the same formula, measured 0 (was 1e-13)
            assert_within(
                &format!("flow mode {mode} component {i}"),
                (dx[i] - want[i]).abs(),
                1e-15,
            );
        }
    }
}

#[test]
fn energy_is_conserved_in_flight_and_dissipated_in_contact() {
    let sys = Biped::default();
    let obj = Objective::new(
        "e",
        vec![Term::plain(Quantity::Terminal { output: 12 }, 1.0)],
    );
    let s = setup(&sys, vec![obj]);
    let mut th = Biped::default_params();
    th[P_THETA0] = 0.05;
    th[6] = 0.2; // ẋ0
    th[8] = -0.3; // θ̇0
    let tr = s.simulate(&th).unwrap();
    let t_first = tr.events[0].t;
    let mut e_prev = f64::INFINITY;
    let mut e0 = None;
    let (mut w_sum, mut w_drift, mut w_rise) = (0.0f64, 0.0f64, f64::NEG_INFINITY);
    for (t, si, x) in tr.samples(2) {
        let seg = &tr.segments[si];
        let mut y = vec![0.0; 13];
        sys.outputs(seg.mode, t, &x[..6], &[], &th, &mut y).unwrap();
        let e = y[12];
        w_sum = w_sum.max((y[10] + y[11] - e).abs());
        // structural: the total is the sum (measured 0)
        assert!((y[10] + y[11] - e).abs() < 1e-14);
        let e0v = *e0.get_or_insert(e);
        if t < t_first {
            w_drift = w_drift.max((e - e0v).abs());
            // measured 1.8e-15 (2026-12-02; was 1e-8), margin 28×
            assert!((e - e0v).abs() < 5e-14, "flight energy drift {:e}", e - e0v);
        } else {
            w_rise = w_rise.max(e - e_prev);
            // round-off only: the largest rise measured 1.8e-15 (was 1e-8), margin 28×
            assert!(
                e <= e_prev + 5e-14,
                "energy rose at t = {t}: {e} > {e_prev}"
            );
        }
        e_prev = e;
    }
    println!(
        "measured energy: sum {w_sum:e}, drift {w_drift:e}, rise {w_rise:e}, dissipated {:e}",
        e0.unwrap() - e_prev
    );
    // measured 3.18 J dissipated (2026-12-02; was > 1e-3): at least a third of it
    assert!(e_prev < e0.unwrap() - 1.0, "contact must dissipate");
}

#[test]
fn config_defaults_and_unknown_keys() {
    let c: BipedConfig = toml::from_str("mass = 2.0").unwrap();
    assert_eq!(c.mass, 2.0);
    assert_eq!(c.inertia, 1.0);
    assert_eq!(c.gravity, 9.8);
    assert_eq!(c.leg_length, 0.5);
    assert_eq!(c.leg_angle, std::f64::consts::FRAC_PI_4);
    assert!(toml::from_str::<BipedConfig>("masss = 2.0").is_err());
    assert!(Biped::new(BipedConfig {
        mass: -1.0,
        ..BipedConfig::default()
    })
    .is_err());
    let sys = Biped::default();
    assert_eq!(sys.dims().params[..3], ["beta", "beta_s", "kappa"]);
    assert_eq!(sys.dims().modes, vec!["none", "foot1", "foot2", "both"]);
    // the start mode is the set of feet below the ground
    let mut p = Biped::default_params();
    assert_eq!(sys.initial_mode(&p), MODE_NONE);
    p[4] = 0.2;
    assert_eq!(sys.initial_mode(&p), MODE_BOTH);
}
