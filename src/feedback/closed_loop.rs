//! The closed loop as a system: a [`HybridSystem`] around the inner one whose control is the
//! law `u = sat(u_nom(τ) + K(τ)(x − x_ref(τ)))`, clamped to each channel's limits (the torque
//! limits), with the controller's phase τ as one more state (`τ̇ = 1`, and at every impact
//! `τ⁺` by the [`Clock`] rule: 0, or τ − T with the reference extended past its event).
//! Every engine function runs on it: simulations, the return map and its exact monodromy
//! (the closed-loop Floquet multipliers by the periodic machinery), dual-number runs.
//!
//! The wrapper has no control channels of its own; its parameters are the inner system's.

use super::clock::Clock;
use super::reference::PeriodTable;
use crate::error::ModelError;
use crate::model::{Dims, HybridSystem, Scalar};

/// The closed loop of `inner` under a tabulated periodic design.
pub struct ClosedLoop<'s, S: HybridSystem> {
    pub inner: &'s S,
    pub table: PeriodTable,
    pub clock: Clock,
    /// Per channel `(lower, upper)`; `None`: no limits.
    pub limits: Option<Vec<(f64, f64)>>,
    nx: usize,
}

impl<'s, S: HybridSystem> ClosedLoop<'s, S> {
    pub fn new(
        inner: &'s S, table: PeriodTable, clock: Clock, limits: Option<Vec<(f64, f64)>>,
    ) -> Self {
        let nx = inner.dims().nx();
        ClosedLoop {
            inner,
            table,
            clock,
            limits,
            nx,
        }
    }

    /// The index of the phase state τ.
    pub fn phase_index(&self) -> usize {
        self.nx
    }

    /// The law at `(x, τ)`: `sat(u_nom(τ) + K(τ)(x − x_ref(τ)))`.
    pub fn control<D: Scalar>(&self, x: &[D]) -> Vec<D> {
        let r = self.table.at(x[self.nx]);
        let nu = r.u.len();
        (0..nu)
            .map(|c| {
                let mut v = r.u[c];
                for j in 0..self.nx {
                    v += r.k[c * self.nx + j] * (x[j] - r.x[j]);
                }
                match &self.limits {
                    Some(l) if v.re() < l[c].0 => D::from(l[c].0),
                    Some(l) if v.re() > l[c].1 => D::from(l[c].1),
                    _ => v,
                }
            })
            .collect()
    }
}

impl<S: HybridSystem> HybridSystem for ClosedLoop<'_, S> {
    /// The inner system's names with the state `phase` added and no controls.
    fn dims(&self) -> Dims {
        let mut d = self.inner.dims();
        d.states.push("phase".into());
        d.controls.clear();
        d
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        self.inner.guard_active(mode, k)
    }
    fn initial_mode(&self, p: &[f64]) -> usize {
        self.inner.initial_mode(p)
    }
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        self.inner.geometry()
    }
    /// The inner start with τ = 0.
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        let mut x = self.inner.initial_state(p)?;
        x.push(D::zero());
        Ok(x)
    }
    fn flow<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let u = self.control(x);
        self.inner
            .flow(mode, t, &x[..self.nx], &u, p, &mut dx[..self.nx])?;
        dx[self.nx] = D::one();
        Ok(())
    }
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        let u = self.control(x);
        self.inner.guard(mode, k, t, &x[..self.nx], &u, p)
    }
    /// The inner reset, and τ⁺ by the clock rule.
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let (m, mut xp) = self.inner.reset(mode, k, t, &x[..self.nx], p)?;
        xp.push(self.clock.after_impact(x[self.nx], self.table.period));
        Ok((m, xp))
    }
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let u = self.control(x);
        self.inner.outputs(mode, t, &x[..self.nx], &u, p, out)
    }
}
