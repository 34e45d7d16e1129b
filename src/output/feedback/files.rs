//! The files of `hybridopt feedback` inside its staging folder: `gains.csv`, the `gains`
//! and `robustness` figures and `animation.gif` (a push, open against closed loop).

use super::figures;
use super::PushSummary;
use crate::animate::AnimationOptions;
use crate::error::Error;
use crate::feedback::{ClosedLoop, Lqr, RobustnessReport, RobustnessSpec, StepsOutcome};
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::output::animate::{stage_animation, Drawing, Run};
use crate::output::atomic::Staging;
use crate::problem::Problem;
use crate::setup::Setup;
use crate::systems::builtin::Builtin;
use ndarray::Array2;

/// Steps drawn in the animation (at most).
const ANIMATION_STEPS: usize = 6;

/// Writes `gains.csv` (`t`, `mode`, `x_ref_<state>`, `u_nom_<control>`,
/// `K_<control>_<state>` on `n` even times; K at the integrator's accuracy) and the
/// `gains` figure; returns the largest |K| entry.
pub(super) fn write_gains<S: HybridSystem>(
    stage: &Staging, p: &Problem, lqr: &Lqr<'_, S>, n: usize, nominal: &Trajectory,
) -> Result<f64, Error> {
    let g = lqr.gains_on_grid(n).map_err(Error::from_feedback)?;
    let (states, controls) = (&p.dims.states, &p.dims.controls);
    let mut header = vec!["t".to_string(), "mode".to_string()];
    header.extend(states.iter().map(|s| format!("x_ref_{s}")));
    header.extend(controls.iter().map(|c| format!("u_nom_{c}")));
    for c in controls {
        header.extend(states.iter().map(|s| format!("K_{c}_{s}")));
    }
    let mut rows = Array2::zeros((g.len(), header.len()));
    let mut max_abs = 0.0f64;
    for (i, s) in g.iter().enumerate() {
        let mut row = vec![s.t, s.mode as f64];
        row.extend(s.x.iter());
        row.extend(s.u.iter());
        for c in 0..controls.len() {
            row.extend(s.k.row(c).iter());
        }
        max_abs = max_abs.max(s.k.amax());
        for (j, v) in row.into_iter().enumerate() {
            rows[(i, j)] = v;
        }
    }
    stage.write_csv("gains.csv", &header, &rows)?;
    let events: Vec<(f64, String)> = nominal
        .events
        .iter()
        .map(|e| (e.t, p.dims.guard_name(e.guard)))
        .collect();
    stage.write_figure(
        "gains",
        &figures::gains(&p.name, &g, states, controls, &events),
    )?;
    Ok(max_abs)
}

/// Writes the `robustness` figure: per trial, the distance of the state after each impact
/// from the orbit's start (over the states `keep`), open against closed loop.
pub(super) fn write_robustness_figure(
    stage: &Staging, name: &str, r: &RobustnessReport, x0: &[f64], keep: &[usize],
) -> Result<(), Error> {
    let curves = |runs: &[StepsOutcome]| -> Vec<Vec<f64>> {
        runs.iter()
            .map(|o| {
                o.steps()
                    .iter()
                    .map(|s| {
                        keep.iter()
                            .map(|&i| (s.x_plus[i] - x0[i]).powi(2))
                            .sum::<f64>()
                            .sqrt()
                    })
                    .collect()
            })
            .collect()
    };
    let fig = figures::robustness(name, r, &curves(&r.runs_open), &curves(&r.runs_closed));
    stage.write_figure("robustness", &fig)
}

/// A push to draw: the closed loop, its mode, parameters, the orbit's start, the
/// period-closing guard and the robustness runs' spec (the same starts).
pub(super) struct Push<'a, 's> {
    pub cl: &'a ClosedLoop<'s, Builtin>,
    pub mode: usize,
    pub p: &'a [f64],
    pub x0: &'a [f64],
    pub guard: usize,
    pub spec: &'a RobustnessSpec,
}

/// Writes `animation.gif`: the first trial where the open loop falls and the closed loop
/// walks (else trial 1), open loop (K = 0) beside closed loop from the same start, for up
/// to [`ANIMATION_STEPS`] steps of the closed loop (the open loop drawn over as long).
pub(super) fn write_animation(
    stage: &Staging, p: &Problem, push: &Push<'_, '_>, r: &RobustnessReport,
) -> Result<PushSummary, Error> {
    let trial = (0..r.trials)
        .find(|&i| {
            matches!(r.runs_open[i], StepsOutcome::Fell { .. })
                && matches!(r.runs_closed[i], StepsOutcome::Walked(_))
        })
        .unwrap_or(0);
    let x = push.spec.start(push.x0, trial);
    let mut theta = push.p.to_vec();
    theta.extend_from_slice(&x);
    theta.push(0.0);
    let steps = ANIMATION_STEPS.min(push.spec.steps);
    let closed = StartOnSection::new(push.cl, push.mode);
    let open_cl = ClosedLoop::new(
        push.cl.inner,
        push.cl.table.without_gains(),
        push.cl.clock,
        push.cl.limits.clone(),
    );
    let open = StartOnSection::new(&open_cl, push.mode);
    let t_max = 3.0 * push.cl.table.period * steps as f64;
    let mut events = p.events;
    events.stop_after = Some((push.guard, steps));
    let run = |sys: &StartOnSection<'_, ClosedLoop<'_, Builtin>>, t_end: f64| {
        Setup::builder(sys)
            .horizon(0.0, t_end)
            .solver(p.solver)
            .events(events)
            .build()
            .simulate(&theta)
    };
    let tc = run(&closed, t_max)?;
    let to = run(&open, tc.t_final)?;
    let setup = Setup::builder(&closed).horizon(0.0, tc.t_final).build();
    let runs = [
        Run {
            label: "open loop (K = 0)".into(),
            trajectory: &to,
            theta: &theta,
        },
        Run {
            label: format!("closed loop ({})", push.cl.clock.name()),
            trajectory: &tc,
            theta: &theta,
        },
    ];
    let drawing = Drawing::System(p.system.kind());
    let title = format!("{}: the same push, open against closed loop", p.name);
    stage_animation(
        stage,
        &setup,
        drawing,
        &title,
        &runs,
        &AnimationOptions::default(),
    )?;
    let count = |t: &Trajectory| t.events.iter().filter(|e| e.guard == push.guard).count();
    Ok(PushSummary {
        trial: trial + 1,
        push: x.iter().zip(push.x0).map(|(a, b)| a - b).collect(),
        steps_open: count(&to),
        steps_closed: count(&tc),
        max_abs_control_closed: max_control(push.cl, &tc),
    })
}

/// The largest |u| per channel of the closed loop's law along `traj` (200 samples per
/// segment).
fn max_control(cl: &ClosedLoop<'_, Builtin>, traj: &Trajectory) -> Vec<f64> {
    let nu = cl.inner.dims().controls.len();
    let mut m = vec![0.0f64; nu];
    let mut x = vec![0.0; cl.phase_index() + 1];
    for seg in &traj.segments {
        for k in 0..=200 {
            let t = seg.t_start + (seg.t_end - seg.t_start) * k as f64 / 200.0;
            seg.state_at(t, &mut x);
            for (c, u) in cl.control(&x).into_iter().enumerate() {
                m[c] = m[c].max(u.abs());
            }
        }
    }
    m
}
