//! Robustness of a periodic design: seeded perturbations of the start state run open loop
//! (the nominal torque replayed by the same phase rule, K = 0) and closed loop; how many
//! take every step asked for, and the spread of the last impact's time among those that do.

use super::clock::Clock;
use super::closed_loop::ClosedLoop;
use super::reference::PeriodTable;
use super::steps::{run_steps_bounded, StepsOutcome};
use crate::error::Error;
use crate::integrate::{EventOptions, SolverOptions};
use crate::model::HybridSystem;
use crate::random::{splitmix64, unit_open};

/// What the runs are.
#[derive(Debug, Clone)]
pub struct RobustnessSpec {
    /// Number of perturbed starts.
    pub trials: usize,
    /// Each perturbed state component uniform in `[−size, size]` (the state's units).
    pub size: f64,
    /// The states left unperturbed (e.g. a walker's foot position).
    pub fixed: Vec<usize>,
    pub steps: usize,
    pub seed: u64,
    /// Longest step, in periods: a step that takes longer is a fall.
    pub periods_per_step: f64,
}

/// Open against closed loop.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RobustnessReport {
    pub trials: usize,
    pub size: f64,
    pub steps: usize,
    pub walked_open: usize,
    pub walked_closed: usize,
    /// Standard deviation of the last impact's time over the runs that walked (NaN: none).
    pub impact_time_std_open: f64,
    pub impact_time_std_closed: f64,
    /// Every trial's run, open loop (trial order; not serialized).
    #[serde(skip)]
    pub runs_open: Vec<StepsOutcome>,
    /// Every trial's run, closed loop.
    #[serde(skip)]
    pub runs_closed: Vec<StepsOutcome>,
}

impl RobustnessSpec {
    /// The start of trial `i` from `x0` (the function [`robustness`] runs).
    pub fn start(&self, x0: &[f64], i: usize) -> Vec<f64> {
        perturbed(x0, self, i)
    }
}

/// The start of trial `i`: `x0` with each free component moved by `U[−size, size]`
/// (SplitMix64 of the seed and the draw's index).
fn perturbed(x0: &[f64], spec: &RobustnessSpec, i: usize) -> Vec<f64> {
    let mut x = x0.to_vec();
    for (j, v) in x.iter_mut().enumerate() {
        if !spec.fixed.contains(&j) {
            let k = (i * x0.len() + j) as u64;
            *v += spec.size * (2.0 * unit_open(splitmix64(spec.seed, k)) - 1.0);
        }
    }
    x
}

/// Runs every trial open and closed loop (module docs); `table` is the closed loop's
/// design, the open loop the same table with K = 0.
#[allow(clippy::too_many_arguments)]
pub fn robustness<S: HybridSystem>(
    inner: &S, table: &PeriodTable, clock: Clock, limits: Option<Vec<(f64, f64)>>, mode: usize,
    p: &[f64], x0: &[f64], guard: usize, spec: &RobustnessSpec, solver: SolverOptions,
    events: EventOptions,
) -> Result<RobustnessReport, Error> {
    let closed = ClosedLoop::new(inner, table.clone(), clock, limits.clone());
    let open = ClosedLoop::new(inner, table.without_gains(), clock, limits);
    let step_max = spec.periods_per_step * table.period;
    let tally = |cl: &ClosedLoop<'_, S>| -> Result<(usize, f64, Vec<StepsOutcome>), Error> {
        let mut times = Vec::new();
        let mut runs = Vec::with_capacity(spec.trials);
        for i in 0..spec.trials {
            crate::interrupt::check()?;
            let x = perturbed(x0, spec, i);
            let out = run_steps_bounded(
                cl,
                mode,
                p,
                (&x, 0.0),
                guard,
                spec.steps,
                step_max,
                solver,
                events,
            )?;
            if let StepsOutcome::Walked(s) = &out {
                times.push(s[s.len() - 1].t);
            }
            runs.push(out);
        }
        let n = times.len() as f64;
        let mean = times.iter().sum::<f64>() / n;
        let var = times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / n;
        Ok((times.len(), var.sqrt(), runs))
    };
    let (walked_open, impact_time_std_open, runs_open) = tally(&open)?;
    let (walked_closed, impact_time_std_closed, runs_closed) = tally(&closed)?;
    Ok(RobustnessReport {
        trials: spec.trials,
        size: spec.size,
        steps: spec.steps,
        walked_open,
        walked_closed,
        impact_time_std_open,
        impact_time_std_closed,
        runs_open,
        runs_closed,
    })
}
