//! The data cost (cost/data.rs): its gradient by the adjoint, the direct method, the dual
//! run and central differences; the residual Jacobian of the least-squares solver against
//! central differences of the residuals and against the adjoint gradient (ψ = ‖r‖², so
//! ∇ψ = 2Jᵀr); the rule for a sample at an event's instant; errors that name the file.

use crate::common::{assert_close, gradients_by, scratch};
use hybridopt::prelude::*;
use hybridopt::sensitivity::residuals;
use std::path::Path;

/// The ball with drag (e, c free) and a record of heights and velocities that it does not
/// fit (so every residual is far from zero and every term of the gradient counts), with a
/// sample at t0 and at t_end and velocities measured on every third sample only.
fn ball_problem(dir: &Path) -> Problem {
    let mut csv = String::from("t,y,v\n");
    for i in 0..=25 {
        let t = i as f64 * 0.1;
        let v = if i % 3 == 0 {
            format!("{:.6}", -0.5 * (2.0 * t).sin())
        } else {
            String::new()
        };
        csv += &format!("{t:.1},{:.6},{v}\n", 0.5 + 0.3 * (3.0 * t).cos());
    }
    std::fs::write(dir.join("ball.csv"), csv).unwrap();
    let text = r#"
name = "ball_data"
[system]
kind = "bouncing_ball"
[simulation]
t_end = 2.5
rtol = 1e-11
atol = 1e-11
[parameters]
e  = { value = 0.8, optimize = true, lower = 0.7, upper = 0.99 }
c  = { value = 0.1, optimize = true, lower = 0.0, upper = 0.6 }
[[cost]]
kind = "data"
file = "ball.csv"
sigma = { y = 0.1, v = 0.5 }
"#;
    Problem::parse(text, &dir.join("ball_data.toml")).unwrap()
}

/// Adjoint, direct, dual and FD agree on ψ_data's gradient through the ball's 5 impacts.
#[test]
fn data_gradient_has_three_witnesses() {
    let dir = scratch("data_cost", "witness", true);
    let p = ball_problem(&dir);
    let setup = p.setup().unwrap();
    let th = p.theta_values();
    let all = gradients_by(
        &setup,
        &th,
        &[
            GradientMethod::Adjoint,
            GradientMethod::Direct,
            GradientMethod::Dual,
            GradientMethod::Fd,
        ],
    );
    let adj = &all[0].2;
    // measured 3.8e-13 (direct), 5.4e-14 (dual), 4.6e-12 (FD, its own error estimate 2.4e-11)
    assert_close("direct vs adjoint", &all[1].2, adj, 1e-11, 1e-6);
    assert_close("dual vs adjoint", &all[2].2, adj, 1e-11, 1e-6);
    assert_close("fd vs adjoint", &all[3].2, adj, 3e-10, 1e-6);
}

/// The residuals' Jacobian from the direct pass: its columns against central differences
/// of the residuals, and 2Jᵀr against the adjoint gradient of ψ = ‖r‖².
#[test]
fn residual_jacobian_against_fd_and_the_adjoint() {
    let dir = scratch("data_cost", "jacobian", true);
    let p = ball_problem(&dir);
    let setup = p.setup().unwrap();
    let th = p.theta_values();
    let run = residuals(&setup, &th, true).unwrap();
    let j = run.jacobian.unwrap();
    // 26 heights and 9 velocities
    assert_eq!((j.nrows(), j.ncols()), (35, th.len()));
    let psi = evaluate(&setup, &th, GradientMethod::Adjoint).unwrap();
    let r2: f64 = run.r.iter().map(|v| v * v).sum();
    assert!(
        (r2 - psi.values[0]).abs() <= 1e-13 * r2,
        "{r2} vs {}",
        psi.values[0]
    );
    let grad: Vec<f64> = (2.0 * j.tr_mul(&run.r)).as_slice().to_vec();
    // measured 8.5e-13
    assert_close("2Jᵀr vs adjoint", &grad, &psi.gradients[0], 1e-11, 1e-6);
    for k in p.free_indices() {
        // the fourth-order stencil at h = 1e-3: truncation O(h⁴) and the runs' noise
        // (rtol 1e-11) divided by h both near 1e-8 of the column
        let h = 1e-3;
        let at = |s: f64| {
            let mut t = th.clone();
            t[k] += s * h;
            residuals(&setup, &t, false).unwrap().r
        };
        let fd = (8.0 * (at(1.0) - at(-1.0)) - (at(2.0) - at(-2.0))) / (12.0 * h);
        // measured 4.7e-10 (e), 4.3e-11 (c); bound 25× the worst (was 3e-8)
        assert_close(
            &format!("column {k} vs FD"),
            j.column(k).as_slice(),
            fd.as_slice(),
            1.2e-8,
            1e-6,
        );
    }
}

