//! `hybridopt gradient --json` (and `gradient.json` of `--out`): the typed report.
//! `run` computes it, `files` writes the `--out` folder, `text` the terminal report.

pub(crate) mod files;
pub(crate) mod run;
pub(crate) mod text;

pub use files::write_gradient_folder;
pub use run::{run_gradient, GradientOptions, GradientRun};
pub use text::gradient_text;

use crate::integrate::Stats;
use crate::output::optimize::EventSummary;
use crate::output::run_stats::RunStats;
use crate::sensitivity::timing::TimingReport;
use serde::Serialize;
use std::collections::BTreeMap;

/// Values by parameter name (θ's names: parameters, then control coefficients).
pub type ByName = BTreeMap<String, f64>;

/// `gradient --json` (a contract: add fields, never rename or drop).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GradientReport {
    /// ψ of the first objective, by the requested method (the adjoint for `all`).
    pub cost: f64,
    /// dψ/dθ of the first objective by name, by that method.
    pub gradient: ByName,
    /// The first objective's gradient by every method run: `{method: {param: value}}`.
    pub witnesses: BTreeMap<String, ByName>,
    /// Every objective's value and gradient, by objective name.
    pub objectives: BTreeMap<String, ObjectiveGradient>,
    /// When FD ran (`--method fd` or `all`): the first objective's FD error estimate by
    /// name (absolute, in the gradient's units): the spread of the Richardson
    /// extrapolations next to the one kept, or `|D(2h) − D(h)|` with `--fd-step`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fd_error_estimate: Option<ByName>,
    /// When FD ran: the step each entry of the first objective's FD gradient was taken
    /// with, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fd_step: Option<ByName>,
    /// Every event, with τ = dt_e/dθ (`dt_dp`) unless `--no-tau`.
    pub events: Vec<GradientEvent>,
    /// The counters of one plain run at θ.
    pub stats: RunStats,
    /// At simultaneous events: whether ψ is nonsmooth at θ (the crossing orders' gradients
    /// differ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonsmooth: Option<bool>,
    /// At simultaneous events: the one-sided derivatives Dψ(θ; ±e_k) by parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_sided: Option<BTreeMap<String, OneSided>>,
    /// At simultaneous events: the largest relative difference between the crossing
    /// orders' gradients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pieces_max_relative_difference: Option<f64>,
    /// Median wall-clock times (see [`TimingReport`]).
    pub timing: TimingReport,
    /// All the work of each method run (its last run's [`Stats`]).
    pub work: BTreeMap<String, Stats>,
    /// Where the events' τ came from (absent with `--no-tau`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tau_from: Option<TauSource>,
    /// The tolerances used.
    pub tolerances: Tolerances,
    /// The process's memory use.
    pub memory: Memory,
    /// A problem with `[[constraint]]` tables: every constraint row's value, bounds and
    /// exact gradient over the optimized variables (θ's optimized entries by name, and
    /// `t_end` when it is free), as the constrained solver sees them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Vec<ConstraintGradient>>,
}

/// One row of a problem's constraints in `gradient --json` (a path constraint has one row
/// per point it is imposed at).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConstraintGradient {
    pub name: String,
    pub value: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub violation: f64,
    /// d(value)/d(variable) by the optimized variables' names.
    pub gradient: ByName,
}

impl ConstraintGradient {
    /// The rows of a constrained point.
    pub fn rows(point: &crate::optimize::ConstrainedPoint) -> Vec<ConstraintGradient> {
        point
            .rows
            .iter()
            .map(|r| ConstraintGradient {
                name: r.name.clone(),
                value: r.value,
                lower: r.lower,
                upper: r.upper,
                violation: crate::constraint::violation(
                    r.value,
                    r.lower.unwrap_or(f64::NEG_INFINITY),
                    r.upper.unwrap_or(f64::INFINITY),
                ),
                gradient: point
                    .variables
                    .iter()
                    .cloned()
                    .zip(r.gradient.iter().copied())
                    .collect(),
            })
            .collect()
    }
}

/// One objective's value and gradient.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectiveGradient {
    pub cost: f64,
    pub gradient: ByName,
}

/// One event of `gradient --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GradientEvent {
    /// `t, guard, mode_before, mode_after`, as every event list names them.
    #[serde(flatten)]
    pub event: EventSummary,
    /// τ = dt_e/dθ by name (absent with `--no-tau`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dt_dp: Option<ByName>,
    /// The guards crossing together when this event is part of a simultaneous crossing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simultaneous: Option<Vec<String>>,
    /// The saltation matrix (state block) of every crossing order (empty above 4 guards).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saltations: Option<Vec<Saltation>>,
}

/// The saltation matrix of one crossing order at a simultaneous event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Saltation {
    /// The guards in crossing order.
    pub order: Vec<String>,
    /// Rows of the state block.
    pub matrix: Vec<Vec<f64>>,
}

/// The one-sided derivatives along ±e_k.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OneSided {
    pub plus: f64,
    pub minus: f64,
}

/// Where the event list's τ came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TauSource {
    /// The timed direct runs.
    Direct,
    /// The timed dual runs.
    Dual,
    /// One direct pass after the timed runs.
    DirectPass,
}

impl TauSource {
    /// Words for the terminal report.
    pub fn describe(self) -> &'static str {
        match self {
            TauSource::Direct => "the direct runs",
            TauSource::Dual => "the dual runs",
            TauSource::DirectPass => "one direct pass",
        }
    }
}

/// `"tolerances"`: the ones the runs used (`--rtol` alone keeps the file's atol).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerances {
    pub rtol: f64,
    pub atol: f64,
}

/// The process's memory use, as the kernel counts it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Memory {
    /// Peak resident set (MB) of this process up to the report (`VmHWM` of
    /// `/proc/self/status`; absent where that file is not there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_mb: Option<f64>,
}

impl Memory {
    /// Reads `VmHWM` (kB): the high-water mark of this process's own address space, which
    /// starts afresh at exec (unlike `getrusage`'s `ru_maxrss`, which a spawned child
    /// inherits from its parent).
    pub fn now() -> Memory {
        let peak = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            });
        Memory {
            peak_rss_mb: peak.map(|kb| kb / 1024.0),
        }
    }
}
