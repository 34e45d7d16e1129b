//! A problem file's `[feedback]` table, resolved against the system: the weights, the phase
//! rule, the period-closing guard, the grid of the gains table and the robustness runs
//! (read by `problem/feedback.rs`; docs/guide/problem-files.md, "[feedback]").

use super::clock::Clock;
use super::weights::Weights;

/// What `hybridopt feedback` designs and measures.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedbackSettings {
    pub weights: Weights,
    /// The phase rule of a periodic design (default [`Clock::Extend`]).
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
}

impl FeedbackSettings {
    /// The default grid of the gains table.
    pub const GRID: usize = 201;
}
