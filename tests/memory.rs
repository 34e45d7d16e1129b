//! Systems with memory (reference-models §9, seed 001 §4, theory.md §6): the steel coupon
//! (Menegotto–Pinto) and the hysteretic oscillator, through their shipped problems.
//!
//! * adjoint vs direct vs central FD on every problem at rtol = atol = 1e-10;
//! * the steel coupon against a closed-form oracle: the reversal times are the roots of
//!   ε̇(t) (independent of the material), σ between them an explicit function of t, so ψ
//!   and dψ/dθ follow from Gauss–Legendre quadrature per segment in dual numbers (written
//!   here from reference-models §9, independently of `src/systems/steel_coupon.rs`);
//! * the memory transfer: cR1 and cR2 enter only through the memory update at reversals
//!   (R), so their gradient is the memory's adjoint transfer alone;
//! * identification (L-BFGS recovers the reference parameters) and design (both solvers).

use crate::common;

use hybridopt::model::Scalar;
use hybridopt::optimize::{optimize, Outcome};
use hybridopt::problem::{Problem, SolverKind};
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::HybridSystem;
use num_dual::Dual64;
use std::f64::consts::TAU;
use std::path::Path;

fn problem(name: &str) -> Problem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("problems/{name}.toml"));
    Problem::load(&path).unwrap()
}

/// ψ (objective 0) at θ.
fn psi<S: HybridSystem>(setup: &Setup<'_, S>, th: &[f64]) -> f64 {
    let tr = setup.simulate(th).unwrap();
    setup.objective_values(&tr, th).unwrap()[0]
}

/// Central FD, 4th order, with steps relative to each parameter (`h_j = rel_j·|θ_j|`):
/// the parameters span 0.002 (ε_a) to 200000 (E), so a step relative to max(1, |θ_j|)
/// would be 5% of ε_a.
fn fd_relative<S: HybridSystem>(setup: &Setup<'_, S>, th: &[f64], rel: &[f64]) -> Vec<f64> {
    (0..th.len())
        .map(|j| {
            let h = rel[j] * th[j].abs().max(1e-3);
            let at = |s: f64| {
                let mut t = th.to_vec();
                t[j] += s * h;
                psi(setup, &t)
            };
            (-at(2.0) + 8.0 * at(1.0) - 8.0 * at(-1.0) + at(-2.0)) / (12.0 * h)
        })
        .collect()
}

#[test]
fn adjoint_direct_and_fd_agree_on_every_memory_problem() {
    // (problem, direct tol, fd tol): see the measured values below
    for name in ["steel_identify", "hysteretic_design", "hysteretic_identify"] {
        // the issue's tolerance (hysteretic_identify's file runs at 1e-12 for its
        // identification; the witnesses are checked at 1e-10 like the others)
        let mut p = problem(name);
        (p.solver.rtol, p.solver.atol) = (1e-10, 1e-10);
        let s = p.setup().unwrap();
        let th = p.theta_values();
        let adj = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
        let dir = evaluate(&s, &th, GradientMethod::Direct).unwrap();
        // steps 1e-3 relative (1e-4 for the oscillator); FD's noise is ε_sim/h, so its runs use tolerances 1e-12
        // (the adjoint and direct above run at the file's 1e-10); the coupon's strain
        // amplitudes ε_a, ε_b move every reversal time, so their perturbed runs differ in
        // events and steps: steps 1e-2 for them (truncation O(h⁴) stays below 1e-8)
        let names = s.theta_names();
        let rel: Vec<f64> = names
            .iter()
            .map(|n| match (name, n.starts_with("eps_")) {
                ("steel_identify", true) => 1e-2,
                ("steel_identify", false) => 1e-3,
                // the oscillator's parameters are O(1) and its horizon 30 s long (Ω t up
                // to 36): truncation needs the smaller step
                _ => 1e-4,
            })
            .collect();
        let mut tight = p.clone();
        (tight.solver.rtol, tight.solver.atol) = (1e-12, 1e-12);
        let s_fd = tight.setup().unwrap();
        let fd = fd_relative(&s_fd, &th, &rel);
        assert!(adj.trajectory.events.len() >= 8, "{name}: reversals");
        // measured (2026-12-02): direct 3.3e-10 / 6.4e-10 / 5.9e-10, FD 3.1e-8 / 4.9e-9 /
        // 8.3e-10 (steel, design, identify); the bounds were the issue's 1e-7 for all (3×
        // the steel coupon's FD, 300× the others'): now each 23–33× its own value. The
        // coupon's FD error is the quotient's own (steps 1e-2 on ε_a, ε_b, which move every
        // reversal time), not the adjoint's: the direct pass agrees with it to 3.3e-10.
        let (tol_direct, tol_fd, tol_psi) = match name {
            "steel_identify" => (1e-8, 8e-7, 2.5e-9),
            "hysteretic_design" => (1.5e-8, 1.2e-7, 8e-10),
            _ => (1.5e-8, 2e-8, 3e-8),
        };
        common::assert_close(
            &format!("{name}: direct vs adjoint"),
            &dir.gradients[0],
            &adj.gradients[0],
            tol_direct,
            1e-6,
        );
        common::assert_close(
            &format!("{name}: fd vs adjoint"),
            &fd,
            &adj.gradients[0],
            tol_fd,
            1e-6,
        );
        let rel = (dir.values[0] - adj.values[0]).abs() / adj.values[0].abs();
        // the direct run's steps also control its sensitivities' error: ψ differs by the
        // integration error, measured 9.6e-11 / 3.0e-11 / 1.3e-9 (2026-12-02; the bound was
        // 1e-8 for all): tol_psi, margins 26×, 27×, 23×
        common::assert_within(&format!("{name}: ψ direct vs adjoint run"), rel, tol_psi);
    }
}

