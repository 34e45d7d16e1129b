//! Periodic LQR on the shipped least-effort gait (`compass_gait_periodic_walk`, open-loop
//! multipliers 1.548, 0.275, 0.017): the periodic Riccati solution through the heel strike,
//! the closed-loop multipliers from the Riccati side (`Ξ_c Φ_cl`) against the periodic
//! machinery's return map of the closed-loop system, and the per-step decay of a small
//! perturbation in a simulation of the nonlinear closed loop.

use crate::common;

use common::assert_within;
use hybridopt::feedback::{
    multipliers_without, periodic_lqr, return_floquet, run_steps, Clock, ClosedLoop, PeriodTable,
    PeriodicOptions, StepsOutcome, Weights,
};
use hybridopt::output::optimize::summary_thetas;
use hybridopt::problem::Problem;
use std::path::Path;

/// The foot position: nothing depends on it (multiplier 1, weight 0).
const FOOT_X: usize = 4;

fn walk() -> (Problem, Vec<f64>) {
    let p = Problem::load(Path::new("problems/compass_gait_periodic_walk.toml")).unwrap();
    let names = p.setup().unwrap().theta_names();
    let (_, theta) = summary_thetas(
        &p,
        &names,
        Path::new("results/compass_gait_periodic_walk/summary.json"),
    )
    .unwrap();
    (p, theta)
}

fn weights() -> Weights {
    Weights::diagonal(
        &[10.0, 10.0, 1.0, 1.0, 0.0],
        &[0.01],
        &[10.0, 10.0, 1.0, 1.0, 0.0],
    )
    .unwrap()
}

#[test]
fn periodic_lqr_stabilizes_the_gait() {
    let (problem, theta) = walk();
    let setup = problem.setup().unwrap();
    for clock in [Clock::Reset, Clock::Extend] {
        let plqr = periodic_lqr(
            &setup,
            &theta,
            &weights(),
            0,
            clock,
            PeriodicOptions::default(),
        )
        .unwrap();
        let open = multipliers_without(&plqr.open_loop_monodromy().unwrap(), &[FOOT_X]);
        let closed = multipliers_without(&plqr.monodromy().unwrap(), &[FOOT_X]);
        println!(
            "{clock:?}: {} sweeps, T = {}, open {:?}, closed {:?}",
            plqr.sweeps,
            plqr.period,
            open.iter().map(|c| c.norm()).collect::<Vec<_>>(),
            closed.iter().map(|c| c.norm()).collect::<Vec<_>>()
        );
        let table = PeriodTable::from_lqr(&plqr.lqr, 601).unwrap();
        let cl = ClosedLoop::new(problem.system(), table, clock, None);
        let np = setup.np();
        let (_, x0, _) = plqr.lqr.nominal_at(0.0).unwrap();
        let rf = return_floquet(
            &cl,
            0,
            0,
            &theta[..np],
            x0.as_slice(),
            &[FOOT_X],
            setup.solver(),
            setup.events(),
        )
        .unwrap();
        println!(
            "  return map: T = {}, multipliers {:?}",
            rf.period, rf.multipliers
        );
        let out = run_steps(
            &cl,
            0,
            &theta[..np],
            &{
                let mut x = x0.as_slice().to_vec();
                x[3] += 1e-4;
                x
            },
            0,
            8,
            10.0,
            setup.solver(),
            setup.events(),
        )
        .unwrap();
        let StepsOutcome::Walked(steps) = out else {
            panic!("fell: {out:?}")
        };
        let dev: Vec<f64> = steps
            .iter()
            .map(|s| {
                (0..4)
                    .map(|i| (s.x_plus[i] - x0[i]).abs())
                    .fold(0.0, f64::max)
            })
            .collect();
        println!("  deviations {dev:?}");
        assert_within("closed-loop radius", closed[0].norm(), 0.5);
    }
}
