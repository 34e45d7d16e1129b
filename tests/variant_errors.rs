//! The remaining error variants of the B-derivative's corner (`CornerError`, `LengthOf`) and
//! of the simultaneous-event analysis (`SimultaneousError`, `GroupProblem`), and the engine's
//! `Error::{Unsupported, Invalid}`: each triggered through the public API, matched by variant
//! and by what its message must say (issue 49, deliverable 3). Variants that the public API
//! cannot reach are listed with their reason in docs/testing.md.

use crate::common::corner_case::{asym_case, case_error};
use hybridopt::sensitivity::corner::*;
use hybridopt::sensitivity::simultaneous::{
    directional_derivative, directional_derivatives, simultaneous_events, Divergence, GroupProblem,
    SimultaneousError, SimultaneousEvent,
};
use hybridopt::setup::Setup;
use hybridopt::systems::Biped;
use hybridopt::testing::{forward_sensitivity, piecewise_constant_flow};
use hybridopt::Error;
use nalgebra::{DMatrix, DVector};

fn v(xs: &[f64]) -> DVector<f64> {
    DVector::from_column_slice(xs)
}

fn assert_says(msg: &str, needles: &[&str]) {
    for n in needles {
        assert!(msg.contains(n), "message {msg:?} should contain {n:?}");
    }
}

/// The 2d-asym corner of reference-models §4 (identity normals).
fn asym_fields() -> Vec<DVector<f64>> {
    // masks: 0 = [-1,-1], 1 = [1,-1], 2 = [-1,1], 3 = [1,1]
    vec![
        v(&[1.0, 1.0]),
        v(&[0.5, 1.0]),
        v(&[1.0, 0.75]),
        v(&[1.0, 0.5]),
    ]
}

fn asym_corner() -> Corner {
    Corner::with_identity_normals(asym_fields()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// CornerError
// ---------------------------------------------------------------------------------------------

#[test]
fn a_case_without_directions_is_no_directions() {
    let mut c = asym_case();
    c["directions"] = serde_json::json!([]);
    let e = case_error(&c);
    assert_eq!(e, CornerError::NoDirections { d: 2 });
    assert_says(&e.to_string(), &["directions is empty", "d = 2"]);
}

#[test]
fn too_few_fields_is_field_count_for_a_corner_and_for_the_oracle() {
    let mut fields = asym_fields();
    fields.pop();
    let e = Corner::new(DMatrix::identity(2, 2), fields.clone()).unwrap_err();
    assert_eq!(
        e,
        CornerError::FieldCount {
            n: 2,
            found: 3,
            orthants: false
        }
    );
    assert_says(&e.to_string(), &["n = 2 surfaces", "2^n = 4", "got 3"]);
    let e = piecewise_constant_flow(&fields, &v(&[-1.0, -1.0]), 1.0, 10).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Corner(CornerError::FieldCount {
                n: 2,
                found: 3,
                orthants: true
            })
        ),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["one per orthant", "got 3"]);
}

#[test]
fn the_oracle_rejects_an_empty_state_and_a_negative_duration() {
    let e = piecewise_constant_flow(&asym_fields(), &v(&[]), 1.0, 10).unwrap_err();
    assert!(
        matches!(e, Error::Corner(CornerError::FlowSize { d: 0 })),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["d = 0 components", "1 ≤ d ≤ 16"]);
    let e = piecewise_constant_flow(&asym_fields(), &v(&[-1.0, -1.0]), -0.5, 10).unwrap_err();
    assert!(
        matches!(e, Error::Corner(CornerError::Duration { duration }) if duration == -0.5),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["duration is -0.5", "finite and ≥ 0"]);
}

#[test]
fn a_grazing_single_saltation_is_saltation_grazing() {
    let e = saltation(&v(&[1.0, 0.0]), &v(&[0.0, 1.0]), &v(&[1.0, 1.0])).unwrap_err();
    assert_eq!(e, CornerError::SaltationGrazing { speed: 0.0 });
    assert_says(&e.to_string(), &["orthogonal to f_minus", "grazes"]);
}

