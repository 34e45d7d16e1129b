//! Optimizing a gait: L-BFGS (argmin, Moré–Thuente line search) on an [`Objective`] of
//! the periodic orbit over the parameters marked `optimize = true`, through their bound
//! transforms (`optimize::Transform`), with the orbit re-solved at every iterate (Newton
//! started from the last converged fixed point) and its exact gradient from the orbit's
//! sensitivities. An error at a trial point (no return, no convergence, a nonsmooth
//! spectral radius) is kept and returned typed after argmin stops — argmin itself turns
//! it into a `SolverExit` termination (design.md, Errors).

use super::objective::Objective;
use super::orbit::solve_orbit;
use super::spec::PeriodicSpec;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::driver::{self, Bridge, ErrorSlot, RunSettings, Sample, Smooth, Unobserved};
use crate::optimize::{Outcome, SolverKind, Space, Transform};
use argmin::core::TerminationReason;
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
    /// The run's end in the vocabulary of every optimization's `summary.json`:
    /// `converged`, `max_iterations` or `stalled` (the line search could not go on).
    pub outcome: Outcome,
    /// Every evaluation in order.
    pub history: Vec<GaitEvaluation>,
}

/// The objective in the transformed variables z, with the orbit's warm start and every
/// evaluation recorded.
struct Gait<'a, S: HybridSystem> {
    sys: &'a S,
    spec: &'a PeriodicSpec,
    objective: &'a Objective,
    space: Space,
    warm: Mutex<Vec<f64>>,
    history: Mutex<Vec<GaitEvaluation>>,
}

impl<S: HybridSystem> Gait<'_, S> {
    fn evaluate_p(&self, p: &[f64], guess: &[f64]) -> Result<GaitEvaluation, Error> {
        let mut spec = self.spec.clone();
        spec.sensitivities = self.space.free.clone();
        let orbit = solve_orbit(self.sys, &spec, p, guess, true)?;
        let (value, gradient) = self
            .objective
            .evaluate(self.sys, spec.section.mode, p, &orbit)?;
        *self.warm.lock().expect("warm") = orbit.fixed.x.iter().copied().collect();
        Ok(GaitEvaluation {
            params: self.space.free.iter().map(|&k| p[k]).collect(),
            value,
            gradient,
            spectral_radius: orbit.spectrum.spectral_radius,
            period: orbit.fixed.ret.period,
        })
    }
}

impl<S: HybridSystem> Smooth for Gait<'_, S> {
    type Extra = ();
    type Error = Error;
    /// The objective and its gradient in z (`dθ_k/dz_k` applied), the orbit warm-started
    /// from the last one.
    fn eval(&self, z: &[f64]) -> Result<Sample<()>, Error> {
        let (p, dxdz) = self.space.theta(z);
        let guess = self.warm.lock().expect("warm").clone();
        let e = self.evaluate_p(&p, &guess)?;
        let g = e.gradient.iter().zip(&dxdz).map(|(g, d)| g * d).collect();
        let f = e.value;
        self.history.lock().expect("history").push(e);
        Ok(Sample { f, g, extra: () })
    }
}

/// Minimizes `objective` over the parameters `free` (start values in `p0`, transforms
/// `transforms`) with the orbit of `spec` (module docs).
pub fn optimize_gait<S: HybridSystem>(
    sys: &S, spec: &PeriodicSpec, objective: &Objective, p0: &[f64], free: &[usize],
    transforms: &[Transform], settings: &GaitSettings,
) -> Result<GaitOptimum, Error> {
    if free.is_empty() {
        return Err(Error::NothingToOptimize);
    }
    let space = Space::from_parts(p0, free, transforms);
    let z0 = space.z(p0);
    let gait = Gait {
        sys,
        spec,
        objective,
        space,
        warm: Mutex::new(spec.guess.clone()),
        history: Mutex::new(Vec::new()),
    };
    let initial = gait.evaluate_p(p0, &spec.guess)?;
    let opt = |e: argmin::core::Error| Error::Optimizer(e.to_string());
    let how = RunSettings {
        solver: SolverKind::Lbfgs,
        memory: 7,
        tol_grad: settings.tol_grad,
        tol_cost: 1e-15,
        max_iters: settings.max_iters,
    };
    let slot = ErrorSlot::default();
    let out = driver::run(Bridge::new(gait, &slot), z0.clone(), &how, Unobserved)
        .map_err(opt)?
        .map_err(opt)?;
    let reason = out.reason;
    if let Some(TerminationReason::SolverExit(_)) = reason {
        if let Some(e) = slot.lock().expect("error slot").take() {
            return Err(e);
        }
    }
    let gait = out.bridge.expect("problem").objective;
    let (pbest, _) = gait.space.theta(&out.z.unwrap_or(z0));
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
        iterations: out.iterations,
        evaluations: history.len(),
        converged,
        termination: reason
            .as_ref()
            .map_or("none".into(), |r| r.text().to_string()),
        outcome: match reason {
            Some(TerminationReason::SolverConverged) => Outcome::Converged,
            Some(TerminationReason::MaxItersReached) => Outcome::MaxIterations,
            _ => Outcome::Stalled,
        },
        history,
    })
}
