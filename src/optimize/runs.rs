//! The solver runs of one optimization: a run of L-BFGS or steepest descent from a start
//! point, and what follows it: the end, or a restart from the last accepted iterate after
//! a trial point left the cost's domain (at most [`MAX_RESTARTS`], each with a first step
//! [`RESTART_SHRINK`] times shorter) or after L-BFGS stalled (once in a row, memory
//! cleared), or from the best point after a line search raised the cost (a shorter first
//! step each time, within [`MAX_RESTARTS`]).

use super::adapter::{Adapter, Shared, Space};
use super::driver::{self, Bridge, RunSettings};
use super::history::{Recorder, Rows};
use super::monotone::is_line_search_failure;
use super::settings::{KinkPolicy, OptimizerSettings};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::setup::Setup;
use argmin::core::TerminationReason;
use std::collections::HashMap;
use std::sync::Arc;

/// Line-search restarts after a trial point left the cost's domain (an event that the
/// cost needs stopped happening, or grazing / sticking / Zeno appeared): at most this many,
/// each from the last accepted iterate with a fresh solver whose first trial step is
/// `RESTART_SHRINK` times shorter than the previous run's (the cost's scale is raised;
/// the convergence tests are scaled with it, so they keep their meaning). Later steps
/// are the solver's own (L-BFGS: unit quasi-Newton steps), so a restart does not slow the
/// rest of the run. Each is reported in [`super::OptimizeResult::restarts`]; other errors end
/// the run at once.
pub const MAX_RESTARTS: usize = 6;
/// How much shorter each restart's first trial step is than the previous run's.
pub const RESTART_SHRINK: f64 = 4.0;

/// How the solver runs ended: the solver's own termination, or a stop at a kink (kink
/// policy `stop`, raised as [`Error::StoppedAtKink`] inside the line search).
pub(super) enum Ending {
    Solver(Option<TerminationReason>),
    Kink,
}

/// Where the runs stand: the next run's start, the iterations and calls so far, and the
/// restarts made.
pub(super) struct RunState {
    pub(super) z_start: Vec<f64>,
    pub(super) iterations: u64,
    /// The first trial step of the next run relative to `first_step`.
    step_shrink: f64,
    pub(super) restarts: Vec<String>,
    /// Whether the last restart was after a stall (a second stall in a row ends the run).
    last_was_stall: bool,
    pub(super) counts: HashMap<String, u64>,
}

impl RunState {
    fn restart<A>(&mut self, why: String, z: Option<Vec<f64>>, stall: bool) -> Next<A> {
        self.restarts.push(why);
        if let Some(z) = z {
            self.z_start = z;
        }
        if !stall {
            self.step_shrink /= RESTART_SHRINK;
        }
        self.last_was_stall = stall;
        Next::Restart
    }
}

/// The end of the runs: the bridge (for the final point's evaluation), how they ended, the
/// best point of the last run (in z) and the state.
pub(super) struct Solved<'s, 'a, S: HybridSystem> {
    pub(super) bridge: Bridge<Adapter<'s, 'a, S>>,
    pub(super) ending: Ending,
    pub(super) z: Option<Vec<f64>>,
    pub(super) state: RunState,
}

/// What follows a run: another run, or the end (with argmin's bridge if it kept it).
enum Next<A> {
    Restart,
    Finish {
        bridge: Option<A>,
        ending: Ending,
        z: Option<Vec<f64>>,
    },
}

/// One run's outcome on the problem's cost.
type RunOut<'s, 'a, S> = driver::RunOut<Adapter<'s, 'a, S>>;

/// The solver runs of one optimization on the scaled objective (scale fixed across
/// restarts, so the convergence tests keep their meaning).
pub(super) struct Runs<'s, 'a, S: HybridSystem> {
    pub(super) setup: &'s Setup<'a, S>,
    pub(super) space: &'s Space,
    pub(super) settings: &'s OptimizerSettings,
    pub(super) shared: Shared,
    pub(super) rows: Rows,
    pub(super) progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
    pub(super) scale: f64,
}

impl<'s, 'a, S: HybridSystem> Runs<'s, 'a, S> {
    fn bridge(&self, scale: f64) -> Bridge<Adapter<'s, 'a, S>> {
        let adapter = Adapter::new(
            self.setup,
            self.space,
            self.settings.gradient,
            self.settings.at_kink,
            &self.shared,
            scale,
        );
        Bridge::new(adapter, &self.shared.error)
    }

    /// Runs the solver from `z0`, restarting as needed, until it ends.
    pub(super) fn solve(&self, z0: Vec<f64>) -> Result<Solved<'s, 'a, S>, Error> {
        let mut st = RunState {
            z_start: z0,
            iterations: 0,
            step_shrink: 1.0,
            restarts: Vec::new(),
            last_was_stall: false,
            counts: HashMap::new(),
        };
        loop {
            let run = self.run_once(&st)?;
            let pending = self.shared.take_error();
            if matches!(pending, Some(Error::Interrupted)) {
                return Err(Error::Interrupted);
            }
            let next = match run {
                Err(e) => self.after_failed_run(&mut st, pending, e)?,
                Ok(out) => self.after_run(&mut st, pending, out)?,
            };
            if let Next::Finish { bridge, ending, z } = next {
                let mut bridge = bridge.unwrap_or_else(|| self.bridge(self.scale));
                bridge.objective.kink_policy = KinkPolicy::Descent;
                return Ok(Solved {
                    bridge,
                    ending,
                    z,
                    state: st,
                });
            }
        }
    }