/// ηᵀf⁻ = 1e-300 is transversal relative to ‖f⁻‖ = 1e-300, but (f⁺ − f⁻)/ηᵀf⁻ = 1e310.
#[test]
fn a_saltation_that_overflows_is_saltation_overflow() {
    let e = saltation(&v(&[1.0, 0.0]), &v(&[1e-300, 0.0]), &v(&[1e10, 0.0])).unwrap_err();
    assert_eq!(e, CornerError::SaltationOverflow);
    assert_says(&e.to_string(), &["matrix overflows", "rescale"]);
}

#[test]
fn saltation_lengths_name_the_normal() {
    let e = saltation(&v(&[1.0, 0.0]), &v(&[1.0]), &v(&[1.0, 1.0])).unwrap_err();
    assert_eq!(
        e,
        CornerError::Length {
            item: "f_minus".into(),
            found: 1,
            expected: 2,
            of: LengthOf::Normal
        }
    );
    assert_says(
        &e.to_string(),
        &["saltation: f_minus has 1 components but the normal has 2"],
    );
    let e = saltation(&v(&[]), &v(&[]), &v(&[])).unwrap_err();
    assert!(
        matches!(
            e,
            CornerError::Length {
                expected: 0,
                of: LengthOf::Normal,
                ..
            }
        ),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["the normal is empty", "d ≥ 1"]);
}

/// η₀ = (1, 1) and Γ(−,−) = (1e308, 1e308): ηᵀΓ = 2e308 overflows though every number is finite.
#[test]
fn a_normal_speed_that_overflows_is_speed_overflow() {
    let mut fields = asym_fields();
    fields[0] = v(&[1e308, 1e308]);
    let normals = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 0.0, 1.0]);
    let e = Corner::new(normals, fields).unwrap_err();
    assert_eq!(
        e,
        CornerError::SpeedOverflow {
            surface: 0,
            signs: vec![-1, -1],
            speed: f64::INFINITY
        }
    );
    assert_says(
        &e.to_string(),
        &["surface 0, sign vector [-1, -1]", "overflows (inf)"],
    );
}

/// A finite direction of 1e308 overflows on the way through the pieces: ValueOverflow from
/// the library, and wrapped in Direction (naming `directions[0]`) from a case.
#[test]
fn an_overflowing_direction_is_value_overflow_and_a_case_names_it() {
    let dir = [1e308, -1e308];
    let e = bderivative(&asym_corner(), &v(&dir)).unwrap_err();
    assert!(
        matches!(e, CornerError::ValueOverflow { value, .. } if !value.is_finite()),
        "{e:?}"
    );
    assert_says(
        &e.to_string(),
        &["B-derivative component", "rescale the direction"],
    );
    let mut c = asym_case();
    c["directions"] = serde_json::json!([dir]);
    let e = case_error(&c);
    match &e {
        CornerError::Direction { index: 0, source } => {
            assert!(
                matches!(**source, CornerError::ValueOverflow { .. }),
                "{source:?}"
            )
        }
        other => panic!("expected Direction, got {other:?}"),
    }
    assert_says(&e.to_string(), &["directions[0]: B-derivative component"]);
}

/// A corner whose public fields were changed after `Corner::new`: a missing field is
/// NoField, a field rotated onto a surface is ZeroSpeed (errors, never a panic).
#[test]
fn a_corner_changed_after_construction_is_no_field_or_zero_speed() {
    let mut c = asym_corner();
    c.fields.pop();
    let e = c.field_for_signs(&[1, 1]).unwrap_err();
    assert_eq!(e, CornerError::NoField { mask: 3, fields: 3 });
    assert_says(
        &e.to_string(),
        &["no field for sign mask 3", "has 3 fields"],
    );

    let mut c = asym_corner();
    c.fields[0] = v(&[0.0, 1.0]); // η₀ᵀΓ(−,−) = 0
    let e = saltation_for_order(&c, &[0, 1]).unwrap_err();
    assert_eq!(
        e,
        CornerError::ZeroSpeed {
            surface: 0,
            signs: vec![-1, -1],
            speed: 0.0
        }
    );
    assert_says(
        &e.to_string(),
        &[
            "surface 0",
            "[-1, -1] is 0",
            "build corners with Corner::new",
        ],
    );
}

