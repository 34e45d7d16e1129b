//! A pendulum against a wall in Cartesian coordinates: a Hessenberg index-2 DAE with an
//! implicit impact transition (reference-models §8; our own example — seed 001's example
//! numbers are not in its extracted text).
//!
//! A point mass m on a massless rod of length L, pivot at the origin, gravity g along −y.
//! Differential states `(x, y, u, v)`, algebraic state λ (the rod force multiplier):
//!
//! ```text
//! ẋ = u,  ẏ = v,  m u̇ = −2 x λ,  m v̇ = −m g − 2 y λ,      0 = k = x u + y v
//! ```
//!
//! (`k_y f_z = −2(x² + y²)/m ≠ 0`: index 2; λ follows from the hidden constraint
//! `u² + v² − 2λ(x² + y²)/m − g y = 0`). The position constraint `x² + y² − L² = 0` is an
//! invariant the index-2 form keeps only implicitly; its drift is an output
//! (`phi_pos_max`, with `phi_vel_max = |k|`). The wall at `x = x_w` (guard `x − x_w`,
//! rising) is an implicit transition `T(y⁺, y⁻) = 0`: positions unchanged,
//! `u⁺ + e u⁻ = 0`, `x u⁺ + y v⁺ = 0`. Parameters `(m, L, g, e, x_w, theta0)`, reference
//! values `(1, 1, 9.81, 0.8, 0.3, −0.8)`; the start is at rest at angle θ0 from the
//! downward vertical. The same motion in the angle is [`super::pendulum_angle`].

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, NoSettings};
use crate::dae::{Dae, DaeDims, DaeIndex, DaeSystem, Point, Transition};
use crate::error::ModelError;
use crate::model::{Direction, GuardInfo, Scalar};

/// The pendulum against a wall (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct PendulumWall;

impl PendulumWall {
    /// The reference parameters `(m, L, g, e, x_w, θ0)` of reference-models §8.
    pub fn default_params() -> Vec<f64> {
        vec![1.0, 1.0, 9.81, 0.8, 0.3, -0.8]
    }
}

impl DaeSystem for PendulumWall {
    fn index(&self) -> DaeIndex {
        DaeIndex::Two
    }
    fn dims(&self) -> DaeDims {
        DaeDims::new(
            ["x", "y", "u", "v"],
            ["lambda"],
            ["m", "L", "g", "e", "x_w", "theta0"],
        )
        .guards([GuardInfo::new("wall", Direction::Rising)])
        .outputs(["px", "py", "theta", "phi_pos_max", "phi_vel_max"])
    }
    fn initial_differential<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        let (l, th) = (p[1], p[5]);
        Ok(vec![l * th.sin(), -l * th.cos(), D::zero(), D::zero()])
    }
    fn flow<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, dy: &mut [D],
    ) -> Result<(), ModelError> {
        let (y, lam, m, g) = (at.y, at.z[0], at.p[0], at.p[2]);
        dy[0] = y[2];
        dy[1] = y[3];
        dy[2] = -(y[0] * lam * 2.0) / m;
        dy[3] = -g - (y[1] * lam * 2.0) / m;
        Ok(())
    }
    fn algebraic<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, res: &mut [D],
    ) -> Result<(), ModelError> {
        res[0] = at.y[0] * at.y[2] + at.y[1] * at.y[3];
        Ok(())
    }
    fn algebraic_guess(
        &self, _mode: usize, _t: f64, y: &[f64], _memory: &[f64], p: &[f64],
    ) -> Vec<f64> {
        // the hidden constraint is linear in λ: any guess converges in one step; this is
        // the tension of a pendulum at rest
        vec![-p[0] * p[2] * y[1] / (2.0 * (y[0] * y[0] + y[1] * y[1]).max(1e-300))]
    }
    fn guard<D: Scalar>(&self, _mode: usize, _k: usize, at: Point<'_, D>) -> D {
        at.y[0] - at.p[4]
    }
    fn transition<D: Scalar>(
        &self, mode: usize, _k: usize, at: Point<'_, D>,
    ) -> Result<Transition<D>, ModelError> {
        let y: Vec<f64> = at.y.iter().map(|v| v.re()).collect();
        let e = at.p[3].re();
        Ok(Transition::Implicit {
            mode,
            guess: vec![y[0], y[1], -e * y[2], -e * y[3]],
        })
    }
    /// `T(y⁺, y⁻) = (x⁺ − x⁻, y⁺ − y⁻, u⁺ + e u⁻, x⁺ u⁺ + y⁺ v⁺)`.
    fn transition_residual<D: Scalar>(
        &self, _mode: usize, _k: usize, after: &[D], before: Point<'_, D>, res: &mut [D],
    ) -> Result<(), ModelError> {
        let (b, e) = (before.y, before.p[3]);
        res[0] = after[0] - b[0];
        res[1] = after[1] - b[1];
        res[2] = after[2] + e * b[2];
        res[3] = after[0] * after[2] + after[1] * after[3];
        Ok(())
    }
    fn outputs<D: Scalar>(
        &self, mode: usize, at: Point<'_, D>, out: &mut [D],
    ) -> Result<(), ModelError> {
        let y = at.y;
        out[0] = y[0];
        out[1] = y[1];
        out[2] = y[0].atan2(-y[1]);
        let inv = self.invariants(mode, at);
        out[3] = inv[0].abs();
        out[4] = (y[0] * y[2] + y[1] * y[3]).abs();
        Ok(())
    }
    /// The rod length: `x² + y² − L²`.
    fn invariants<D: Scalar>(&self, _mode: usize, at: Point<'_, D>) -> Vec<D> {
        let l = at.p[1];
        vec![at.y[0] * at.y[0] + at.y[1] * at.y[1] - l * l]
    }
}

impl BuiltinSystem for Dae<PendulumWall> {
    type Settings = NoSettings;
    fn build(_: &NoSettings) -> Result<Self, BuildError> {
        Ok(Dae::new(PendulumWall))
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(PendulumWall::default_params())
    }
}
