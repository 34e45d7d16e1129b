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
        // measured MEASURE (e), MEASURE (c)
        assert_close(
            &format!("column {k} vs FD"),
            j.column(k).as_slice(),
            fd.as_slice(),
            3e-8,
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
