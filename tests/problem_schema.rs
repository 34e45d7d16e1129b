//! The typed problem schema: a bad value of every kind (system, its settings, integration
//! method, control basis, cost term, solver, gradient method, kink policy) gives an error
//! that names the file, the key as a dotted path, its line and the valid values; a
//! parameter left out of `[parameters]` takes the system's default and the run equals the
//! one with the value written out.

use hybridopt::error::Error;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use std::path::{Path, PathBuf};

const BALL: &str = r#"
[system]
kind = "bouncing_ball"
[simulation]
t_end = 3.0
rtol = 1e-8
atol = 1e-8
[parameters]
g  = { value = 9.81 }
e  = { value = 0.8 }
c  = { value = 0.1 }
y0 = { value = 1.0 }
v0 = { value = 0.0, optimize = true }
[[cost]]
kind = "integral_squared"
output = "y"
target = 0.0
[[cost]]
kind = "event_time_squared"
guard = "ground"
occurrence = 2
target = 1.5
"#;

const THRUST: &str = r#"
[system]
kind = "thrust_ball"
[simulation]
t_end = 1.0
[controls]
basis = "piecewise_constant"
intervals = 4
[[cost]]
kind = "effort"
"#;

const FIVE_BAR: &str = r#"
[system]
kind = "five_bar"
formulation = "index1"
[simulation]
t_end = 0.5
[[cost]]
kind = "integral"
output = "vy2"
"#;

fn file() -> PathBuf {
    PathBuf::from("schema_case.toml")
}

/// The problem error of `text` (the file named, nothing else).
fn problem_error(text: &str) -> String {
    match Problem::parse(text, &file()) {
        Err(Error::Problem { file: f, message }) => {
            assert_eq!(f, file());
            message
        }
        Err(other) => panic!("not a problem-file error: {other:?}"),
        Ok(_) => panic!("parsed:\n{text}"),
    }
}

/// The 1-based line of the only line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    let hits: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "{needle:?} in\n{text}");
    hits[0]
}

/// `text` with `from` replaced (which must be there) by `to`.
fn with(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?}");
    text.replacen(from, to, 1)
}

/// The error starts with the key's path, ends with the line of `at` and lists `valid`.
fn check(text: &str, path: &str, at: &str, valid: &[&str]) -> String {
    let m = problem_error(text);
    assert!(m.starts_with(path), "{m:?} does not start with {path:?}");
    let line = line_of(text, at);
    assert!(
        m.ends_with(&format!("(line {line})")),
        "{m:?}: not line {line}"
    );
    for v in valid {
        assert!(m.contains(v), "{m:?} lacks the valid value {v:?}");
    }
    // the command line says the same, after the file's name
    let full = Error::Problem {
        file: file(),
        message: m.clone(),
    }
    .to_string();
    assert!(full.starts_with("schema_case.toml: "), "{full}");
    m
}

#[test]
fn the_shipped_kinds_of_the_cases_parse() {
    for t in [BALL, THRUST, FIVE_BAR] {
        Problem::parse(t, &file()).unwrap();
    }
}

#[test]
fn each_kind_s_bad_value_names_file_key_line_and_valid_values() {
    let m = check(
        &with(BALL, "kind = \"bouncing_ball\"", "kind = \"rocket\""),
        "system.kind: unknown system kind \"rocket\"; valid kinds: ",
        "rocket",
        &[
            "bouncing_ball",
            "five_bar",
            "custom",
            "compass_gait",
            "biped",
        ],
    );
    assert!(m.contains("unknown system kind"), "{m}");
    check(
        &with(
            FIVE_BAR,
            "formulation = \"index1\"",
            "formulation = \"index3\"",
        ),
        "system.formulation = \"index3\" is unknown; valid: ",
        "index3",
        &["index1", "penalty"],
    );
    // a kind without settings takes no key but `kind`
    check(
        &with(
            BALL,
            "kind = \"bouncing_ball\"",
            "kind = \"bouncing_ball\"\nmass = 2.0",
        ),
        "system.mass: ",
        "mass",
        &["mass"],
    );
    check(
        &with(BALL, "atol = 1e-8", "atol = 1e-8\nmethod = \"rk4\""),
        "simulation.method = \"rk4\" is unknown; valid: ",
        "rk4",
        &["dopri5", "sdirk3"],
    );
    check(
        &with(THRUST, "\"piecewise_constant\"", "\"spline\""),
        "controls.basis = \"spline\" is unknown; valid: ",
        "spline",
        &["piecewise_constant", "piecewise_linear", "cubic_bspline"],
    );
    check(
        &with(
            BALL,
            "kind = \"event_time_squared\"",
            "kind = \"event_time_cubed\"",
        ),
        "cost#2.kind: unknown cost kind \"event_time_cubed\"; valid kinds: ",
        "event_time_cubed",
        &[
            "parameter_squared",
            "integral",
            "integral_squared",
            "track",
            "effort",
            "terminal",
            "terminal_squared",
            "event_time",
            "event_time_squared",
            "event_output_squared",
        ],
    );
    for (k, bad, valid) in [
        ("solver", "newton", &["lbfgs", "gd"][..]),
        (
            "gradient",
            "backprop",
            &["adjoint", "direct", "fd", "dual"][..],
        ),
        ("at_kink", "ignore", &["descent", "stop"][..]),
    ] {
        let text = format!("{BALL}[optimizer]\n{k} = \"{bad}\"\n");
        let m = check(
            &text,
            &format!("optimizer.{k} = \"{bad}\" is unknown; valid: "),
            bad,
            valid,
        );
        // the CLI test's wording
        assert!(m.contains(&format!("{k} = \"{bad}\" is unknown")), "{m}");
    }
}

