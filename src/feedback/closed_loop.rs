//! The closed loop as a system: a [`HybridSystem`] around the inner one whose control is the
//! law `u = sat(u_nom(c) + K(c)(x − x_ref(c)))`, clamped to each channel's limits (the torque
//! limits), with the controller's states c appended to the system's: the phase τ
//! (`τ̇ = 1`) and, for a time-varying design, the count of impacts (which nominal segment
//! the system is in). At every impact c jumps by the [`Clock`] rule of the reference
//! ([`Reference::after_impact`]): for one period (a [`PeriodTable`]) τ⁺ = 0, or τ − T with
//! the reference extended past its event; along a run with events (a
//! [`Timeline`](super::timeline::Timeline)) the next segment, on the nominal clock or
//! restarted at its nominal start. Every engine function runs on it: simulations, the
//! return map and its exact monodromy (the closed-loop Floquet multipliers by the
//! periodic machinery), dual-number runs.
//!
//! The wrapper has no control channels of its own; its parameters are the inner system's.

use super::clock::Clock;
use super::law::Reference;
use super::reference::PeriodTable;
use crate::error::ModelError;
use crate::model::{Dims, HybridSystem, Scalar};

/// The closed loop of `inner` under a tabulated design (one period by default).
pub struct ClosedLoop<'s, S: HybridSystem, R: Reference = PeriodTable> {
    pub inner: &'s S,
    pub table: R,
    pub clock: Clock,
    /// Per channel `(lower, upper)`; `None`: no limits.
    pub limits: Option<Vec<(f64, f64)>>,
    nx: usize,
    /// The number of the controller's states.
    nc: usize,
}

impl<'s, S: HybridSystem, R: Reference> ClosedLoop<'s, S, R> {
    pub fn new(inner: &'s S, table: R, clock: Clock, limits: Option<Vec<(f64, f64)>>) -> Self {
        let nx = inner.dims().nx();
        let nc = table.state_names().len();
        ClosedLoop {
            inner,
            table,
            clock,
            limits,
            nx,
            nc,
        }
    }

    /// The index of the phase state τ (the controller's first).
    pub fn phase_index(&self) -> usize {
        self.nx
    }

    /// The same loop with K = 0 (the open loop under the same rule and limits).
    pub fn open_loop(&self) -> Self {
        ClosedLoop::new(
            self.inner,
            self.table.without_gains(),
            self.clock,
            self.limits.clone(),
        )
    }

    /// The law at `(x, c)`: `sat(u_nom(c) + K(c)(x − x_ref(c)))`.
    pub fn control<D: Scalar>(&self, x: &[D]) -> Vec<D> {
        let r = self.table.at(&x[self.nx..self.nx + self.nc]);
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

impl<S: HybridSystem, R: Reference> HybridSystem for ClosedLoop<'_, S, R> {
    /// The inner system's names with the controller's states added and no controls.
    fn dims(&self) -> Dims {
        let mut d = self.inner.dims();
        d.states.extend(self.table.state_names());
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
    /// The inner start with the controller's start states.
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        let mut x = self.inner.initial_state(p)?;
        x.extend(self.table.start().into_iter().map(D::from));
        Ok(x)
    }
    fn flow<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let u = self.control(x);
        self.inner
            .flow(mode, t, &x[..self.nx], &u, p, &mut dx[..self.nx])?;
        dx[self.nx] = D::one();
        dx[self.nx + 1..].iter_mut().for_each(|d| *d = D::zero());
        Ok(())
    }
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        let u = self.control(x);
        self.inner.guard(mode, k, t, &x[..self.nx], &u, p)
    }
    /// The inner reset, and the controller's states by the clock rule.
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let (m, mut xp) = self.inner.reset(mode, k, t, &x[..self.nx], p)?;
        xp.extend(self.table.after_impact(self.clock, &x[self.nx..]));
        Ok((m, xp))
    }
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let u = self.control(x);
        self.inner.outputs(mode, t, &x[..self.nx], &u, p, out)
    }
}
