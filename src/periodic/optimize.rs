//! Optimizing a gait: L-BFGS (argmin, Moré–Thuente line search) on an [`Objective`] of
//! the periodic orbit over the parameters marked `optimize = true`, through their bound
//! transforms (`optimize::Transform`), with the orbit re-solved at every iterate (Newton
//! started from the last converged fixed point) and its exact gradient from the orbit's
//! sensitivities. An error at a trial point (no return, no convergence, a nonsmooth
//! spectral radius) is kept and returned typed after argmin stops — argmin itself turns
//! it into a `SolverExit` termination (design.md, Errors).

use super::error::PeriodicError;
use super::objective::Objective;
use super::orbit::solve_orbit;
use super::spec::PeriodicSpec;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::Transform;
use argmin::core::{CostFunction, Executor, Gradient, State as _, TerminationReason};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use std::sync::Mutex;

/// Settings of the gait optimizer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaitSettings {
    pub max_iters: u64,
    /// Stop when the gradient in the transformed variables is below this.
    pub tol_grad: f64,
}

/// One evaluation of the objective.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GaitEvaluation {
    /// The optimized parameters' values.
    pub params: Vec<f64>,
    pub value: f64,
    /// d(value)/d(params).
    pub gradient: Vec<f64>,
    pub spectral_radius: f64,
    pub period: f64,
}

/// The outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GaitOptimum {
    pub names: Vec<String>,
    pub initial: GaitEvaluation,
    pub last: GaitEvaluation,
    /// The orbit re-solved at the final parameters from the problem's original guess (an
    /// independent check of the final value and spectral radius).
    pub verified_value: f64,
    pub verified_spectral_radius: f64,
    pub iterations: u64,
    pub evaluations: usize,
    pub converged: bool,
    pub termination: String,
    /// Every evaluation in order.
    pub history: Vec<GaitEvaluation>,
}

struct Gait<'a, S: HybridSystem> {
    sys: &'a S,
    spec: &'a PeriodicSpec,
    objective: &'a Objective,
    base: Vec<f64>,
    free: Vec<usize>,
    transforms: Vec<Transform>,
    warm: Mutex<Vec<f64>>,
    history: Mutex<Vec<GaitEvaluation>>,
    cache: Mutex<Option<(Vec<f64>, f64, Vec<f64>)>>,
    error: Mutex<Option<PeriodicError>>,
}

impl<S: HybridSystem> Gait<'_, S> {
    fn params(&self, z: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut p = self.base.clone();
        let mut dxdz = Vec::with_capacity(z.len());
        for (i, &k) in self.free.iter().enumerate() {
            let (x, d) = self.transforms[i].to_x(z[i]);
            p[k] = x;
            dxdz.push(d);
        }
        (p, dxdz)
    }

    fn evaluate_p(&self, p: &[f64], guess: &[f64]) -> Result<GaitEvaluation, PeriodicError> {
        let mut spec = self.spec.clone();
        spec.sensitivities = self.free.clone();
        let orbit = solve_orbit(self.sys, &spec, p, guess, true)?;
        let (value, gradient) = self
            .objective
            .evaluate(self.sys, spec.section.mode, p, &orbit)?;
        *self.warm.lock().expect("warm") = orbit.fixed.x.iter().copied().collect();
        Ok(GaitEvaluation {
            params: self.free.iter().map(|&k| p[k]).collect(),
            value,
            gradient,
            spectral_radius: orbit.spectrum.spectral_radius,
            period: orbit.fixed.ret.period,
        })
    }

    fn eval(&self, z: &[f64]) -> Result<(f64, Vec<f64>), argmin::core::Error> {
        if let Some((zc, f, g)) = self.cache.lock().expect("cache").as_ref() {
            if zc.as_slice() == z {
                return Ok((*f, g.clone()));
            }
        }
        let (p, dxdz) = self.params(z);
        let guess = self.warm.lock().expect("warm").clone();
        match self.evaluate_p(&p, &guess) {
            Ok(e) => {
                let gz: Vec<f64> = e.gradient.iter().zip(&dxdz).map(|(g, d)| g * d).collect();
                let f = e.value;
                self.history.lock().expect("history").push(e);
                *self.cache.lock().expect("cache") = Some((z.to_vec(), f, gz.clone()));
                Ok((f, gz))
            }
            Err(err) => {
                let msg = err.to_string();
                *self.error.lock().expect("error") = Some(err);
                Err(argmin::core::Error::msg(msg))
            }
        }
    }
}

