//! A mechanism is a hybrid system: [`HybridSystem`] for every [`MultibodySystem`], its flow
//! `ẋ = (q̇, a)` from the accelerations and its VJP by implicit differentiation
//! ([`super::implicit`]; theory.md §5).

use super::implicit::mechanism_vjp;
use super::system::MultibodySystem;
use crate::error::ModelError;
use crate::model::{Dims, HybridSystem, Scalar, VjpArgs, VjpOut};

impl<M: MultibodySystem> HybridSystem for M {
    fn dims(&self) -> Dims {
        MultibodySystem::dims(self)
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        MultibodySystem::guard_active(self, mode, k)
    }
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        MultibodySystem::geometry(self)
    }
    fn initial_mode(&self, p: &[f64]) -> usize {
        MultibodySystem::initial_mode(self, p)
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        MultibodySystem::initial_state(self, p)
    }
    /// `ẋ = (q̇, a)`, `q̇ = v` except for index 2 (theory.md §5; seed 000 (29)–(32);
    /// index 2: `super::dynamics::ggl_velocity`).
    fn flow<D: Scalar>(
        &self, mode: usize, _t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let acc = self.accelerations_actuated(mode, x, u, p)?;
        let n = self.mechanism().n;
        dx[..n].copy_from_slice(&acc.qdot);
        dx[n..].copy_from_slice(&acc.a);
        Ok(())
    }
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        MultibodySystem::guard(self, mode, k, t, x, p)
    }
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        MultibodySystem::reset(self, mode, k, t, x, p)
    }
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let acc = self.accelerations_actuated(mode, x, u, p)?;
        let n = self.mechanism().n;
        self.outputs_with(mode, t, &x[..n], &x[n..], &acc, p, out)
    }
    fn flow_vjp(&self, args: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError> {
        mechanism_vjp(self, args, out)
    }
}
