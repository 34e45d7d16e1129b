//! Steepest descent with the convergence tests argmin's `SteepestDescent` lacks (gradient
//! norm and cost change, as L-BFGS has).

use argmin::core::{
    CostFunction, Gradient, IterState, Problem, Solver, State as _, TerminationReason,
    TerminationStatus, KV,
};
use argmin::solver::gradientdescent::SteepestDescent;
use argmin::solver::linesearch::LineSearch;

/// The solver state both solvers run on.
pub(super) type State = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

/// Each iteration delegates to `SteepestDescent`, then stores the gradient at the new point
/// (a cache hit) so that the tests and the history can see it.
#[derive(Clone)]
pub(super) struct Descent<L> {
    pub(super) inner: SteepestDescent<L>,
    pub(super) tol_grad: f64,
    pub(super) tol_cost: f64,
}

impl<O, L> Solver<O, State> for Descent<L>
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
    L: Clone + LineSearch<Vec<f64>, f64> + Solver<O, State>,
{
    fn name(&self) -> &str {
        "Steepest Descent (with convergence tests)"
    }
    fn next_iter(
        &mut self, problem: &mut Problem<O>, state: State,
    ) -> Result<(State, Option<KV>), argmin::core::Error> {
        let (st, kv) = self.inner.next_iter(problem, state)?;
        let p = st.get_param().cloned().unwrap_or_default();
        let g = problem.gradient(&p)?;
        Ok((st.gradient(g), kv))
    }
    fn terminate(&mut self, state: &State) -> TerminationStatus {
        if let Some(g) = state.get_gradient() {
            if g.iter().map(|v| v * v).sum::<f64>().sqrt() < self.tol_grad {
                return TerminationStatus::Terminated(TerminationReason::SolverConverged);
            }
        }
        if state.get_iter() > 0 && (state.get_prev_cost() - state.get_cost()).abs() < self.tol_cost
        {
            return TerminationStatus::Terminated(TerminationReason::SolverConverged);
        }
        TerminationStatus::NotTerminated
    }
}
