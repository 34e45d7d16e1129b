//! The error kinds no other test reached, each from a realistic bad input through the public
//! API: the variant is matched and its message must name what is wrong.

use hybridopt::error::Error;
use hybridopt::integrate::SolverOptions;
use hybridopt::output::periodic::periodic_to_folder;
use hybridopt::periodic::NewtonFailure;
use hybridopt::periodic::PeriodicError;
use hybridopt::prelude::*;
use hybridopt::sweep::{multi_start, starts::Range};
use hybridopt::systems::BouncingBall;
use hybridopt::systems::{BuildError, DaeSettings, SystemSpec};
use std::path::PathBuf;

/// A scratch folder of its own for each test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "hybridopt_untriggered_{}_{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A problem file written into `dir` and loaded.
fn problem(dir: &std::path::Path, name: &str, text: &str) -> Problem {
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(&f, text).unwrap();
    Problem::load(&f).unwrap()
}

/// A one-state custom system ẋ = FLOW from x = 0 (and a terminal cost on x).
fn one_state(flow: &str, method: &str) -> String {
    format!(
        r#"name = "one_state"
[system]
kind = "custom"
states = ["x"]
parameters = ["a"]
initial = {{ x = "0" }}
outputs = [ {{ name = "x", expr = "x" }} ]
[[system.modes]]
name = "climb"
flow = {{ x = "{flow}" }}
[simulation]
t_end = 2.0
method = "{method}"
[parameters]
a = {{ value = 1.0 }}
[[cost]]
kind = "terminal"
output = "x"
"#
    )
}