    /// One run of the solver from `st.z_start` for the iterations left, its first trial
    /// step shortened by the restarts so far. The outer error is a setting argmin rejects;
    /// the inner one a run that failed (steepest descent passes a failed line search up).
    fn run_once(
        &self, st: &RunState,
    ) -> Result<Result<RunOut<'s, 'a, S>, argmin::core::Error>, Error> {
        let settings = self.settings;
        let recorder = Recorder {
            rows: self.rows.clone(),
            progress: self.progress.clone(),
            offset: st.iterations,
            rescale: 1.0 / st.step_shrink,
        };
        let how = RunSettings {
            solver: settings.solver,
            memory: settings.memory,
            tol_grad: settings.tol_grad * st.step_shrink,
            tol_cost: settings.tol_cost * st.step_shrink,
            max_iters: settings.max_iters.saturating_sub(st.iterations),
        };
        let bridge = self.bridge(self.scale / st.step_shrink);
        driver::run(bridge, st.z_start.clone(), &how, recorder)
            .map_err(|e| Error::Optimizer(e.to_string()))
    }

    /// After a run that failed: a restart from the last accepted iterate if an evaluation
    /// left the cost's domain and restarts are left, else the error.
    fn after_failed_run(
        &self, st: &mut RunState, pending: Option<Error>, e: argmin::core::Error,
    ) -> Result<Next<Bridge<Adapter<'s, 'a, S>>>, Error> {
        let Some(inner) = pending else {
            return Err(Error::Optimizer(format!("argmin failed: {e}")));
        };
        if inner.is_domain_error() && st.restarts.len() < MAX_RESTARTS {
            if let Some((it, z)) = self.rows.last_good(self.space.free.len()) {
                st.iterations = it;
                return Ok(st.restart(format!("after iteration {it}: {inner}"), Some(z), false));
            }
        }
        if inner.is_domain_error() && st.restarts.len() >= MAX_RESTARTS {
            return Err(Error::RestartsExhausted {
                restarts: st.restarts.len(),
                source: Box::new(inner),
            });
        }
        Err(Error::Optimizer(format!("an evaluation failed: {inner}")))
    }

    /// After a run that ended: the end at a kink (policy `stop`), a restart after an
    /// evaluation error at a trial point (which argmin hides in the termination reason) or
    /// after a stall, or the end.
    fn after_run(
        &self, st: &mut RunState, pending: Option<Error>, out: RunOut<'s, 'a, S>,
    ) -> Result<Next<Bridge<Adapter<'s, 'a, S>>>, Error> {
        st.iterations += out.iterations;
        for (k, v) in out.counts {
            *st.counts.entry(k).or_insert(0) += v;
        }
        match pending {
            Some(Error::StoppedAtKink) => {
                return Ok(Next::Finish {
                    bridge: out.bridge,
                    ending: Ending::Kink,
                    z: self.shared.last_kink().map(|k| self.space.z(&k.theta)),
                })
            }
            Some(e) => return self.after_trial_error(st, e, out.reason.as_ref()),
            None => {}
        }
        if let Some(TerminationReason::SolverExit(msg)) = &out.reason {
            if let Some(next) = self.after_stall(st, msg) {
                return Ok(next);
            }
        }
        Ok(Next::Finish {
            bridge: out.bridge,
            ending: Ending::Solver(out.reason),
            z: out.z,
        })
    }

    /// An error at a trial point: a restart if it left the cost's domain and restarts and
    /// iterations are left, else the error.
    fn after_trial_error(
        &self, st: &mut RunState, e: Error, reason: Option<&TerminationReason>,
    ) -> Result<Next<Bridge<Adapter<'s, 'a, S>>>, Error> {
        if e.is_domain_error()
            && st.restarts.len() < MAX_RESTARTS
            && st.iterations < self.settings.max_iters
        {
            let why = format!("after iteration {}: {e}", st.iterations);
            let z = self.rows.last_good(self.space.free.len()).map(|r| r.1);
            return Ok(st.restart(why, z, false));
        }
        if e.is_domain_error() && st.restarts.len() >= MAX_RESTARTS {
            return Err(Error::RestartsExhausted {
                restarts: st.restarts.len(),
                source: Box::new(e),
            });
        }
        Err(Error::Optimizer(format!(
            "an evaluation failed during the line search ({}){}: {e}",
            reason.map_or("no termination reason".to_string(), |r| r
                .text()
                .to_string()),
            if st.restarts.is_empty() {
                String::new()
            } else {
                format!(" after {} restart(s)", st.restarts.len())
            }
        )))
    }

    /// A stalled L-BFGS (its memory produced an ascent direction, or the line search found
    /// no acceptable step) gets one fresh start from its best point with the memory
    /// cleared; a second stall in a row ends the run (`None`). A line search whose point
    /// raised the cost ([`monotone`](super::monotone)) gets fresh starts from the best
    /// point with a first step [`RESTART_SHRINK`](super::RESTART_SHRINK) times shorter
    /// each, while restarts are left (a fresh start with the same first step would take
    /// the same step again).
    fn after_stall(
        &self, st: &mut RunState, msg: &str,
    ) -> Option<Next<Bridge<Adapter<'s, 'a, S>>>> {
        let rise = is_line_search_failure(msg);
        if (st.last_was_stall && !rise)
            || st.restarts.len() >= MAX_RESTARTS
            || st.iterations >= self.settings.max_iters
        {
            return None;
        }
        let (_, z) = self.rows.last_good(self.space.free.len())?;
        let how = if rise {
            "shorter first step"
        } else {
            "fresh start"
        };
        let why = format!("stalled after iteration {} ({msg}): {how}", st.iterations);
        Some(st.restart(why, Some(z), !rise))
    }
}
