//! The feedback design's accuracy on a shipped mechanism (issue 46): the time-varying LQR
//! of the actuated compass gait's four steps (`compass_gait_four_steps` at its shipped
//! optimum: four heel strikes in 3.2 s, the hip torque as control), computed at the
//! file's tolerances (1e-10) against the same design at rtol = atol = 1e-13, at 20 times
//! across the strikes — the gains from the replay (`gain_exact`, what `gains_on_grid`
//! reports) and from the cubic Hermite dense output (`gain_at`, what a closed loop
//! evaluates). (The five-bar the issue also names, with an actuator: tests/five_bar_actuated.rs.)

use hybridopt::feedback::{tvlqr, Lqr, Weights};
use hybridopt::model::HybridSystem;
use hybridopt::output::optimize::summary_thetas;
use hybridopt::problem::Problem;
use nalgebra::DMatrix;
use std::path::Path;

/// 20 times spread over the run, none at an event (offset by a seventh of a grid cell).
fn times(t0: f64, t1: f64) -> Vec<f64> {
    (0..20)
        .map(|i| t0 + (t1 - t0) * (i as f64 + 1.0 / 7.0) / 20.0)
        .collect()
}

/// max over the times of ‖a(t) − b(t)‖_F / ‖b(t)‖_F.
fn worst(times: &[f64], a: impl Fn(f64) -> DMatrix<f64>, b: impl Fn(f64) -> DMatrix<f64>) -> f64 {
    times
        .iter()
        .map(|&t| {
            let (x, y) = (a(t), b(t));
            (x - &y).norm() / y.norm()
        })
        .fold(0.0, f64::max)
}

/// The design at the setup's tolerances and at 1e-13.
fn designs<'a, S: HybridSystem>(
    setup: &hybridopt::setup::Setup<'a, S>, theta: &[f64], w: &Weights,
) -> (Lqr<'a, S>, Lqr<'a, S>) {
    let fine = setup.to_builder().tolerances(1e-13, 1e-13).build();
    (
        tvlqr(setup, theta, w).unwrap(),
        tvlqr(&fine, theta, w).unwrap(),
    )
}

#[test]
fn walker_gains_match_a_run_at_rtol_1e_13() {
    let p = Problem::load(Path::new("problems/compass_gait_four_steps.toml")).unwrap();
    let setup = p.setup().unwrap();
    let names = setup.theta_names();
    let summary = Path::new("results/compass_gait_four_steps/summary.json");
    let (_, theta) = summary_thetas(&p, &names, summary).unwrap();
    // Q: angles 10, rates 1, the foot position 0; R = 0.01 (N·m)⁻²; Q_f = Q.
    let q = [10.0, 10.0, 1.0, 1.0, 0.0];
    let w = Weights::diagonal(&q, &[0.01], &q).unwrap();
    let (coarse, fine) = designs(&setup, &theta, &w);
    let events = coarse.nominal.events.len();
    let ts = times(setup.t0(), setup.t_end());
    let replay = worst(
        &ts,
        |t| coarse.gain_exact(t).unwrap(),
        |t| fine.gain_exact(t).unwrap(),
    );
    let dense = worst(
        &ts,
        |t| coarse.gain_at(t).unwrap(),
        |t| fine.gain_exact(t).unwrap(),
    );
    println!(
        "walker: {events} events; K at rtol {:.0e} vs 1e-13: replay {replay:.1e}, dense {dense:.1e}",
        setup.solver().rtol
    );
    assert_eq!(events, 4, "four heel strikes in the shipped optimum");
    // the target: ≤ 1e-7 relative
    assert!(replay <= 1e-7, "{replay:.1e} (measured 9.8e-9)");
    // the dense output is cubic between the sweep's steps: its own (larger) error
    assert!(dense <= 4e-5, "{dense:.1e} (measured 1.9e-6)");
}