#[test]
fn sign_vectors_of_the_wrong_length_are_too_many_signs_or_length() {
    let e = signs_to_mask(&[1; 17]).unwrap_err();
    assert_eq!(e, CornerError::TooManySigns { signs: vec![1; 17] });
    assert_says(&e.to_string(), &["has 17 entries", "at most 16 surfaces"]);
    let e = asym_corner().field_for_signs(&[1]).unwrap_err();
    assert_eq!(
        e,
        CornerError::Length {
            item: "sign vector [1]".into(),
            found: 1,
            expected: 2,
            of: LengthOf::Surfaces
        }
    );
    assert_says(
        &e.to_string(),
        &["sign vector [1] has 1 entries, expected n = 2"],
    );
}

#[test]
fn case_lengths_name_signs_and_ragged_normals() {
    let mut c = asym_case();
    c["fields"][0]["signs"] = serde_json::json!([-1, -1, -1]);
    let e = case_error(&c);
    assert!(
        matches!(
            &e,
            CornerError::Length {
                found: 3,
                expected: 2,
                of: LengthOf::CaseSigns,
                ..
            }
        ),
        "{e:?}"
    );
    assert_says(
        &e.to_string(),
        &["fields[0].signs", "one -1 or 1 per surface"],
    );
    let mut c = asym_case();
    c["normals"] = serde_json::json!([[1.0, 0.0], [0.0, 1.0, 0.0]]);
    let e = case_error(&c);
    assert!(
        matches!(
            &e,
            CornerError::Length {
                found: 3,
                expected: 2,
                of: LengthOf::FirstNormal,
                ..
            }
        ),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["normals[1] has 3 components", "ragged"]);
}

// ---------------------------------------------------------------------------------------------
// SimultaneousError (the biped's symmetric touchdown: both feet at t ≈ 0.3968)
// ---------------------------------------------------------------------------------------------

fn biped_setup(sys: &Biped) -> Setup<'_, Biped> {
    use hybridopt::cost::{Objective, Quantity, Term};
    let obj = Objective::new(
        "running",
        vec![Term::squared(Quantity::Integral { output: 2 }, 0.0, 1.0)],
    );
    Setup::new(sys, 0.0, 0.6, None, vec![obj])
        .to_builder()
        .tolerances(1e-12, 1e-12)
        .build()
}

#[test]
fn directions_given_wrongly_are_no_direction_length_or_not_finite() {
    let sys = Biped::default();
    let s = biped_setup(&sys);
    let th = Biped::default_params();
    let e = directional_derivatives(&s, &th, &[]).unwrap_err();
    assert!(
        matches!(e, Error::Simultaneous(SimultaneousError::NoDirection)),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["no direction given"]);
    let e = directional_derivatives(&s, &th, &[vec![0.0; 9], vec![1.0]]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Simultaneous(SimultaneousError::DirectionLength {
                index: Some(1),
                found: 1,
                ntheta: 9
            })
        ),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["direction 1 has 1 entries; θ has 9"]);
    let mut dir = vec![0.0; 9];
    dir[0] = f64::NAN;
    let e = directional_derivative(&s, &th, &dir).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Simultaneous(SimultaneousError::DirectionNotFinite { value }) if value.is_nan()
        ),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["entry NaN: must be finite"]);
}

#[test]
fn a_group_built_wrongly_is_size_lengths_or_no_guard() {
    let sys = Biped::default();
    let s = biped_setup(&sys);
    let th = Biped::default_params();
    let tr = s.simulate(&th).unwrap();
    let ev = &tr.events[0];
    let ctx = tr.event_ctx(0);
    let xm = &ev.before.y[..];
    let problem = |e: Error| match e {
        Error::Simultaneous(SimultaneousError::Group { problem, .. }) => (*problem).clone(),
        other => panic!("expected a group error, got {other:?}"),
    };
    let e = SimultaneousEvent::new(&s, &ctx, ev.t, &[], xm, &th).unwrap_err();
    assert_says(
        &e.to_string(),
        &["simultaneous event at t", "0 guards; 1 to 6"],
    );
    assert_eq!(problem(e), GroupProblem::Size { n: 0 });
    let e = SimultaneousEvent::new(&s, &ctx, ev.t, &[ev.guard], &xm[..2], &th).unwrap_err();
    assert_says(&e.to_string(), &["X⁻ has 2 entries", "θ 9 (need 9)"]);
    assert!(
        matches!(
            problem(e),
            GroupProblem::Lengths {
                x: 2,
                theta: 9,
                ntheta: 9,
                ..
            }
        ),
        "lengths"
    );
    let e = SimultaneousEvent::new(&s, &ctx, ev.t, &[ev.guard, 99], xm, &th).unwrap_err();
    assert_says(&e.to_string(), &["guard index 99 does not exist"]);
    assert_eq!(problem(e), GroupProblem::NoGuard { index: 99 });
}

