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
use argmin::solver::gradientdescent::SteepestDescent;
use argmin::solver::linesearch::LineSearch;
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
    /// Line-search restarts after a trial point left the cost's domain (see [`MAX_RESTARTS`]).
    pub restarts: Vec<String>,
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
        if z.len() != self.free.len() {
            return Err(Error::Optimizer(format!(
                "the solver passed {} variables, expected {}",
                z.len(),
                self.free.len()
            )));
        }
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
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
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
        if state.get_iter() > 0 && (state.get_prev_cost() - state.get_cost()).abs() < self.tol_cost
        {
            return TerminationStatus::Terminated(TerminationReason::SolverConverged);
        }
        TerminationStatus::NotTerminated
    }
}

/// Records the history (and drives an optional progress callback).
struct Recorder {
    rows: Arc<Mutex<Vec<(u64, f64, f64, Vec<f64>)>>>,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
    /// iterations of earlier (restarted) runs
    offset: u64,
    /// this run's cost scale relative to the recorded one
    rescale: f64,
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
        let it = self.offset + state.get_iter();
        self.rows.lock().expect("history").push((
            it,
            state.get_cost() * self.rescale,
            gn * self.rescale,
            z,
        ));
        if let Some(p) = &self.progress {
            p(it, state.get_cost());
        }
        Ok(())
    }
}

/// Line-search restarts after a trial point left the cost's domain (an event that the
/// cost needs stopped happening, or grazing / sticking / Zeno appeared): at most this many,
/// each from the last accepted iterate with the line search's largest step bounded (4 at
/// the first restart, then divided by `RESTART_SHRINK` each time; unbounded before). Each
/// is reported in [`OptimizeResult::restarts`]; other errors end the run at once.
pub const MAX_RESTARTS: usize = 6;
pub const RESTART_SHRINK: f64 = 4.0;

fn next_step_max(s: f64) -> f64 {
    if s.is_infinite() {
        4.0
    } else {
        s / RESTART_SHRINK
    }
}

