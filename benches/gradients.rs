//! Gradient cost benchmark: forward simulation vs adjoint, direct, dual and FD gradients,
//! with ratios measured in one run; and the adjoint's time as the parameter count grows
//! through a control parameterization (the direct method's grows with it).
//!
//! Run: `cargo bench --bench gradients`

use hybridopt::control::{Basis, ControlGrid};
use hybridopt::cost::{Objective, Term};
use hybridopt::model::HybridSystem;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{adjoint, evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::bouncing_ball::{BouncingBall, ThrustBall};
use std::time::Instant;

fn median_time<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    let mut v: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn ball_objective() -> Objective {
    hybridopt::systems::bouncing_ball::shipped_objective()
}

fn table<S: HybridSystem>(
    label: &str,
    setup: &Setup<'_, S>,
    theta: &[f64],
    reps: usize,
    with_slow: bool,
) {
    let tf = median_time(reps, || {
        setup.simulate(theta).unwrap();
    });
    let traj = setup.simulate(theta).unwrap();
    let tb = median_time(reps, || {
        adjoint::adjoint_gradients(setup, &traj, theta).unwrap();
    });
    let (_, ast) = adjoint::adjoint_gradients(setup, &traj, theta).unwrap();
    println!(
        "{label}: θ has {} entries; forward {} steps, adjoint backward {} steps",
        theta.len(),
        traj.stats.steps,
        ast.steps
    );
    println!("  {:10} {:>12} {:>10}", "method", "time [s]", "/forward");
    println!("  {:10} {:>12.3e} {:>10.2}", "forward", tf, 1.0);
    println!(
        "  {:10} {:>12.3e} {:>10.2}   (backward pass alone)",
        "adj-back",
        tb,
        tb / tf
    );
    let mut methods = vec![GradientMethod::Adjoint, GradientMethod::Direct];
    if with_slow {
        methods.push(GradientMethod::Dual);
        methods.push(GradientMethod::Fd);
    }
    for m in methods {
        let t = median_time(reps, || {
            evaluate(setup, theta, m).unwrap();
        });
        println!("  {:10} {:>12.3e} {:>10.2}", m.name(), t, t / tf);
    }
}

fn main() {
    let ball = BouncingBall;
    let mut s = Setup::new(&ball, 0.0, 3.0, None, vec![ball_objective()]);
    s.solver.rtol = 1e-8;
    s.solver.atol = 1e-8;
    let theta = BouncingBall::default_params();
    println!("== bouncing ball with drag, rtol = atol = 1e-8 ==");
    table("ball", &s, &theta, 201, true);

    println!();
    println!(
        "== thrust ball: parameters 5 + K control coefficients (piecewise constant), rtol 1e-8 =="
    );
    println!(
        "  {:>6} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "nθ", "forward [s]", "adjoint [s]", "direct [s]", "adj/fwd", "dir/fwd"
    );
    let tb = ThrustBall;
    let mut first: Option<(f64, f64)> = None;
    for k in [0usize, 5, 15, 45, 95] {
        let grid = if k == 0 {
            None
        } else {
            Some(ControlGrid {
                basis: Basis::PiecewiseConstant,
                t0: 0.0,
                t1: 3.0,
                intervals: k,
                channels: 1,
            })
        };
        // with no grid the control is absent (u = 0)
        let mut obj = ball_objective().terms;
        obj.push(Term::Effort { weight: 0.01 });
        let mut s = Setup::new(&tb, 0.0, 3.0, grid, vec![Objective::new("psi", obj)]);
        s.solver.rtol = 1e-8;
        s.solver.atol = 1e-8;
        let mut theta = BouncingBall::default_params();
        theta.extend((0..k).map(|i| 0.5 * ((i as f64) * 0.7).sin()));
        let reps = 21;
        let tf = median_time(reps, || {
            s.simulate(&theta).unwrap();
        });
        let ta = median_time(reps, || {
            evaluate(&s, &theta, GradientMethod::Adjoint).unwrap();
        });
        let td = median_time(reps, || {
            evaluate(&s, &theta, GradientMethod::Direct).unwrap();
        });
        let (ra, rd) = (ta / tf, td / tf);
        if first.is_none() {
            first = Some((ra, rd));
        }
        println!(
            "  {:>6} {:>12.3e} {:>12.3e} {:>12.3e} {:>10.2} {:>10.2}",
            theta.len(),
            tf,
            ta,
            td,
            ra,
            rd
        );
    }

    println!();
    println!(
        "== five-bar (index-1, Baumgarte), the three seed costs at once, rtol = atol = 1e-10 =="
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/five_bar_seed.toml");
    let p = Problem::load(&path).expect("problems/five_bar_seed.toml");
    let s = p.setup().unwrap();
    let theta = p.theta_values();
    table("five-bar", &s, &theta, 3, true);
}
