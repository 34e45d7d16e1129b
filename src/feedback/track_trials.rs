//! Robustness of a time-varying design along a run with events: seeded perturbations of
//! the start (and optionally of parameters, e.g. a restitution coefficient) run open loop
//! (K = 0: the nominal control replayed on the same clock rule) and closed loop over the
//! nominal's horizon; how many reach the problem's targets within the tolerances
//! ([`Targets`]), and the spread of each impact's time over the runs.

use super::clock::Clock;
use super::closed_loop::ClosedLoop;
use super::law::Reference;
use super::run_table::RunTable;
use super::track::{run_track, Targets, TrackRun};
use crate::error::Error;
use crate::integrate::{EventOptions, SolverOptions};
use crate::model::HybridSystem;
use crate::random::{splitmix64, unit_open};

/// What the runs are.
#[derive(Debug, Clone)]
pub struct TrackSpec {
    pub trials: usize,
    /// Each perturbed state component moves by `U[−size, size]` (the state's units).
    pub size: f64,
    /// The states left unperturbed.
    pub fixed: Vec<usize>,
    /// Perturbed parameters: `(index, half-width)`.
    pub params: Vec<(usize, f64)>,
    pub seed: u64,
}

/// Open against closed loop.
#[derive(Debug, Clone)]
pub struct TrackReport {
    pub trials: usize,
    pub reached_open: usize,
    pub reached_closed: usize,
    /// Per nominal event (in order), the standard deviation of its time over the runs that
    /// have it (NaN: none).
    pub event_time_std_open: Vec<f64>,
    pub event_time_std_closed: Vec<f64>,
    /// Every trial's start: state and parameters.
    pub starts: Vec<(Vec<f64>, Vec<f64>)>,
    pub runs_open: Vec<TrackRun>,
    pub runs_closed: Vec<TrackRun>,
}

impl TrackSpec {
    /// Trial `i`'s start from the nominal `(x0, p)`: each free state moved by
    /// `U[−size, size]`, each listed parameter by its own half-width (SplitMix64 of the
    /// seed and the draw's index: the states' draws as the periodic robustness runs
    /// number them, the parameters' after every trial's states).
    pub fn start(&self, x0: &[f64], p: &[f64], i: usize) -> (Vec<f64>, Vec<f64>) {
        let draw = |k: usize| 2.0 * unit_open(splitmix64(self.seed, k as u64)) - 1.0;
        let mut x = x0.to_vec();
        for (j, v) in x.iter_mut().enumerate() {
            if !self.fixed.contains(&j) {
                *v += self.size * draw(i * x0.len() + j);
            }
        }
        let mut pv = p.to_vec();
        let base = self.trials * x0.len();
        for (k, &(j, w)) in self.params.iter().enumerate() {
            pv[j] += w * draw(base + i * self.params.len() + k);
        }
        (x, pv)
    }
}

/// Runs every trial open and closed loop over `span` (module docs).
#[allow(clippy::too_many_arguments)]
pub fn track_trials<S: HybridSystem>(
    inner: &S, table: &RunTable, clock: Clock, limits: Option<Vec<(f64, f64)>>, mode: usize,
    p: &[f64], x0: &[f64], span: (f64, f64), targets: &Targets, spec: &TrackSpec,
    solver: SolverOptions, events: EventOptions,
) -> Result<TrackReport, Error> {
    let closed = ClosedLoop::new(inner, table.clone(), clock, limits);
    let open = ClosedLoop::new(inner, table.without_gains(), clock, closed.limits.clone());
    let starts: Vec<_> = (0..spec.trials).map(|i| spec.start(x0, p, i)).collect();
    let tally = |cl: &ClosedLoop<'_, S, RunTable>| -> Result<Vec<TrackRun>, Error> {
        starts
            .iter()
            .map(|(x, pv)| {
                crate::interrupt::check()?;
                run_track(cl, mode, pv, x, span, targets, solver, events)
            })
            .collect()
    };
    let runs_open = tally(&open)?;
    let runs_closed = tally(&closed)?;
    let n_events = table.segments() - 1;
    Ok(TrackReport {
        trials: spec.trials,
        reached_open: runs_open.iter().filter(|r| r.reached).count(),
        reached_closed: runs_closed.iter().filter(|r| r.reached).count(),
        event_time_std_open: spreads(&runs_open, n_events),
        event_time_std_closed: spreads(&runs_closed, n_events),
        starts,
        runs_open,
        runs_closed,
    })
}

/// Per event index `< n`, the standard deviation of its time over the runs that have it.
fn spreads(runs: &[TrackRun], n: usize) -> Vec<f64> {
    (0..n)
        .map(|m| {
            let t: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.events.get(m).map(|e| e.1))
                .collect();
            let k = t.len() as f64;
            let mean = t.iter().sum::<f64>() / k;
            (t.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / k).sqrt()
        })
        .collect()
}
