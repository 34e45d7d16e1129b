//! Periodic LQR on the shipped least-effort gait (`compass_gait_periodic_walk`, open-loop
//! multipliers 1.548, 0.275, 0.017): the periodic Riccati solution through the heel strike,
//! the open-loop multiplier against the shooting closure's (an independent return map),
//! the closed-loop multipliers from the Riccati side (`Ξ_c Φ_cl`) against the periodic
//! machinery's return map of the closed-loop system, and the per-step decay of a small
//! perturbation along the leading eigenvector in a simulation of the nonlinear closed loop.

use crate::common;

use common::assert_within;
use hybridopt::feedback::{
    multipliers_without, periodic_lqr, return_floquet, run_steps, Clock, ClosedLoop, PeriodTable,
    PeriodicOptions, StepsOutcome, Weights,
};
use hybridopt::output::optimize::summary_thetas;
use hybridopt::problem::Problem;
use nalgebra::{DMatrix, DVector};
use std::path::Path;

/// The foot position: nothing depends on it (multiplier 1, weight 0).
const FOOT_X: usize = 4;
/// The open-loop spectral radius the shooting closure reports in the shipped summary.
const OPEN_LOOP: f64 = 1.5479611650140574;

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

/// Q on the angles 10, on the rates 1, none on the foot position; R = 0.01 (N·m)⁻².
fn weights() -> Weights {
    let q = [10.0, 10.0, 1.0, 1.0, 0.0];
    Weights::diagonal(&q, &[0.01], &q).unwrap()
}

/// The moduli of the shooting closure's Floquet multipliers at the shipped gait, computed
/// now (the nodes from a single-shooting run of θ, no iteration), by decreasing modulus,
/// without the foot position's (1: nothing depends on it) and the section's (0).
fn shooting_moduli(theta: &[f64]) -> Vec<f64> {
    use hybridopt::optimize::{optimize_shooting, OptimizerSettings};
    // three segments, not the file's two: the eigenvalues of J₁J₀ and J₀J₁ are equal, those
    // of J₂J₁J₀ and J₀J₁J₂ are not, so only K ≥ 3 sees the product's order
    let path = Path::new("problems/compass_gait_periodic_walk.toml");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains("segments = 2"));
    let problem = &Problem::parse(&text.replace("segments = 2", "segments = 3"), path).unwrap();
    let setup = problem.setup().unwrap();
    let mut entries = problem.theta.clone();
    for (e, &v) in entries.iter_mut().zip(theta) {
        e.value = v;
    }
    let settings = OptimizerSettings {
        max_iters: 0,
        ..OptimizerSettings::default()
    };
    let shooting = problem.shooting.as_ref().unwrap();
    let r = optimize_shooting(
        &setup,
        &entries,
        &problem.constraints,
        shooting,
        &settings,
        None,
    )
    .unwrap();
    let closure = r.shooting.unwrap().closure.unwrap();
    let mut m: Vec<f64> = closure
        .multipliers
        .iter()
        .map(|z| z[0].hypot(z[1]))
        .collect();
    let unit = m
        .iter()
        .position(|&x| (x - 1.0).abs() < 1e-8)
        .expect("the foot's multiplier 1");
    m.remove(unit);
    m.retain(|&x| x > 1e-12);
    m
}

/// A unit (max-norm) null vector of `m − λ I` for a real eigenvalue λ.
fn eigenvector(m: &DMatrix<f64>, lambda: f64) -> DVector<f64> {
    let n = m.nrows();
    let svd = (m - DMatrix::identity(n, n) * lambda).svd(false, true);
    let vt = svd.v_t.unwrap();
    let v = vt.row(svd.singular_values.imin()).transpose();
    &v / v.amax()
}

