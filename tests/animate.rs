//! The pictures of the motion (`hybridopt::animate`): the drawn shapes are the positions of
//! the trajectory (at t0, inside the motion and at every event, to 1e-12), the guards'
//! surfaces are met at the events, the GIF decodes with the expected frames and size, and a
//! system without geometry gets a clear error and no files.

use crate::common;
use hybridopt::animate::{
    frame_times, mass_positions, write_gif, AnimationOptions, Motion, OutputGeometry, Shape,
    StrobeOptions,
};
use hybridopt::output::animate::{stage_strobe, Drawing, Run};
use hybridopt::output::artifacts::trajectory_table;
use hybridopt::output::Staging;
use hybridopt::problem::Problem;
use hybridopt::setup::Setup;
use hybridopt::systems::Biped;
use hybridopt::systems::FiveBar;
use hybridopt::systems::ImpactPendulum;
use hybridopt::systems::SwitchedLinear;
use hybridopt::testing::{PIVOT_A, PIVOT_B};
use hybridopt::Error;
use std::path::{Path, PathBuf};

fn problem(name: &str) -> Problem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(name);
    Problem::load(&path).unwrap()
}

fn tmpdir(tag: &str) -> PathBuf {
    common::scratch("anim", tag, true)
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).abs().max((a[1] - b[1]).abs())
}

/// The drawn positions are the trajectory's: copies of the state, so they agree to round-off
/// (measured 2026-12-02: 0 at t0 and at the events, 4.4e-16 against the table's (x2, y2),
/// where a step boundary may be read from either neighbouring step's interpolant).
const SAME: f64 = 1e-12;

#[test]
fn five_bar_shapes_are_the_trajectory_positions() {
    let p = problem("five_bar_stiffness.toml");
    let setup = p.setup().unwrap();
    let theta = p.theta_values();
    let traj = setup.simulate(&theta).unwrap();
    let m = Motion::new(&setup, &traj, &theta, "five_bar").unwrap();
    // t0: the reference configuration (reference-models §2) and the two pivots
    let s0 = m.shapes_at(p.t0).unwrap();
    let q0 = FiveBar::initial_positions();
    let masses = mass_positions(&s0);
    assert_eq!(masses.len(), 3);
    for (k, at) in masses.iter().enumerate() {
        assert!(
            dist(*at, [q0[2 * k], q0[2 * k + 1]]) <= SAME,
            "P{} at t0: {at:?}",
            k + 1
        );
    }
    let pivots: Vec<_> = s0
        .iter()
        .filter_map(|s| match s {
            Shape::Pivot { at } => Some(*at),
            _ => None,
        })
        .collect();
    assert_eq!(pivots, vec![PIVOT_A, PIVOT_B]);
    assert_eq!(
        s0.iter().filter(|s| matches!(s, Shape::Bar { .. })).count(),
        4
    );
    assert_eq!(
        s0.iter()
            .filter(|s| matches!(s, Shape::Spring { .. }))
            .count(),
        2
    );
    // inside the motion: P2 against the outputs x2, y2 of the trajectory table
    let tab = trajectory_table(&setup, &traj, &theta).unwrap();
    let (t, x2, y2) = (
        tab.column("t").unwrap(),
        tab.column("x2").unwrap(),
        tab.column("y2").unwrap(),
    );
    let mut worst: f64 = 0.0;
    for i in (0..t.len()).step_by(7) {
        let at = mass_positions(&m.shapes_at(t[i]).unwrap())[1];
        worst = worst.max(dist(at, [x2[i], y2[i]]));
    }
    assert!(worst <= SAME, "P2 vs the table's (x2, y2): {worst:e}");
    // every impact: the event record, the dense output after it, and the ground
    let ground = -2.35;
    assert_eq!(m.events().len(), traj.events.len());
    assert!(m.events().len() >= 4, "{} impacts", m.events().len());
    for (k, e) in traj.events.iter().enumerate() {
        assert_eq!(m.events()[k].guard, "ground");
        let before = mass_positions(&m.shapes_at_event(k).unwrap())[1];
        let after = mass_positions(&m.shapes_at(e.t).unwrap())[1];
        assert!(dist(before, [e.before.y[2], e.before.y[3]]) <= SAME);
        assert!(
            dist(after, before) <= SAME,
            "event {k}: {after:?} vs {before:?}"
        );
        // the guard's root: |y2 − ground| at the refined event time (measured 0)
        assert!(
            (before[1] - ground).abs() <= 1e-12,
            "event {k}: y2 = {}",
            before[1]
        );
    }
}