type RunOut<A> = (
    Option<A>,
    Option<TerminationReason>,
    Option<Vec<f64>>,
    u64,
    std::collections::HashMap<String, u64>,
);

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
    let error_slot: Arc<Mutex<Option<Error>>> = Arc::new(Mutex::new(None));
    let eval_count = Arc::new(Mutex::new(0usize));
    let make = |scale: f64| Adapter {
        setup,
        base: base.clone(),
        free: free.clone(),
        transforms: transforms.clone(),
        method: settings.gradient,
        scale,
        cache: Mutex::new(None),
        error: error_slot.clone(),
        evaluations: eval_count.clone(),
    };
    let probe = make(1.0);
    let (f0, g0) = probe.eval(&z0)?;
    let initial = probe
        .cache
        .lock()
        .expect("cache")
        .as_ref()
        .map(|c| c.eval.clone())
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
            restarts: vec![],
            last: initial.clone(),
            initial,
        });
    }
    // Scale ψ so that the first trial step −∇ψ̃ has length `first_step` in z; the scale
    // stays fixed across restarts (so the convergence tests keep their meaning).
    let scale = gnorm0 / settings.first_step;
    let rows = Arc::new(Mutex::new(vec![(
        0u64,
        f0 / scale,
        gnorm0 / scale,
        z0.clone(),
    )]));
    let mut restarts: Vec<String> = Vec::new();
    let mut z_start = z0.clone();
    let mut iter_offset = 0u64;
    let mut total_counts: std::collections::HashMap<String, u64> = Default::default();
    let step_shrink = 1.0;
    let mut step_max = f64::INFINITY;
    let (adapter, reason, zbest) = loop {
        let mut adapter = make(scale);
        // A restart begins with a shorter first step: scale the start point's gradient.
        adapter.scale = scale / step_shrink;
        let recorder = Recorder {
            rows: rows.clone(),
            progress: progress.clone(),
            offset: iter_offset,
            rescale: 1.0 / step_shrink,
        };
        let ls = MoreThuenteLineSearch::new()
            .with_bounds(f64::EPSILON.sqrt(), step_max)
            .map_err(|e| Error::Optimizer(e.to_string()))?;
        let remaining = settings.max_iters.saturating_sub(iter_offset);
        let run: Result<RunOut<Adapter<'_, '_, S>>, argmin::core::Error> = match settings.solver {
            SolverKind::Lbfgs => {
                let solver = LBFGS::new(ls, settings.memory)
                    .with_tolerance_grad(settings.tol_grad * step_shrink)
                    .and_then(|s| s.with_tolerance_cost(settings.tol_cost * step_shrink))
                    .map_err(|e| Error::Optimizer(e.to_string()))?;
                Executor::new(adapter, solver)
                    .configure(|s| s.param(z_start.clone()).max_iters(remaining))
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
                    tol_grad: settings.tol_grad * step_shrink,
                    tol_cost: settings.tol_cost * step_shrink,
                };
                Executor::new(adapter, solver)
                    .configure(|s| s.param(z_start.clone()).max_iters(remaining))
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
        let pending = error_slot.lock().expect("error slot").take();
        let last_good = || {
            rows.lock()
                .expect("history")
                .iter()
                .rev()
                .find(|r| r.3.len() == free.len())
                .map(|r| (r.0, r.3.clone()))
        };
        let (adapter, reason, zbest, iterations, counts) = match run {
            Ok(r) => r,
            Err(e) => {
                // steepest descent passes a failed line search up as an error
                if let Some(inner) = pending {
                    if inner.is_domain_error() && restarts.len() < MAX_RESTARTS {
                        if let Some((it, z)) = last_good() {
                            iter_offset = it;
                            restarts.push(format!("after iteration {it}: {inner}"));
                            z_start = z;
                            step_max = next_step_max(step_max);
                            continue;
                        }
                    }
                    return Err(Error::Optimizer(format!("an evaluation failed: {inner}")));
                }
                return Err(Error::Optimizer(format!("argmin failed: {e}")));
            }
        };
        iter_offset += iterations;
        for (k, v) in counts {
            *total_counts.entry(k).or_insert(0) += v;
        }
        // An error raised at a trial point hides in the termination reason: surface it,
        // or restart from the last accepted iterate if it only left the cost's domain.
        if let Some(e) = pending {
            if e.is_domain_error()
                && restarts.len() < MAX_RESTARTS
                && iter_offset < settings.max_iters
            {
                restarts.push(format!("after iteration {iter_offset}: {e}"));
                if let Some((_, z)) = last_good() {
                    z_start = z;
                }
                step_max = next_step_max(step_max);
                continue;
            }
            return Err(Error::Optimizer(format!(
                "an evaluation failed during the line search ({}){}: {e}",
                reason
                    .as_ref()
                    .map_or("no termination reason".to_string(), |r| r
                        .text()
                        .to_string()),
                if restarts.is_empty() {
                    String::new()
                } else {
                    format!(" after {} restart(s)", restarts.len())
                }
            )));
        }
        // A stalled L-BFGS (its memory produced an ascent direction, or the line search
        // found no acceptable step) gets one fresh start from its last iterate with the
        // memory cleared; a second stall in a row ends the run.
        if let Some(TerminationReason::SolverExit(msg)) = &reason {
            let fresh = restarts.last().is_none_or(|r| !r.starts_with("stalled"));
            if fresh && restarts.len() < MAX_RESTARTS && iter_offset < settings.max_iters {
                if let Some((_, z)) = last_good() {
                    restarts.push(format!(
                        "stalled after iteration {iter_offset} ({msg}): fresh start"
                    ));
                    z_start = z;
                    continue;
                }
            }
        }
        // argmin drops the problem when its line search fails: rebuild it then
        break (adapter.unwrap_or_else(|| make(scale)), reason, zbest);
    };
    let (outcome, termination) = match &reason {
        Some(TerminationReason::SolverConverged) => {
            (Outcome::Converged, "solver converged".to_string())
        }
        Some(TerminationReason::MaxItersReached) => (
            Outcome::MaxIterations,
            "maximum number of iterations reached".to_string(),
        ),
        Some(TerminationReason::SolverExit(s)) => (Outcome::Stalled, s.clone()),
        Some(other) => (Outcome::Stalled, other.text().to_string()),
        None => (Outcome::Stalled, "no termination reason".to_string()),
    };
    let zf = zbest.unwrap_or(z_start);
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
            zp.iter()
                .zip(z)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                .sqrt()
        });
        let (th, _) = adapter.theta(z);
        history.push(HistoryRow {
            iteration: *it,
            cost: cost * scale,
            grad_norm: gn * scale,
            step,
            theta: th,
        });
        zprev = Some(z.clone());
    }
    let evaluations = *eval_count.lock().expect("count");
    Ok(OptimizeResult {
        outcome,
        termination,
        iterations: iter_offset,
        evaluations,
        cost_calls: total_counts.get("cost_count").copied().unwrap_or(0),
        gradient_calls: total_counts.get("gradient_count").copied().unwrap_or(0),
        initial_cost: f0,
        final_cost: last.values[0],
        theta_initial: base,
        theta_final,
        final_grad_norm,
        wall_time_s: start.elapsed().as_secs_f64(),
        history,
        restarts,
        initial,
        last,
    })
}
