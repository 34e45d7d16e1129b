//! `hybridopt feedback`: the LQR design of a problem's `[feedback]` table along its
//! nominal (the optimized run, or a summary's θ), and its results folder: `gains.csv` (K
//! with x_ref and u_nom on a grid), `summary.json` (the [`FeedbackReport`]: the open- and
//! closed-loop multipliers, the robustness counts open against closed loop, the spread of
//! impact times), the `gains` and `robustness` figures and `animation.gif` (a perturbed
//! run, open against closed loop under the same push).
//!
//! A problem whose `[shooting]` table closes a period at a guard (or whose `[feedback]`
//! names one) gets periodic LQR on that period ([`crate::feedback::periodic_lqr`]); any
//! other, time-varying LQR along the run ([`crate::feedback::tvlqr`]) and its closed loop
//! along the run (`tracking.rs`: the transition open against closed loop, the trials
//! against the problem's targets, the `robustness` figure and `animation.gif`).

mod design;
mod figures;
mod files;
mod tracking;

pub use tracking::{targets, EXTENSION};

use crate::error::Error;
use crate::feedback::Clock;
use crate::output::atomic::Staging;
use crate::problem::Problem;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `hybridopt feedback` is asked for.
#[derive(Debug, Clone)]
pub struct FeedbackRequest {
    pub out: PathBuf,
    /// The nominal θ from this `summary.json` of `optimize` (its final parameters).
    pub summary: Option<PathBuf>,
    /// Without a summary: optimize the problem first (a file without costs is used as is).
    pub optimize: bool,
    /// The number of robustness trials instead of the file's.
    pub trials: Option<usize>,
    /// Draw `animation.gif`.
    pub animation: bool,
}

/// `summary.json` and `feedback --json` (a contract: add fields, never rename or drop).
#[derive(Debug, Clone, Serialize)]
pub struct FeedbackReport {
    pub problem: String,
    /// `"periodic_lqr"` or `"tvlqr"`.
    pub design: String,
    pub nominal: NominalSummary,
    pub weights: WeightsSummary,
    /// A periodic design's phase rule, period-closing guard and period.
    pub clock: Option<Clock>,
    pub guard: Option<String>,
    pub period: Option<f64>,
    pub riccati: RiccatiSummary,
    /// States left out of the multipliers: nothing depends on them (multiplier 1).
    pub neutral_states: Vec<String>,
    /// The gait's own multipliers: the nominal control replayed from each impact (the
    /// phase reset, K = 0), by the return map; what `optimize` reports for a periodic
    /// shooting problem.
    pub open_loop: Option<LoopSummary>,
    /// The open loop under the design's phase rule (K = 0; what the robustness runs'
    /// open loop is), from the Riccati side's jumps: with `extend` the nominal control
    /// runs on the nominal clock across early and late impacts.
    pub open_loop_clock: Option<LoopSummary>,
    pub closed_loop: Option<LoopSummary>,
    /// Per control channel `[lower, upper]`: the law is clamped to them.
    pub control_limits: Option<Vec<[f64; 2]>>,
    pub robustness: Option<RobustnessSummary>,
    pub animation: Option<PushSummary>,
    pub gains: GainsSummary,
    pub wall_s: f64,
    /// A time-varying design's closed loop along the run: the transition open against
    /// closed loop and the robustness trials against the problem's targets (`null` for a
    /// periodic design).
    pub tracking: Option<TrackingSummary>,
}

/// Seeded perturbations of the start (and parameters) along a run, open (K = 0) against
/// closed loop, judged by the problem's targets within the tolerances.
#[derive(Debug, Clone, Serialize)]
pub struct TrackingSummary {
    pub trials: usize,
    /// Each perturbed state moved by U[−size, size].
    pub size: f64,
    pub states: Vec<String>,
    /// Perturbed parameters and their half-widths.
    pub parameters: BTreeMap<String, f64>,
    pub seed: u64,
    /// The targets, e.g. `y(t_end) = 0.5`, `t(ground #2) = 1.6`.
    pub targets: Vec<String>,
    pub terminal_tolerance: f64,
    pub event_time_tolerance: f64,
    pub reached_open: usize,
    pub reached_closed: usize,
    /// The nominal's event times and, per event, the standard deviation of its time over
    /// the runs that have it (NaN → null: none).
    pub nominal_event_times: Vec<f64>,
    pub event_time_std_open: Vec<f64>,
    pub event_time_std_closed: Vec<f64>,
    /// Spectral norms of the transition `∂x(t_f)/∂x(t_0)` through the saltations, K = 0
    /// and closed loop.
    pub transition_norm_open: f64,
    pub transition_norm_closed: f64,
    /// Each stretch between events is extended past its events by this fraction of the
    /// run (the reference of a late or early impact).
    pub extension: f64,
    /// The trial drawn in `animation.gif` (1-based).
    pub animation_trial: Option<usize>,
}

/// Where the nominal's θ came from (`"optimized"`, `"summary"`, `"file"`), θ by name
/// (the parameters and the control coefficients, as `optimize` names them) and the run.
#[derive(Debug, Clone, Serialize)]
pub struct NominalSummary {
    pub source: String,
    pub parameters: BTreeMap<String, f64>,
    /// Whether the optimization converged (`null` when none ran).
    pub optimize_converged: Option<bool>,
    pub t_end: f64,
    pub events: usize,
}

/// The diagonal weights by name.
#[derive(Debug, Clone, Serialize)]
pub struct WeightsSummary {
    pub states: Vec<String>,
    pub controls: Vec<String>,
    pub q: Vec<f64>,
    pub r: Vec<f64>,
    pub qf: Vec<f64>,
}

