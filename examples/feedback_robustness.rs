//! Robustness of the periodic LQR on the shipped least-effort gait (docs/guide/feedback.md,
//! "Robustness"): `cargo run --release --example feedback_robustness [SIZE [LIMIT [TRIALS]]]`
//! pushes θ̇_ns and θ̇_s by U[−SIZE, SIZE] rad/s (default 0.02), clamps the hip torque to
//! ±LIMIT N·m (40) and counts the walks of 20 steps open and closed loop, for both phase
//! rules. Needs `results/compass_gait_periodic_walk/summary.json`.
use hybridopt::feedback::*;
use hybridopt::output::optimize::summary_thetas;
use hybridopt::problem::Problem;
use std::path::Path;
fn main() {
    let p = Problem::load(Path::new("problems/compass_gait_periodic_walk.toml")).unwrap();
    let setup = p.setup().unwrap();
    let names = setup.theta_names();
    let (_, theta) = summary_thetas(
        &p,
        &names,
        Path::new("results/compass_gait_periodic_walk/summary.json"),
    )
    .unwrap();
    let q = [10.0, 10.0, 1.0, 1.0, 0.0];
    let w = Weights::diagonal(&q, &[0.01], &q).unwrap();
    let np = setup.np();
    let args: Vec<String> = std::env::args().collect();
    let size: f64 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(0.02);
    let lim: f64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(40.0);
    let trials: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(100);
    for clock in [Clock::Reset, Clock::Extend] {
        let t0 = std::time::Instant::now();
        let plqr = periodic_lqr(&setup, &theta, &w, 0, clock, PeriodicOptions::default()).unwrap();
        let table = PeriodTable::from_lqr(&plqr.lqr, 601).unwrap();
        let (_, x0, _) = plqr.lqr.nominal_at(0.0).unwrap();
        let spec = RobustnessSpec {
            trials,
            size,
            fixed: vec![0, 1, 4],
            steps: 20,
            seed: 46,
            periods_per_step: 3.0,
        };
        let mut solver = setup.solver();
        (solver.rtol, solver.atol) = (1e-8, 1e-8);
        let r = robustness(
            p.system(),
            &table,
            clock,
            Some(vec![(-lim, lim)]),
            0,
            &theta[..np],
            x0.as_slice(),
            0,
            &spec,
            solver,
            setup.events(),
        )
        .unwrap();
        println!(
            "{clock:?} size {size} limit {lim}: {r:?} ({:.1} s)",
            t0.elapsed().as_secs_f64()
        );
    }
}