/// A sample at the instant of an event reads the state after it: a time-triggered jump
/// x⁺ = x + 1 at t = 0.5 of a constant state, sampled at 0.5 with d = 0, gives r = 1;
/// a sample just before gives 0.
#[test]
fn a_sample_at_an_event_reads_after_it() {
    let dir = scratch("data_cost", "instant", true);
    let text = r#"
name = "step"
[system]
kind = "custom"
states = ["x"]
parameters = ["a"]
initial = { x = "a" }
outputs = [{ name = "x", expr = "x" }]
[[system.modes]]
name = "m"
flow = { x = "0" }
guards = [{ name = "clock", expr = "t - 0.5", direction = "rising", reset = { x = "x + 1" } }]
[simulation]
t_end = 1.0
[parameters]
a = { value = 0.0, optimize = true }
[[cost]]
kind = "data"
file = "d.csv"
"#;
    for (csv, want) in [
        ("t,x\n0.5,0\n", 1.0),
        ("t,x\n0.4999,0\n", 0.0),
        ("t,x\n1.0,1\n", 0.0),
    ] {
        std::fs::write(dir.join("d.csv"), csv).unwrap();
        let p = Problem::parse(text, &dir.join("step.toml")).unwrap();
        let s = p.setup().unwrap();
        let r = residuals(&s, &p.theta_values(), true).unwrap();
        assert!((r.r[0] - want).abs() < 1e-12, "{csv:?}: r = {}", r.r[0]);
        // dr/da = 1 through the jump (Ξ = 1)
        let j = r.jacobian.unwrap();
        assert!(
            (j[(0, 0)] - 1.0).abs() < 1e-12,
            "{csv:?}: dr/da = {}",
            j[(0, 0)]
        );
    }
}