/// The backward integration: periodic sweeps to convergence and the last sweep's
/// relative change of P(0) (`null` for a time-varying design), accepted steps.
#[derive(Debug, Clone, Serialize)]
pub struct RiccatiSummary {
    pub sweeps: Option<usize>,
    pub change: Option<f64>,
    pub steps: usize,
}

/// Floquet multipliers `[re, im]`, largest modulus first, and the spectral radius; the
/// closed loop's also from the periodic machinery's return map of the closed-loop system.
#[derive(Debug, Clone, Serialize)]
pub struct LoopSummary {
    pub multipliers: Vec<[f64; 2]>,
    pub spectral_radius: f64,
    pub return_map_spectral_radius: Option<f64>,
}

/// Seeded perturbations of the start, open (K = 0) against closed loop.
#[derive(Debug, Clone, Serialize)]
pub struct RobustnessSummary {
    pub trials: usize,
    /// Each perturbed state moved by U[−size, size].
    pub size: f64,
    pub states: Vec<String>,
    pub seed: u64,
    pub steps: usize,
    pub walked_open: usize,
    pub walked_closed: usize,
    /// Standard deviation of the last impact's time over the walks (NaN → null: none).
    pub impact_time_std_open: f64,
    pub impact_time_std_closed: f64,
    /// Mean over the walks of the largest |t_k − k T| of their impacts.
    pub impact_time_spread_closed: f64,
}

/// The push drawn in `animation.gif`: its trial, the change of the start, the steps each
/// loop took and the largest |u| per channel of the closed loop.
#[derive(Debug, Clone, Serialize)]
pub struct PushSummary {
    pub trial: usize,
    pub push: Vec<f64>,
    pub steps_open: usize,
    pub steps_closed: usize,
    pub max_abs_control_closed: Vec<f64>,
}

/// `gains.csv`: its rows and the largest |K| entry.
#[derive(Debug, Clone, Serialize)]
pub struct GainsSummary {
    pub file: String,
    pub points: usize,
    pub max_abs: f64,
}

impl FeedbackReport {
    /// The terminal report.
    pub fn text(&self, dir: &Path) -> String {
        let mut o = match (&self.clock, &self.guard, self.period) {
            (Some(c), Some(g), Some(t)) => format!(
                "{}: periodic LQR (clock {}) on the period of {t:.6} s closed by '{g}', {} sweeps\n",
                self.problem,
                c.name(),
                self.riccati.sweeps.unwrap_or(0)
            ),
            _ => format!(
                "{}: time-varying LQR along the run to t = {:.6} ({} events)\n",
                self.problem, self.nominal.t_end, self.nominal.events
            ),
        };
        if let (Some(a), Some(b)) = (&self.open_loop, &self.closed_loop) {
            o += &format!(
                "  spectral radius: open loop {:.6} → closed loop {:.6} (return map {})\n",
                a.spectral_radius,
                b.spectral_radius,
                b.return_map_spectral_radius
                    .map_or("-".into(), |r| format!("{r:.6}"))
            );
        }
        if let Some(r) = &self.robustness {
            o += &format!(
                "  robustness: {} starts pushed by U[−{}, {}] on {}: walked {} steps open loop {}/{}, closed loop {}/{}\n",
                r.trials,
                r.size,
                r.size,
                r.states.join(", "),
                r.steps,
                r.walked_open,
                r.trials,
                r.walked_closed,
                r.trials
            );
        }
        if let Some(r) = &self.tracking {
            o += &format!(
                "  closed loop (clock {}): |∂x(t_f)/∂x(t_0)| open loop {:.4e} → closed loop {:.4e}\n  robustness: {} starts pushed by U[−{}, {}] on {}{}: reached {} within {} / {} s open loop {}/{}, closed loop {}/{}\n",
                self.clock.map_or("-", |c| c.name()),
                r.transition_norm_open,
                r.transition_norm_closed,
                r.trials,
                r.size,
                r.size,
                r.states.join(", "),
                r.parameters
                    .iter()
                    .map(|(k, v)| format!(", {k} by U[−{v}, {v}]"))
                    .collect::<String>(),
                r.targets.join(", "),
                r.terminal_tolerance,
                r.event_time_tolerance,
                r.reached_open,
                r.trials,
                r.reached_closed,
                r.trials
            );
        }
        o += &format!(
            "  gains: {} points, max |K| {:.4e}; results in {}\n",
            self.gains.points,
            self.gains.max_abs,
            dir.display()
        );
        o
    }
}

/// Designs `p`'s feedback and writes the folder `req.out` (staged, swapped in atomically);
/// `started` is when the command started.
pub fn feedback_to_folder(
    p: &Problem, req: &FeedbackRequest, started: Instant,
) -> Result<(FeedbackReport, PathBuf), Error> {
    let Some(settings) = &p.feedback else {
        return Err(Error::Problem {
            file: p.file.clone(),
            message: "the file has no [feedback] table; `feedback` needs one with the weights, e.g. [feedback] q = { theta_s = 10.0 } and r = { hip = 0.01 } (docs/guide/problem-files.md)".into(),
        });
    };
    let setup = p.setup()?;
    let (theta, nominal) = design::nominal(p, &setup, req)?;
    let stage = Staging::new(&req.out)?;
    let mut report = design::design(p, &setup, settings, &theta, nominal, req, &stage)?;
    report.wall_s = started.elapsed().as_secs_f64();
    stage.write_json("summary.json", &super::to_value(&report)?)?;
    let dir = stage.commit()?;
    Ok((report, dir))
}
