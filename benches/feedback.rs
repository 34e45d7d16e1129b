//! Feedback benchmark (issue 46): the periodic LQR of `problems/compass_gait_feedback.toml`
//! (the least-effort gait, optimized here, stabilized through the heel strike).
//!
//! 1. **Robustness**: the file's 100 seeded pushes of the start (θ̇_ns and θ̇_s each moved
//!    by U[−0.1, 0.1] rad/s, seed 46), 20 steps, the hip torque clamped to ±40 N·m, open
//!    loop (K = 0) against closed loop, for both phase rules, and at other push sizes.
//!    Claim: the file's design (`clock = "extend"`) walks ≥ 95 of 100; open loop's count
//!    printed.
//! 2. **Mode mismatch**: a push along θ̇_s that moves the first heel strike earlier and one
//!    that moves it later, under each phase rule: the first impact's shift, the steps
//!    walked of 20 and the distance from the orbit after 5 and 20 steps.
//!
//! Run: `cargo bench --bench feedback` (or `-- --quick`: the same runs, the docs left as
//! they are). A full run writes its tables into docs/benchmarks.md.

#[path = "common/mod.rs"]
mod common;

use hybridopt::feedback::{
    multipliers_without, periodic_lqr, robustness, run_steps_bounded, Clock, ClosedLoop,
    FeedbackSettings, PeriodTable, PeriodicLqr, PeriodicOptions, RobustnessSpec, StepsOutcome,
};
use hybridopt::problem::Problem;
use hybridopt::setup::Setup;
use hybridopt::systems::Builtin;
use std::fmt::Write;
use std::path::Path;
use std::time::Instant;

/// The foot position: left out of the distance (nothing depends on it).
const FOOT_X: usize = 4;

struct Design<'a> {
    plqr: PeriodicLqr<'a, Builtin>,
    table: PeriodTable,
    x0: Vec<f64>,
}

fn design<'a>(
    setup: &Setup<'a, Builtin>, theta: &[f64], fb: &FeedbackSettings, clock: Clock,
) -> Design<'a> {
    let plqr = periodic_lqr(
        setup,
        theta,
        &fb.weights,
        0,
        clock,
        PeriodicOptions::default(),
    )
    .unwrap();
    let table = PeriodTable::from_lqr(&plqr.lqr, 2401).unwrap();
    let x0 = plqr.lqr.nominal_at(0.0).unwrap().1.as_slice().to_vec();
    Design { plqr, table, x0 }
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    (0..FOOT_X)
        .map(|i| (a[i] - b[i]).powi(2))
        .sum::<f64>()
        .sqrt()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = Problem::load(&root.join("problems/compass_gait_feedback.toml")).unwrap();
    let fb = p.feedback.clone().unwrap();
    let setup = p.setup().unwrap();
    let t = Instant::now();
    let r = p.optimize_trajectory(&setup, &p.theta, None).unwrap();
    println!("gait optimized in {:.1} s", t.elapsed().as_secs_f64());
    let theta = r.theta_final.clone();
    let pv = theta[..setup.np()].to_vec();
    let limits = Some(vec![(-40.0, 40.0)]);
    let rs = &fb.robustness;
    let fixed: Vec<usize> = (0..5).filter(|i| !rs.states.contains(i)).collect();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| phase rule | push size (rad/s) | open loop walked | closed loop walked | std of the 20th impact time, closed (s) | closed-loop spectral radius | time (s) |\n|---|---|---|---|---|---|---|"
    );
    let mut shipped = (0, 0);
    for clock in [Clock::Extend, Clock::Reset] {
        let d = design(&setup, &theta, &fb, clock);
        let m = multipliers_without(&d.plqr.monodromy().unwrap(), &[FOOT_X]);
        let radius = m.iter().map(|c| c.norm()).fold(0.0, f64::max);
        for size in [0.05, 0.1, 0.15] {
            let spec = RobustnessSpec {
                trials: rs.trials,
                size,
                fixed: fixed.clone(),
                steps: rs.steps,
                seed: rs.seed,
                periods_per_step: 2.0,
            };
            let t = Instant::now();
            let rep = robustness(
                &p.system,
                &d.table,
                clock,
                limits.clone(),
                0,
                &pv,
                &d.x0,
                0,
                &spec,
                setup.solver(),
                setup.events(),
            )
            .unwrap();
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{clock:?} size {size}: open {}/{}, closed {}/{} (std {:.1e} s), radius {radius:.4}, {secs:.1} s",
                rep.walked_open, rep.trials, rep.walked_closed, rep.trials, rep.impact_time_std_closed
            );
            let _ = writeln!(
                md,
                "| {} | {size} | {} / {} | {} / {} | {:.1e} | {radius:.4} | {secs:.1} |",
                clock.name(),
                rep.walked_open,
                rep.trials,
                rep.walked_closed,
                rep.trials,
                rep.impact_time_std_closed
            );
            if clock == fb.clock && size == rs.size {
                shipped = (rep.walked_open, rep.walked_closed);
            }
        }
    }
    let _ = writeln!(md, "\n{}", mismatch(&p, &setup, &theta, &fb, &limits));
    println!("{md}");
    println!(
        "claim: the shipped design walks {} of {} (≥ 95), open loop {}",
        shipped.1, rs.trials, shipped.0
    );
    assert!(
        shipped.1 >= 95,
        "the shipped design walked {} of 100",
        shipped.1
    );
    common::publish("feedback", &md);
}

/// The mode-mismatch table: pushes along θ̇_s, each rule.
fn mismatch(
    p: &Problem, setup: &Setup<'_, Builtin>, theta: &[f64], fb: &FeedbackSettings,
    limits: &Option<Vec<(f64, f64)>>,
) -> String {
    let pv = &theta[..setup.np()];
    let mut md = String::from(
        "| push on θ̇_s (rad/s) | phase rule | first impact − T (s) | steps walked of 20 | distance after 5 steps | after 20 steps |\n|---|---|---|---|---|---|\n",
    );
    let designs: Vec<(Clock, Design<'_>)> = [Clock::Extend, Clock::Reset]
        .into_iter()
        .map(|c| (c, design(setup, theta, fb, c)))
        .collect();
    for push in [-0.1, -0.05, -0.02, 0.02, 0.05, 0.1] {
        for (clock, d) in &designs {
            let cl = ClosedLoop::new(&p.system, d.table.clone(), *clock, limits.clone());
            let mut x = d.x0.clone();
            x[3] += push;
            let out = run_steps_bounded(
                &cl,
                0,
                pv,
                (&x, 0.0),
                0,
                20,
                2.0 * d.table.period,
                setup.solver(),
                setup.events(),
            )
            .unwrap();
            let s = out.steps();
            let shift = s.first().map_or(f64::NAN, |r| r.t - d.table.period);
            let dist = |k: usize| {
                s.get(k - 1)
                    .map_or(f64::NAN, |r| distance(&r.x_plus, &d.x0))
            };
            let _ = writeln!(
                md,
                "| {push:+} | {} | {shift:+.4} | {}{} | {:.2e} | {:.2e} |",
                clock.name(),
                s.len(),
                if matches!(out, StepsOutcome::Walked(_)) {
                    ""
                } else {
                    " (fell)"
                },
                dist(5),
                dist(20)
            );
        }
    }
    md
}