#[test]
fn periodic_lqr_stabilizes_the_gait_and_a_simulation_decays_as_predicted() {
    let (problem, theta) = walk();
    let setup = problem.setup().unwrap();
    let np = setup.np();
    for (clock, witness_tol) in [(Clock::Reset, 3e-5), (Clock::Extend, 1e-3)] {
        let opts = PeriodicOptions::default();
        let plqr = periodic_lqr(&setup, &theta, &weights(), 0, clock, opts).unwrap();
        let open = multipliers_without(&plqr.open_loop_monodromy().unwrap(), &[FOOT_X]);
        let closed = multipliers_without(&plqr.monodromy().unwrap(), &[FOOT_X]);
        println!(
            "{clock:?}: {} sweeps, |λ| open {:?}, closed {:?}",
            plqr.sweeps,
            open.iter().map(|c| c.norm()).collect::<Vec<_>>(),
            closed.iter().map(|c| c.norm()).collect::<Vec<_>>()
        );
        if clock == Clock::Reset {
            // the shooting closure's return map is this clock's open loop: measured 2.2e-11
            let e = (open[0].norm() - OPEN_LOOP).abs() / OPEN_LOOP;
            assert_within("open-loop radius vs the shipped shooting summary", e, 1e-9);
            // and the shooting closure's multipliers computed now, every one of them (a
            // product of the segments' Jacobians in another order has other eigenvalues)
            let shooting = shooting_moduli(&theta);
            let riccati: Vec<f64> = open.iter().map(|c| c.norm()).collect();
            println!("  shooting closure |λ| {shooting:?}; Riccati open loop {riccati:?}");
            for (i, (a, b)) in shooting.iter().zip(&riccati).enumerate() {
                // measured 1.8e-10, 2.2e-11, 1.9e-12 (2026-12-07): the bound 28× the first
                assert_within(&format!("|λ{i}|: shooting vs Riccati"), (a - b).abs(), 5e-9);
            }
        }
        // the target 0.5: measured 0.327 (reset), 0.263 (extend)
        assert_within("closed-loop radius", closed[0].norm(), 0.5);
        // the periodic machinery's return map of the closed-loop system (its K tabulated)
        let table = PeriodTable::from_lqr(&plqr.lqr, 2401).unwrap();
        let cl = ClosedLoop::new(problem.system(), table, clock, None);
        let (_, x0, _) = plqr.lqr.nominal_at(0.0).unwrap();
        let mut solver = setup.solver();
        (solver.rtol, solver.atol) = (1e-12, 1e-12);
        let events = setup.events();
        let rf = return_floquet(
            &cl,
            0,
            0,
            &theta[..np],
            x0.as_slice(),
            &[FOOT_X],
            solver,
            events,
        )
        .unwrap();
        let lead = rf.multipliers[0];
        println!("  return map: multipliers {:?}", rf.multipliers);
        let e = (lead.norm() - closed[0].norm()).abs() / closed[0].norm();
        // measured 1.3e-6 (reset), 3.1e-5 (extend): K tabulated, linear between 2,401 points
        assert_within("closed-loop radius: return map vs Riccati", e, witness_tol);
        // the nonlinear closed loop from a 1e-4 push along the leading eigenvector, against
        // the unpushed closed loop step by step (which cancels its own small drift from x0)
        assert!(lead.im == 0.0, "a real leading multiplier: {lead}");
        let v = eigenvector(&rf.monodromy, lead.re);
        let run = |delta: f64| {
            let x = DVector::from_fn(x0.len(), |i, _| x0[i] + delta * v[i]);
            let start = (x.as_slice(), delta * v[x0.len()]);
            match run_steps(&cl, 0, &theta[..np], start, 0, 4, 10.0, solver, events).unwrap() {
                StepsOutcome::Walked(steps) => steps,
                out => panic!("the closed loop fell: {out:?}"),
            }
        };
        let (pushed, base) = (run(1e-4), run(0.0));
        let dev = |k: usize| -> f64 {
            let (a, b) = (&pushed[k].x_plus, &base[k].x_plus);
            // the angles, the rates and the phase: not the foot position
            [0, 1, 2, 3, x0.len()]
                .iter()
                .map(|&i| (a[i] - b[i]).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        for k in 1..pushed.len() {
            let ratio = dev(k) / dev(k - 1);
            println!(
                "  step {}: decay {ratio:.6} (predicted {:.6})",
                k + 1,
                lead.norm()
            );
            let e = (ratio - lead.norm()).abs() / lead.norm();
            // the target 1 %: measured at most 3.9e-4 (reset), 1.2e-3 (extend)
            assert_within("per-step decay vs the leading multiplier", e, 0.01);
        }
    }
}
