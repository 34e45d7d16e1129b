//! Bounds live in one place, the `ThetaEntry`, and the optimizer never crosses them, with
//! either solver: every θ it evaluates (each simulation's start, recorded by the system
//! itself) lies inside the bounds, whether they come from the library API or a problem
//! file; a start outside its bounds is `Error::Bounds`.

use hybridopt::prelude::*;
use std::path::Path;
use std::sync::Mutex;

/// ẋ = −k x; records every k it is started with (f64 and dual runs alike).
struct Decay {
    seen: Mutex<Vec<f64>>,
}

impl HybridSystem for Decay {
    fn dims(&self) -> Dims {
        Dims::new(["x"], ["k"]).outputs(["x"])
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        self.seen.lock().unwrap().push(p[0].re());
        Ok(vec![c(1.0)])
    }
    fn flow<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = -p[0] * x[0];
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0]
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], y: &mut [D],
    ) -> Result<(), ModelError> {
        y[0] = x[0];
        Ok(())
    }
}

/// ψ = (x(1) − target)² = (e^{−k} − target)²: its minimum k* = −ln(target) lies outside
/// the bounds, so the optimizer presses against one.
fn run(target: f64, entry: ThetaEntry, solver: SolverKind) -> (OptimizeResult, Vec<f64>) {
    let sys = Decay {
        seen: Mutex::new(Vec::new()),
    };
    let cost = Objective::new(
        "x_end",
        vec![Term::squared(Quantity::Terminal { output: 0 }, target, 1.0)],
    );
    let setup = Setup::builder(&sys)
        .horizon(0.0, 1.0)
        .objective(cost)
        .tolerances(1e-10, 1e-12)
        .build();
    let settings = OptimizerSettings {
        solver,
        max_iters: 60,
        ..OptimizerSettings::default()
    };
    let r = optimize(&setup, &[entry], &settings, None).expect("an optimization");
    let seen = sys.seen.into_inner().unwrap();
    (r, seen)
}

#[test]
fn a_user_bound_is_never_crossed_by_either_solver() {
    for solver in [SolverKind::Lbfgs, SolverKind::Gd] {
        // k* = −ln 0.05 ≈ 3.0 above the upper bound 2 (logit between 0.5 and 2)
        let upper = ThetaEntry::free("k", 1.0).with_bounds(Some(0.5), Some(2.0));
        let (r, seen) = run(0.05, upper, solver);
        assert!(seen.len() > 3, "{solver:?}: {} runs", seen.len());
        assert!(
            seen.iter().all(|&k| (0.5..=2.0).contains(&k)),
            "{solver:?}: a run outside [0.5, 2]: {seen:?}"
        );
        assert!(r.theta_final[0] > 1.99, "{solver:?}: {r}");
        // k* = −ln 0.9 ≈ 0.105 below the lower bound 0.3 (log above it, no upper)
        let lower = ThetaEntry::free("k", 1.0).with_bounds(Some(0.3), None);
        let (r, seen) = run(0.9, lower, solver);
        assert!(
            seen.iter().all(|&k| k >= 0.3),
            "{solver:?}: a run below 0.3: {seen:?}"
        );
        assert!(r.theta_final[0] < 0.31, "{solver:?}: {r}");
        println!(
            "{solver:?}: {} runs inside the bounds, k = {}",
            seen.len(),
            r.theta_final[0]
        );
    }
}

#[test]
fn a_start_outside_its_bounds_is_an_error() {
    let sys = Decay {
        seen: Mutex::new(Vec::new()),
    };
    let cost = Objective::new(
        "x_end",
        vec![Term::plain(Quantity::Terminal { output: 0 }, 1.0)],
    );
    let setup = Setup::new(&sys, 0.0, 1.0, None, vec![cost]);
    let settings = OptimizerSettings::default();
    for entry in [
        ThetaEntry::free("k", 3.0).with_bounds(Some(0.5), Some(2.0)),
        ThetaEntry::free("k", 0.5).with_bounds(Some(0.5), None),
        ThetaEntry::free("k", 1.0).with_bounds(Some(2.0), Some(0.5)),
        ThetaEntry::free("k", f64::NAN),
    ] {
        match optimize(&setup, std::slice::from_ref(&entry), &settings, None) {
            Err(Error::Bounds { name, .. }) => assert_eq!(name, "k"),
            other => panic!("{entry:?}: {:?}", other.map(|r| r.outcome)),
        }
    }
    assert!(sys.seen.lock().unwrap().is_empty(), "nothing is simulated");
}

/// A problem file's bounds: v0 ∈ (0, 0.3) while the third impact at 2 s needs v0 ≈ 1.49.
#[test]
fn a_problem_files_bound_is_honoured() {
    let text = r#"
name = "bounded_throw"
[system]
kind = "bouncing_ball"
[simulation]
t_end = 3.0
rtol = 1e-10
atol = 1e-12
[parameters]
c = { value = 0.0 }
v0 = { value = 0.1, optimize = true, lower = 0.0, upper = 0.3 }
[[cost]]
kind = "event_time_squared"
guard = "ground"
occurrence = 3
target = 2.0
"#;
    let p = Problem::parse(text, Path::new("bounded_throw.toml")).unwrap();
    let s = p.setup().unwrap();
    let v0 = p.dims.param_index("v0").unwrap();
    for solver in [SolverKind::Lbfgs, SolverKind::Gd] {
        let settings = OptimizerSettings {
            solver,
            max_iters: 40,
            ..p.optimizer.clone()
        };
        let r = optimize(&s, &p.theta, &settings, None).unwrap();
        for row in &r.history {
            assert!((0.0..=0.3).contains(&row.theta[v0]), "{solver:?}: {row:?}");
        }
        assert!(
            r.theta_final[v0] > 0.29 && r.theta_final[v0] <= 0.3,
            "{solver:?}: {r}"
        );
    }
}
