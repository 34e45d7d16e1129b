//! The plain hybrid system in X (any scalar) and the setup's simulations.

use super::definition::Setup;
use crate::error::ModelError;
use crate::integrate::hybrid::{GuardRate, HybridRhs};
use crate::integrate::trajectory::Ctx;
use crate::integrate::{Checkpointing, NewtonJacobian};
use crate::model::{Dims, HybridSystem, Scalar};

/// The plain hybrid system in X (any scalar): what `simulate` and the dual witness run.
pub struct Plain<'s, 'a, S: HybridSystem, D> {
    pub setup: &'s Setup<'a, S>,
    pub theta: Vec<D>,
    pub theta_re: Vec<f64>,
}

impl<'s, 'a, S: HybridSystem, D: Scalar> Plain<'s, 'a, S, D> {
    pub fn new(setup: &'s Setup<'a, S>, theta: Vec<D>) -> Self {
        let theta_re = theta.iter().map(|v| v.re()).collect();
        Plain {
            setup,
            theta,
            theta_re,
        }
    }
}

/// The guards of an integrated vector that starts with X (X, then sensitivity columns):
/// for [`HybridRhs`] implementations with `setup` and `theta: Vec<f64>` fields.
macro_rules! guards_on_leading_state {
    () => {
        fn guard(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64]) -> f64 {
            self.setup
                .guard_value(ctx, k, t, &y[..self.setup.n()], &self.theta)
        }
        fn guard_rate(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> GuardRate {
            let n = self.setup.n();
            self.setup
                .guard_rate(ctx, k, t, &y[..n], &v[..n], &self.theta)
        }
        fn guard_slope(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> f64 {
            let n = self.setup.n();
            self.setup
                .guard_slope(ctx, k, t, &y[..n], &v[..n], &self.theta)
        }
    };
}
pub(crate) use guards_on_leading_state;

impl<S: HybridSystem, D: Scalar> HybridRhs<D> for Plain<'_, '_, S, D> {
    fn dims(&self) -> &Dims {
        &self.setup.dims
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        self.setup.sys().guard_active(mode, k)
    }
    fn dim(&self) -> usize {
        self.setup.n()
    }
    fn rhs(&self, ctx: &Ctx, t: D, y: &[D], dy: &mut [D]) -> Result<(), ModelError> {
        self.setup.rhs(ctx, t, y, &self.theta, dy)
    }
    fn newton_jacobian(&self, ctx: &Ctx, t: f64, y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        Ok(NewtonJacobian {
            block: self.setup.newton_block(ctx, t, y, &self.theta_re)?,
            copies: 1,
            rest: 0,
        })
    }
    fn guard(&self, ctx: &Ctx, k: usize, t: D, y: &[D]) -> D {
        self.setup.guard_value(ctx, k, t, y, &self.theta)
    }
    fn guard_rate(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> GuardRate {
        self.setup.guard_rate(ctx, k, t, y, v, &self.theta_re)
    }
    fn guard_slope(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> f64 {
        self.setup.guard_slope(ctx, k, t, y, v, &self.theta_re)
    }
    fn event(
        &self, ctx: &Ctx, k: usize, t: D, y: &[D], terminal: bool,
    ) -> Result<(usize, Vec<D>), ModelError> {
        if terminal {
            return Ok((ctx.mode, y.to_vec()));
        }
        self.setup.reset(ctx.mode, k, t, y, &self.theta)
    }
}

impl<S: HybridSystem> Setup<'_, S> {
    /// Simulates X from t0 to t_end (or a terminal event) at θ.
    pub fn simulate(
        &self, theta: &[f64],
    ) -> Result<crate::integrate::Trajectory, crate::error::Error> {
        self.simulate_generic(theta.to_vec())
    }

    /// The simulation for the adjoint: the same steps and events as [`Self::simulate`],
    /// with the dense output kept under [`Self::checkpointing`] (the backward pass replays
    /// compacted windows; tables and plots need [`Self::simulate`]).
    pub fn simulate_for_adjoint(
        &self, theta: &[f64],
    ) -> Result<crate::integrate::Trajectory, crate::error::Error> {
        self.simulate_keeping(theta.to_vec(), self.checkpointing)
    }

    /// The same simulation keeping a checkpoint every 32 steps only (16 bytes a step):
    /// for reports that read the events and counts, and replay a window when they need
    /// the dense output (`hybridopt gradient`'s report run, so that it does not hold a
    /// second budget's worth of interpolants beside the timed adjoint's).
    pub fn simulate_compact(
        &self, theta: &[f64],
    ) -> Result<crate::integrate::Trajectory, crate::error::Error> {
        self.simulate_keeping(theta.to_vec(), Checkpointing::Every(32))
    }

    /// The same simulation keeping nothing a step ([`Checkpointing::Discard`]: each
    /// segment's starting state, the events and the end): for reports that read the events,
    /// counts and values, and for timing a plain run, at a memory that does not grow with
    /// the horizon.
    pub fn simulate_lean(
        &self, theta: &[f64],
    ) -> Result<crate::integrate::Trajectory, crate::error::Error> {
        self.simulate_keeping(theta.to_vec(), Checkpointing::Discard)
    }

    /// The same simulation in any scalar (dual numbers give the witness derivative).
    pub fn simulate_generic<D: Scalar>(
        &self, theta: Vec<D>,
    ) -> Result<crate::integrate::Trajectory<D>, crate::error::Error> {
        self.simulate_keeping(theta, Checkpointing::Never)
    }

    fn simulate_keeping<D: Scalar>(
        &self, theta: Vec<D>, keep: Checkpointing,
    ) -> Result<crate::integrate::Trajectory<D>, crate::error::Error> {
        self.check_theta(theta.len())?;
        let (m0, x0) = self
            .initial(&theta)
            .map_err(|e| crate::error::Error::Model {
                t: self.t0,
                mode: "initial".into(),
                source: e,
            })?;
        self.run_hybrid(&Plain::new(self, theta), x0, m0, keep)
    }

    /// Integrates `rhs` (the plain system, or X with what a pass carries beside it) from
    /// `(mode0, y0)` over this setup's breakpoints with its solver and event options,
    /// keeping `keep` ([`crate::integrate::hybrid::simulate_hybrid_with`]).
    pub(crate) fn run_hybrid<D: Scalar, H: HybridRhs<D> + ?Sized>(
        &self, rhs: &H, y0: Vec<D>, mode0: usize, keep: Checkpointing,
    ) -> Result<crate::integrate::Trajectory<D>, crate::error::Error> {
        crate::integrate::hybrid::simulate_hybrid_with(
            rhs,
            y0,
            mode0,
            &self.breakpoints(),
            &self.solver,
            &self.events,
            keep,
        )
    }
}
