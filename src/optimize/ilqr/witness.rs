//! The iLQR's stages opened for witnesses (tests and benches): each stage's linearization
//! along the rollout of θ, a plain run of one stage from any start (for finite
//! differences), and the gradient the linearizations imply (the discrete adjoint of
//! [`super::backward`], which must equal the continuous adjoint's gradient of the same
//! cost).

use super::backward::gradient;
use super::costs::{Form, Plan};
use super::forward::Rollout;
use super::layout::Layout;
use super::stage::Stages;
use super::IlqrError;
use crate::constraint::Constraints;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::constrained::nlp::RowAt;
use crate::optimize::constrained::sqp::Problem;
use crate::optimize::shooting::{closing_problem, Closure};
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
    /// A periodic problem's closing and the weight ρ of its terms `ρ/2 r_m²`.
    closing: Option<(Closure, f64)>,
    entries: Vec<ThetaEntry>,
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

    /// The stages of a periodic problem (docs/theory.md §11): the horizon ends at the first
    /// firing of `closure`'s guard from θ's start, free parameters are stage 0's decisions,
    /// and the cost is the first objective plus `ρ/2 Σ_m r_m²` on the closing residuals
    /// `r_m = x⁺_m − x0_m(p)` (the augmented term at λ = 0).
    pub fn periodic(
        setup: &'s Setup<'a, S>, theta: &[ThetaEntry], closure: &Closure, rho: f64,
    ) -> Result<Self, Error> {
        let entries = setup.resolve_theta(theta)?;
        let none = Constraints::default();
        let nlp = closing_problem(setup, &entries, &none, closure)?;
        let t_close = nlp.evaluate(&nlp.x0())?.t_end;
        let mut out = Self::build(setup, theta, None)?;
        let grid = out.stages.grid.clone();
        let (np, nx) = (setup.np(), setup.nx());
        out.stages.layout = Layout::closing(&grid, setup.t0, t_close, &entries, np, nx)?;
        out.stages.closure = Some(closure.guard);
        let form = Form::Augmented {
            lower: 0.0,
            upper: 0.0,
            lambda: 0.0,
            rho,
        };
        out.stages.plan.closing = closure.states.iter().map(|&m| (m, form)).collect();
        out.rollout = out.stages.rollout(&out.rollout.theta, None)?;
        out.closing = Some((closure.clone(), rho));
        Ok(out)
    }

    /// The gradient over θ of the periodic cost of [`IlqrStages::periodic`] measured as the
    /// SQP measures it (the one-segment problem's cost gradient and closing rows,
    /// shooting/closing.rs): `∇f + ρ Σ_m r_m ∇r_m`, zero off θ's optimized entries. `None`
    /// without a closing.
    pub fn closing_gradient(&self) -> Result<Option<Vec<f64>>, Error> {
        let Some((closure, rho)) = &self.closing else {
            return Ok(None);
        };
        let none = Constraints::default();
        let nlp = closing_problem(self.stages.setup, &self.entries, &none, closure)?;
        let x: Vec<f64> = nlp.free.iter().map(|&q| self.rollout.theta[q]).collect();
        let p = nlp.evaluate(&x)?;
        let mut g = p.g.clone();
        for row in p
            .rows
            .iter()
            .filter(|r| matches!(r.label.at, RowAt::Continuity { .. }))
        {
            for (gj, rj) in g.iter_mut().zip(&row.grad) {
                *gj += rho * row.value * rj;
            }
        }
        let mut out = vec![0.0; self.rollout.theta.len()];
        for (i, &q) in nlp.free.iter().enumerate() {
            out[q] = g[i];
        }
        Ok(Some(out))
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
            closure: None,
        };
        let mut values: Vec<f64> = theta.iter().map(|e| e.value).collect();
        values.extend(t_end.map(|t| t.0));
        let rollout = stages.rollout(&values, None)?;
        Ok(IlqrStages {
            stages,
            rollout,
            closing: None,
            entries: theta,
        })
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
