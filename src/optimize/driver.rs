//! The one quasi-Newton driver: argmin's L-BFGS (Moré–Thuente line search) or steepest
//! descent over any [`Smooth`] objective in unconstrained variables z. The problem's cost
//! (`adapter.rs`, with its restarts in `runs.rs`) and a gait's objective
//! (`periodic/optimize.rs`) plug into it; the constrained problems (single and multiple
//! shooting) plug into the SQP (`constrained/sqp.rs`) through its `Problem` trait instead.
//!
//! argmin asks for the cost and the gradient separately: the [`Bridge`] simulates each point
//! once for both (a one-entry cache). An objective's error is kept in a slot the caller
//! holds, since argmin turns it into a termination and drops the problem.

use super::descent::{Descent, State};
use super::monotone::Monotone;
use super::settings::SolverKind;
use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{
    CostFunction, Executor, Gradient, OptimizationResult, Solver, State as _, TerminationReason,
};
use argmin::solver::gradientdescent::SteepestDescent;
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A smooth objective in unconstrained variables: f(z), ∇f(z) and what the evaluation
/// keeps beside them (the problem's cost: its [`Evaluation`](crate::sensitivity::Evaluation)).
pub(crate) trait Smooth {
    type Extra: Clone;
    type Error: fmt::Display;
    /// f, ∇f and the extra at z (never called twice in a row at one z by the bridge).
    fn eval(&self, z: &[f64]) -> Result<Sample<Self::Extra>, Self::Error>;
}

/// One evaluated point.
#[derive(Debug, Clone)]
pub(crate) struct Sample<X> {
    pub f: f64,
    pub g: Vec<f64>,
    pub extra: X,
}

/// Where an objective's error waits for the caller (shared across restarts: argmin drops
/// the problem when a line search fails, and the error must survive that).
pub(crate) type ErrorSlot<E> = Arc<Mutex<Option<E>>>;

/// argmin's view of a [`Smooth`] objective: the one-entry cache and the error slot.
pub(crate) struct Bridge<O: Smooth> {
    pub objective: O,
    cache: Mutex<Option<(Vec<f64>, Sample<O::Extra>)>>,
    error: ErrorSlot<O::Error>,
}

impl<O: Smooth> Bridge<O> {
    pub(crate) fn new(objective: O, error: &ErrorSlot<O::Error>) -> Self {
        Bridge {
            objective,
            cache: Mutex::new(None),
            error: error.clone(),
        }
    }

    /// The sample at z: the cache's if z is its point, else a new evaluation.
    pub(crate) fn sample(&self, z: &[f64]) -> Result<Sample<O::Extra>, O::Error> {
        if let Some((zc, s)) = self.cache.lock().expect("cache").as_ref() {
            if zc == z {
                return Ok(s.clone());
            }
        }
        let s = self.objective.eval(z)?;
        *self.cache.lock().expect("cache") = Some((z.to_vec(), s.clone()));
        Ok(s)
    }

    fn argmin_sample(&self, z: &[f64]) -> Result<Sample<O::Extra>, argmin::core::Error> {
        self.sample(z).map_err(|e| {
            let msg = e.to_string();
            *self.error.lock().expect("error slot") = Some(e);
            argmin::core::Error::msg(msg)
        })
    }
}

impl<O: Smooth> CostFunction for Bridge<O> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, z: &Self::Param) -> Result<f64, argmin::core::Error> {
        self.argmin_sample(z).map(|s| s.f)
    }
}

impl<O: Smooth> Gradient for Bridge<O> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, z: &Self::Param) -> Result<Vec<f64>, argmin::core::Error> {
        self.argmin_sample(z).map(|s| s.g)
    }
}

/// One run's settings: the solver, L-BFGS's memory, the convergence tests (‖∇f‖ and the
/// cost change between iterates) and the iteration budget.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunSettings {
    pub solver: SolverKind,
    pub memory: usize,
    pub tol_grad: f64,
    pub tol_cost: f64,
    pub max_iters: u64,
}

/// What argmin returns of one run: the problem (dropped when a line search failed), the
/// termination reason, the best point, the iterations and the function counts.
pub(crate) struct RunOut<O: Smooth> {
    pub bridge: Option<Bridge<O>>,
    pub reason: Option<TerminationReason>,
    pub z: Option<Vec<f64>>,
    pub iterations: u64,
    pub counts: HashMap<String, u64>,
}

/// An observer that watches nothing.
pub(crate) struct Unobserved;

impl Observe<State> for Unobserved {}

/// One run of the solver from `z0`, its iterations held to decrease the cost
/// ([`Monotone`]). The outer error is a setting argmin rejects; the inner
/// one a run that failed (steepest descent passes a failed line search up).
pub(crate) fn run<O, W>(
    bridge: Bridge<O>, z0: Vec<f64>, how: &RunSettings, observer: W,
) -> Result<Result<RunOut<O>, argmin::core::Error>, argmin::core::Error>
where
    O: Smooth,
    W: Observe<State> + 'static,
{
    let ls = MoreThuenteLineSearch::new().with_bounds(f64::EPSILON.sqrt(), f64::INFINITY)?;
    Ok(match how.solver {
        // a smooth objective that is no sum of squared residuals (a gait's) runs L-BFGS
        // even when the file asks for Gauss–Newton; the iLQR has its own driver
        // (optimize/ilqr/), and a caller of this one with iLQR or DDP runs L-BFGS
        SolverKind::Lbfgs | SolverKind::GaussNewton | SolverKind::Ilqr | SolverKind::Ddp => {
            let inner = LBFGS::new(ls, how.memory)
                .with_tolerance_grad(how.tol_grad)?
                .with_tolerance_cost(how.tol_cost)?;
            execute(bridge, Monotone { inner }, z0, how.max_iters, observer)
        }
        SolverKind::Gd => {
            let inner = Descent {
                inner: SteepestDescent::new(ls),
                tol_grad: how.tol_grad,
                tol_cost: how.tol_cost,
            };
            execute(bridge, Monotone { inner }, z0, how.max_iters, observer)
        }
    })
}

/// argmin's executor on `solver` from z0, its result cut to what the callers use.
fn execute<O, V, W>(
    bridge: Bridge<O>, solver: V, z0: Vec<f64>, max_iters: u64, observer: W,
) -> Result<RunOut<O>, argmin::core::Error>
where
    O: Smooth,
    V: Solver<Bridge<O>, State>,
    W: Observe<State> + 'static,
{
    Executor::new(bridge, solver)
        .configure(|s| s.param(z0).max_iters(max_iters))
        .add_observer(observer, ObserverMode::Always)
        .timer(false)
        .run()
        .map(run_out)
}

/// The parts of argmin's result that the callers use.
fn run_out<O: Smooth, S>(r: OptimizationResult<Bridge<O>, S, State>) -> RunOut<O> {
    let st = r.state();
    RunOut {
        reason: st.get_termination_reason().cloned(),
        z: st.get_best_param().or(st.get_param()).cloned(),
        iterations: st.get_iter(),
        counts: st.get_func_counts().clone(),
        bridge: r.problem.problem,
    }
}
