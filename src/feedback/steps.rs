//! Closed-loop runs step by step: the [`ClosedLoop`] system simulated from a start just after
//! an impact until the `steps`-th firing of the period-closing guard, with the state after
//! each firing (the per-step decay of a perturbation, the robustness runs).

use super::closed_loop::ClosedLoop;
use crate::error::Error;
use crate::integrate::{EventOptions, SolverOptions};
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::setup::Setup;

/// One step of a closed-loop run: the guard's firing time and the state just after it.
#[derive(Debug, Clone)]
pub struct StepRecord {
    pub t: f64,
    pub x_plus: Vec<f64>,
    /// The mode after the reset.
    pub mode: usize,
}

/// How a closed-loop run ended.
#[derive(Debug, Clone)]
pub enum StepsOutcome {
    /// Every step was taken.
    Walked(Vec<StepRecord>),
    /// Fewer firings than asked for by `t_max`, or the run failed (a fall): the steps taken.
    Fell { steps: Vec<StepRecord>, why: String },
}

impl StepsOutcome {
    /// The steps taken.
    pub fn steps(&self) -> &[StepRecord] {
        match self {
            StepsOutcome::Walked(s) => s,
            StepsOutcome::Fell { steps, .. } => steps,
        }
    }
}

/// Simulates `cl` from the inner state `x` at the controller's phase `phase` in `mode` at
/// parameters `p` to the `steps`-th firing of `guard` within `t_max`.
pub fn run_steps<S: HybridSystem>(
    cl: &ClosedLoop<'_, S>, mode: usize, p: &[f64], (x, phase): (&[f64], f64), guard: usize,
    steps: usize, t_max: f64, solver: SolverOptions, events: EventOptions,
) -> Result<StepsOutcome, Error> {
    let wrapped = StartOnSection::new(cl, mode);
    let mut ev = events;
    ev.stop_after = Some((guard, steps));
    let setup = Setup::builder(&wrapped)
        .horizon(0.0, t_max)
        .solver(solver)
        .events(ev)
        .build();
    let mut theta = p.to_vec();
    theta.extend_from_slice(x);
    theta.push(phase);
    let traj = match setup.simulate(&theta) {
        Ok(t) => t,
        Err(Error::Interrupted) => return Err(Error::Interrupted),
        Err(e) => {
            return Ok(StepsOutcome::Fell {
                steps: Vec::new(),
                why: e.to_string(),
            })
        }
    };
    let mut taken = Vec::new();
    for e in traj.events.iter().filter(|e| e.guard == guard) {
        // the run stops at the last firing without its reset: applied here
        let (mode, x_plus) = if e.terminal {
            setup
                .reset(e.mode_before(), e.guard, e.t, &e.before.y, &theta)
                .map_err(|source| Error::Model {
                    t: e.t,
                    mode: setup.dims().mode_name(e.mode_before()),
                    source,
                })?
        } else {
            (e.mode_after(), e.after.y.clone())
        };
        taken.push(StepRecord {
            t: e.t,
            x_plus,
            mode,
        });
    }
    if taken.len() < steps {
        let why = format!(
            "{} of {steps} steps by t = {:.3}",
            taken.len(),
            traj.t_final
        );
        return Ok(StepsOutcome::Fell { steps: taken, why });
    }
    Ok(StepsOutcome::Walked(taken))
}

/// [`run_steps`] one step at a time, each within `step_max` of its start: a run whose step
/// takes longer has fallen (it is not simulated further). The closed loop is autonomous
/// (its law reads the phase, not t), so each step restarts the clock at 0; the records'
/// times are the run's.
pub fn run_steps_bounded<S: HybridSystem>(
    cl: &ClosedLoop<'_, S>, mode: usize, p: &[f64], (x, phase): (&[f64], f64), guard: usize,
    steps: usize, step_max: f64, solver: SolverOptions, events: EventOptions,
) -> Result<StepsOutcome, Error> {
    let n = x.len();
    let (mut m, mut y, mut t0) = (mode, x.to_vec(), 0.0);
    y.push(phase);
    let mut taken: Vec<StepRecord> = Vec::with_capacity(steps);
    for _ in 0..steps {
        let start = (&y[..n], y[n]);
        match run_steps(cl, m, p, start, guard, 1, step_max, solver, events)? {
            StepsOutcome::Walked(s) => {
                let mut r = s
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::Internal("a walked step without its record".into()))?;
                (m, y) = (r.mode, r.x_plus.clone());
                r.t += t0;
                t0 = r.t;
                taken.push(r);
            }
            StepsOutcome::Fell { why, .. } => return Ok(StepsOutcome::Fell { steps: taken, why }),
        }
    }
    Ok(StepsOutcome::Walked(taken))
}
