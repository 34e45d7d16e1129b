//! One closed-loop run along a time-varying design: the [`ClosedLoop`] over a [`RunTable`]
//! simulated over the nominal's horizon from a start (the state, the parameters), and
//! whether it reaches the problem's targets — the terminal outputs' and the event times'
//! (`terminal_squared` and `event_time_squared` costs) — within the tolerances of
//! `[feedback.robustness]` (docs/guide/feedback.md, "Along a run, closed loop").

use super::closed_loop::ClosedLoop;
use super::run_table::RunTable;
use crate::cost::{EventGuard, Law, Quantity, Term};
use crate::error::Error;
use crate::integrate::{EventOptions, SolverOptions, Trajectory};
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::setup::Setup;

/// What a run must reach: terminal outputs and event times, each with its target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Targets {
    /// `(output, target)`: `|y(t_f) − target| ≤ terminal_tol`.
    pub terminal: Vec<(usize, f64)>,
    /// `(guard, occurrence (1-based), target)`: `|t_e − target| ≤ event_time_tol`.
    pub event_times: Vec<(usize, usize, f64)>,
    pub terminal_tol: f64,
    pub event_time_tol: f64,
}

impl Targets {
    /// The targets of a problem's `terminal_squared` and `event_time_squared` cost terms
    /// (an event-time term on any event counts the guard of the nominal's event there).
    pub fn of_terms<'a>(
        terms: impl Iterator<Item = &'a Term>, terminal_tol: f64, event_time_tol: f64,
    ) -> Self {
        let mut t = Targets {
            terminal_tol,
            event_time_tol,
            ..Targets::default()
        };
        for term in terms {
            match term {
                Term::Weighed {
                    quantity: Quantity::Terminal { output },
                    law: Law::Squared { target, .. },
                } => t.terminal.push((*output, *target)),
                Term::Weighed {
                    quantity:
                        Quantity::EventTime {
                            guard: EventGuard::Guard(g),
                            occurrence,
                        },
                    law: Law::Squared { target, .. },
                } => t.event_times.push((*g, *occurrence, *target)),
                _ => {}
            }
        }
        t
    }

    /// Whether there is anything to reach.
    pub fn is_empty(&self) -> bool {
        self.terminal.is_empty() && self.event_times.is_empty()
    }
}

/// A closed-loop run along the run and how it ended.
#[derive(Debug, Clone)]
pub struct TrackRun {
    /// Every event: guard and time.
    pub events: Vec<(usize, f64)>,
    /// The final time and state (the system's, without the controller's states).
    pub t_final: f64,
    pub x_final: Vec<f64>,
    /// The targets' errors: terminal outputs, then event times (NaN: the event did not
    /// happen).
    pub errors: Vec<f64>,
    pub reached: bool,
    /// Why the run failed (a simulation error), if it did.
    pub failed: Option<String>,
}

/// Simulates `cl` from the system state `x` (in `mode`, at parameters `p`, the
/// controller's start states) over `[t0, t_end]`; the trajectory is of the wrapped
/// closed loop (its states: the system's, then the controller's).
#[allow(clippy::too_many_arguments)]
pub fn simulate_track<S: HybridSystem>(
    cl: &ClosedLoop<'_, S, RunTable>, mode: usize, p: &[f64], x: &[f64], (t0, t_end): (f64, f64),
    solver: SolverOptions, events: EventOptions,
) -> Result<Trajectory, Error> {
    let wrapped = StartOnSection::new(cl, mode);
    let setup = Setup::builder(&wrapped)
        .horizon(t0, t_end)
        .solver(solver)
        .events(events)
        .build();
    let mut theta = p.to_vec();
    theta.extend_from_slice(x);
    theta.extend(crate::feedback::Reference::start(&cl.table));
    setup.simulate(&theta)
}

/// [`simulate_track`] and its targets' errors (a failed simulation reaches nothing).
#[allow(clippy::too_many_arguments)]
pub fn run_track<S: HybridSystem>(
    cl: &ClosedLoop<'_, S, RunTable>, mode: usize, p: &[f64], x: &[f64], span: (f64, f64),
    targets: &Targets, solver: SolverOptions, events: EventOptions,
) -> Result<TrackRun, Error> {
    let nx = x.len();
    let traj = match simulate_track(cl, mode, p, x, span, solver, events) {
        Ok(t) => t,
        Err(Error::Interrupted) => return Err(Error::Interrupted),
        Err(e) => {
            return Ok(TrackRun {
                events: Vec::new(),
                t_final: f64::NAN,
                x_final: vec![f64::NAN; nx],
                errors: vec![f64::NAN; targets.terminal.len() + targets.event_times.len()],
                reached: false,
                failed: Some(e.to_string()),
            })
        }
    };
    let mut y = vec![0.0; cl.dims().outputs.len()];
    cl.outputs(traj.mode_final, traj.t_final, &traj.y_final, &[], p, &mut y)
        .map_err(|source| Error::Model {
            t: traj.t_final,
            mode: cl.dims().mode_name(traj.mode_final),
            source,
        })?;
    let events: Vec<(usize, f64)> = traj.events.iter().map(|e| (e.guard, e.t)).collect();
    let mut errors: Vec<f64> = targets
        .terminal
        .iter()
        .map(|&(o, target)| y[o] - target)
        .collect();
    for &(g, occ, target) in &targets.event_times {
        let t = events.iter().filter(|e| e.0 == g).nth(occ - 1);
        errors.push(t.map_or(f64::NAN, |e| e.1 - target));
    }
    let nt = targets.terminal.len();
    let reached = errors.iter().enumerate().all(|(i, e)| {
        let tol = if i < nt {
            targets.terminal_tol
        } else {
            targets.event_time_tol
        };
        e.abs() <= tol
    });
    Ok(TrackRun {
        events,
        t_final: traj.t_final,
        x_final: traj.y_final[..nx].to_vec(),
        errors,
        reached,
        failed: None,
    })
}
