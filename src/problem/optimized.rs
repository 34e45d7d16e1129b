//! Every optimizer of a problem file behind one entry, [`Problem::optimize`] (what
//! `hybridopt optimize` and Python's `Problem.optimize` call): the gait optimizer for a
//! `[periodic]` problem ([`Problem::optimize_gait`]), the trajectory optimizers through
//! [`Problem::optimize_trajectory`] otherwise; [`Optimized`] is what it found.

use super::Problem;
use crate::error::Error;
use crate::optimize::OptimizeResult;
use crate::periodic::optimize::{optimize_gait, GaitOptimum, GaitSettings};
use crate::periodic::PeriodicError;
use crate::setup::Setup;
use crate::systems::Builtin;
use std::sync::Arc;

/// What an optimization of a problem file found.
#[derive(Debug, Clone)]
pub enum Optimized {
    /// A trajectory optimizer's run ([`Problem::optimize_trajectory`]).
    Trajectory(Box<OptimizeResult>),
    /// The gait optimizer's run on a `[periodic]` problem ([`Problem::optimize_gait`]).
    Gait(Box<GaitOptimum>),
}

impl Problem {
    /// Runs the problem's optimizer with `self.optimizer`'s settings from its values: the
    /// gait optimizer on the orbit's objective for a `[periodic]` problem, otherwise
    /// [`Problem::optimize_trajectory`] on `setup` (built from `self`) over `self.theta`,
    /// reporting each iteration to `progress`.
    pub fn optimize(
        &self, setup: &Setup<'_, Builtin>, progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
    ) -> Result<Optimized, Error> {
        if self.periodic.is_some() {
            return Ok(Optimized::Gait(Box::new(self.optimize_gait()?)));
        }
        let r = self.optimize_trajectory(setup, &self.theta, progress)?;
        Ok(Optimized::Trajectory(Box::new(r)))
    }

    /// L-BFGS on the `[periodic]` orbit's objective over the parameters marked
    /// `optimize = true` (at most `self.optimizer.max_iters` iterations, gradient
    /// tolerance `self.optimizer.tol_grad`); the result names the optimized parameters.
    pub fn optimize_gait(&self) -> Result<GaitOptimum, Error> {
        let spec = self.periodic_spec()?;
        let Some(objective) = spec.objective.clone() else {
            return Err(PeriodicError::Invalid(format!(
                "{}: [periodic] has no `objective` (e.g. objective = {{ kind = \"spectral_radius\" }}): nothing to optimize",
                self.file.display()
            ))
            .into());
        };
        let np = self.dims.np();
        let pv = self.theta_values()[..np].to_vec();
        let free: Vec<usize> = (0..np).filter(|&i| self.theta[i].optimize).collect();
        let transforms: Vec<_> = free.iter().map(|&i| self.theta[i].transform()).collect();
        let settings = GaitSettings {
            max_iters: self.optimizer.max_iters,
            tol_grad: self.optimizer.tol_grad,
        };
        let mut r = optimize_gait(
            &self.system,
            &spec,
            &objective,
            &pv,
            &free,
            &transforms,
            &settings,
        )?;
        r.names = free.iter().map(|&i| self.dims.params[i].clone()).collect();
        Ok(r)
    }

    /// The parameters at the end of the gait optimization `r` of this problem: its values
    /// with the optimized ones from `r`.
    pub fn gait_params(&self, r: &GaitOptimum) -> Vec<f64> {
        let np = self.dims.np();
        let mut pf = self.theta_values()[..np].to_vec();
        for (name, v) in r.names.iter().zip(&r.last.params) {
            if let Some(i) = self.dims.params.iter().position(|n| n == name) {
                pf[i] = *v;
            }
        }
        pf
    }
}
