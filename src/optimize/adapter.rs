//! The problem's cost as the quasi-Newton driver (driver.rs) sees it: z (the unconstrained
//! variables of the optimized entries) ↦ ψ(θ(z))/scale and its gradient
//! `(dψ/dθ_k · dθ_k/dz_k)/scale`, with the kinks met on the way.

use super::driver::{ErrorSlot, Sample, Smooth};
use super::kink::{kink_at, KinkReport};
use super::settings::KinkPolicy;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::sensitivity::{evaluate, Evaluation, GradientMethod};
use crate::setup::Setup;
use crate::setup::{ThetaEntry, Transform};
use std::sync::{Arc, Mutex};

/// θ as a function of the optimizer's variables z: the fixed entries at their values, each
/// optimized entry k through its bounds' transform, `θ_k = T_k⁻¹(z_k)` (inside its bounds
/// for every z).
pub(crate) struct Space {
    pub(super) base: Vec<f64>,
    pub(crate) free: Vec<usize>,
    transforms: Vec<Transform>,
}

impl Space {
    /// The optimized entries of `theta` with their transforms, after checking every entry's
    /// value and bounds ([`ThetaEntry::check`]).
    pub(super) fn new(theta: &[ThetaEntry]) -> Result<Space, Error> {
        for e in theta {
            e.check()?;
        }
        let free: Vec<usize> = (0..theta.len()).filter(|&i| theta[i].optimize).collect();
        if free.is_empty() {
            return Err(Error::NothingToOptimize);
        }
        Ok(Space {
            base: theta.iter().map(|e| e.value).collect(),
            transforms: free.iter().map(|&i| theta[i].transform()).collect(),
            free,
        })
    }

    /// The entries `free` of `base` through `transforms` (one per free entry), unchecked.
    pub(crate) fn from_parts(base: &[f64], free: &[usize], transforms: &[Transform]) -> Space {
        Space {
            base: base.to_vec(),
            free: free.to_vec(),
            transforms: transforms.to_vec(),
        }
    }

    /// θ(z) and dθ_k/dz_k for the optimized entries.
    pub(crate) fn theta(&self, z: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut th = self.base.clone();
        let mut dxdz = Vec::with_capacity(z.len());
        for (i, &k) in self.free.iter().enumerate() {
            let (x, d) = self.transforms[i].to_x(z[i]);
            th[k] = x;
            dxdz.push(d);
        }
        (th, dxdz)
    }

    /// z of a full θ.
    pub(crate) fn z(&self, th: &[f64]) -> Vec<f64> {
        self.free
            .iter()
            .enumerate()
            .map(|(i, &k)| self.transforms[i].to_z(th[k]))
            .collect()
    }
}

/// What every adapter of one optimization shares (across restarts, and with the caller:
/// argmin drops the problem when its line search fails, and the error must survive that).
#[derive(Clone, Default)]
pub(super) struct Shared {
    pub(super) error: ErrorSlot<Error>,
    pub(super) evaluations: Arc<Mutex<usize>>,
    /// Kinks met.
    pub(super) kinks: Arc<Mutex<Vec<KinkReport>>>,
}

impl Shared {
    pub(super) fn take_error(&self) -> Option<Error> {
        self.error.lock().expect("error slot").take()
    }
    pub(super) fn kinks(&self) -> Vec<KinkReport> {
        self.kinks.lock().expect("kinks").clone()
    }
    pub(super) fn last_kink(&self) -> Option<KinkReport> {
        self.kinks.lock().expect("kinks").last().cloned()
    }
    pub(super) fn evaluations(&self) -> usize {
        *self.evaluations.lock().expect("count")
    }
}

/// The scaled, transformed objective (module docs).
pub(super) struct Adapter<'s, 'a, S: HybridSystem> {
    pub(super) setup: &'s Setup<'a, S>,
    pub(super) space: &'s Space,
    pub(super) method: GradientMethod,
    pub(super) scale: f64,
    pub(super) kink_policy: KinkPolicy,
    pub(super) shared: Shared,
}

impl<'s, 'a, S: HybridSystem> Adapter<'s, 'a, S> {
    pub(super) fn new(
        setup: &'s Setup<'a, S>, space: &'s Space, method: GradientMethod, kink_policy: KinkPolicy,
        shared: &Shared, scale: f64,
    ) -> Self {
        Adapter {
            setup,
            space,
            method,
            scale,
            kink_policy,
            shared: shared.clone(),
        }
    }

    /// The scaled cost and gradient at z, with the point's evaluation.
    fn sample(&self, z: &[f64]) -> Result<Sample<Evaluation>, Error> {
        let free = &self.space.free;
        if z.len() != free.len() {
            return Err(Error::Optimizer(format!(
                "the solver passed {} variables, expected {}",
                z.len(),
                free.len()
            )));
        }
        crate::interrupt::check()?;
        let (th, dxdz) = self.space.theta(z);
        if th.iter().any(|v| !v.is_finite()) {
            return Err(Error::Optimizer(format!(
                "the optimizer proposed non-finite parameters {th:?}"
            )));
        }
        let ev = evaluate(self.setup, &th, self.method)?;
        *self.shared.evaluations.lock().expect("count") += 1;
        let f = ev.values[0];
        if !f.is_finite() || ev.gradients[0].iter().any(|g| !g.is_finite()) {
            return Err(Error::Optimizer(format!(
                "non-finite cost or gradient at θ = {th:?}"
            )));
        }
        let gx = self.gradient_or_min_norm(&th, &ev)?;
        let g: Vec<f64> = gx
            .iter()
            .zip(&dxdz)
            .map(|(v, d)| v * d / self.scale)
            .collect();
        Ok(Sample {
            f: f / self.scale,
            g,
            extra: ev,
        })
    }

    /// dψ/dθ over the optimized entries, or at a kink the min-norm element of the pieces'
    /// gradients (after recording the kink; with the policy `stop`, `StoppedAtKink`).
    fn gradient_or_min_norm(&self, th: &[f64], ev: &Evaluation) -> Result<Vec<f64>, Error> {
        let free = &self.space.free;
        let Some(kink) = kink_at(self.setup, free, th, ev)? else {
            return Ok(free.iter().map(|&k| ev.gradients[0][k]).collect());
        };
        let g = kink.min_norm.clone();
        self.shared.kinks.lock().expect("kinks").push(kink);
        if self.kink_policy == KinkPolicy::Stop {
            return Err(Error::StoppedAtKink);
        }
        Ok(g)
    }
}

impl<S: HybridSystem> Smooth for Adapter<'_, '_, S> {
    type Extra = Evaluation;
    type Error = Error;
    fn eval(&self, z: &[f64]) -> Result<Sample<Evaluation>, Error> {
        self.sample(z)
    }
}