// ---------------------------------------------------------------------------------------
// The steel oracle (reference-models §9), generic over the dual number.

/// `ε(t) = (ε_a + ε_b t) sin(2π t)` and its first two derivatives; p = (…, ε_a, ε_b).
fn strain<D: Scalar>(t: D, p: &[D]) -> [D; 3] {
    let a = p[6] + p[7] * t;
    let (s, c) = ((t * TAU).sin(), (t * TAU).cos());
    [
        a * s,
        p[7] * s + a * c * TAU,
        p[7] * c * (2.0 * TAU) - a * s * (TAU * TAU),
    ]
}

/// σ on a branch with memory `(ε_r, σ_r, ε_0, σ_0, R)`; `ε* = 0` is the reversal point.
fn oracle_stress<D: Scalar>(eps: D, m: &[D; 5], b: D) -> D {
    let es = (eps - m[0]) / (m[2] - m[0]);
    let star = if es.re() <= 0.0 {
        es
    } else {
        b * es + (-b + 1.0) * es / (es.powd(m[4]) + 1.0).powd(m[4].recip())
    };
    m[1] + star * (m[3] - m[1])
}

/// The roots of ε̇ in (0, t_end) at real parameters (bisection on a fine grid, then
/// Newton to the last bit).
fn reversal_times(p: &[f64], t_end: f64) -> Vec<f64> {
    let rate = |t: f64| strain(t, p)[1];
    let n = 40_000;
    let mut out = Vec::new();
    for i in 0..n {
        let (mut a, mut b) = (
            t_end * i as f64 / n as f64,
            t_end * (i + 1) as f64 / n as f64,
        );
        if i == 0 || rate(a).signum() == rate(b).signum() {
            continue;
        }
        for _ in 0..60 {
            let m = 0.5 * (a + b);
            if rate(a).signum() == rate(m).signum() {
                a = m
            } else {
                b = m
            }
        }
        let mut t = 0.5 * (a + b);
        for _ in 0..3 {
            t -= rate(t) / strain(t, p)[2];
        }
        out.push(t);
    }
    out
}

/// The branches `(t_lo, t_hi, memory)` over [0, t_end] with the reversal times as duals:
/// one Newton correction `t − ε̇(t; p)/ε̈(t)` carries dt/dp exactly.
fn oracle_branches<D: Scalar>(p: &[D], t_end: f64) -> Vec<(D, D, [D; 5])> {
    let pr: Vec<f64> = p.iter().map(|v| v.re()).collect();
    let (e, sy, b, r0, cr1, cr2) = (p[0], p[1], p[2], p[3], p[4], p[5]);
    let ey = sy / e;
    let mut m = [D::zero(), D::zero(), ey, sy, r0];
    let mut s = 1.0;
    let mut out = Vec::new();
    let mut t_lo = D::zero();
    for tr in reversal_times(&pr, t_end) {
        let t = D::from(tr) - strain(D::from(tr), p)[1] / strain(tr, &pr)[2];
        out.push((t_lo, t, m));
        let er = strain(t, p)[0];
        let sr = oracle_stress(er, &m, b);
        s = -s;
        let e0 = (sy * (-b + 1.0) * s - sr + e * er) / (e * (-b + 1.0));
        let s0 = sr + e * (e0 - er);
        let xi = (er - m[2]).abs() / ey;
        let r = r0 * (-(cr1 * xi / (cr2 + xi)) + 1.0);
        m = [er, sr, e0, s0, r];
        t_lo = t;
    }
    out.push((t_lo, D::from(t_end), m));
    out
}

