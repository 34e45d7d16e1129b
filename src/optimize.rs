//! The argmin adapter: L-BFGS (More–Thuente line search) or steepest descent over the free
//! entries of θ, through typed transforms for bounds, with the cost scaled so that the
//! first trial step has a chosen length. Each point is simulated once for cost and gradient
//! together (argmin asks for them separately: a one-entry cache). An evaluation error
//! inside argmin's line search, which argmin turns into a `SolverExit` termination, is
//! caught and returned as the error it is.

use crate::error::Error;
use crate::model::HybridSystem;
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

mod settings;
mod theta;
pub use settings::{parse_gradient_method, KinkPolicy, OptimizerSettings, SolverKind};
pub use theta::{ThetaEntry, Transform};

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
    /// Stopped at a kink (kink policy `stop`); see [`OptimizeResult::kinks`].
    Kink,
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
    /// Kinks met on the way (the last one is the final point's if it is a kink).
    pub kinks: Vec<KinkReport>,
    pub initial: Evaluation,
    pub last: Evaluation,
}

impl OptimizeResult {
    pub fn converged(&self) -> bool {
        matches!(self.outcome, Outcome::Converged | Outcome::StationaryStart)
    }
}

/// The pieces' gradients at a kink met during the run (optimized components only).
#[derive(Debug, Clone, serde::Serialize)]
pub struct KinkReport {
    pub theta: Vec<f64>,
    /// Times of the simultaneous events with differing pieces.
    pub times: Vec<f64>,
    /// Each piece: (description, gradient over the optimized entries).
    pub pieces: Vec<(String, Vec<f64>)>,
    /// The min-norm element of their convex hull (what `Descent` uses).
    pub min_norm: Vec<f64>,
    /// One-sided derivatives Dψ(θ; ±e_i) for each optimized entry: (name, +, −).
    pub one_sided: Vec<(String, f64, f64)>,
}

