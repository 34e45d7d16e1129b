//! θ entries given to the optimizer are matched to the setup's θ by name (through the
//! public API alone): any order gives the same optimization, a parameter left out takes the
//! system's default value, and an unknown or repeated name is a typed error naming it and
//! listing θ's names.

use hybridopt::integrate::EventOptions;
use hybridopt::prelude::*;
use hybridopt::systems::BouncingBall;

/// The ball's third impact at t = 2 s, v0 free (θ = g, e, c, y0, v0).
fn setup(ball: &BouncingBall) -> Setup<'_, BouncingBall> {
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
    let events = EventOptions {
        stop_after: Some((0, 3)),
        ..EventOptions::default()
    };
    Setup::builder(ball)
        .horizon(0.0, 10.0)
        .objective(cost)
        .tolerances(1e-10, 1e-12)
        .events(events)
        .build()
}

#[test]
fn entries_in_another_order_give_the_same_optimum() {
    let ball = BouncingBall;
    let s = setup(&ball);
    let v0 = ThetaEntry::free("v0", 0.5).with_bounds(Some(0.0), None);
    let in_order = [
        ThetaEntry::fixed("g", 9.81),
        ThetaEntry::fixed("e", 0.8),
        ThetaEntry::fixed("c", 0.0),
        ThetaEntry::fixed("y0", 1.0),
        v0.clone(),
    ];
    // reversed: positional matching would free g (= 0.5) and set v0 = 9.81
    let reversed: Vec<ThetaEntry> = in_order.iter().rev().cloned().collect();
    let settings = OptimizerSettings::default();
    let a = optimize(&s, &in_order, &settings, None).unwrap();
    let b = optimize(&s, &reversed, &settings, None).unwrap();
    assert_eq!(a.theta_final, b.theta_final);
    assert_eq!(b.theta_final[0], 9.81);
    assert!(b.final_cost < 1e-12, "{b}");
}

#[test]
fn a_parameter_left_out_takes_the_systems_default() {
    let ball = BouncingBall;
    let s = setup(&ball);
    // v0 alone: g, e, c, y0 are the ball's defaults
    let only = [ThetaEntry::free("v0", 0.5).with_bounds(Some(0.0), None)];
    let r = optimize(&s, &only, &OptimizerSettings::default(), None).unwrap();
    let d = BouncingBall::default_params();
    assert_eq!(&r.theta_final[..4], &d[..4]);
    assert!(r.final_cost < 1e-12, "{r}");
    let theta = s.resolve_theta(&only).unwrap();
    let names: Vec<&str> = theta.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["g", "e", "c", "y0", "v0"]);
}

#[test]
fn an_unknown_or_repeated_name_is_a_typed_error() {
    let ball = BouncingBall;
    let s = setup(&ball);
    let settings = OptimizerSettings::default();
    let unknown = [ThetaEntry::free("k", 1.0)];
    match optimize(&s, &unknown, &settings, None) {
        Err(e @ Error::ThetaName { .. }) => {
            let m = e.to_string();
            assert!(m.contains("`k`") && m.contains("no such parameter"), "{m}");
            assert!(m.contains("g, e, c, y0, v0"), "{m}");
        }
        other => panic!("expected ThetaName, got {other:?}"),
    }
    let twice = [ThetaEntry::free("v0", 1.0), ThetaEntry::fixed("v0", 2.0)];
    match optimize(&s, &twice, &settings, None) {
        Err(Error::ThetaName { name, problem, .. }) => {
            assert_eq!(name, "v0");
            assert_eq!(problem, "given twice");
        }
        other => panic!("expected ThetaName, got {other:?}"),
    }
}