/// Gauss–Legendre nodes and weights on [−1, 1] (Newton on P_n).
fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            let mut dp = 0.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                    p0 = p1;
                    p1 = p2;
                }
                dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-16 {
                    break;
                }
            }
            (x, 2.0 / ((1.0 - x * x) * dp * dp))
        })
        .collect()
}

/// ψ = ∫₀^T w (σ(t; p) − σ(t; p_ref))² dt by composite Gauss–Legendre on every branch
/// (panels graded towards the reversal, where σ has its weakest smoothness).
fn oracle_psi<D: Scalar>(p: &[D], p_ref: &[f64], w: f64, t_end: f64, panels: usize) -> D {
    let branches = oracle_branches(p, t_end);
    let reference = oracle_branches(p_ref, t_end);
    let rule = gauss_legendre(24);
    let mut sum = D::zero();
    for ((lo, hi, m), (_, _, mr)) in branches.iter().zip(&reference) {
        let mr: [D; 5] = mr.map(D::from);
        let pref: Vec<D> = p_ref.iter().map(|&v| D::from(v)).collect();
        for j in 0..panels {
            let u0 = (j as f64 / panels as f64).powi(2);
            let u1 = ((j + 1) as f64 / panels as f64).powi(2);
            let (a, b) = (*lo + (*hi - *lo) * u0, *lo + (*hi - *lo) * u1);
            for &(x, wq) in &rule {
                let t = (a + b) * 0.5 + (b - a) * (0.5 * x);
                let sig = oracle_stress(strain(t, p)[0], m, p[2]);
                let sig_ref = oracle_stress(strain(t, &pref)[0], &mr, pref[2]);
                let d = sig - sig_ref;
                sum += d * d * (b - a) * (0.5 * wq * w);
            }
        }
    }
    sum
}

/// Graded panels per branch, 24 Gauss–Legendre nodes each.
const PANELS: usize = 48;

/// The oracle's ψ and gradient at θ (one dual pass per parameter).
fn oracle(th: &[f64], th_ref: &[f64], w: f64, t_end: f64) -> (f64, Vec<f64>) {
    let value = oracle_psi(th, th_ref, w, t_end, PANELS);
    let grad = (0..th.len())
        .map(|j| {
            let p: Vec<Dual64> = th
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    if i == j {
                        Dual64::from(v).derivative()
                    } else {
                        Dual64::from(v)
                    }
                })
                .collect();
            oracle_psi(&p, th_ref, w, t_end, PANELS).eps
        })
        .collect();
    (value, grad)
}

/// steel_identify's reference parameters (its `[reference]` over its start values).
fn steel_reference(p: &Problem) -> Vec<f64> {
    let mut th = p.theta_values();
    let names = p.setup().unwrap().theta_names();
    for (k, v) in p.reference.as_ref().unwrap() {
        th[names.iter().position(|n| n == k).unwrap()] = *v;
    }
    th
}

/// ψ's weight: 1/σ_y² at the reference's σ_y = 420 MPa.
const STEEL_WEIGHT: f64 = 1.0 / (420.0 * 420.0);

#[test]
fn steel_reversals_are_the_roots_of_the_strain_rate_whatever_the_material() {
    let p = problem("steel_identify");
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let roots = reversal_times(&th, 4.0);
    assert_eq!(roots.len(), 8, "4 cycles, 8 reversals");
    for theta in [th.clone(), steel_reference(&p)] {
        let tr = s.simulate(&theta).unwrap();
        let times: Vec<f64> = tr.events.iter().map(|e| e.t).collect();
        assert_eq!(times.len(), 8);
        let worst = times
            .iter()
            .zip(&roots)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        // the event location's accuracy: measured 1.1e-15 (2026-12-02; bound was 1e-11),
        // margin 27×
        common::assert_within("steel reversal times vs roots of ε̇", worst, 3e-14);
        let guards: Vec<usize> = tr.events.iter().map(|e| e.guard).collect();
        assert_eq!(guards, [0, 1, 0, 1, 0, 1, 0, 1], "peak, valley, …");
    }
}

