//! `"stats"` of `simulate --json` and `gradient --json`: the counters of one plain run.

use crate::integrate::Stats;
use serde::Serialize;

/// `{steps, rejected, events, rhs_evals}` of one run, with `{jacobians, factorizations,
/// newton_iterations}` for the implicit methods (the adjoint's replayed steps are in
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
    /// Jacobian evaluations (implicit methods; left out for DOPRI5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jacobians: Option<usize>,
    /// Factorizations of the iteration matrices (implicit methods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub factorizations: Option<usize>,
    /// Simplified Newton iterations (implicit methods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newton_iterations: Option<usize>,
}

impl From<Stats> for RunStats {
    fn from(s: Stats) -> Self {
        RunStats {
            steps: s.steps,
            rejected: s.rejected,
            events: s.events,
            rhs_evals: s.rhs_evals,
            jacobians: (!s.newton.is_zero()).then_some(s.newton.jacobians),
            factorizations: (!s.newton.is_zero()).then_some(s.newton.factorizations),
            newton_iterations: (!s.newton.is_zero()).then_some(s.newton.iterations),
        }
    }
}
