//! A problem file's `[feedback]` table, resolved against the system: the weights, the phase
//! rule, the period-closing guard, the grid of the gains table and the robustness runs
//! (read by `problem/feedback.rs`; docs/guide/problem-files.md, "[feedback]").

use super::clock::Clock;
use super::weights::Weights;

/// What `hybridopt feedback` designs and measures.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedbackSettings {
    pub weights: Weights,
    /// The rule at an early or late impact, periodic or along a run (default
    /// [`Clock::Extend`]).
    pub clock: Clock,
    /// The guard whose firing closes a period; `None`: the `[shooting]` table's periodic
    /// guard, or, without one, a time-varying design along the whole run.
    pub guard: Option<usize>,
    /// Points of the gains table (`gains.csv`), default 201.
    pub grid: usize,
    pub robustness: RobustnessSettings,
}

/// `[feedback.robustness]`: seeded perturbations of the start.
#[derive(Debug, Clone, PartialEq)]
pub struct RobustnessSettings {
    /// Number of perturbed starts (default 100; 0: no robustness runs).
    pub trials: usize,
    /// Each perturbed state moves by U[−size, size] in its own units (default 0.1).
    pub size: f64,
    /// The perturbed states' indices (default: every state).
    pub states: Vec<usize>,
    /// The SplitMix64 seed (default 46).
    pub seed: u64,
    /// Steps (firings of the period-closing guard) a run must take (default 20).
    pub steps: usize,
    /// Along a run (a time-varying design): how close the final outputs must come to the
    /// targets of the problem's `terminal_squared` costs (default 0.01, the outputs' units).
    pub terminal_tolerance: f64,
    /// Along a run: how close the event times must come to the targets of the problem's
    /// `event_time_squared` costs (default 0.01, the time's units).
    pub event_time_tolerance: f64,
    /// Along a run: perturbed parameters, `(index, half-width)`: each moves by
    /// U[−width, width] per trial (default none).
    pub parameters: Vec<(usize, f64)>,
}

impl RobustnessSettings {
    /// The default tolerances of the targets.
    pub const TOLERANCE: f64 = 0.01;
}

impl FeedbackSettings {
    /// The default grid of the gains table.
    pub const GRID: usize = 201;
}