#[test]
fn a_wrong_order_or_column_is_not_a_guard_order_or_column_length() {
    let sys = Biped::default();
    let s = biped_setup(&sys);
    let th = Biped::default_params();
    let fr = forward_sensitivity(&s, &th).unwrap();
    let groups = simultaneous_events(&s, &fr.trajectory, &th).unwrap();
    let ev = &groups[0];
    assert_eq!(ev.n(), 2);
    let guards = ev.guards.clone();
    let e = ev.piece_by_guards(&[guards[0], guards[0]]).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Simultaneous(SimultaneousError::NotAGuardOrder { order, guards: g, .. })
                if order == &vec![guards[0], guards[0]] && g == &guards
        ),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["is not a permutation of its guards"]);
    let (n, nth) = (s.n(), s.ntheta());
    let e = ev
        .directional(&DVector::zeros(n + 1), &DVector::zeros(nth))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Simultaneous(SimultaneousError::ColumnLength { column, nx, direction, ntheta, .. })
                if column == n + 1 && nx == n && direction == nth && ntheta == nth
        ),
        "{e:?}"
    );
    assert_says(
        &e.to_string(),
        &[&format!("the column has {} entries (need {n})", n + 1)],
    );
}

// ---------------------------------------------------------------------------------------------
// Error::{Unsupported, Invalid}
// ---------------------------------------------------------------------------------------------

#[test]
fn the_dual_witness_with_sdirk3_is_unsupported() {
    use hybridopt::integrate::Method;
    use hybridopt::sensitivity::{evaluate, GradientMethod};
    let sys = Biped::default();
    let s = biped_setup(&sys)
        .to_builder()
        .method(Method::Sdirk3)
        .build();
    let e = evaluate(&s, &Biped::default_params(), GradientMethod::Dual).unwrap_err();
    assert!(
        matches!(&e, Error::Unsupported { what, .. } if what.contains("DOPRI5, Radau5 and the BDF")),
        "{e:?}"
    );
    assert_says(&e.to_string(), &["dual witness", "method = \"dopri5\""]);
}

#[test]
fn residuals_without_an_objective_are_invalid() {
    use hybridopt::sensitivity::residuals;
    let sys = Biped::default();
    let s = Setup::new(&sys, 0.0, 0.6, None, vec![]);
    let e = residuals(&s, &Biped::default_params(), false).unwrap_err();
    assert!(
        matches!(&e, Error::Invalid(m) if m == "a least-squares fit needs an objective"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "invalid input: a least-squares fit needs an objective"
    );
}

// ---------------------------------------------------------------------------------------------
// ModelError::Unsupported
// ---------------------------------------------------------------------------------------------

/// A DAE (ẏ = −1 from y = 1, 0 = z − y) that declares its landing at y = 0 an implicit
/// transition but leaves `transition_residual` at its default: the simulation stops at
/// the event with the model's failure, ModelError::Unsupported, naming what is missing.
struct ImplicitWithoutResidual;

impl hybridopt::dae::DaeSystem for ImplicitWithoutResidual {
    fn index(&self) -> hybridopt::dae::DaeIndex {
        hybridopt::dae::DaeIndex::One
    }
    fn dims(&self) -> hybridopt::dae::DaeDims {
        hybridopt::dae::DaeDims::new(["y"], ["z"], ["a"]).guards([hybridopt::GuardInfo::new(
            "land",
            hybridopt::Direction::Falling,
        )])
    }
    fn initial_differential<D: hybridopt::Scalar>(
        &self, _p: &[D],
    ) -> Result<Vec<D>, hybridopt::error::ModelError> {
        Ok(vec![D::one()])
    }
    fn flow<D: hybridopt::Scalar>(
        &self, _mode: usize, at: hybridopt::dae::Point<'_, D>, dy: &mut [D],
    ) -> Result<(), hybridopt::error::ModelError> {
        dy[0] = -at.p[0];
        Ok(())
    }
    fn algebraic<D: hybridopt::Scalar>(
        &self, _mode: usize, at: hybridopt::dae::Point<'_, D>, res: &mut [D],
    ) -> Result<(), hybridopt::error::ModelError> {
        res[0] = at.z[0] - at.y[0];
        Ok(())
    }
    fn guard<D: hybridopt::Scalar>(
        &self, _mode: usize, _k: usize, at: hybridopt::dae::Point<'_, D>,
    ) -> D {
        at.y[0]
    }
    fn transition<D: hybridopt::Scalar>(
        &self, mode: usize, _k: usize, at: hybridopt::dae::Point<'_, D>,
    ) -> Result<hybridopt::dae::Transition<D>, hybridopt::error::ModelError> {
        Ok(hybridopt::dae::Transition::Implicit {
            mode,
            guess: vec![at.y[0].re()],
        })
    }
}

#[test]
fn an_implicit_transition_without_its_residual_is_unsupported() {
    use hybridopt::error::ModelError;
    let dae = hybridopt::dae::Dae::new(ImplicitWithoutResidual);
    let s = Setup::builder(&dae).horizon(0.0, 2.0).build();
    let e = s.simulate(&[1.0]).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Model { source: ModelError::Unsupported { what }, .. }
                if what == "this system declares no implicit transition"
        ),
        "{e:?}"
    );
    assert_says(
        &e.to_string(),
        &["model failure at t = 1", "declares no implicit transition"],
    );
}

