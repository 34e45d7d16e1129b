//! What a constrained mechanism model writes: [`MultibodySystem`] (names, guards, resets,
//! the constraint set of each mode, outputs given the accelerations); the flow
//! `ẋ = (q̇, a)` and its exact vector–Jacobian product come once, from `super::hybrid`, for
//! every natural-coordinate mechanism (theory.md §5). `q̇ = v` for index 1
//! and penalty; the index-2 formulation's `q̇ = v − Φ_qᵀη` (GGL, [`super::dynamics`]).
//! The VJP is implicit differentiation of the equations behind the accelerations, one
//! factorization per point ([`super::implicit`]).

use super::constraints::Constraint;
use super::dynamics::{Accel, Dynamics};
use super::mechanism::Mechanism;
use crate::error::ModelError;
use crate::model::{c, Dims, Scalar};

/// The state `x = (q, v)` of coordinates `q` and velocities `v`.
pub fn mechanism_state<D: Scalar>(q: &[D], v: Vec<D>) -> Vec<D> {
    let mut x = q.to_vec();
    x.extend(v);
    x
}

/// The state `x = (q0, 0)`: at rest at the coordinates `q0`.
pub fn rest_state<D: Scalar>(q0: &[f64]) -> Vec<D> {
    let mut x = vec![D::zero(); 2 * q0.len()];
    for (i, &v) in q0.iter().enumerate() {
        x[i] = c(v);
    }
    x
}

/// A planar mechanism with modes, events and outputs. Every type that implements it is a
/// [`HybridSystem`](crate::model::HybridSystem) whose flow is `ẋ = (v, a(q, v, p))` with `a` from the mechanism under
/// the mode's constraint set and the configured formulation, and whose `flow_vjp` is the
/// implicit-differentiation product of the module docs. The state is `x = (q, v)` with
/// `q` the mechanism's `n` coordinates. The controls are the mechanism's actuators
/// (generalized forces on coordinates, multibody/actuators.rs; none by default).
pub trait MultibodySystem: Send + Sync {
    /// The mechanism (points, bodies, forces, its own constraint set).
    fn mechanism(&self) -> &Mechanism;
    /// The formulation and its coefficients.
    fn dynamics(&self) -> &Dynamics;
    /// The constraint set of a mode (the mechanism's own by default).
    fn constraints(&self, _mode: usize) -> &[Constraint] {
        &self.mechanism().constraints
    }
    /// Checks the sizes of a state and a parameter vector (and the mode) before any
    /// evaluation; a mismatch is a [`ModelError`], never a panic.
    fn check<D: Scalar>(&self, mode: usize, x: &[D], p: &[D]) -> Result<(), ModelError>;
    /// The names: states `(q, v)`, parameters, modes, guards, outputs
    /// ([`HybridSystem::dims`](crate::model::HybridSystem::dims); the controls, one per actuator of the mechanism).
    fn dims(&self) -> Dims;
    /// Whether guard `k` is watched in `mode` (all by default).
    fn guard_active(&self, _mode: usize, _k: usize) -> bool {
        true
    }
    /// The start mode (0 by default).
    fn initial_mode(&self, _p: &[f64]) -> usize {
        0
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError>;
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], p: &[D]) -> D;
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError>;
    /// The outputs at `(q, v)` given the accelerations, multipliers and residuals `acc`
    /// of that point (so that flow and outputs share one solve).
    fn outputs_with<D: Scalar>(
        &self, mode: usize, t: D, q: &[D], v: &[D], acc: &Accel<D>, p: &[D], out: &mut [D],
    ) -> Result<(), ModelError>;

    /// [`Self::outputs_with`] where only the outputs flagged in `wanted` (one flag per
    /// output) need be right; the others may be left as they are. The implicit VJP
    /// differentiates only the outputs with a nonzero cotangent through it, so a mechanism
    /// with costly outputs (energies) can skip them. All outputs by default.
    #[allow(clippy::too_many_arguments)]
    fn outputs_wanted<D: Scalar>(
        &self, mode: usize, t: D, q: &[D], v: &[D], acc: &Accel<D>, p: &[D], _wanted: &[bool],
        out: &mut [D],
    ) -> Result<(), ModelError> {
        self.outputs_with(mode, t, q, v, acc, p, out)
    }

    /// The mechanism's geometry for pictures (see [`HybridSystem::geometry`](crate::model::HybridSystem::geometry)); none by
    /// default.
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        None
    }

    /// Accelerations, multipliers and residuals in `mode` at `x = (q, v)`.
    fn accelerations<D: Scalar>(
        &self, mode: usize, x: &[D], p: &[D],
    ) -> Result<Accel<D>, ModelError> {
        self.accelerations_actuated(mode, x, &[], p)
    }

    /// [`Self::accelerations`] under the actuators' forces (`u` empty: none).
    fn accelerations_actuated<D: Scalar>(
        &self, mode: usize, x: &[D], u: &[D], p: &[D],
    ) -> Result<Accel<D>, ModelError> {
        self.check(mode, x, p)?;
        let n = self.mechanism().n;
        self.mechanism().acceleration_actuated(
            self.dynamics(),
            self.constraints(mode),
            &x[..n],
            &x[n..],
            u,
            p,
        )
    }
}