/// ẋ = 1/(1 − x) from 0 reaches x = 1 with infinite slope at t = 1/2 (x = 1 − √(1 − 2t)):
/// the implicit steppers' Newton iteration fails with every step down to the minimum.
#[test]
fn newton_failure_of_an_implicit_stepper_at_a_finite_time_singularity() {
    let dir = scratch("newton");
    for method in ["radau5", "sdirk3"] {
        let p = problem(&dir, method, &one_state("1/(1 - x)", method));
        let s = p.setup().unwrap();
        match s.simulate(&p.theta_values()) {
            Err(e @ Error::NewtonFailure { .. }) => {
                let Error::NewtonFailure { t, ref mode, h } = e else {
                    unreachable!()
                };
                assert!((t - 0.5).abs() < 1e-6, "{method}: t = {t}");
                assert_eq!(mode, "climb");
                assert!(h < 1e-12, "{method}: h = {h}");
                let m = e.to_string();
                assert!(m.contains("Newton") && m.contains("'climb'"), "{m}");
            }
            other => panic!("{method}: expected NewtonFailure, got {other:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A step budget too small for the horizon.
#[test]
fn too_many_steps_for_a_small_step_budget() {
    let cost = Objective::new(
        "timing",
        vec![Term::squared(
            Quantity::EventTime {
                guard: EventGuard::Guard(0),
                occurrence: 3,
            },
            2.0,
            1.0,
        )],
    );
    let solver = SolverOptions {
        max_steps: 20,
        rtol: 1e-10,
        atol: 1e-12,
        ..SolverOptions::default()
    };
    let s = Setup::builder(&BouncingBall)
        .horizon(0.0, 3.0)
        .objective(cost)
        .solver(solver)
        .build();
    match s.simulate(&BouncingBall::default_params()) {
        Err(e @ Error::TooManySteps { max_steps: 20, .. }) => {
            let m = e.to_string();
            assert!(m.contains("too many steps (20)"), "{m}");
        }
        other => panic!("expected TooManySteps, got {other:?}"),
    }
}

/// `optimize --starts N` where every start fails (a horizon that ends before the impact
/// the cost needs): the optimizer error says all failed and gives the first cause.
#[test]
fn optimizer_error_when_every_start_fails() {
    let dir = scratch("starts");
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/problems/impact_timing.toml"))
        .unwrap()
        .replace("t_end = 10.0", "t_end = 0.2");
    let p = problem(&dir, "short", &text);
    let s = p.setup().unwrap();
    let ranges = [Range {
        name: "v0".into(),
        lo: 0.1,
        hi: 1.0,
    }];
    let opts = hybridopt::sweep::RunOptions {
        jobs: 1,
        ..Default::default()
    };
    match multi_start(&p, &s, 2, 7, &ranges, &opts) {
        Err(e @ Error::Optimizer(_)) => {
            let m = e.to_string();
            assert!(m.contains("all 2 starts failed"), "{m}");
            assert!(m.contains("occurrence 3") && m.contains("'ground'"), "{m}");
        }
        Err(other) => panic!("expected Optimizer, got {other:?}"),
        Ok(_) => panic!("expected Optimizer, got a result"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A clock s with a state that only jumps at each tick (ẋ = 0, x⁺ = RESET): the return map
/// is P(x) = RESET, a periodic problem on the section just after the tick.
fn ticking(reset: &str, x0: f64) -> String {
    format!(
        r#"name = "ticking"
[system]
kind = "custom"
states = ["s", "x"]
parameters = ["s0", "x0"]
initial = {{ s = "s0", x = "x0" }}
outputs = [ {{ name = "x", expr = "x" }} ]
[[system.modes]]
name = "m"
flow = {{ s = "1", x = "0" }}
guards = [ {{ name = "tick", expr = "s - 1", direction = "rising", reset = {{ s = "0", x = "{reset}" }} }} ]
[simulation]
t_end = 5.0
[parameters]
s0 = {{ value = 0.0 }}
x0 = {{ value = {x0} }}
[periodic]
guard = "tick"
free = ["x"]
guess = {{ s = 0.0, x = {x0} }}
t_max = 5.0
"#
    )
}

/// x⁺ = x + 1 drifts: P(x) − x = 1 everywhere and DP − I = 0.
#[test]
fn periodic_newton_singular_jacobian_for_a_drifting_state() {
    let dir = scratch("singular");
    let p = problem(&dir, "drift", &ticking("x + 1", 0.5));
    match periodic_to_folder(&p, None, &dir.join("out")) {
        Err(
            e @ Error::Periodic(PeriodicError::NoConvergence {
                reason: NewtonFailure::SingularJacobian,
                ..
            }),
        ) => {
            let m = e.to_string();
            assert!(m.contains("SingularJacobian"), "{m}");
        }
        Err(other) => panic!("expected SingularJacobian, got {other:?}"),
        Ok(_) => panic!("expected SingularJacobian, got an orbit"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// x⁺ = x + x² + 1 has no fixed point (P(x) − x = x² + 1 > 0): Newton's line search stalls
/// where the residual has a positive minimum.
#[test]
fn periodic_newton_line_search_fails_without_a_fixed_point() {
    let dir = scratch("linesearch");
    let p = problem(&dir, "noroot", &ticking("x + x*x + 1", 3.0));
    match periodic_to_folder(&p, None, &dir.join("out")) {
        Err(
            e @ Error::Periodic(PeriodicError::NoConvergence {
                reason: NewtonFailure::LineSearch,
                ..
            }),
        ) => {
            let m = e.to_string();
            assert!(
                m.contains("LineSearch") && m.contains("residual history"),
                "{m}"
            );
        }
        Err(other) => panic!("expected LineSearch, got {other:?}"),
        Ok(_) => panic!("expected LineSearch, got an orbit"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two identical decoupled contractions x, y (ẋ = −a x, ẏ = −a y) give a double multiplier
/// e^{−a}: the spectral radius has no gradient, so a gait optimization of it stops with
/// `Nonsmooth`.
#[test]
fn spectral_radius_of_a_double_multiplier_is_nonsmooth() {
    let dir = scratch("nonsmooth");
    let text = r#"name = "twins"
[system]
kind = "custom"
states = ["s", "x", "y"]
parameters = ["a", "s0", "x0", "y0"]
initial = { s = "s0", x = "x0", y = "y0" }
outputs = [ { name = "x", expr = "x" } ]
[[system.modes]]
name = "m"
flow = { s = "1", x = "-a*x", y = "-a*y" }
guards = [ { name = "tick", expr = "s - 1", direction = "rising", reset = { s = "0" } } ]
[simulation]
t_end = 5.0
rtol = 1e-12
atol = 1e-12
[parameters]
a = { value = 0.5, optimize = true, lower = 0.1, upper = 2.0 }
s0 = { value = 0.0 }
x0 = { value = 0.1 }
y0 = { value = 0.1 }
[periodic]
guard = "tick"
free = ["x", "y"]
guess = { s = 0.0, x = 0.1, y = 0.1 }
t_max = 5.0
sensitivities = ["a"]
objective = { kind = "spectral_radius" }
"#;
    let mut p = problem(&dir, "twins", text);
    p.optimizer.max_iters = 5;
    let setup = p.setup().expect("setup");
    match p.optimize(&setup, None) {
        Err(e @ Error::Periodic(PeriodicError::Nonsmooth(_))) => {
            let m = e.to_string();
            assert!(
                m.contains("two distinct multipliers") && m.contains("no gradient"),
                "{m}"
            );
        }
        Err(other) => panic!("expected Nonsmooth, got {other:?}"),
        Ok(_) => panic!("expected Nonsmooth, got an optimum"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `initial_algebraic` that leaves out an algebraic state (here the rectifier's only one,
/// iD): the build names it, and a problem file's error points at the key.
#[test]
fn missing_algebraic_start_value() {
    let spec = SystemSpec::Rectifier(DaeSettings {
        initial_algebraic: Some(Default::default()),
    });
    match spec.build() {
        Err(e @ BuildError::MissingAlgebraic { .. }) => {
            let m = e.to_string();
            assert!(m.contains("`iD`"), "{m}");
        }
        Err(other) => panic!("expected MissingAlgebraic, got {other:?}"),
        Ok(_) => panic!("expected MissingAlgebraic, got a system"),
    }
    let dir = scratch("algebraic");
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/problems/rectifier_capacitor.toml"))
        .unwrap()
        .replace(
            "[system]\nkind = \"rectifier\"",
            "[system]\nkind = \"rectifier\"\ninitial_algebraic = {}",
        );
    assert!(
        text.contains("initial_algebraic = {}"),
        "the file's [system] changed"
    );
    let f = dir.join("rect.toml");
    std::fs::write(&f, text).unwrap();
    match Problem::load(&f) {
        Err(e @ Error::Problem { .. }) => {
            let m = e.to_string();
            assert!(m.contains("initial_algebraic") && m.contains("`iD`"), "{m}");
        }
        Err(other) => panic!("expected a problem-file error, got {other:?}"),
        Ok(_) => panic!("expected a problem-file error, got a problem"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Newton's iteration limit: the fixed point of x⁺ = x³/3 + 1/2 (x* ≈ 0.5437) from 0.5
/// needs more than the one iteration allowed (`max_iters = 1`).
#[test]
fn periodic_newton_stops_at_its_iteration_limit() {
    let dir = scratch("maxiter");
    let text = ticking("x*x*x/3 + 0.5", 0.5) + "max_iters = 1\n";
    let p = problem(&dir, "limit", &text);
    match periodic_to_folder(&p, None, &dir.join("out")) {
        Err(
            e @ Error::Periodic(PeriodicError::NoConvergence {
                reason: NewtonFailure::MaxIterations,
                ..
            }),
        ) => {
            let m = e.to_string();
            assert!(
                m.contains("MaxIterations") && m.contains("after 1 iteration"),
                "{m}"
            );
        }
        Err(other) => panic!("expected MaxIterations, got {other:?}"),
        Ok(_) => panic!("expected MaxIterations, got an orbit"),
    }
    assert!(!dir.join("out").exists(), "no partial results");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bouncing ball kept near y = 0.5 over [0, 2] by its restitution e and throw v0
/// (θ = g, e, c, y0, v0).
fn ball() -> (Setup<'static, BouncingBall>, [ThetaEntry; 5]) {
    let cost = Objective::new(
        "f",
        vec![Term::squared(Quantity::Integral { output: 0 }, 0.5, 1.0)],
    );
    let setup = Setup::builder(&BouncingBall)
        .horizon(0.0, 2.0)
        .objective(cost)
        .build();
    let theta = [
        ThetaEntry::fixed("g", 9.81),
        ThetaEntry::free("e", 0.8).with_bounds(Some(0.1), Some(0.95)),
        ThetaEntry::fixed("c", 0.0),
        ThetaEntry::fixed("y0", 1.0),
        ThetaEntry::free("v0", 0.5).with_bounds(Some(-5.0), Some(5.0)),
    ];
    (setup, theta)
}

/// A constraint on an output the system does not have, and one on the 0th impact: the
/// constrained solver refuses both before any run, naming the index and what exists.
#[test]
fn a_constraint_naming_what_does_not_exist_is_an_index_error() {
    use hybridopt::cost::EventGuard;
    use hybridopt::optimize::ConstrainedError;
    let (setup, theta) = ball();
    let ny = setup.dims().outputs.len();
    let cases = [
        (
            ConstraintKind::Quantity(Quantity::Terminal { output: 9 }),
            format!("output 9 of a `terminal` constraint: the system has {ny} outputs"),
        ),
        (
            ConstraintKind::Quantity(Quantity::EventTime {
                guard: EventGuard::Guard(0),
                occurrence: 0,
            }),
            "occurrence 0 of a `event_time` constraint: occurrences count from 1".to_string(),
        ),
    ];
    for (kind, needle) in cases {
        let c = Constraints {
            list: vec![Constraint::new(kind, ConstraintBounds::Equal(0.5))],
            free_time: None,
        };
        match optimize_constrained(&setup, &theta, &c, &OptimizerSettings::default(), None) {
            Err(e @ Error::Constrained(ConstrainedError::Index(_))) => {
                assert!(e.to_string().contains(&needle), "{e}");
            }
            other => panic!("expected an index error, got {other:?}"),
        }
    }
}

/// A free final time whose value lies outside its bounds.
#[test]
fn a_free_final_time_outside_its_bounds_is_refused() {
    use hybridopt::optimize::ConstrainedError;
    let (setup, theta) = ball();
    let c = Constraints {
        list: vec![],
        free_time: Some(FreeTime {
            value: 3.0,
            lower: 1.0,
            upper: 2.5,
        }),
    };
    match optimize_constrained(&setup, &theta, &c, &OptimizerSettings::default(), None) {
        Err(e @ Error::Constrained(ConstrainedError::FreeTime(_))) => {
            let m = e.to_string();
            assert!(m.contains("t_end = 3 with lower = 1, upper = 2.5"), "{m}");
        }
        other => panic!("expected a free-time error, got {other:?}"),
    }
}

/// θ of the wrong length, a shooting point with the wrong number of variables, and θ with
/// nothing free: each names the sizes or what to mark.
#[test]
fn wrong_sizes_and_nothing_free_are_named() {
    let (setup, theta) = ball();
    match evaluate(&setup, &[9.81, 0.8], GradientMethod::Adjoint) {
        Err(e @ Error::ThetaLength { found: 2, .. }) => {
            assert!(
                e.to_string().contains("θ has 2 entries, the setup needs 5"),
                "{e}"
            );
        }
        other => panic!("expected ThetaLength, got {other:?}"),
    }
    let shooting = Shooting {
        nodes: NodeTimes::Segments(2),
        guess: Guess::SingleShooting,
        closure: None,
    };
    let c = Constraints::default();
    let ev = hybridopt::optimize::ShootingEvaluator::new(&setup, &theta, &c, &shooting).unwrap();
    match ev.point(Some(&[0.8])) {
        Err(e @ Error::VariableCount { found: 1, .. }) => {
            // e, v0 and the interior node's two states
            assert!(
                e.to_string()
                    .contains("1 variable values for 4 variables (e, v0, y@1, v@1)"),
                "{e}"
            );
        }
        other => panic!("expected VariableCount, got {other:?}"),
    }
    let fixed: Vec<ThetaEntry> = theta
        .iter()
        .map(|t| ThetaEntry::fixed(&t.name, t.value))
        .collect();
    match optimize(&setup, &fixed, &OptimizerSettings::default(), None) {
        Err(e @ Error::NothingToOptimize) => {
            assert!(e.to_string().contains("optimize = true"), "{e}");
        }
        other => panic!("expected NothingToOptimize, got {other:?}"),
    }
}

/// A sparsity pattern with another number of rows than states.
#[test]
fn a_pattern_with_the_wrong_row_count_is_refused() {
    use hybridopt::model::{Pattern, PatternError};
    match Pattern::from_rows(3, &[vec![0], vec![1]]) {
        Err(e @ PatternError::RowCount { given: 2, n: 3 }) => {
            assert!(e.to_string().contains("2 rows given for 3 states"), "{e}");
        }
        other => panic!("expected RowCount, got {other:?}"),
    }
}

/// A spring whose two ends meet has no direction: the mechanism's forces refuse with
/// `ModelError::ZeroLength` naming the points, where a stretched spring gives its force
/// `k (ℓ − ℓ0)` towards the anchor.
#[test]
fn a_spring_of_zero_length_is_a_model_error() {
    use hybridopt::multibody::{Mechanism, ParamRef};
    use hybridopt::ModelError;
    let mut m = Mechanism::new(2);
    let anchor = m.fixed_point(0.0, 0.0);
    let body = m.moving_point(0);
    m.point_mass(body, ParamRef::Const(1.0));
    m.spring(anchor, body, ParamRef::Const(10.0), ParamRef::Const(0.25));
    // at (0.3, 0.4): ℓ = 0.5, |F| = 10 · 0.25 = 2.5, pulling back along −(0.6, 0.8)
    let f = m.forces(&[0.3, 0.4], &[0.0, 0.0], &[]).unwrap();
    assert!(
        (f[0] + 1.5).abs() < 1e-14 && (f[1] + 2.0).abs() < 1e-14,
        "{f:?}"
    );
    let e = m.forces(&[0.0, 0.0], &[0.0, 0.0], &[]).unwrap_err();
    assert!(
        matches!(e, ModelError::ZeroLength { a: 0, b: 1, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("zero length"), "{e}");
}

/// Multiple shooting from a table whose `mode` column says `left` after the switch: the
/// continuity rows close in the states, but the first segment ends in `right` while node 1
/// was given `left` — a trajectory the system cannot run. The converged point is refused
/// with `ShootingError::ModeMismatch` naming the node, both modes and the table.
#[test]
fn a_guess_in_the_wrong_mode_is_refused_at_the_end() {
    use hybridopt::optimize::{GuessTable, ShootingError};
    use hybridopt::systems::SwitchedLinear;
    let cost = Objective::new(
        "f",
        vec![Term::squared(Quantity::Terminal { output: 0 }, 0.3, 1.0)],
    );
    let setup = Setup::builder(&SwitchedLinear)
        .horizon(0.0, 2.0)
        .objective(cost)
        .tolerances(1e-10, 1e-10)
        .build();
    let defaults = SwitchedLinear::default_params();
    let names = ["k_left", "k_right", "d_left", "d_right", "f", "x1_0"];
    let mut theta: Vec<ThetaEntry> = names
        .iter()
        .zip(&defaults)
        .map(|(&n, &v)| ThetaEntry::fixed(n, v))
        .collect();
    theta.push(ThetaEntry::free("x2_0", 0.5).with_bounds(Some(-3.0), Some(3.0)));
    // the run switches to `right` (x1 crosses 0) before t = 1, where node 1 sits
    let traj = setup.simulate(&defaults).unwrap();
    assert!(traj.events[0].t < 1.0, "{}", traj.events[0].t);
    // the run's states, every row claiming the mode `left`
    let mut table = GuessTable::from_trajectory(&traj, setup.dims());
    let left = setup.dims().modes.iter().position(|m| m == "left").unwrap();
    table.mode = Some(vec![left; table.t.len()]);
    let shooting = Shooting {
        nodes: NodeTimes::Segments(2),
        guess: Guess::Table(table),
        closure: None,
    };
    let e = optimize_shooting(
        &setup,
        &theta,
        &Constraints::default(),
        &shooting,
        &OptimizerSettings::default(),
        None,
    )
    .unwrap_err();
    match &e {
        Error::Shooting(ShootingError::ModeMismatch {
            node,
            expected,
            found,
            ..
        }) => assert_eq!(
            (*node, expected.as_str(), found.as_str()),
            (1, "left", "right")
        ),
        other => panic!("expected ModeMismatch, got {other}"),
    }
    assert!(e.to_string().contains("initial guess"), "{e}");
}