/// The expression ball with a second, terminal guard on the same surface (`y` falling):
/// both fire at the first impact as one simultaneous group, which the nonsmooth analysis
/// refuses (TerminalInGroup, naming the terminal guard).
#[test]
fn a_terminal_guard_in_a_simultaneous_group_is_refused() {
    use hybridopt::prelude::Problem;
    let path = std::path::Path::new("problems/custom_ball.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let ground =
        r#"{ name = "ground", expr = "y", direction = "falling", reset = { v = "-e*v" } },"#;
    assert!(text.contains(ground));
    let text = text.replace(
        ground,
        &format!(
            "{ground}\n  {{ name = \"stop\", expr = \"y\", direction = \"falling\", terminal = true }},"
        ),
    );
    let p = Problem::parse(&text, path).unwrap();
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let tr = s.simulate(&th).unwrap();
    assert!(tr.events.len() >= 2, "{:?}", tr.events.len());
    let mut dir = vec![0.0; th.len()];
    dir[4] = 1.0;
    let e = directional_derivative(&s, &th, &dir).unwrap_err();
    assert!(
        matches!(&e, Error::Simultaneous(SimultaneousError::TerminalInGroup { guard, .. }) if guard == "stop"),
        "{e:?}"
    );
    assert_says(
        &e.to_string(),
        &["contains the terminal guard 'stop'", "not supported"],
    );
}

// ---------------------------------------------------------------------------------------------
// GroupProblem: a group of two guards at X⁻ = (0, 0), t = 1, of a custom system
// ---------------------------------------------------------------------------------------------

/// Two states from (−1, −1) with `ẋ = 1`, `ẏ = FLOW_Y` in mode `m` (a mode `b` beside it)
/// and the guards GUARDS of `m`.
fn pair(flow_y: &str, guards: &str) -> hybridopt::prelude::Problem {
    let text = format!(
        r#"name = "pair"
[system]
kind = "custom"
states = ["x", "y"]
parameters = ["a"]
initial = {{ x = "-1", y = "-1" }}
outputs = [ {{ name = "x", expr = "x" }} ]
[[system.modes]]
name = "m"
flow = {{ x = "a", y = "{flow_y}" }}
guards = [ {guards} ]
[[system.modes]]
name = "b"
flow = {{ x = "1", y = "1" }}
[simulation]
t_end = 2.0
[parameters]
a = {{ value = 1.0 }}
[[cost]]
kind = "terminal"
output = "x"
"#
    );
    hybridopt::prelude::Problem::parse(&text, std::path::Path::new("pair.toml")).unwrap()
}

/// The group (both guards, in order) of `pair(..)` at X⁻ = (0, 0), t = 1: its problem.
fn group_problem(p: &hybridopt::prelude::Problem) -> (GroupProblem, String) {
    let s = p.setup().unwrap();
    let ctx = hybridopt::testing::Ctx {
        mode: 0,
        t_lo: 0.0,
        t_hi: 2.0,
    };
    match SimultaneousEvent::new(&s, &ctx, 1.0, &[0, 1], &[0.0, 0.0], &[1.0]) {
        Err(e @ Error::Simultaneous(SimultaneousError::Group { .. })) => {
            let msg = e.to_string();
            let Error::Simultaneous(SimultaneousError::Group { problem, .. }) = e else {
                unreachable!()
            };
            (*problem, msg)
        }
        Err(other) => panic!("expected a group error, got {other:?}"),
        Ok(_) => panic!("expected a group error, got a group"),
    }
}

#[test]
fn a_guard_left_behind_by_the_others_mode_is_not_watched() {
    // crossing gy first moves to mode b, where gx is not watched
    let p = pair(
        "1",
        r#"{ name = "gx", expr = "x", direction = "rising" },
           { name = "gy", expr = "y", direction = "rising", next = "b" }"#,
    );
    let (problem, msg) = group_problem(&p);
    assert_eq!(
        problem,
        GroupProblem::NotWatched {
            guard: "gx".into(),
            mode: "b".into(),
            order: None
        }
    );
    assert_says(
        &msg,
        &[
            "guard 'gx' is not watched in mode 'b'",
            "not every crossing order",
        ],
    );
}

#[test]
fn a_guard_with_no_rate_is_grazing() {
    let p = pair(
        "0",
        r#"{ name = "gx", expr = "x", direction = "rising" },
           { name = "gy", expr = "y", direction = "rising" }"#,
    );
    let (problem, msg) = group_problem(&p);
    assert!(
        matches!(&problem, GroupProblem::Grazing { guard, rate, mode } if guard == "gy" && *rate == 0.0 && mode == "m"),
        "{problem:?}"
    );
    assert_says(&msg, &["guard 'gy' has rate 0", "(grazing)"]);
}

#[test]
fn parallel_guards_are_not_a_corner() {
    let p = pair(
        "1",
        r#"{ name = "gx", expr = "x", direction = "rising" },
           { name = "gx2", expr = "2*x", direction = "rising" }"#,
    );
    let (problem, msg) = group_problem(&p);
    assert!(
        matches!(
            &problem,
            GroupProblem::Corner(CornerError::DependentNormals { n: 2, .. })
        ),
        "{problem:?}"
    );
    assert_says(&msg, &["simultaneous event at t = 1", "linearly dependent"]);
}

/// Each reset scales the other guard's state by 1e200: one jump's Ξ has entries ~1e200,
/// their product ~1e400.
#[test]
fn a_composed_jump_that_overflows_is_not_finite() {
    let p = pair(
        "1",
        r#"{ name = "gx", expr = "x", direction = "rising", reset = { y = "1e200*y" } },
           { name = "gy", expr = "y", direction = "rising", reset = { x = "1e200*x" } }"#,
    );
    let (problem, msg) = group_problem(&p);
    assert_eq!(problem, GroupProblem::NotFinite { order: vec![0, 1] });
    assert_says(&msg, &["the composed jump of order [0, 1] is not finite"]);
}

/// A terminal guard handed to the group directly (the analysis' own entry,
/// `SimultaneousEvent::new`; a simulation ends at a terminal event, so the gradient's path
/// meets it as `TerminalInGroup` above): the group names it.
#[test]
fn a_terminal_guard_in_a_group_built_directly_is_terminal() {
    let p = pair(
        "1",
        r#"{ name = "gx", expr = "x", direction = "rising" },
           { name = "gy", expr = "y", direction = "rising", terminal = true }"#,
    );
    let (problem, msg) = group_problem(&p);
    assert_eq!(problem, GroupProblem::Terminal { guard: "gy".into() });
    assert_says(
        &msg,
        &["guard 'gy' is terminal", "terminal event are not supported"],
    );
}

/// Two states `ẋ = ẏ = 1` from (−1, −1), both guards (`x`, `y` rising) watched in every
/// mode, identity resets; the mode after a crossing depends on where it happens: from
/// `m0`, `gx` leads to `m1` and `gy` to `m2`; from `m1`, `gy` leads to `m3`; from `m2`,
/// `gx` leads back to `m0`. Crossing both therefore ends in `m3` in one order and in `m0`
/// in the other — a system the problem files cannot write (a custom system's guard
/// belongs to one mode), hence in Rust.
struct OrderedModes;

impl hybridopt::HybridSystem for OrderedModes {
    fn dims(&self) -> hybridopt::prelude::Dims {
        use hybridopt::prelude::{Direction, GuardInfo};
        hybridopt::prelude::Dims::new(["x", "y"], ["a"])
            .modes(["m0", "m1", "m2", "m3"])
            .guards([
                GuardInfo::new("gx", Direction::Rising),
                GuardInfo::new("gy", Direction::Rising),
            ])
            .outputs(["x"])
    }
    fn initial_state<D: hybridopt::Scalar>(
        &self, _p: &[D],
    ) -> Result<Vec<D>, hybridopt::prelude::ModelError> {
        Ok(vec![D::from(-1.0), D::from(-1.0)])
    }
    fn flow<D: hybridopt::Scalar>(
        &self, _m: usize, _t: D, _x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), hybridopt::prelude::ModelError> {
        dx[0] = p[0];
        dx[1] = D::from(1.0);
        Ok(())
    }
    fn guard<D: hybridopt::Scalar>(
        &self, _m: usize, k: usize, _t: D, x: &[D], _u: &[D], _p: &[D],
    ) -> D {
        x[k]
    }
    fn reset<D: hybridopt::Scalar>(
        &self, m: usize, k: usize, _t: D, x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), hybridopt::prelude::ModelError> {
        let next = match (m, k) {
            (0, 0) => 1,
            (0, 1) => 2,
            (1, 1) => 3,
            (2, 0) => 0,
            (m, _) => m,
        };
        Ok((next, x.to_vec()))
    }
    fn outputs<D: hybridopt::Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], y: &mut [D],
    ) -> Result<(), hybridopt::prelude::ModelError> {
        y[0] = x[0];
        Ok(())
    }
}

