//! Event cost terms that name "any guard": `guard = "any"` in a problem file,
//! `EventGuard::Any` in the library. On the relay thermostat the events alternate `off`,
//! `on`, `off`, `on`, …, so the 4th event of any guard is the 2nd of `on` and the 3rd is
//! the 2nd of `off`: the two formulations must give the same ψ and gradient, and the
//! adjoint, direct, dual and central-FD gradients of the `any` one must agree.

use hybridopt::prelude::*;
use std::path::Path;

/// The thermostat with `costs` in place of its own cost terms.
fn thermostat(costs: &str) -> Problem {
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/problems/custom_thermostat.toml"))
        .expect("the thermostat");
    let head = &text[..text.find("[[cost]]").expect("cost terms")];
    let plot = &text[text.find("[plot]").expect("a plot table")..];
    Problem::parse(
        &format!("{head}{costs}\n{plot}"),
        Path::new("thermostat_any.toml"),
    )
    .expect("a valid problem")
}

/// (t₄ − 5)² + (T(t₃⁻) − 21.5)², by "any" or by the guards' names.
fn costs(fourth: (&str, usize), third: (&str, usize)) -> String {
    format!(
        "[[cost]]\nkind = \"event_time_squared\"\nguard = \"{}\"\noccurrence = {}\ntarget = 5.0\n\
         [[cost]]\nkind = \"event_output_squared\"\nguard = \"{}\"\noccurrence = {}\n\
         output = \"T\"\ntarget = 21.5\n",
        fourth.0, fourth.1, third.0, third.1
    )
}

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / scale)
        .fold(0.0, f64::max)
}

#[test]
fn any_guard_is_the_nth_event_whichever_guard() {
    let any = thermostat(&costs(("any", 4), ("any", 3)));
    let named = thermostat(&costs(("on", 2), ("off", 2)));
    let theta = any.theta_values();
    let (sa, sn) = (any.setup().unwrap(), named.setup().unwrap());
    let a = evaluate(&sa, &theta, GradientMethod::Adjoint).unwrap();
    let n = evaluate(&sn, &theta, GradientMethod::Adjoint).unwrap();
    let guards: Vec<usize> = a.trajectory.events.iter().map(|e| e.guard).collect();
    let off = any
        .dims
        .guards
        .iter()
        .position(|g| g.name == "off")
        .unwrap();
    assert_eq!(&guards[..4], &[off, 1 - off, off, 1 - off], "{guards:?}");
    let t4 = a.trajectory.events[3].t;
    assert!(
        a.values[0] >= (t4 - 5.0).powi(2),
        "{} vs t4 = {t4}",
        a.values[0]
    );
    assert_eq!(a.values[0], n.values[0]);
    assert_eq!(a.gradients[0], n.gradients[0]);
    assert!(a.gradients[0].iter().any(|g| g.abs() > 1e-3));
}

/// At rtol = atol = 1e-10 (the thermostat's): direct and dual agree with the adjoint to
/// 1e-8 of the gradient's size, central FD (4th order, rel 1e-5) to 1e-6.
#[test]
fn any_guard_gradient_adjoint_direct_dual_fd_agree() {
    let p = thermostat(&costs(("any", 4), ("any", 3)));
    let s = p.setup().unwrap();
    let options = EvaluateOptions::new(GradientMethod::Adjoint)
        .fd_step(1e-5)
        .witnesses(&[
            GradientMethod::Direct,
            GradientMethod::Dual,
            GradientMethod::Fd,
        ]);
    let ev = evaluate_with(&s, &p.theta_values(), &options).unwrap();
    assert_eq!(ev.witnesses.len(), 3);
    for w in &ev.witnesses {
        let d = max_rel(&w.gradients[0], &ev.gradients[0]);
        assert_eq!(d, w.max_relative_difference);
        let bound = if w.method == GradientMethod::Fd {
            1e-6
        } else {
            1e-8
        };
        println!(
            "{} vs adjoint: {d:.2e} (bound {bound:.0e})",
            w.method.name()
        );
        assert!(d <= bound, "{}: {d:e}", w.method.name());
    }
}

/// A missing event of any guard names "any" in its error.
#[test]
fn any_guard_missing_event_is_typed() {
    let p = thermostat(&costs(("any", 10_000), ("any", 3)));
    let s = p.setup().unwrap();
    match evaluate(&s, &p.theta_values(), GradientMethod::Adjoint) {
        Err(Error::MissingEvent {
            guard, occurrence, ..
        }) => {
            assert_eq!((guard.as_str(), occurrence), ("any", 10_000));
        }
        other => panic!("{:?}", other.map(|e| e.values)),
    }
}
