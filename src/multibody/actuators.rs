//! Actuators of a mechanism: a generalized force `u_c` on a named coordinate `q_{i_c}` per
//! control channel c (docs/theory.md §5, "Actuators"). With `B` the n×nu selection matrix
//! (`B[i_c, c] = 1`), the applied force becomes `F(q, v, p) + B u` in every formulation:
//! index 1 `M a + Φ_qᵀμ = F + B u`, penalty `M̄ a = F̄ + B u` (the penalty terms do not read
//! F), index 2 the same force balance. `B` is constant, so `∂R/∂u = −(the force rows of B)`
//! in the implicit residual of [`super::implicit`] (`R = F + Bu − M a − …`), and the
//! product's u-part is `λᵀ g_u = −wᵀ R_u` with the cotangent solve's `w` (implicit.rs).
//! In natural coordinates a generalized force on `x_k` (or `y_k`) is a force on point k
//! along x (or y); on an angle coordinate it would be a torque.

use super::mechanism::Mechanism;
use crate::error::ModelError;
use crate::model::Scalar;

impl Mechanism {
    /// Adds an actuator on coordinate `coord` (the next control channel); fails when the
    /// coordinate does not exist.
    pub fn actuator(&mut self, coord: usize) -> Result<usize, ModelError> {
        if coord >= self.n {
            return Err(ModelError::SizeMismatch {
                what: "actuator coordinate".into(),
                expected: format!("a coordinate index < {}", self.n),
                found: coord.to_string(),
            });
        }
        self.actuators.push(coord);
        Ok(self.actuators.len() - 1)
    }

    /// `F + B u` (module docs): `u` one value per actuator, or empty (no actuation: the
    /// passive mechanism, as a caller without controls runs it).
    pub fn add_actuation<D: Scalar>(&self, u: &[D], f: &mut [D]) -> Result<(), ModelError> {
        if u.is_empty() {
            return Ok(());
        }
        if u.len() != self.actuators.len() {
            return Err(ModelError::SizeMismatch {
                what: "mechanism controls".into(),
                expected: format!("{} (one per actuator)", self.actuators.len()),
                found: u.len().to_string(),
            });
        }
        for (&i, &uc) in self.actuators.iter().zip(u) {
            f[i] += uc;
        }
        Ok(())
    }
}
