//! A setup that names what its system does not have, or an empty horizon, is a typed
//! error at the start of every run, through the public API only (issue 31: these panicked
//! inside an evaluation with "index out of bounds" and "a segment").

use hybridopt::cost::{EventGuard, Objective, Quantity, Term};
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::BouncingBall;
use hybridopt::Error;

/// g, e, c, y0, v0 of the shipped ball.
const P: [f64; 5] = [9.81, 0.8, 0.1, 1.0, 0.0];

fn methods() -> [GradientMethod; 4] {
    [
        GradientMethod::Adjoint,
        GradientMethod::Direct,
        GradientMethod::Dual,
        GradientMethod::Fd,
    ]
}

/// Every run of `setup` (the simulation and each gradient method) fails with an error that
/// `check` accepts; none panics.
fn every_run_fails(setup: &Setup<'_, BouncingBall>, check: impl Fn(&Error) -> bool) {
    let e = setup.simulate(&P).map(|_| ()).unwrap_err();
    println!("simulate: {e}");
    assert!(check(&e), "simulate: {e}");
    for m in methods() {
        let e = evaluate(setup, &P, m).map(|_| ()).unwrap_err();
        assert!(check(&e), "{m:?}: {e}");
    }
    assert!(check(&setup.validate().unwrap_err()));
}

fn term_setup(term: Term) -> Setup<'static, BouncingBall> {
    Setup::new(
        &BouncingBall,
        0.0,
        3.0,
        None,
        vec![Objective::new("psi", vec![term])],
    )
}

#[test]
fn an_output_that_does_not_exist_is_named() {
    let s = term_setup(Term::squared(Quantity::Integral { output: 7 }, 0.0, 1.0));
    every_run_fails(&s, |e| {
        matches!(e, Error::BadTerm { what: "output", index: 7, term: 0, objective, .. } if objective == "psi")
            && e.to_string().contains("3 outputs, 0..=2 (y, v, energy)")
    });
    // an event output as well
    let s = term_setup(Term::plain(
        Quantity::EventOutput {
            guard: EventGuard::Guard(0),
            occurrence: 1,
            output: 3,
        },
        1.0,
    ));
    every_run_fails(&s, |e| {
        matches!(
            e,
            Error::BadTerm {
                what: "output",
                index: 3,
                ..
            }
        )
    });
}

#[test]
fn a_guard_that_does_not_exist_is_named_not_counted() {
    let s = term_setup(Term::plain(
        Quantity::EventTime {
            guard: EventGuard::Guard(1),
            occurrence: 1,
        },
        1.0,
    ));
    every_run_fails(&s, |e| {
        matches!(
            e,
            Error::BadTerm {
                what: "guard",
                index: 1,
                ..
            }
        ) && e.to_string().contains("ground")
    });
}

#[test]
fn occurrence_zero_says_occurrences_count_from_one() {
    for guard in [EventGuard::Guard(0), EventGuard::Any] {
        let s = term_setup(Term::squared(
            Quantity::EventTime {
                guard,
                occurrence: 0,
            },
            1.0,
            1.0,
        ));
        every_run_fails(&s, |e| {
            matches!(
                e,
                Error::BadTerm {
                    what: "occurrence",
                    index: 0,
                    ..
                }
            ) && e.to_string().contains("count from 1")
        });
    }
}

#[test]
fn a_parameter_index_out_of_range_is_named() {
    let s = term_setup(Term::squared(Quantity::Parameter { index: 5 }, 0.0, 1.0));
    every_run_fails(&s, |e| {
        matches!(
            e,
            Error::BadTerm {
                what: "parameter",
                index: 5,
                ..
            }
        )
    });
}

#[test]
fn an_empty_or_reversed_horizon_is_a_typed_error() {
    let psi = || {
        vec![Objective::new(
            "psi",
            vec![Term::squared(Quantity::Terminal { output: 0 }, 0.0, 1.0)],
        )]
    };
    for (t0, t_end) in [
        (0.0, -1.0),
        (1.0, 1.0),
        (0.0, f64::NAN),
        (0.0, f64::INFINITY),
    ] {
        let s = Setup::new(&BouncingBall, t0, t_end, None, psi());
        every_run_fails(&s, |e| matches!(e, Error::BadHorizon { .. }));
    }
    // a valid setup passes the same checks and runs
    let s = Setup::new(&BouncingBall, 0.0, 3.0, None, psi());
    s.validate().unwrap();
    for m in methods() {
        evaluate(&s, &P, m).unwrap();
    }
}