#[test]
fn biped_feet_touch_the_curve_at_their_events() {
    let p = problem("biped_damping.toml");
    let setup = p.setup().unwrap();
    let theta = p.theta_values();
    let traj = setup.simulate(&theta).unwrap();
    let m = Motion::new(&setup, &traj, &theta, "biped").unwrap();
    let biped = Biped::default();
    let touches = ["touch1", "lift1", "touch2", "lift2"];
    assert!(traj.events.len() >= 2);
    for (k, e) in traj.events.iter().enumerate() {
        let masses = mass_positions(&m.shapes_at_event(k).unwrap());
        assert_eq!(masses.len(), 3, "body and two feet");
        assert!(dist(masses[0], [e.before.y[0], e.before.y[1]]) <= SAME);
        let feet = biped.foot_positions(&e.before.y[..3]);
        let foot = e.guard / 2; // guards touch1, lift1, touch2, lift2
        assert!(touches.contains(&m.events()[k].guard.as_str()));
        for j in 0..2 {
            assert!(dist(masses[1 + j], feet[j]) <= SAME);
        }
        // the foot of the event is on the ground y = −x² (measured ≤ 8.3e-17)
        let f = masses[1 + foot];
        assert!((f[1] + f[0] * f[0]).abs() <= 1e-12, "event {k}: {f:?}");
        // a foot in contact after the event is drawn as a spring to the ground
        let springs = m
            .shapes_at(e.t)
            .unwrap()
            .iter()
            .filter(|s| matches!(s, Shape::Spring { .. }))
            .count();
        assert_eq!(
            springs,
            (e.after.mode as u32).count_ones() as usize,
            "event {k}"
        );
    }
}

#[test]
fn locking_pendulum_tip_meets_the_stop_line() {
    let p = problem("locking_pendulum.toml");
    let setup = p.setup().unwrap();
    let theta = p.theta_values();
    let traj = setup.simulate(&theta).unwrap();
    let m = Motion::new(&setup, &traj, &theta, "locking_pendulum").unwrap();
    assert_eq!(traj.events.len(), 1);
    let e = &traj.events[0];
    let tip = mass_positions(&m.shapes_at_event(0).unwrap())[1];
    assert!(dist(tip, [e.before.y[2], e.before.y[3]]) <= SAME);
    // on the line at the lock and, sliding along it, at the end (measured 0 and 0: the
    // line constraint y2 = y_stop is linear, so the index-1 solve keeps it exactly)
    assert!((tip[1] + 1.6).abs() <= 1e-12, "tip at the lock: {tip:?}");
    let end = mass_positions(&m.shapes_at(traj.t_final).unwrap())[1];
    assert!((end[1] + 1.6).abs() <= 1e-12, "tip at the end: {end:?}");
}

#[test]
fn ball_and_impact_pendulum_shapes() {
    let p = problem("bouncing_ball.toml");
    let setup = p.setup().unwrap();
    let theta = p.theta_values();
    let traj = setup.simulate(&theta).unwrap();
    let m = Motion::new(&setup, &traj, &theta, "bouncing_ball").unwrap();
    let tab = trajectory_table(&setup, &traj, &theta).unwrap();
    let (t, y) = (tab.column("t").unwrap(), tab.column("y").unwrap());
    for i in (0..t.len()).step_by(5) {
        let at = mass_positions(&m.shapes_at(t[i]).unwrap())[0];
        assert!(dist(at, [0.0, y[i]]) <= SAME);
    }
    for k in 0..traj.events.len() {
        let at = mass_positions(&m.shapes_at_event(k).unwrap())[0];
        // on the ground (measured ≤ 1.4e-17)
        assert!(at[1].abs() <= 1e-12, "impact {k}: {at:?}");
    }

    // the impact pendulum's bob on the wall's ray at every strike
    let sys = ImpactPendulum;
    let theta = ImpactPendulum::default_params();
    let setup = Setup::new(&sys, 0.0, 3.0, None, vec![]);
    let traj = setup.simulate(&theta).unwrap();
    let m = Motion::new(&setup, &traj, &theta, "impact_pendulum").unwrap();
    assert!(!traj.events.is_empty());
    let qw = theta[5];
    // on the wall's ray (measured 0: the event refinement lands q on q_w exactly)
    for k in 0..traj.events.len() {
        let bob = mass_positions(&m.shapes_at_event(k).unwrap())[0];
        assert!(
            dist(bob, [qw.sin(), -qw.cos()]) <= 1e-12,
            "strike {k}: {bob:?}"
        );
    }
}