/// A bad data file fails at load with the file, the line and the column.
#[test]
fn a_bad_record_names_file_line_and_column() {
    let dir = scratch("data_cost", "bad", true);
    std::fs::write(dir.join("bad.csv"), "t,y\n0.1,1\n0.3,\n0.2,1\n").unwrap();
    let text = r#"
[system]
kind = "bouncing_ball"
[simulation]
t_end = 1.0
[[cost]]
kind = "data"
file = "bad.csv"
"#;
    let e = Problem::parse(text, &dir.join("p.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.csv:4, column `t`: t = 0.2 does not increase"),
        "{e}"
    );
    let e = Problem::parse(&text.replace("bad.csv", "missing.csv"), &dir.join("p.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("missing.csv") && e.contains("cannot read"),
        "{e}"
    );
}

/// A fit linear in its parameters through events, with estimate and covariance in closed
/// form: x' = b, x(0) = a, and the reset x⁺ = x − 1 whenever x reaches 2 (a sawtooth;
/// its saltation is the identity), so y(t_i) = a + b t_i − n_i with n_i the resets before
/// t_i. Noisy samples (σ = 0.01, seeded) away from the resets: the Gauss–Newton estimate
/// is the linear regression of d_i + n_i on (1, t_i), its covariance (XᵀX)⁻¹σ̂² with
/// σ̂² = ‖r‖²/(m − 2) (the residuals scaled by σ).
#[test]
fn a_linear_fit_through_resets_has_its_closed_form() {
    let dir = scratch("data_cost", "linear", true);
    let (a, b, sigma) = (0.3, 0.9, 0.01);
    let mut rng = crate::common::Rng(7);
    let mut gauss = || {
        let (u, v) = (rng.uniform(1e-12, 1.0), rng.uniform(0.0, 1.0));
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    // the resets of the truth at 1.889, 3.000, 4.111 s; samples every 0.1 s from 0.05; the
    // start (0.29, 0.91) has its resets in the same gaps between samples (1.879, 2.978,
    // 4.077 s): from (0.25, 0.95) the fit keeps other reset counts and stops at another
    // local minimum (a step of a residual whose sample changes sides of a reset)
    let resets = |t: f64| ((a + b * t - 1.0) / 1.0).floor().max(0.0);
    let (mut csv, mut xs, mut ys) = (String::from("t,x\n"), vec![], vec![]);
    for i in 0..45 {
        let t = 0.05 + 0.1 * i as f64;
        let n = resets(t);
        let d = a + b * t - n + sigma * gauss();
        csv += &format!("{t:.2},{d:.17e}\n");
        xs.push(t);
        ys.push(d + n);
    }
    std::fs::write(dir.join("saw.csv"), csv).unwrap();
    let text = r#"
name = "saw"
[system]
kind = "custom"
states = ["x"]
parameters = ["a", "b"]
initial = { x = "a" }
outputs = [{ name = "x", expr = "x" }]
[[system.modes]]
name = "m"
flow = { x = "b" }
guards = [{ name = "top", expr = "x - 2", direction = "rising", reset = { x = "x - 1" } }]
[simulation]
t_end = 4.5
rtol = 1e-12
atol = 1e-12
[parameters]
a = { value = 0.29, optimize = true }
b = { value = 0.91, optimize = true }
[[cost]]
kind = "data"
file = "saw.csv"
sigma = { x = 0.01 }
"#;
    let p = Problem::parse(text, &dir.join("saw.toml")).unwrap();
    assert_eq!(
        p.optimizer.solver,
        hybridopt::optimize::SolverKind::GaussNewton
    );
    let setup = p.setup().unwrap();
    let r = p.optimize_trajectory(&setup, &p.theta, None).unwrap();
    assert!(r.converged(), "{r}");
    // the closed form: normal equations of X = [1, t]
    let m = xs.len() as f64;
    let (st, stt) = (
        xs.iter().sum::<f64>(),
        xs.iter().map(|t| t * t).sum::<f64>(),
    );
    let (sy, sty) = (
        ys.iter().sum::<f64>(),
        xs.iter().zip(&ys).map(|(t, y)| t * y).sum::<f64>(),
    );
    let det = m * stt - st * st;
    let bh = (m * sty - st * sy) / det;
    let ah = (sy - bh * st) / m;
    let rss: f64 = xs
        .iter()
        .zip(&ys)
        .map(|(t, y)| (y - ah - bh * t).powi(2))
        .sum::<f64>();
    let s2 = rss / (sigma * sigma) / (m - 2.0);
    // (XᵀX)⁻¹ in the σ-scaled residuals: σ² (XᵀX)⁻¹ with XᵀX = [[m, Σt], [Σt, Σt²]]
    let cov = [
        [
            sigma * sigma * stt / det * s2,
            -sigma * sigma * st / det * s2,
        ],
        [-sigma * sigma * st / det * s2, sigma * sigma * m / det * s2],
    ];
    // measured: estimate 1.6e-15, covariance 4.3e-13 relative
    assert_close("estimate", &r.theta_final, &[ah, bh], 1e-10, 0.0);
    let st_ = r
        .least_squares
        .as_ref()
        .unwrap()
        .statistics
        .clone()
        .unwrap();
    assert_close("σ̂²", &[st_.sigma2], &[s2], 1e-10, 0.0);
    let got: Vec<f64> = st_.covariance.iter().flatten().copied().collect();
    let want: Vec<f64> = cov.iter().flatten().copied().collect();
    assert_close("covariance", &got, &want, 1e-10, 0.0);
}

/// The shipped single-shooting fit recovers the generator's parameters from its
/// independent record (problems/data/vibrating_table.py, exact to 40 digits).
#[test]
fn the_vibrating_table_record_gives_back_its_parameters() {
    let p = Problem::load(Path::new("problems/vibrating_table_short.toml")).unwrap();
    let setup = p.setup().unwrap();
    let r = p.optimize_trajectory(&setup, &p.theta, None).unwrap();
    assert!(r.converged(), "{r}");
    let names = setup.theta_names();
    let got: Vec<f64> = ["e", "A"]
        .iter()
        .map(|n| r.theta_final[names.iter().position(|m| m == n).unwrap()])
        .collect();
    // measured 1.1e-15 (e), 1.5e-16 (A) in 7 iterations
    assert_close("e, A", &got, &[0.85, 0.13], 1e-12, 0.0);
    assert!(r.iterations <= 10, "{} iterations", r.iterations);
}