#[test]
fn a_cost_term_s_keys_are_those_of_its_kind() {
    // a key the kind does not take, in the second term: its path and line
    let text = with(BALL, "occurrence = 2", "occurrence = 2\noutput = \"v\"");
    let m = check(
        &text,
        "cost#2.output: ",
        "output = \"v\"",
        &["guard", "target", "weight"],
    );
    assert!(m.contains("output"), "{m}");
    // a key it needs: the term's header line
    let text = with(BALL, "target = 1.5\n", "");
    let m = problem_error(&text);
    assert!(
        m.starts_with("cost#2: missing field `target`")
            && m.ends_with(&format!("(line {})", header(&text, 2))),
        "{m}"
    );
    // a name that the system does not have
    check(
        &with(BALL, "guard = \"ground\"", "guard = \"floor\""),
        "cost#2.guard: guard `floor` is unknown; valid guards: ground",
        "floor",
        &["ground"],
    );
    check(
        &with(BALL, "output = \"y\"", "output = \"height\""),
        "cost#1.output: output `height` is unknown; valid outputs: y, v, energy",
        "height",
        &[],
    );
    // a type error names the key, not only the table
    check(
        &with(BALL, "occurrence = 2", "occurrence = \"second\""),
        "cost#2.occurrence: invalid type",
        "second",
        &[],
    );
    check(
        &with(BALL, "c  = { value = 0.1 }", "c  = { value = \"x\" }"),
        "parameters.c.value: invalid type",
        "value = \"x\"",
        &[],
    );
    // no kind at all
    let text = with(BALL, "kind = \"event_time_squared\"\n", "");
    let m = problem_error(&text);
    assert!(
        m.starts_with("cost#2: needs `kind`; valid kinds: ")
            && m.contains("event_output_squared")
            && m.ends_with(&format!("(line {})", header(&text, 2))),
        "{m}"
    );
}

/// The line of the n-th `[[cost]]` header.
fn header(text: &str, n: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains("[[cost]]"))
        .nth(n - 1)
        .map(|(i, _)| i + 1)
        .unwrap()
}