/// The point of minimal norm in the convex hull of `v` (projected gradient on the simplex;
/// exact for two points).
pub fn min_norm_in_hull(v: &[Vec<f64>]) -> Vec<f64> {
    let m = v.len();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    if m == 1 {
        return v[0].clone();
    }
    if m == 2 {
        let d: Vec<f64> = v[1].iter().zip(&v[0]).map(|(a, b)| a - b).collect();
        let dd = dot(&d, &d);
        let l = if dd > 0.0 {
            (-dot(&v[0], &d) / dd).clamp(0.0, 1.0)
        } else {
            0.0
        };
        return v[0].iter().zip(&d).map(|(a, b)| a + l * b).collect();
    }
    // Frank–Wolfe with exact line search on min ‖Σ w_k v_k‖²
    let mut w = vec![1.0 / m as f64; m];
    let comb = |w: &[f64]| -> Vec<f64> {
        let mut x = vec![0.0; v[0].len()];
        for (k, vk) in v.iter().enumerate() {
            for (xi, a) in x.iter_mut().zip(vk) {
                *xi += w[k] * a;
            }
        }
        x
    };
    for _ in 0..500 {
        let x = comb(&w);
        let (j, _) = v
            .iter()
            .enumerate()
            .map(|(k, vk)| (k, dot(vk, &x)))
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        let d: Vec<f64> = v[j].iter().zip(&x).map(|(a, b)| a - b).collect();
        let dd = dot(&d, &d);
        if dd == 0.0 {
            break;
        }
        let g = (-dot(&x, &d) / dd).clamp(0.0, 1.0);
        if g <= 1e-15 {
            break;
        }
        for (k, wk) in w.iter_mut().enumerate() {
            *wk *= 1.0 - g;
            if k == j {
                *wk += g;
            }
        }
    }
    comb(&w)
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
    kink_policy: KinkPolicy,
    /// Kinks met (shared across restarts).
    kinks: Arc<Mutex<Vec<KinkReport>>>,
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
        crate::interrupt::check()?;
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
        let mut gx: Vec<f64> = self.free.iter().map(|&k| ev.gradients[0][k]).collect();
        if let Some(kink) = self.kink_at(&th, &ev)? {
            gx = kink.min_norm.clone();
            let stop = self.kink_policy == KinkPolicy::Stop;
            self.kinks.lock().expect("kinks").push(kink);
            if stop {
                return Err(Error::StoppedAtKink);
            }
        }
        let g: Vec<f64> = gx
            .iter()
            .enumerate()
            .map(|(i, v)| v * dxdz[i] / self.scale)
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

    /// Whether ψ is nonsmooth in the optimized entries at θ (a simultaneous event whose
    /// pieces' gradients differ there), with the pieces, their min-norm combination and
    /// the one-sided derivatives along ±e_i.
    fn kink_at(&self, th: &[f64], ev: &Evaluation) -> Result<Option<KinkReport>, Error> {
        let evs = &ev.trajectory.events;
        let simultaneous = evs.windows(2).any(|w| w[0].group == w[1].group);
        if !simultaneous {
            return Ok(None);
        }
        let ns = crate::sensitivity::simultaneous::piece_gradients(self.setup, th)?;
        let restrict = |g: &[f64]| -> Vec<f64> { self.free.iter().map(|&k| g[k]).collect() };
        let base = restrict(&ns.gradients[0]);
        let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
        let mut pieces = vec![("recorded orders".to_string(), base.clone())];
        let mut times = Vec::new();
        for grp in &ns.groups {
            for pc in &grp.pieces {
                let g = restrict(&pc.gradients[0]);
                let diff: Vec<f64> = g.iter().zip(&base).map(|(a, b)| a - b).collect();
                if norm(&diff)
                    > crate::sensitivity::simultaneous::NONSMOOTH_TOL * norm(&base).max(1e-300)
                {
                    if !times.contains(&grp.t) {
                        times.push(grp.t);
                    }
                    let names: Vec<String> = pc
                        .guard_order
                        .iter()
                        .map(|&k| self.setup.dims.guard_name(k))
                        .collect();
                    pieces.push((format!("t = {}: order {}", grp.t, names.join(" → ")), g));
                }
            }
        }
        if pieces.len() == 1 {
            return Ok(None);
        }
        let vecs: Vec<Vec<f64>> = pieces.iter().map(|p| p.1.clone()).collect();
        let min_norm = min_norm_in_hull(&vecs);
        let names = self.setup.theta_names();
        let mut dirs = Vec::new();
        for &k in &self.free {
            for sgn in [1.0, -1.0] {
                let mut d = vec![0.0; th.len()];
                d[k] = sgn;
                dirs.push(d);
            }
        }
        let dd = crate::sensitivity::simultaneous::directional_derivatives(self.setup, th, &dirs)?;
        let one_sided = self
            .free
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                (
                    names[k].clone(),
                    dd[2 * i].derivatives[0],
                    dd[2 * i + 1].derivatives[0],
                )
            })
            .collect();
        Ok(Some(KinkReport {
            theta: th.to_vec(),
            times,
            pieces,
            min_norm,
            one_sided,
        }))
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
/// each from the last accepted iterate with a fresh solver whose first trial step is
/// `RESTART_SHRINK` times shorter than the previous run's (the cost's scale is raised;
/// the convergence tests are scaled with it, so they keep their meaning). Later steps
/// are the solver's own (L-BFGS: unit quasi-Newton steps), so a restart does not slow the
/// rest of the run. Each is reported in [`OptimizeResult::restarts`]; other errors end
/// the run at once.
pub const MAX_RESTARTS: usize = 6;

/// How the solver loop ended: the solver's own termination, or a stop at a kink (kink
/// policy `stop`, raised as [`Error::StoppedAtKink`] inside the line search).
enum Ending {
    Solver(Option<TerminationReason>),
    Kink,
}
pub const RESTART_SHRINK: f64 = 4.0;

type RunOut<A> = (
    Option<A>,
    Option<TerminationReason>,
    Option<Vec<f64>>,
    u64,
    std::collections::HashMap<String, u64>,
);

