//! `"stats"` of `simulate --json` and `gradient --json`: the counters of one plain run.

use crate::integrate::Stats;
use serde::Serialize;

/// `{steps, rejected, events, rhs_evals}` of one run (the adjoint's replayed steps are in
/// `gradient --json`'s `"work"`, the whole [`Stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunStats {
    /// Accepted steps.
    pub steps: usize,
    /// Rejected steps.
    pub rejected: usize,
    /// Events (jumps) applied.
    pub events: usize,
    /// Evaluations of the right-hand side.
    pub rhs_evals: usize,
}

impl From<Stats> for RunStats {
    fn from(s: Stats) -> Self {
        RunStats {
            steps: s.steps,
            rejected: s.rejected,
            events: s.events,
            rhs_evals: s.rhs_evals,
        }
    }
}