/// A parameter left out of `[parameters]` takes its default, fixed; the run (cost and
/// adjoint gradient, every event) equals the one with the value written out.
#[test]
fn an_omitted_parameter_takes_the_system_default() {
    let defaults = hybridopt::systems::defaults("bouncing_ball").unwrap();
    let d = |n: &str| defaults.iter().find(|(k, _)| k == n).unwrap().1;
    let explicit = with(
        &with(
            BALL,
            "g  = { value = 9.81 }",
            &format!("g  = {{ value = {:?} }}", d("g")),
        ),
        "c  = { value = 0.1 }",
        &format!("c  = {{ value = {:?} }}", d("c")),
    );
    let omitted = with(
        &with(BALL, "g  = { value = 9.81 }\n", ""),
        "c  = { value = 0.1 }\n",
        "",
    );
    let a = Problem::parse(&explicit, &file()).unwrap();
    let b = Problem::parse(&omitted, &file()).unwrap();
    assert_eq!(a.theta_values(), b.theta_values());
    for e in b.theta.iter().filter(|e| e.name == "g" || e.name == "c") {
        assert!(
            !e.optimize && e.lower.is_none() && e.upper.is_none(),
            "{e:?}"
        );
    }
    let ta = a.setup().unwrap().simulate(&a.theta_values()).unwrap();
    let tb = b.setup().unwrap().simulate(&b.theta_values()).unwrap();
    assert_eq!(ta.y_final, tb.y_final);
    assert_eq!(ta.events.len(), tb.events.len());
    assert!(ta.events.len() >= 2);
    for (x, y) in ta.events.iter().zip(&tb.events) {
        assert_eq!(x.t, y.t);
    }
    let ga = evaluate(
        &a.setup().unwrap(),
        &a.theta_values(),
        GradientMethod::Adjoint,
    )
    .unwrap();
    let gb = evaluate(
        &b.setup().unwrap(),
        &b.theta_values(),
        GradientMethod::Adjoint,
    )
    .unwrap();
    assert_eq!(ga.values, gb.values);
    assert_eq!(ga.gradients, gb.gradients);
    // with no [parameters] table at all, every entry is its default
    let start = BALL.find("[parameters]").unwrap();
    let end = BALL.find("[[cost]]").unwrap();
    let none = format!("{}{}", &BALL[..start], &BALL[end..]);
    let p = Problem::parse(&none, &file()).unwrap();
    let want: Vec<f64> = defaults.iter().map(|(_, v)| *v).collect();
    assert_eq!(p.theta_values(), want);
}

/// A custom system has defaults only where its file gives them (`[system] defaults`).
#[test]
fn a_custom_system_needs_its_parameters_unless_its_file_gives_defaults() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/problems/custom_ball.toml"
    ));
    let text = std::fs::read_to_string(path).unwrap();
    let shipped = Problem::parse(&text, path).unwrap();
    let without_g = with(&text, "g  = { value = 9.81 }\n", "");
    let m = problem_error_at(&without_g, path);
    assert!(
        m.starts_with(
            "parameters: is missing `g`; system \"custom\" needs all of: g, e, c, y0, v0"
        ),
        "{m}"
    );
    assert!(m.contains("[system] defaults"), "{m}");
    let with_default = with(
        &without_g,
        "parameters = [\"g\", \"e\", \"c\", \"y0\", \"v0\"]",
        "parameters = [\"g\", \"e\", \"c\", \"y0\", \"v0\"]\ndefaults = { g = 9.81 }",
    );
    let p = Problem::parse(&with_default, path).unwrap();
    assert_eq!(p.theta_values(), shipped.theta_values());
    let ga = evaluate(
        &shipped.setup().unwrap(),
        &shipped.theta_values(),
        GradientMethod::Adjoint,
    )
    .unwrap();
    let gb = evaluate(
        &p.setup().unwrap(),
        &p.theta_values(),
        GradientMethod::Adjoint,
    )
    .unwrap();
    assert_eq!(ga.values, gb.values);
    assert_eq!(ga.gradients, gb.gradients);
    assert_eq!(
        p.system.defaults(),
        vec![("g".to_string(), 9.81)],
        "the file's defaults are the system's"
    );
    // a default for a name that is not a parameter
    let bad = with(
        &with_default,
        "defaults = { g = 9.81 }",
        "defaults = { gg = 9.81 }",
    );
    let m = problem_error_at(&bad, path);
    assert!(m.contains("`gg` is not a parameter"), "{m}");
}

fn problem_error_at(text: &str, path: &Path) -> String {
    match Problem::parse(text, path) {
        Err(Error::Problem { message, .. }) => message,
        other => panic!("{other:?}"),
    }
}

/// The guide's table of quantities (docs/guide/problem-files.md, "Quantities") is the
/// list the code reads the kinds from, row by row: each kind's name, keys and meaning are
/// declared once ([`Quantity::KINDS`]), and a kind added there fails here until the guide
/// has its row (the message shows the rows to write).
///
/// [`Quantity::KINDS`]: hybridopt::cost::Quantity::KINDS
#[test]
fn the_guides_table_of_quantities_is_the_kinds_list() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/problem-files.md");
    let text = std::fs::read_to_string(path).unwrap();
    let section = text
        .split("### Quantities")
        .nth(1)
        .expect("a Quantities section");
    let rows: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .collect();
    let want: Vec<String> = hybridopt::cost::Quantity::KINDS
        .iter()
        .map(|k| {
            let keys = match k.keys {
                [] => "—".to_string(),
                keys => keys
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            format!("| `{}` | {keys} | {} |", k.name, k.meaning)
        })
        .collect();
    assert_eq!(
        rows,
        want,
        "the guide's table of quantities should read:\n{}",
        want.join("\n")
    );
}
