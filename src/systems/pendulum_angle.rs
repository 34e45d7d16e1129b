//! The pendulum against a wall in its angle (reference-models §8, the check): the ODE
//! `θ̈ = −(g/L) sin θ`, guard `L sin θ − x_w` (rising), reset `θ̇⁺ = −e θ̇⁻`. It is the same
//! motion as the Cartesian index-2 model [`super::pendulum_wall`] (at the impact the rod
//! is the tangent's normal, so `u⁺ = −e u⁻` is `θ̇⁺ = −e θ̇⁻`), with the same parameters
//! `(m, L, g, e, x_w, theta0)` and the outputs `px = L sin θ`, `py = −L cos θ`, so ψ and
//! every gradient entry of the two must agree.

use crate::error::ModelError;
use crate::model::{Dims, Direction, GuardInfo, HybridSystem, Scalar};

/// The angle-coordinate model (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct PendulumAngle;

impl HybridSystem for PendulumAngle {
    fn dims(&self) -> Dims {
        Dims::new(["theta", "dtheta"], ["m", "L", "g", "e", "x_w", "theta0"])
            .guards([GuardInfo::new("wall", Direction::Rising)])
            .outputs(["px", "py", "theta"])
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![p[5], D::zero()])
    }
    fn flow<D: Scalar>(
        &self, _mode: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = x[1];
        dx[1] = -(p[2] / p[1]) * x[0].sin();
        Ok(())
    }
    fn guard<D: Scalar>(&self, _mode: usize, _k: usize, _t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        p[1] * x[0].sin() - p[4]
    }
    fn reset<D: Scalar>(
        &self, mode: usize, _k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((mode, vec![x[0], -p[3] * x[1]]))
    }
    fn outputs<D: Scalar>(
        &self, _mode: usize, _t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = p[1] * x[0].sin();
        out[1] = -p[1] * x[0].cos();
        out[2] = x[0];
        Ok(())
    }
}
