//! The iLQR's stages opened for witnesses (tests and benches): each stage's linearization
//! along the rollout of θ, a plain run of one stage from any start (for finite
//! differences), and the gradient the linearizations imply (the discrete adjoint of
//! [`super::backward`], which must equal the continuous adjoint's gradient of the same
//! cost).

use super::backward::gradient;
use super::costs::Plan;
use super::forward::Rollout;
use super::layout::Layout;
use super::stage::Stages;
use super::IlqrError;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::ThetaEntry;
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};

/// One stage's linearization (docs/theory.md §11): `z = (x, θ[carried])`,
/// `u = θ[new]`.
#[derive(Debug, Clone)]
pub struct StageJacobians {
    pub t0: f64,
    pub t1: f64,
    /// θ indices carried in the augmented state and decided here.
    pub carried: Vec<usize>,
    pub new: Vec<usize>,
    /// The stage's start state and mode along the rollout.
    pub x: Vec<f64>,
    pub mode: usize,
    /// `∂z_{k+1}/∂z_k`, `∂z_{k+1}/∂u_k`, and the stage cost's gradients.
    pub fz: DMatrix<f64>,
    pub fu: DMatrix<f64>,
    pub lz: DVector<f64>,
    pub lu: DVector<f64>,
}

/// The stages of the iLQR on `setup`'s first objective at θ's values.
pub struct IlqrStages<'s, 'a, S: HybridSystem> {
    stages: Stages<'s, 'a, S>,
    rollout: Rollout,
}

impl<'s, 'a, S: HybridSystem> IlqrStages<'s, 'a, S> {
    /// The stages and the rollout of θ; the errors of [`super::optimize_ilqr`].
    pub fn new(setup: &'s Setup<'a, S>, theta: &[ThetaEntry]) -> Result<Self, Error> {
        Self::build(setup, theta, None)
    }

    /// The same with a free final time `t_end = (value, lower, upper)`: θ extended by T
    /// (index `theta.len()`), the last stage's decision (docs/theory.md §11).
    pub fn with_free_time(
        setup: &'s Setup<'a, S>, theta: &[ThetaEntry], t_end: (f64, f64, f64),
    ) -> Result<Self, Error> {
        Self::build(setup, theta, Some(t_end))
    }

    fn build(
        setup: &'s Setup<'a, S>, theta: &[ThetaEntry], t_end: Option<(f64, f64, f64)>,
    ) -> Result<Self, Error> {
        let theta = setup.resolve_theta(theta)?;
        let grid = setup.controls.clone().ok_or(IlqrError::NoControls)?;
        let obj = setup.objectives.first().ok_or(Error::NoObjective)?;
        let (np, nx) = (setup.np(), setup.nx());
        let layout = match t_end {
            None => Layout::new(&grid, (setup.t0, setup.t_end), &theta, np, nx)?,
            Some((v, _, hi)) => Layout::free_time(&grid, setup.t0, (v, hi), &theta, np, nx)?,
        };
        let side = |f: fn(&ThetaEntry) -> Option<f64>, open: f64, t: Option<f64>| {
            let mut b: Vec<f64> = theta.iter().map(|e| f(e).unwrap_or(open)).collect();
            b.extend(t);
            b
        };
        let stages = Stages {
            setup,
            plan: Plan::new(obj, layout.time)?,
            layout,
            grid,
            lower: side(|e| e.lower, f64::NEG_INFINITY, t_end.map(|t| t.1)),
            upper: side(|e| e.upper, f64::INFINITY, t_end.map(|t| t.2)),
            second_order: false,
        };
        let mut values: Vec<f64> = theta.iter().map(|e| e.value).collect();
        values.extend(t_end.map(|t| t.0));
        let rollout = stages.rollout(&values, None)?;
        Ok(IlqrStages { stages, rollout })
    }

    /// The cost summed over the stages' runs.
    pub fn cost(&self) -> f64 {
        self.rollout.cost
    }

    /// Every stage's linearization along the rollout.
    pub fn jacobians(&self) -> Result<Vec<StageJacobians>, Error> {
        let lin = self.stages.linearize_all(&self.rollout)?;
        Ok(lin
            .into_iter()
            .zip(&self.stages.layout.stages)
            .enumerate()
            .map(|(k, (l, st))| StageJacobians {
                t0: st.t0,
                t1: st.t1,
                carried: st.carried.clone(),
                new: st.new.clone(),
                x: self.rollout.x[k].clone(),
                mode: self.rollout.modes[k],
                fz: l.fz,
                fu: l.fu,
                lz: l.lz,
                lu: l.lu,
            })
            .collect())
    }

    /// The gradient of the cost over θ that the linearizations imply (zero off the free
    /// coefficients).
    pub fn gradient(&self) -> Result<Vec<f64>, Error> {
        let lin = self.stages.linearize_all(&self.rollout)?;
        Ok(gradient(
            &lin,
            &self.stages.layout,
            self.rollout.theta.len(),
        ))
    }

    /// Stage k run plainly from the state x (in the rollout's mode at k) at θ `theta`:
    /// its end state and its cost.
    pub fn run_stage(&self, k: usize, x: &[f64], theta: &[f64]) -> Result<(Vec<f64>, f64), Error> {
        let mut before = self.rollout.before[k].clone();
        let step = self
            .stages
            .plain(k, x, self.rollout.modes[k], theta, &mut before)?;
        Ok((step.x_end, step.cost))
    }
}