/// Minimizes the first objective of `setup` over the entries of θ marked `optimize`
/// (the others are not evaluated). `progress(iteration, scaled cost)` is called after
/// every iteration.
pub fn optimize<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[ThetaEntry],
    settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    let only = setup.only_objective(0);
    let setup = &only;
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
    let kinks: Arc<Mutex<Vec<KinkReport>>> = Arc::new(Mutex::new(Vec::new()));
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
        kink_policy: settings.at_kink,
        kinks: kinks.clone(),
    };
    let mut probe = make(1.0);
    probe.kink_policy = KinkPolicy::Descent;
    let (f0, g0) = probe.eval(&z0)?;
    let initial = probe
        .cache
        .lock()
        .expect("cache")
        .as_ref()
        .map(|c| c.eval.clone())
        .expect("evaluated");
    let gnorm0 = g0.iter().map(|v| v * v).sum::<f64>().sqrt();
    let kink_at_start =
        settings.at_kink == KinkPolicy::Stop && !kinks.lock().expect("kinks").is_empty();
    if gnorm0 == 0.0 || kink_at_start {
        // at a kink, the point where it was evaluated (the transform's round trip may move
        // θ by an ulp), so that the final point is recognised as the kink
        let met = kinks.lock().expect("kinks").last().map(|k| k.theta.clone());
        let theta_final = match met {
            Some(th) if kink_at_start => th,
            _ => base.clone(),
        };
        return Ok(OptimizeResult {
            outcome: if kink_at_start {
                Outcome::Kink
            } else {
                Outcome::StationaryStart
            },
            termination: if kink_at_start {
                Error::StoppedAtKink.to_string()
            } else {
                "zero gradient at the start".into()
            },
            iterations: 0,
            evaluations: 1,
            cost_calls: 0,
            gradient_calls: 0,
            initial_cost: f0,
            final_cost: f0,
            theta_final,
            theta_initial: base,
            final_grad_norm: gnorm0,
            wall_time_s: start.elapsed().as_secs_f64(),
            history: vec![],
            restarts: vec![],
            kinks: kinks.lock().expect("kinks").clone(),
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
    // the first trial step of the current run relative to `first_step`
    let mut step_shrink = 1.0;
    let (adapter, ending, zbest) = loop {
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
            .with_bounds(f64::EPSILON.sqrt(), f64::INFINITY)
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
        if matches!(pending, Some(Error::Interrupted)) {
            return Err(Error::Interrupted);
        }
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
                            step_shrink /= RESTART_SHRINK;
                            continue;
                        }
                    }
                    if inner.is_domain_error() && restarts.len() >= MAX_RESTARTS {
                        return Err(Error::RestartsExhausted {
                            restarts: restarts.len(),
                            source: Box::new(inner),
                        });
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
        if let Some(Error::StoppedAtKink) = &pending {
            {
                let z = kinks.lock().expect("kinks").last().map(|k| {
                    free.iter()
                        .enumerate()
                        .map(|(i, &j)| transforms[i].to_z(k.theta[j]))
                        .collect()
                });
                let mut a = adapter.unwrap_or_else(|| make(scale));
                a.kink_policy = KinkPolicy::Descent;
                break (a, Ending::Kink, z);
            }
        }
        if let Some(e) = pending {
            if e.is_domain_error()
                && restarts.len() < MAX_RESTARTS
                && iter_offset < settings.max_iters
            {
                restarts.push(format!("after iteration {iter_offset}: {e}"));
                if let Some((_, z)) = last_good() {
                    z_start = z;
                }
                step_shrink /= RESTART_SHRINK;
                continue;
            }
            if e.is_domain_error() && restarts.len() >= MAX_RESTARTS {
                return Err(Error::RestartsExhausted {
                    restarts: restarts.len(),
                    source: Box::new(e),
                });
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
        let mut a = adapter.unwrap_or_else(|| make(scale));
        a.kink_policy = KinkPolicy::Descent;
        break (a, Ending::Solver(reason), zbest);
    };
    let (outcome, termination) = match &ending {
        Ending::Kink => (Outcome::Kink, Error::StoppedAtKink.to_string()),
        Ending::Solver(Some(TerminationReason::SolverConverged)) => {
            (Outcome::Converged, "solver converged".to_string())
        }
        Ending::Solver(Some(TerminationReason::MaxItersReached)) => (
            Outcome::MaxIterations,
            "maximum number of iterations reached".to_string(),
        ),
        Ending::Solver(Some(TerminationReason::SolverExit(s))) => (Outcome::Stalled, s.clone()),
        Ending::Solver(Some(other)) => (Outcome::Stalled, other.text().to_string()),
        Ending::Solver(None) => (Outcome::Stalled, "no termination reason".to_string()),
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
    // at a kink the gradient does not exist: report the min-norm element instead
    let final_kink = kinks
        .lock()
        .expect("kinks")
        .last()
        .filter(|k| k.theta == theta_final)
        .cloned();
    let final_grad_norm = match &final_kink {
        Some(k) => k.min_norm.iter().map(|v| v * v).sum::<f64>().sqrt(),
        None => free
            .iter()
            .map(|&k| last.gradients[0][k].powi(2))
            .sum::<f64>()
            .sqrt(),
    };
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
    let final_kinks = kinks.lock().expect("kinks").clone();
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
        kinks: final_kinks,
        initial,
        last,
    })
}