#[test]
fn a_mode_that_depends_on_the_crossing_order_is_mode_depends() {
    use hybridopt::cost::{Objective, Quantity, Term};
    let sys = OrderedModes;
    let obj = Objective::new(
        "x",
        vec![Term::plain(Quantity::Terminal { output: 0 }, 1.0)],
    );
    let s = Setup::new(&sys, 0.0, 2.0, None, vec![obj]);
    let ctx = hybridopt::testing::Ctx {
        mode: 0,
        t_lo: 0.0,
        t_hi: 2.0,
    };
    let e = match SimultaneousEvent::new(&s, &ctx, 1.0, &[0, 1], &[0.0, 0.0], &[1.0]) {
        Err(e) => e,
        Ok(_) => panic!("expected a group error, got a group"),
    };
    let msg = e.to_string();
    match e {
        Error::Simultaneous(SimultaneousError::Group { problem, .. }) => match *problem {
            GroupProblem::ModeDepends {
                crossed,
                mode,
                other,
            } => {
                assert_eq!(crossed.len(), 2, "{crossed:?}");
                let mut modes = [mode.as_str(), other.as_str()];
                modes.sort_unstable();
                assert_eq!(modes, ["m0", "m3"], "{msg}");
            }
            other => panic!("expected ModeDepends, got {other:?}"),
        },
        other => panic!("expected a group error, got {other:?}"),
    }
    assert_says(
        &msg,
        &[
            "depends on the order",
            "the B-derivative needs an order-independent mode",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Diverged: the sensitivity pass resolves an event differently from the plain run
// ---------------------------------------------------------------------------------------------

/// `x` and `y` from −1 at rate 1 cross their guards together at t = 1 (a simultaneous
/// group); `z` has no flow at a = 1 but its sensitivity dz/da = ∫ sin(1000 t) dt does, so
/// the sensitivity pass takes steps of ~1e-3 where the plain run (an exact linear flow)
/// takes six steps in all. A `bump` guard `c − (t − t_b)²` rises through zero only in
/// `[t_b − √c, t_b + √c]`: the guard samples of one run see it and the other's miss it.
fn diverging(c: &str, t_b: f64) -> hybridopt::prelude::Problem {
    let text = format!(
        r#"name = "diverge"
[system]
kind = "custom"
states = ["x", "y", "z"]
parameters = ["a", "w"]
initial = {{ x = "-1", y = "-1", z = "0" }}
outputs = [ {{ name = "z", expr = "z" }} ]
[[system.modes]]
name = "m"
flow = {{ x = "1", y = "1", z = "(a - 1) * sin(w * t)" }}
guards = [
  {{ name = "gx", expr = "x", direction = "rising" }},
  {{ name = "gy", expr = "y", direction = "rising" }},
  {{ name = "bump", expr = "{c} - (t - {t_b}) * (t - {t_b})", direction = "rising" }},
]
[simulation]
t_end = 2.0
[parameters]
a = {{ value = 1.0, optimize = true }}
w = {{ value = 1000.0 }}
[[cost]]
kind = "terminal"
output = "z"
"#
    );
    hybridopt::prelude::Problem::parse(&text, std::path::Path::new("diverge.toml")).unwrap()
}

/// The plain run's events (guard names) and the divergence the directional derivative along
/// `a` meets, with its message.
fn divergence(p: &hybridopt::prelude::Problem) -> (Vec<String>, Divergence, String) {
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let tr = s.simulate(&th).unwrap();
    let names = tr
        .events
        .iter()
        .map(|e| s.dims().guard_name(e.guard))
        .collect();
    match directional_derivative(&s, &th, &[1.0, 0.0]) {
        Err(e @ Error::Simultaneous(SimultaneousError::Diverged { .. })) => {
            let msg = e.to_string();
            let Error::Simultaneous(SimultaneousError::Diverged { divergence }) = e else {
                unreachable!()
            };
            (names, *divergence, msg)
        }
        Err(other) => panic!("expected Diverged, got {other:?}"),
        Ok(_) => panic!("expected Diverged, got a derivative"),
    }
}

/// A bump 2·10⁻³ wide at t = 1.537: between the plain run's guard samples, inside the
/// sensitivity pass's, after the group — an event beyond the plain run's.
#[test]
fn an_event_only_the_sensitivity_pass_sees_is_extra() {
    let (plain, d, msg) = divergence(&diverging("1e-6", 1.537));
    assert_eq!(plain, ["gx", "gy"]);
    match d {
        Divergence::Extra { guard, t, events } => {
            assert_eq!((guard.as_str(), events), ("bump", 2));
            assert!((t - 1.536).abs() <= 1e-6, "{t}");
        }
        other => panic!("expected Extra, got {other:?}"),
    }
    assert_says(
        &msg,
        &[
            "met an event of guard 'bump'",
            "beyond the 2 events of the plain simulation",
        ],
    );
}

/// The same bump at t = 0.7, before the group: the pass's first event is the bump where the
/// plain run's is `gx`.
#[test]
fn an_event_the_plain_run_did_not_have_first_is_other() {
    let (plain, d, msg) = divergence(&diverging("1e-6", 0.7));
    assert_eq!(plain, ["gx", "gy"]);
    match d {
        Divergence::Other {
            event,
            guard,
            planned_guard,
            ..
        } => assert_eq!(
            (event, guard.as_str(), planned_guard.as_str()),
            (0, "bump", "gx")
        ),
        other => panic!("expected Other, got {other:?}"),
    }
    assert_says(
        &msg,
        &[
            "met guard 'bump' in mode 'm'",
            "the plain simulation had guard 'gx'",
            "(event 0)",
            "near-simultaneous crossings resolved differently",
        ],
    );
}

/// A bump 2·10⁻⁷ wide at t = 1.5, where a guard sample of the plain run falls and none of
/// the pass's: the pass meets two of the plain run's three events.
#[test]
fn an_event_only_the_plain_run_sees_is_count() {
    let (plain, d, msg) = divergence(&diverging("1e-14", 1.5));
    assert_eq!(plain, ["gx", "gy", "bump"]);
    assert_eq!(
        d,
        Divergence::Count {
            found: 2,
            planned: 3
        }
    );
    assert_says(
        &msg,
        &["the sensitivity pass met 2 events, the plain simulation 3"],
    );
}