/// `[plot.geometry]` (points from outputs) against the five-bar's own geometry: point 2
/// from the outputs (x2, y2) is the mechanism's P2, at every drawn instant and event.
#[test]
fn plot_geometry_from_outputs_is_the_systems_own() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/five_bar_stiffness.toml"),
    )
    .unwrap();
    let text = text.replace(
        "[plot]",
        "[plot.geometry]\npoints = { B = [0.5, 0.0], P2 = [\"x2\", \"y2\"] }\n\
         springs = [[\"B\", \"P2\"]]\nmasses = { P2 = 1.5 }\nground = -2.35\n[plot]",
    );
    let p = Problem::parse(&text, Path::new("five_bar_geometry.toml")).unwrap();
    let spec = p.plot_geometry.as_ref().expect("[plot.geometry] read");
    let setup = p.setup().unwrap();
    let theta = p.theta_values();
    let traj = setup.simulate(&theta).unwrap();
    let own = Motion::new(&setup, &traj, &theta, "five_bar").unwrap();
    let geometry = OutputGeometry::new(&p.system, spec);
    let file = Motion::with_geometry(&setup, &traj, &theta, &geometry).unwrap();
    let s0 = file.shapes_at(0.0).unwrap();
    assert_eq!(
        s0.iter()
            .filter(|s| matches!(s, Shape::Pivot { .. }))
            .count(),
        1,
        "B is fixed and attached"
    );
    for k in 0..=30 {
        let t = 3.0 * k as f64 / 30.0;
        let a = mass_positions(&own.shapes_at(t).unwrap())[1];
        let b = mass_positions(&file.shapes_at(t).unwrap())[0];
        assert!(dist(a, b) <= SAME, "t = {t}: {a:?} vs {b:?}");
    }
    for k in 0..traj.events.len() {
        let a = mass_positions(&own.shapes_at_event(k).unwrap())[1];
        let b = mass_positions(&file.shapes_at_event(k).unwrap())[0];
        assert!(dist(a, b) <= SAME, "event {k}");
    }
}

#[test]
fn gif_decodes_with_the_expected_frames_and_size() {
    let p = problem("five_bar_stiffness.toml");
    let setup = p.setup().unwrap();
    let theta = p.theta_values();
    let traj = setup.simulate(&theta).unwrap();
    let m = Motion::new(&setup, &traj, &theta, "five_bar").unwrap();
    let dir = tmpdir("gif");
    let path = dir.join("a.gif");
    let opts = AnimationOptions {
        fps: 10,
        duration: Some(0.8),
        width: 96,
        ..Default::default()
    };
    let info = write_gif("five-bar", &[("", &m)], &opts, &path).unwrap();
    assert_eq!(info.frames, 9, "round(0.8 s × 10 fps) + 1");
    assert_eq!(info.width, 96);
    assert_eq!(info.delay_cs, 10);
    assert!((info.speed - 3.0 / 0.8).abs() < 1e-12);
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = opts.read_info(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(
        (dec.width() as u32, dec.height() as u32),
        (info.width, info.height)
    );
    let mut frames = 0;
    while let Some(f) = dec.read_next_frame().unwrap() {
        assert_eq!((f.width as u32, f.height as u32), (info.width, info.height));
        assert_eq!(f.delay, 10);
        frames += 1;
    }
    assert_eq!(frames, info.frames);
    // nothing but the GIF in the folder (the temporary name was renamed)
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn frame_times_and_their_limits() {
    let real = frame_times((0.0, 3.0), &AnimationOptions::default()).unwrap();
    assert_eq!(real.len(), 76);
    assert_eq!((real[0], real[75]), (0.0, 3.0));
    for (fps, duration) in [
        (0, None),
        (101, None),
        (25, Some(0.0)),
        (25, Some(f64::NAN)),
        (100, Some(1e3)),
    ] {
        let o = AnimationOptions {
            fps,
            duration,
            ..Default::default()
        };
        let e = frame_times((0.0, 3.0), &o).unwrap_err();
        assert!(matches!(e, Error::Flag { .. }), "{fps} {duration:?}: {e}");
    }
}

#[test]
fn a_system_without_geometry_is_named_and_nothing_is_written() {
    let sys = SwitchedLinear;
    let setup = Setup::new(&sys, 0.0, 1.0, None, vec![]);
    let theta = vec![1.0; setup.np()];
    let traj = setup.simulate(&theta).unwrap();
    let e = Motion::new(&setup, &traj, &theta, "switched_linear")
        .err()
        .unwrap();
    let msg = e.to_string();
    assert!(matches!(e, Error::NoGeometry { .. }));
    assert!(
        msg.contains("'switched_linear'") && msg.contains("Geometry"),
        "{msg}"
    );
    let parent = tmpdir("nogeom");
    let out = parent.join("res");
    {
        let stage = Staging::new(&out).unwrap();
        let runs = [Run {
            label: String::new(),
            trajectory: &traj,
            theta: &theta,
        }];
        let r = stage_strobe(
            &stage,
            &setup,
            Drawing::System("switched_linear"),
            "t",
            &runs,
            &StrobeOptions::default(),
        );
        assert!(matches!(r, Err(Error::NoGeometry { .. })));
    }
    assert_eq!(
        std::fs::read_dir(&parent).unwrap().count(),
        0,
        "no results, no staging"
    );
}
