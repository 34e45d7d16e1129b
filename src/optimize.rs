//! The argmin adapter: L-BFGS (More–Thuente line search) or steepest descent over the free
//! entries of θ, through typed transforms for bounds, with the cost scaled so that the
//! first trial step has a chosen length. Each point is simulated once for cost and gradient
//! together (argmin asks for them separately: a one-entry cache). An evaluation error
//! inside argmin's line search, which argmin turns into a `SolverExit` termination, is
//! caught and returned as the error it is.

use crate::error::Error;
use crate::model::HybridSystem;
use crate::problem::{OptimizerSettings, SolverKind, ThetaEntry, Transform};
use crate::sensitivity::{evaluate, Evaluation, GradientMethod};
use crate::setup::Setup;
use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{
    CostFunction, Executor, Gradient, IterState, Problem, Solver, State as _, TerminationReason,
    TerminationStatus, KV,
};
use argmin::solver::linesearch::LineSearch;
use argmin::solver::gradientdescent::SteepestDescent;
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One row of the optimization history.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HistoryRow {
    pub iteration: u64,
    pub cost: f64,
    pub grad_norm: f64,
    /// ‖z_k − z_{k−1}‖ in the transformed, scaled variables.
    pub step: f64,
    /// θ (all entries, physical values).
    pub theta: Vec<f64>,
}

/// How an optimization ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The solver's convergence test held (gradient or cost-change tolerance).
    Converged,
    /// The iteration budget ran out.
    MaxIterations,
    /// The line search could not make progress (e.g. at a kink or at round-off level).
    Stalled,
    /// The start point is already stationary (zero gradient).
    StationaryStart,
}

/// The result of [`optimize`].
#[derive(Debug, Clone)]
pub struct OptimizeResult {
    pub outcome: Outcome,
    /// The solver's termination text.
    pub termination: String,
    pub iterations: u64,
    /// Simulations for cost and gradient (each point once).
    pub evaluations: usize,
    pub cost_calls: u64,
    pub gradient_calls: u64,
    pub initial_cost: f64,
    pub final_cost: f64,
    pub theta_initial: Vec<f64>,
    pub theta_final: Vec<f64>,
    /// ‖dψ/dθ_free‖ at the end (physical variables).
    pub final_grad_norm: f64,
    pub wall_time_s: f64,
    pub history: Vec<HistoryRow>,
    pub initial: Evaluation,
    pub last: Evaluation,
}

impl OptimizeResult {
    pub fn converged(&self) -> bool {
        matches!(self.outcome, Outcome::Converged | Outcome::StationaryStart)
    }
}

struct Cached {
    z: Vec<f64>,
    f: f64,
    g: Vec<f64>,
    eval: Evaluation,
}

/// The scaled, transformed objective as argmin sees it.
struct Adapter<'s, 'a, S: HybridSystem> {
    setup: &'s Setup<'a, S>,
    base: Vec<f64>,
    free: Vec<usize>,
    transforms: Vec<Transform>,
    method: GradientMethod,
    scale: f64,
    cache: Mutex<Option<Cached>>,
    /// Shared with the caller: argmin drops the problem when its line search fails, and
    /// the error must survive that.
    error: Arc<Mutex<Option<Error>>>,
    evaluations: Arc<Mutex<usize>>,
}

impl<S: HybridSystem> Adapter<'_, '_, S> {
    fn theta(&self, z: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut th = self.base.clone();
        let mut dxdz = Vec::with_capacity(z.len());
        for (i, &k) in self.free.iter().enumerate() {
            let (x, d) = self.transforms[i].to_x(z[i]);
            th[k] = x;
            dxdz.push(d);
        }
        (th, dxdz)
    }

    fn eval(&self, z: &[f64]) -> Result<(f64, Vec<f64>), Error> {
        if let Some(c) = self.cache.lock().expect("cache").as_ref() {
            if c.z == z {
                return Ok((c.f, c.g.clone()));
            }
        }
        let (th, dxdz) = self.theta(z);
        if th.iter().any(|v| !v.is_finite()) {
            return Err(Error::Optimizer(format!(
                "the optimizer proposed non-finite parameters {th:?}"
            )));
        }
        let ev = evaluate(self.setup, &th, self.method)?;
        *self.evaluations.lock().expect("count") += 1;
        let f = ev.values[0];
        if !f.is_finite() || ev.gradients[0].iter().any(|g| !g.is_finite()) {
            return Err(Error::Optimizer(format!(
                "non-finite cost or gradient at θ = {th:?}"
            )));
        }
        let g: Vec<f64> = self
            .free
            .iter()
            .enumerate()
            .map(|(i, &k)| ev.gradients[0][k] * dxdz[i] / self.scale)
            .collect();
        let fs = f / self.scale;
        *self.cache.lock().expect("cache") = Some(Cached {
            z: z.to_vec(),
            f: fs,
            g: g.clone(),
            eval: ev,
        });
        Ok((fs, g))
    }

    fn record_error(&self, e: Error) -> argmin::core::Error {
        let msg = e.to_string();
        *self.error.lock().expect("error slot") = Some(e);
        argmin::core::Error::msg(msg)
    }
}