#[test]
fn steel_psi_and_gradient_match_the_closed_form_oracle() {
    let p = problem("steel_identify");
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let th_ref = steel_reference(&p);
    let (psi_o, grad_o) = oracle(&th, &th_ref, STEEL_WEIGHT, 4.0);
    // the oracle's own quadrature error: half the panels must agree to 1e-12
    let coarse = oracle_psi(&th, &th_ref, STEEL_WEIGHT, 4.0, PANELS / 2);
    common::assert_within(
        "oracle quadrature, 24 vs 48 panels",
        (coarse - psi_o).abs() / psi_o,
        1e-12,
    );
    let ev = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
    let rel = (ev.values[0] - psi_o).abs() / psi_o;
    println!("ψ = {} (oracle {psi_o})", ev.values[0]);
    // measured 1.2e-10 (2026-12-02; bound was 1e-8), margin 25×
    common::assert_within("steel ψ vs oracle", rel, 3e-9);
    // per component, floor 1e-6 of the largest: measured adjoint 3.3e-11 (2026-12-02) and
    // 5.7e-11 (2026-12-07, the mutants profile), direct 3.0e-10 (both bounds were 1e-8),
    // margins 26× (of the larger) and 27×
    common::assert_close(
        "steel adjoint vs oracle",
        &ev.gradients[0],
        &grad_o,
        1.5e-9,
        1e-6,
    );
    let dir = evaluate(&s, &th, GradientMethod::Direct).unwrap();
    common::assert_close(
        "steel direct vs oracle",
        &dir.gradients[0],
        &grad_o,
        8e-9,
        1e-6,
    );
}

#[test]
fn steel_memory_transfer_carries_the_gradient_of_the_memory_only_parameters() {
    // cR1 and cR2 appear only in the memory update R = R0 (1 − cR1 ξ/(cR2 + ξ)) at each
    // reversal: their gradient is exactly the memory's adjoint transfer (seed 001 (33):
    // what the memory states' adjoint collects over a branch is handed back at the
    // reversal that set them), with nothing from the flow or the guards.
    let p = problem("steel_identify");
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let th_ref = steel_reference(&p);
    let names = s.theta_names();
    let idx: Vec<usize> = ["cR1", "cR2"]
        .iter()
        .map(|n| names.iter().position(|m| m == n).unwrap())
        .collect();
    let (_, grad_o) = oracle(&th, &th_ref, STEEL_WEIGHT, 4.0);
    let adj = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
    let fd = fd_relative(&s, &th, &vec![1e-3; th.len()]);
    let pick = |g: &[f64]| idx.iter().map(|&i| g[i]).collect::<Vec<f64>>();
    let (a, o, f) = (pick(&adj.gradients[0]), pick(&grad_o), pick(&fd));
    println!("dψ/d(cR1, cR2): adjoint {a:?}, oracle {o:?}, fd {f:?}");
    // they matter: |dψ/dcR1| ≈ 4.7, |dψ/dcR2| ≈ 0.72 at the start values
    assert!(
        a.iter().all(|v| v.abs() > 0.1),
        "memory-only gradient {a:?}"
    );
    // measured: oracle 6.5e-12 (2026-12-02) and 1.1e-11 (2026-12-07, the mutants
    // profile), FD 1.7e-8 (bounds were 1e-8 and 1e-7), margins 27× (of the larger) and 24×
    common::assert_close("memory-only gradient vs oracle", &a, &o, 3e-10, 0.0);
    common::assert_close("memory-only gradient vs FD", &f, &a, 4e-7, 0.0);
    // and the first reversal's memory update, seen by the simulation: R after the first
    // peak is R0 (1 − cR1 ξ/(cR2 + ξ)) with ξ = |ε_r − ε_y|/ε_y
    let tr = s.simulate(&th).unwrap();
    let table = hybridopt::output::artifacts::trajectory_table(&s, &tr, &th).unwrap();
    let (t, r) = (table.column("t").unwrap(), table.column("R").unwrap());
    let e1 = tr.events[0].t;
    let i = t.iter().position(|&v| v > e1 + 1e-6).unwrap();
    let (e, sy, r0, cr1, cr2) = (th[0], th[1], th[3], th[4], th[5]);
    let ey = sy / e;
    let xi = (strain(e1, &th)[0] - ey).abs() / ey;
    let want = r0 * (1.0 - cr1 * xi / (cr2 + xi));
    common::assert_within(
        "R after the first reversal",
        (r[i] - want).abs() / want,
        1e-12,
    );
}