impl<S: HybridSystem> CostFunction for Gait<'_, S> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, z: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        self.eval(z).map(|r| r.0)
    }
}

impl<S: HybridSystem> Gradient for Gait<'_, S> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, z: &Vec<f64>) -> Result<Vec<f64>, argmin::core::Error> {
        self.eval(z).map(|r| r.1)
    }
}

/// Minimizes `objective` over the parameters `free` (start values in `p0`, transforms
/// `transforms`) with the orbit of `spec` (module docs).
pub fn optimize_gait<S: HybridSystem>(
    sys: &S, spec: &PeriodicSpec, objective: &Objective, p0: &[f64], free: &[usize],
    transforms: &[Transform], settings: &GaitSettings,
) -> Result<GaitOptimum, PeriodicError> {
    if free.is_empty() {
        return Err(Error::NothingToOptimize.into());
    }
    let gait = Gait {
        sys,
        spec,
        objective,
        base: p0.to_vec(),
        free: free.to_vec(),
        transforms: transforms.to_vec(),
        warm: Mutex::new(spec.guess.clone()),
        history: Mutex::new(Vec::new()),
        cache: Mutex::new(None),
        error: Mutex::new(None),
    };
    let z0: Vec<f64> = free
        .iter()
        .zip(transforms)
        .map(|(&k, t)| t.to_z(p0[k]))
        .collect();
    let initial = gait.evaluate_p(p0, &spec.guess)?;
    let opt = |e: argmin::core::Error| PeriodicError::from(Error::Optimizer(e.to_string()));
    let ls = MoreThuenteLineSearch::new()
        .with_bounds(f64::EPSILON.sqrt(), f64::INFINITY)
        .map_err(opt)?;
    let solver = LBFGS::new(ls, 7)
        .with_tolerance_grad(settings.tol_grad)
        .and_then(|s| s.with_tolerance_cost(1e-15))
        .map_err(opt)?;
    let res = Executor::new(gait, solver)
        .configure(|s| s.param(z0.clone()).max_iters(settings.max_iters))
        .timer(false)
        .run();
    let res = match res {
        Ok(r) => r,
        Err(e) => return Err(opt(e)),
    };
    let st = res.state();
    let reason = st.get_termination_reason().cloned();
    let iterations = st.get_iter();
    let zbest = st.get_best_param().cloned().unwrap_or(z0);
    let gait = res.problem.problem.expect("problem");
    if let Some(TerminationReason::SolverExit(_)) = reason {
        if let Some(e) = gait.error.lock().expect("error").take() {
            return Err(e);
        }
    }
    let (pbest, _) = gait.params(&zbest);
    let warm = gait.warm.lock().expect("warm").clone();
    let last = gait.evaluate_p(&pbest, &warm)?;
    let check = gait.evaluate_p(&pbest, &spec.guess)?;
    let converged = matches!(reason, Some(TerminationReason::SolverConverged));
    let history = gait.history.into_inner().expect("history");
    Ok(GaitOptimum {
        names: Vec::new(),
        initial,
        verified_value: check.value,
        verified_spectral_radius: check.spectral_radius,
        last,
        iterations,
        evaluations: history.len(),
        converged,
        termination: reason.map_or("none".into(), |r| r.text().to_string()),
        history,
    })
}