impl<S: HybridSystem> CostFunction for Adapter<'_, '_, S> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, z: &Self::Param) -> Result<f64, argmin::core::Error> {
        self.eval(z).map(|r| r.0).map_err(|e| self.record_error(e))
    }
}

impl<S: HybridSystem> Gradient for Adapter<'_, '_, S> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, z: &Self::Param) -> Result<Vec<f64>, argmin::core::Error> {
        self.eval(z).map(|r| r.1).map_err(|e| self.record_error(e))
    }
}

/// argmin's steepest descent with the convergence tests it lacks (gradient norm and cost
/// change, as L-BFGS has): each iteration delegates to `SteepestDescent`, then stores the
/// gradient at the new point (a cache hit) so that the tests and the history can see it.
#[derive(Clone)]
struct Descent<L> {
    inner: SteepestDescent<L>,
    tol_grad: f64,
    tol_cost: f64,
}

type State = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

impl<O, L> Solver<O, State> for Descent<L>
where
    O: CostFunction<Param = Vec<f64>, Output = f64> + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
    L: Clone + LineSearch<Vec<f64>, f64> + Solver<O, State>,
{
    fn name(&self) -> &str {
        "Steepest Descent (with convergence tests)"
    }
    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        state: State,
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
        if state.get_iter() > 0 && (state.get_prev_cost() - state.get_cost()).abs() < self.tol_cost {
            return TerminationStatus::Terminated(TerminationReason::SolverConverged);
        }
        TerminationStatus::NotTerminated
    }
}

/// Records the history (and drives an optional progress callback).
struct Recorder {
    rows: Arc<Mutex<Vec<(u64, f64, f64, Vec<f64>)>>>,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
}

impl Observe<IterState<Vec<f64>, Vec<f64>, (), (), (), f64>> for Recorder {
    fn observe_iter(
        &mut self,
        state: &IterState<Vec<f64>, Vec<f64>, (), (), (), f64>,
        _kv: &KV,
    ) -> Result<(), argmin::core::Error> {
        let z = state.get_param().cloned().unwrap_or_default();
        let gn = state
            .get_gradient()
            .map(|g| g.iter().map(|v| v * v).sum::<f64>().sqrt())
            .unwrap_or(f64::NAN);
        self.rows
            .lock()
            .expect("history")
            .push((state.get_iter(), state.get_cost(), gn, z));
        if let Some(p) = &self.progress {
            p(state.get_iter(), state.get_cost());
        }
        Ok(())
    }
}