#[test]
fn hysteretic_start_at_rest_is_not_a_reversal() {
    let p = problem("hysteretic_identify");
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let tr = s.simulate(&th).unwrap();
    let first = &tr.events[0];
    // v = 0 at t = 0 (the guard starts at zero and is masked until it leaves it): the
    // first reversal is the first velocity maximum's return to zero, seconds later
    assert!(first.t > 1.0, "first reversal at {}", first.t);
    assert_eq!(first.guard, 0, "stop_up first");
    assert_eq!(tr.segments[0].mode, 0, "starts in `positive`");
    let guards: Vec<usize> = tr.events.iter().map(|e| e.guard).collect();
    let alternating = guards.iter().enumerate().all(|(i, &g)| g == i % 2);
    assert!(alternating, "reversals alternate: {guards:?}");
}

/// θ_final of an L-BFGS run on the problem file, and the largest relative error of the
/// optimized parameters against the reference.
fn identify(name: &str, tol: Option<f64>) -> f64 {
    let mut p = problem(name);
    if let Some(tol) = tol {
        p.solver.rtol = tol;
        p.solver.atol = tol;
    }
    assert_eq!(p.optimizer.solver, SolverKind::Lbfgs);
    let s = p.setup().unwrap();
    let r = optimize(&s, &p.theta, &p.optimizer, None).unwrap();
    assert!(r.outcome == Outcome::Converged, "{name}: {}", r.termination);
    let names = s.theta_names();
    let mut worst = 0.0f64;
    for (k, v) in p.reference.as_ref().unwrap() {
        let i = names.iter().position(|n| n == k).unwrap();
        let e = (r.theta_final[i] - v).abs() / v.abs();
        println!(
            "{name}: {k} = {} (reference {v}, relative {e:.1e})",
            r.theta_final[i]
        );
        worst = worst.max(e);
    }
    worst
}

#[test]
fn steel_identify_recovers_the_reference_material() {
    // measured 3.9e-9 (b) (2026-12-02; bound was 1e-6), margin 26×
    common::assert_within(
        "steel_identify parameters",
        identify("steel_identify", None),
        1e-7,
    );
}

#[test]
fn hysteretic_identify_recovers_the_reference_law() {
    // b is weakly identified: at rtol = atol = 1e-10 the cost's noise floor near the
    // optimum (~1e-10, ψ itself ~0) leaves L-BFGS at 3.1e-6 of the reference, so the
    // problem file runs at 1e-12, where it recovers the law to 3.0e-8 (b) (2026-12-02;
    // the committed results/hysteretic_identify: 2.97e-8, 19 iterations); bound 8e-7
    // (was 1e-6), margin 27×
    common::assert_within(
        "hysteretic_identify parameters",
        identify("hysteretic_identify", None),
        8e-7,
    );
}

#[test]
fn hysteretic_design_converges_with_both_solvers() {
    let p = problem("hysteretic_design");
    let s = p.setup().unwrap();
    let mut costs = Vec::new();
    for solver in [SolverKind::Lbfgs, SolverKind::Gd] {
        let mut settings = p.optimizer.clone();
        settings.solver = solver;
        let r = optimize(&s, &p.theta, &settings, None).unwrap();
        println!(
            "{}: ψ {} → {}, θ {:?}, {} iterations, |g| {:e}",
            solver.name(),
            r.initial_cost,
            r.final_cost,
            r.theta_final,
            r.iterations,
            r.final_grad_norm
        );
        assert!(
            r.outcome == Outcome::Converged,
            "{}: {}",
            solver.name(),
            r.termination
        );
        // ψ 13.19 → 11.59 at (c, f_y) ≈ (0.292, 0.453); a stationary point: measured |g|
        // 3.1e-10 (L-BFGS) and 1.8e-6 (GD) (2026-12-02)
        assert!(r.final_cost < 0.9 * r.initial_cost);
        assert!(r.final_grad_norm < 1e-4, "|g| {:e}", r.final_grad_norm);
        costs.push(r.final_cost);
    }
    // both reach the same optimum: measured gap 7.1e-15 relative
    let gap = (costs[0] - costs[1]).abs() / costs[0];
    common::assert_within("hysteretic_design L-BFGS vs GD optimum", gap, 2e-13);
}

#[test]
fn loops_are_read_from_the_plot_table_and_checked() {
    let p = problem("steel_identify");
    let s = p.setup().unwrap();
    let o = &s.dims().outputs;
    let (x, y) = p.plot_loops[0];
    assert_eq!((o[x].as_str(), o[y].as_str()), ("eps", "sigma"));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/steel_identify.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        r#"loops = [["eps", "sigma"]]"#,
        r#"loops = [["eps", "stress"]]"#,
    );
    let err = Problem::parse(&text, &path).unwrap_err().to_string();
    assert!(
        err.contains("stress") && err.contains("valid outputs"),
        "{err}"
    );
}
