//! Expression-defined systems (`[system] kind = "custom"`): the expression ball against
//! the built-in ball (same ψ and gradient), the thermostat's adjoint against direct, dual
//! and central FD, the expression language's values and derivatives against closed forms,
//! and the errors (caret under the column, names in scope, structural checks).
//!
//! Every tolerance states the measured figure and its margin.

use crate::common;

use common::{assert_close, assert_within, Rng};
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::sensitivity::{fd_gradients, FdOptions, FdScale};
use hybridopt::testing::Env;
use hybridopt::testing::Node;
use hybridopt::testing::{parse, Scope};
use hybridopt::Error;
use num_dual::Dual64;
use std::path::{Path, PathBuf};

fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(name)
}

fn problem(name: &str) -> Problem {
    Problem::load(&path(name)).unwrap()
}

fn text(name: &str) -> String {
    std::fs::read_to_string(path(name)).unwrap()
}

/// The parse error message of `text` (which must fail).
fn parse_error(text: &str) -> String {
    match Problem::parse(text, Path::new("edited.toml")) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e @ Error::Problem { .. }) => e.to_string(),
        Err(other) => panic!("expected Error::Problem, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// the expression ball equals the built-in ball

/// custom_ball.toml and bouncing_ball.toml describe the same system, parameters and cost;
/// ψ and the adjoint and direct gradients agree to ≤ 1e-12 relative (measured: 0, the
/// expressions are evaluated in the same floating-point order as the Rust code).
#[test]
fn custom_ball_equals_builtin_ball() {
    let custom = problem("custom_ball.toml");
    let builtin = problem("bouncing_ball.toml");
    assert_eq!(custom.dims.params, builtin.dims.params);
    let (sc, sb) = (custom.setup().unwrap(), builtin.setup().unwrap());
    let theta = builtin.theta_values();
    for method in [GradientMethod::Adjoint, GradientMethod::Direct] {
        let c = evaluate(&sc, &theta, method).unwrap();
        let b = evaluate(&sb, &theta, method).unwrap();
        let what = format!("{} ψ custom vs built-in", method.name());
        assert_within(
            &what,
            ((c.values[0] - b.values[0]) / b.values[0]).abs(),
            1e-12,
        );
        let what = format!("{} gradient custom vs built-in", method.name());
        assert_close(&what, &c.gradients[0], &b.gradients[0], 1e-12, 1e-3);
        assert_eq!(c.trajectory.events.len(), b.trajectory.events.len());
    }
}

/// Same at other parameter values (drag off, a throw upwards, another restitution), where
/// a difference in any expression would show.
#[test]
fn custom_ball_equals_builtin_ball_elsewhere() {
    let mut custom = problem("custom_ball.toml");
    let mut builtin = problem("bouncing_ball.toml");
    for (name, v) in [("c", 0.3), ("v0", 1.5), ("e", 0.85), ("g", 9.0)] {
        custom.set_param(name, v).unwrap();
        builtin.set_param(name, v).unwrap();
    }
    let (sc, sb) = (custom.setup().unwrap(), builtin.setup().unwrap());
    let theta = builtin.theta_values();
    let c = evaluate(&sc, &theta, GradientMethod::Adjoint).unwrap();
    let b = evaluate(&sb, &theta, GradientMethod::Adjoint).unwrap();
    assert_within(
        "ψ custom vs built-in (moved θ)",
        ((c.values[0] - b.values[0]) / b.values[0]).abs(),
        1e-12,
    );
    assert_close(
        "adjoint gradient (moved θ)",
        &c.gradients[0],
        &b.gradients[0],
        1e-12,
        1e-3,
    );
}

// ---------------------------------------------------------------------------------------
// the thermostat: two modes, parameter thresholds in the guards

/// At rtol = atol = 1e-10: adjoint vs direct vs dual vs central FD, each ≤ 1e-7 relative
/// (per component, floor 1e-3 of the largest). Measured: direct 6.3e-11, dual 7.4e-11;
/// FD 3.5e-7 with the default step (rel 1e-4: ψ has large higher derivatives in the
/// thresholds, 21 switchings compound), 1.8e-10 with rel 1e-5, 4th order.
#[test]
fn thermostat_adjoint_direct_dual_fd_agree() {
    let p = problem("custom_thermostat.toml");
    assert_eq!(p.solver.rtol, 1e-10);
    let s = p.setup().unwrap();
    let theta = p.theta_values();
    let adj = evaluate(&s, &theta, GradientMethod::Adjoint).unwrap();
    let g = &adj.gradients[0];
    assert!(
        adj.trajectory.events.len() >= 20,
        "{} events",
        adj.trajectory.events.len()
    );
    for m in [GradientMethod::Direct, GradientMethod::Dual] {
        let other = evaluate(&s, &theta, m).unwrap();
        assert_close(
            &format!("thermostat {} vs adjoint", m.name()),
            &other.gradients[0],
            g,
            1e-9,
            1e-3,
        );
    }
    let fd = fd_gradients(&s, &theta, FdOptions::fixed(1e-5, FdScale::Unit)).unwrap();
    // measured 1.8e-10
    assert_close("thermostat FD (rel 1e-5) vs adjoint", &fd[0], g, 5e-9, 1e-3);
    // the thresholds enter only through the guards: their gradient is all event timing
    let i_low = p.dims.param_index("T_low").unwrap();
    assert!(g[i_low].abs() > 0.1, "dψ/dT_low = {}", g[i_low]);
}

/// The relay alternates heating/cooling, and the threshold crossings are where the file
/// says: T = T_high when the heater goes off, T = T_low when it comes on.
#[test]
fn thermostat_switches_at_its_thresholds() {
    let p = problem("custom_thermostat.toml");
    let s = p.setup().unwrap();
    let tr = s.simulate(&p.theta_values()).unwrap();
    let names: Vec<String> = tr
        .events
        .iter()
        .map(|e| p.dims.guard_name(e.guard))
        .collect();
    for (i, n) in names.iter().enumerate() {
        assert_eq!(n, if i % 2 == 0 { "off" } else { "on" }, "event {i}");
    }
    for e in &tr.events {
        let want = if p.dims.guard_name(e.guard) == "off" {
            21.0
        } else {
            19.0
        };
        assert!(
            (e.before.y[0] - want).abs() < 1e-9,
            "T at {} = {}",
            e.t,
            e.before.y[0]
        );
    }
}

// ---------------------------------------------------------------------------------------
// the expression language

fn scope() -> Scope {
    Scope::new()
        .with("t", Node::Time)
        .with_all(&["x".to_string(), "y".to_string()], Node::State)
        .with_all(&["a".to_string()], Node::Param)
}

/// Value of `src` at (t, x, y, a) in f64.
fn value(src: &str, v: [f64; 4]) -> f64 {
    let e = parse(src, &scope()).unwrap_or_else(|err| panic!("{src}: {err:?}"));
    e.eval(&Env {
        t: v[0],
        x: &v[1..3],
        u: &[],
        p: &v[3..4],
    })
}

/// Each operator and function against its f64 closed form, with precedence and
/// associativity (`-x^2 = −(x²)`, `2^3^2 = 2⁹`, left-associative `-` and `/`).
#[test]
fn expressions_evaluate_to_their_closed_forms() {
    let at = [0.5, 1.3, -0.7, 2.0];
    let (t, x, y, a) = (0.5f64, 1.3f64, -0.7f64, 2.0f64);
    let cases: Vec<(&str, f64)> = vec![
        ("1 + 2*3", 7.0),
        ("-x^2", -(x * x)),
        ("2^3^2", 512.0),
        ("10 - 4 - 3", 3.0),
        ("8 / 4 / 2", 1.0),
        ("(x + y) * a", (x + y) * a),
        ("x^0.5 + y^2 + a^-1", x.powf(0.5) + y * y + 1.0 / a),
        ("pow(x, a) + pow(-2, 2)", x.powf(a) + 4.0),
        ("sin(x)+cos(y)+tan(t)", x.sin() + y.cos() + t.tan()),
        ("exp(y) + ln(x) + sqrt(a)", y.exp() + x.ln() + a.sqrt()),
        (
            "abs(y) + tanh(x) + atan2(y, x)",
            y.abs() + x.tanh() + y.atan2(x),
        ),
        ("min(x, y) + max(x, y)", x + y),
        ("if(x > y, 1, 2) + if(x < y, 10, 20)", 21.0),
        ("if(x >= 1.3 && y <= -0.7, 1, 0)", 1.0),
        ("if(x == 1 || !(y != -0.7), 5, 6)", 5.0),
        ("t * 1.5e1 + .25", t * 15.0 + 0.25),
        ("a * pi", a * std::f64::consts::PI),
        ("− x", -x),
    ];
    for (src, want) in cases {
        let got = value(src, at);
        assert!(
            (got - want).abs() <= 1e-15 * want.abs().max(1.0),
            "{src}: {got} vs {want}"
        );
    }
}

/// Derivatives through dual numbers against the hand-written derivative and against a
/// central difference of the f64 evaluation (two witnesses), at random points.
#[test]
fn expression_derivatives_are_exact() {
    let src =
        "sin(x*y) + exp(-a*t)*x^3 / (1 + y^2) + sqrt(abs(y)) + atan2(y, x) + min(x, a)*tanh(y)";
    let e = parse(src, &scope()).unwrap();
    let d_dx = |x: f64, y: f64, a: f64, t: f64| {
        y * (x * y).cos() + (-a * t).exp() * 3.0 * x * x / (1.0 + y * y) - y / (x * x + y * y)
            + if x <= a { y.tanh() } else { 0.0 }
    };
    let mut rng = Rng(11);
    let mut worst_exact = 0.0f64;
    let mut worst_fd = 0.0f64;
    for _ in 0..200 {
        let (x, y, a, t) = (
            rng.uniform(0.2, 2.0),
            rng.uniform(-2.0, 2.0),
            rng.uniform(0.1, 3.0),
            rng.uniform(0.0, 2.0),
        );
        if (x - a).abs() < 1e-3 {
            continue;
        }
        let xs = [Dual64::new(x, 1.0), Dual64::from(y)];
        let ps = [Dual64::from(a)];
        let d = e
            .eval(&Env {
                t: Dual64::from(t),
                x: &xs,
                u: &[],
                p: &ps,
            })
            .eps;
        let want = d_dx(x, y, a, t);
        worst_exact = worst_exact.max((d - want).abs() / want.abs().max(1.0));
        let h = 1e-6;
        let f = |x: f64| {
            e.eval(&Env {
                t,
                x: &[x, y],
                u: &[],
                p: &[a],
            })
        };
        let fd = (f(x + h) - f(x - h)) / (2.0 * h);
        worst_fd = worst_fd.max((d - fd).abs() / fd.abs().max(1.0));
    }
    // measured: 1.8e-15 (round-off) and 1.1e-9 (FD truncation + round-off)
    assert_within("dual d/dx vs hand-written", worst_exact, 1e-13);
    assert_within("dual d/dx vs central FD", worst_fd, 1e-7);
}

/// Constant sub-expressions are folded: `2*pi*x` has 3 nodes, `(1+2)^2` one.
#[test]
fn constants_are_folded() {
    assert_eq!(parse("(1+2)^2", &scope()).unwrap().constant(), Some(9.0));
    assert_eq!(parse("2*pi*x", &scope()).unwrap().len(), 3);
    assert_eq!(parse("x^2", &scope()).unwrap().len(), 2);
}

// ---------------------------------------------------------------------------------------
// errors

/// An unknown name in a flow: the message names the file and key, shows the expression
/// with the caret under the name's column, and lists the names in scope.
#[test]
fn unknown_name_shows_caret_and_scope() {
    let t = text("custom_ball.toml").replace("v = \"-g - c*v\"", "v = \"-g - cd*v\"");
    let m = parse_error(&t);
    println!("{m}");
    assert!(m.starts_with("edited.toml: "), "{m}");
    assert!(
        m.contains("modes \"flight\": flow.v: unknown name `cd`"),
        "{m}"
    );
    assert!(m.contains("\n    -g - cd*v\n         ^\n"), "{m}");
    assert!(
        m.contains("names in scope: t, y, v, g, e, c, y0, v0, pi"),
        "{m}"
    );
}

/// A syntax error in a reset: caret at the offending token; the reset's scope has no
/// controls (the thermostat has none, the ball's reset shows states and parameters).
#[test]
fn syntax_errors_show_the_column() {
    let cases = [
        (
            "reset = { v = \"-e*v\" }",
            "reset = { v = \"-e*(v\" }",
            "reset.v",
            5,
            "expected `)`",
        ),
        (
            "reset = { v = \"-e*v\" }",
            "reset = { v = \"-e**v\" }",
            "reset.v",
            3,
            "expected a number",
        ),
        (
            "expr = \"y\", dir",
            "expr = \"y y\", dir",
            "guard \"ground\": expr",
            2,
            "unexpected name `y`",
        ),
        (
            "expr = \"y\", dir",
            "expr = \"\", dir",
            "guard \"ground\": expr",
            0,
            "empty expression",
        ),
        (
            "expr = \"y\", dir",
            "expr = \"sin y\", dir",
            "guard \"ground\": expr",
            0,
            "`sin` is a function",
        ),
        (
            "expr = \"y\", dir",
            "expr = \"e(y)\", dir",
            "guard \"ground\": expr",
            0,
            "`e` is not a function",
        ),
        (
            "expr = \"y\", dir",
            "expr = \"atan2(y)\", dir",
            "guard \"ground\": expr",
            0,
            "takes 2 argument(s), got 1",
        ),
        (
            "expr = \"y\", dir",
            "expr = \"y < 1 < 2\", dir",
            "guard \"ground\": expr",
            6,
            "do not chain",
        ),
        (
            "expr = \"y\", dir",
            "expr = \"y # 2\", dir",
            "guard \"ground\": expr",
            2,
            "unexpected character `#`",
        ),
        (
            "expr = \"y\", dir",
            "expr = \"1e999\", dir",
            "guard \"ground\": expr",
            0,
            "not a finite number",
        ),
    ];
    for (from, to, key, col, what) in cases {
        let t = text("custom_ball.toml").replace(from, to);
        let m = parse_error(&t);
        assert!(m.contains(key) && m.contains(what), "{to}: {m}");
        let caret = m
            .lines()
            .find(|l| l.trim() == "^")
            .unwrap_or_else(|| panic!("{m}"));
        assert_eq!(caret.find('^'), Some(4 + col), "{to}:\n{m}");
    }
    // a control is not in a reset's scope
    let t = text("custom_ball.toml")
        .replace(
            "states = [\"y\", \"v\"]",
            "states = [\"y\", \"v\"]\ncontrols = [\"u\"]",
        )
        .replace("-e*v", "-e*v + u");
    let m = parse_error(&t);
    assert!(
        m.contains("reset.v: unknown name `u`")
            && m.contains("names in scope: t, y, v, g, e, c, y0, v0, pi"),
        "{m}"
    );
}

/// Structural errors: each names the key and what is valid.
#[test]
fn structural_errors_name_the_key() {
    let ball = text("custom_ball.toml");
    let thermo = text("custom_thermostat.toml");
    let cases: Vec<(String, &str)> = vec![
        (ball.replace("flow = { y = \"v\", v = \"-g - c*v\" }", "flow = { y = \"v\" }"),
         "flow: needs an expression for state `v`"),
        (ball.replace("flow = { y = \"v\",", "flow = { y = \"v\", w = \"1\","),
         "flow: `w` is not a state; valid: y, v"),
        (ball.replace("parameters = [\"g\",", "parameters = [\"y\", \"g\","),
         "`y` is declared twice"),
        (ball.replace("states = [\"y\", \"v\"]", "states = [\"y\", \"t\"]"),
         "`t` is reserved"),
        (ball.replace("states = [\"y\", \"v\"]", "states = [\"y\", \"v w\"]"),
         "`v w` is not a valid name"),
        (ball.replace("reset = { v = ", "reset = { q = "), "reset: `q` is not a state"),
        (ball.replace("direction = \"falling\"", "direction = \"down\""),
         "system.modes#1.guards#1.direction = \"down\" is unknown; valid: falling, rising, either"),
        (thermo.replace("next = \"cooling\"", "next = \"cool\""),
         "next: mode `cool` is unknown; modes: heating, cooling"),
        (thermo.replace("initial_mode = \"heating\"", "initial_mode = \"warm\""),
         "initial_mode: mode `warm` is unknown"),
        (thermo.replace("name = \"on\"", "name = \"off\""), "`off` is declared twice"),
        (thermo.replace("outputs = { power = \"P\" }", "outputs = { watts = \"P\" }"),
         "`watts` is not a output; valid: T, power"),
        (ball.replace("initial = { y = \"y0\", v = \"v0\" }", "initial = { y = \"y0\", v = \"y\" }"),
         "initial.v: unknown name `y`"),
        (ball.replace("kind = \"custom\"", "kind = \"custom\"\nflows = 1"), "unknown field `flows`"),
        (ball.replace("[simulation]", "[[system.modes]]\nname = \"flight\"\nflow = { y = \"v\", v = \"0\" }\n\n[simulation]"),
         "`flight` is declared twice"),
    ];
    for (t, want) in cases {
        let m = parse_error(&t);
        assert!(m.contains(want), "want `{want}` in:\n{m}");
        assert!(m.starts_with("edited.toml: "), "{m}");
    }
}

// ---------------------------------------------------------------------------------------
// the reverse-mode VJP

/// A custom system that uses every function and operator, with a control, two modes and
/// outputs that differ per mode.
const EVERYTHING: &str = r#"
[system]
kind = "custom"
states = ["x", "y", "z"]
parameters = ["a", "b"]
controls = ["u"]
constants = { k = 0.3 }
initial = { x = "a", y = "b", z = "0.5" }
outputs = [
  { name = "o1", expr = "x*y - z/b + pow(a, y) + x^0.5" },
  { name = "o2", expr = "if(x > y && !(z < 0), sin(x)*u, cos(y)) + atan2(y, x)" },
]
[[system.modes]]
name = "m1"
flow = { x = "-a*x + b*y^2 - k*u", y = "sin(x) + cos(y)*tan(z) - exp(-t)*ln(a)", z = "sqrt(abs(x)) + tanh(y)*sinh(z) - cosh(u)" }
guards = [ { name = "g1", expr = "x - 1", direction = "rising", next = "m2" } ]
[[system.modes]]
name = "m2"
flow = { x = "min(x, y)*max(a, u) + asin(z/4) + acos(z/4) + atan(x)", y = "x^-2 + y^3 - (x - y)/(1 + b^2)", z = "if(u >= 0 || x == y, u*x, -u)" }
outputs = { o2 = "x^1.5 * u" }
[simulation]
t_end = 1.0
[parameters]
a = { value = 1.2 }
b = { value = 0.7 }
[controls]
basis = "piecewise_constant"
intervals = 1
[[cost]]
kind = "terminal"
output = "o1"
"#;

/// The reverse-mode products of the custom system against the dual passes (one direction
/// per pass, and vector duals): every function, both modes, k = 1 and k = 3 cotangents,
/// given and absent output cotangents, at 300 random points. Measured: 4.4e-16 relative
/// to the largest entry (round-off).
#[test]
fn reverse_vjp_equals_dual_passes() {
    use hybridopt::model::{
        vjp_by_dual_passes, vjp_by_scalar_duals, OutputCotangent, VjpArgs, VjpOut,
    };
    use hybridopt::HybridSystem;
    let p = Problem::parse(EVERYTHING, Path::new("everything.toml")).unwrap();
    let sys = p.system();
    let (nx, nu, np, ny) = (3, 1, 2, 2);
    let mut rng = Rng(3);
    let mut worst = 0.0f64;
    for trial in 0..300 {
        let mode = trial % 2;
        let k = if trial % 3 == 0 { 3 } else { 1 };
        let x = [
            rng.uniform(0.1, 2.0),
            rng.uniform(0.1, 2.0),
            rng.uniform(-1.5, 1.5),
        ];
        let u = [rng.uniform(-1.0, 1.0)];
        let th = [rng.uniform(0.5, 2.0), rng.uniform(0.5, 2.0)];
        let lam = rng.vec(k * nx, -1.0, 1.0);
        let yb = rng.vec(k * ny, -1.0, 1.0);
        let with_y = trial % 4 != 1;
        let ybar = if with_y {
            OutputCotangent::Given(&yb)
        } else {
            OutputCotangent::None
        };
        let args = VjpArgs {
            mode,
            t: rng.uniform(0.0, 1.0),
            x: &x,
            u: &u,
            p: &th,
            k,
            lam: &lam,
            ybar,
        };
        let run = |f: &dyn Fn(VjpArgs<'_>, VjpOut<'_>) -> Result<(), hybridopt::ModelError>| {
            let (mut gx, mut gu, mut gp, mut y) = (
                vec![9.0; k * nx],
                vec![9.0; k * nu],
                vec![9.0; k * np],
                vec![0.0; ny],
            );
            f(
                args,
                VjpOut {
                    gx: &mut gx,
                    gu: &mut gu,
                    gp: &mut gp,
                    y: &mut y,
                },
            )
            .unwrap();
            [gx, gu, gp].concat()
        };
        let rev = run(&|a, o| sys.flow_vjp(a, o));
        for (name, other) in [
            ("scalar duals", run(&|a, o| vjp_by_scalar_duals(sys, a, o))),
            ("vector duals", run(&|a, o| vjp_by_dual_passes(sys, a, o))),
        ] {
            let big = other.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
            for (i, (r, d)) in rev.iter().zip(&other).enumerate() {
                let e = (r - d).abs() / big;
                assert!(
                    e <= 1e-13,
                    "{name}, trial {trial}, entry {i}: reverse {r} vs dual {d}"
                );
                worst = worst.max(e);
            }
        }
    }
    assert_within("reverse VJP vs dual passes", worst, 1e-13);
}

/// The gradients of a whole run with the reverse-mode VJP (the adjoint) against direct
/// and dual (which never call it) on the system with every function, at the default
/// tolerances. Measured: direct 5.5e-8, dual 8.5e-8.
#[test]
fn everything_system_adjoint_matches_direct_and_dual() {
    let p = Problem::parse(EVERYTHING, Path::new("everything.toml")).unwrap();
    let s = p.setup().unwrap();
    let theta = p.theta_values();
    let adj = evaluate(&s, &theta, GradientMethod::Adjoint).unwrap();
    assert!(!adj.trajectory.events.is_empty(), "the guard must fire");
    for m in [GradientMethod::Direct, GradientMethod::Dual] {
        let o = evaluate(&s, &theta, m).unwrap();
        assert_close(
            &format!("everything: {} vs adjoint", m.name()),
            &o.gradients[0],
            &adj.gradients[0],
            1e-6,
            1e-3,
        );
    }
}

/// A terminal guard ends the run at its event: the expression ball with `terminal = true`
/// stops at the first impact, whose time has the closed form of a drag-free fall
/// (c = 0): t₁ = (v0 + √(v0² + 2 g y0))/g (measured: equal to round-off).
#[test]
fn terminal_guard_ends_the_run() {
    let t = text("custom_ball.toml").replace(
        "direction = \"falling\",",
        "direction = \"falling\", terminal = true,",
    );
    let mut p = Problem::parse(&t, Path::new("terminal.toml")).unwrap();
    p.set_param("c", 0.0).unwrap();
    p.set_param("v0", 0.5).unwrap();
    assert!(p.dims.guards[0].terminal);
    let tr = p.setup().unwrap().simulate(&p.theta_values()).unwrap();
    assert_eq!(tr.events.len(), 1);
    let (g, y0, v0) = (9.81f64, 1.0f64, 0.5f64);
    let want = (v0 + (v0 * v0 + 2.0 * g * y0).sqrt()) / g;
    assert_within(
        "terminal event time vs closed form",
        ((tr.t_final - want) / want).abs(),
        1e-9,
    );
    assert_eq!(tr.t_final, tr.events[0].t);
}