/// Minimizes the first objective of `setup` over the entries of θ marked `optimize`.
/// `progress(iteration, scaled cost)` is called after every iteration.
pub fn optimize<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[ThetaEntry],
    settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    let base: Vec<f64> = theta.iter().map(|e| e.value).collect();
    let free: Vec<usize> = (0..theta.len()).filter(|&i| theta[i].optimize).collect();
    if free.is_empty() {
        return Err(Error::Invalid(
            "no parameter is marked `optimize = true` and there are no controls: nothing to optimize".into(),
        ));
    }
    let transforms: Vec<Transform> = free.iter().map(|&i| theta[i].transform).collect();
    let z0: Vec<f64> = free
        .iter()
        .enumerate()
        .map(|(i, &k)| transforms[i].to_z(base[k]))
        .collect();
    let mut adapter = Adapter {
        setup,
        base: base.clone(),
        free: free.clone(),
        transforms,
        method: settings.gradient,
        scale: 1.0,
        cache: Mutex::new(None),
        error: Arc::new(Mutex::new(None)),
        evaluations: Arc::new(Mutex::new(0)),
    };
    let error_slot = adapter.error.clone();
    let eval_count = adapter.evaluations.clone();
    let rebuild = |scale: f64| Adapter {
        setup,
        base: base.clone(),
        free: free.clone(),
        transforms: free.iter().map(|&i| theta[i].transform).collect(),
        method: settings.gradient,
        scale,
        cache: Mutex::new(None),
        error: error_slot.clone(),
        evaluations: eval_count.clone(),
    };
    let (f0, g0) = adapter.eval(&z0)?;
    let initial = adapter
        .cache
        .lock()
        .expect("cache")
        .take()
        .map(|c| c.eval)
        .expect("evaluated");
    let gnorm0 = g0.iter().map(|v| v * v).sum::<f64>().sqrt();
    if gnorm0 == 0.0 {
        return Ok(OptimizeResult {
            outcome: Outcome::StationaryStart,
            termination: "zero gradient at the start".into(),
            iterations: 0,
            evaluations: 1,
            cost_calls: 0,
            gradient_calls: 0,
            initial_cost: f0,
            final_cost: f0,
            theta_initial: base.clone(),
            theta_final: base,
            final_grad_norm: 0.0,
            wall_time_s: start.elapsed().as_secs_f64(),
            history: vec![],
            last: initial.clone(),
            initial,
        });
    }
    // Scale ψ so that the first trial step −∇ψ̃ has length `first_step` in z.
    adapter.scale = gnorm0 / settings.first_step;
    let rows = Arc::new(Mutex::new(vec![(0u64, f0 / adapter.scale, gnorm0 / adapter.scale, z0.clone())]));
    let recorder = Recorder {
        rows: rows.clone(),
        progress,
    };
    let ls = MoreThuenteLineSearch::new();
    let run = match settings.solver {
        SolverKind::Lbfgs => {
            let solver = LBFGS::new(ls, settings.memory)
                .with_tolerance_grad(settings.tol_grad)
                .and_then(|s| s.with_tolerance_cost(settings.tol_cost))
                .map_err(|e| Error::Optimizer(e.to_string()))?;
            Executor::new(adapter, solver)
                .configure(|s| s.param(z0.clone()).max_iters(settings.max_iters))
                .add_observer(recorder, ObserverMode::Always)
                .timer(false)
                .run()
                .map(|r| {
                    let st = r.state();
                    let reason = st.get_termination_reason().cloned();
                    let z = st.get_best_param().or(st.get_param()).cloned();
                    let counts = st.get_func_counts().clone();
                    let iters = st.get_iter();
                    (r.problem.problem, reason, z, iters, counts)
                })
        }
        SolverKind::Gd => {
            let solver = Descent {
                inner: SteepestDescent::new(ls),
                tol_grad: settings.tol_grad,
                tol_cost: settings.tol_cost,
            };
            Executor::new(adapter, solver)
                .configure(|s| s.param(z0.clone()).max_iters(settings.max_iters))
                .add_observer(recorder, ObserverMode::Always)
                .timer(false)
                .run()
                .map(|r| {
                    let st = r.state();
                    let reason = st.get_termination_reason().cloned();
                    let z = st.get_best_param().or(st.get_param()).cloned();
                    let counts = st.get_func_counts().clone();
                    let iters = st.get_iter();
                    (r.problem.problem, reason, z, iters, counts)
                })
        }
    };
    let scale = gnorm0 / settings.first_step;
    let run = run.map_err(|e| {
        // an evaluation error may surface here too
        match error_slot.lock().expect("error slot").take() {
            Some(inner) => Error::Optimizer(format!("an evaluation failed: {inner}")),
            None => Error::Optimizer(format!("argmin failed: {e}")),
        }
    });
    let (adapter, reason, zbest, iterations, counts) = run?;
    // argmin drops the problem when its line search fails: rebuild it for the final point
    let adapter = adapter.unwrap_or_else(|| rebuild(scale));
    // An error raised at a trial point hides in the termination reason: surface it.
    if let Some(e) = error_slot.lock().expect("error slot").take() {
        return Err(Error::Optimizer(format!(
            "an evaluation failed during the line search ({}): {e}",
            reason.as_ref().map_or("no termination reason".to_string(), |r| r.text().to_string())
        )));
    }
    let (outcome, termination) = match &reason {
        Some(TerminationReason::SolverConverged) => (Outcome::Converged, "solver converged".to_string()),
        Some(TerminationReason::MaxItersReached) => (Outcome::MaxIterations, "maximum number of iterations reached".to_string()),
        Some(TerminationReason::SolverExit(s)) => (Outcome::Stalled, s.clone()),
        Some(other) => (Outcome::Stalled, other.text().to_string()),
        None => (Outcome::Stalled, "no termination reason".to_string()),
    };
    let _ = TerminationStatus::NotTerminated;
    let zf = zbest.unwrap_or(z0);
    // the final point's evaluation (cached if it was the last one)
    adapter.eval(&zf)?;
    let last = adapter
        .cache
        .lock()
        .expect("cache")
        .take()
        .map(|c| c.eval)
        .expect("evaluated");
    let (theta_final, _) = adapter.theta(&zf);
    let final_grad_norm = free
        .iter()
        .map(|&k| last.gradients[0][k].powi(2))
        .sum::<f64>()
        .sqrt();
    let mut history = Vec::new();
    let mut zprev: Option<Vec<f64>> = None;
    for (it, cost, gn, z) in rows.lock().expect("history").iter() {
        if z.len() != free.len() {
            // argmin leaves no parameter in the state of an iteration whose line search failed
            continue;
        }
        let step = zprev.as_ref().map_or(0.0, |zp| {
            zp.iter().zip(z).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt()
        });
        let (th, dxdz) = adapter.theta(z);
        let _ = dxdz;
        history.push(HistoryRow {
            iteration: *it,
            cost: cost * scale,
            grad_norm: gn * scale,
            step,
            theta: th,
        });
        zprev = Some(z.clone());
    }
    let evaluations = *adapter.evaluations.lock().expect("count");
    Ok(OptimizeResult {
        outcome,
        termination,
        iterations,
        evaluations,
        cost_calls: counts.get("cost_count").copied().unwrap_or(0),
        gradient_calls: counts.get("gradient_count").copied().unwrap_or(0),
        initial_cost: f0 * 1.0,
        final_cost: last.values[0],
        theta_initial: base,
        theta_final,
        final_grad_norm,
        wall_time_s: start.elapsed().as_secs_f64(),
        history,
        initial,
        last,
    })
}
