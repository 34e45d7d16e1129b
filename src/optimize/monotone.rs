//! An iteration that never calls a worse point converged. argmin's More–Thuente line
//! search also ends "converged" where it found no decrease (its `info` 2, 4 and 6: the
//! interval of uncertainty too narrow, the smallest step, a step it cannot improve) and
//! hands the solver that trial point, whose cost may be higher than the iterate's; the
//! cost-change test then compares two nearby costs and reports convergence. Measured on a
//! ball bouncing on a vibrating table (37 impacts in 14 s, `tests/optimizer_defects.rs`):
//! L-BFGS "converged" after one iteration whose point cost 3.69 against the start's 0.889.
//! [`Monotone`] ends such an iteration as a failed line search instead
//! ([`LINE_SEARCH_FAILED`]); the caller restarts from its best point once, and reports
//! [`Outcome::LineSearchFailed`](super::Outcome::LineSearchFailed) if it fails again.

use super::descent::State;
use argmin::core::{
    CostFunction, Gradient, Problem, Solver, State as _, TerminationReason, TerminationStatus, KV,
};

/// The start of the termination text of an iteration whose line search found no decrease.
pub(crate) const LINE_SEARCH_FAILED: &str = "line search failed";

/// A solver whose iterations must decrease the cost: an iteration ending at a point whose
/// cost is higher than the iterate's terminates the run with [`LINE_SEARCH_FAILED`].
#[derive(Clone)]
pub(super) struct Monotone<V> {
    pub(super) inner: V,
}

/// Whether `text` (a termination's) is a failed line search's.
pub(crate) fn is_line_search_failure(text: &str) -> bool {
    text.starts_with(LINE_SEARCH_FAILED)
}

impl<O, V> Solver<O, State> for Monotone<V>
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
    V: Solver<O, State>,
{
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn init(
        &mut self, problem: &mut Problem<O>, state: State,
    ) -> Result<(State, Option<KV>), argmin::core::Error> {
        self.inner.init(problem, state)
    }
    fn next_iter(
        &mut self, problem: &mut Problem<O>, state: State,
    ) -> Result<(State, Option<KV>), argmin::core::Error> {
        let (st, kv) = self.inner.next_iter(problem, state)?;
        if st.terminated() {
            return Ok((st, kv));
        }
        let (before, after) = (st.get_prev_cost(), st.get_cost());
        if after > before || after.is_nan() {
            let why = format!(
                "{LINE_SEARCH_FAILED}: its point raised the cost from {before:.6e} to {after:.6e} (scaled)"
            );
            return Ok((st.terminate_with(TerminationReason::SolverExit(why)), kv));
        }
        Ok((st, kv))
    }
    fn terminate(&mut self, state: &State) -> TerminationStatus {
        self.inner.terminate(state)
    }
}
