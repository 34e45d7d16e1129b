//! A switched linear system: a mode switch without reset (discontinuous right-hand side,
//! identity reset), the classical saltation case (theory.md §3, seed 003 (2.5)).
//! State (x1, x2); mode `left` (x1 < 0): ẋ = A_L x + b; mode `right`: ẋ = A_R x + b,
//! with A = [[0, 1], [−k, −d]] and a different stiffness k and damping d in each mode
//! (a bilinear spring), and a constant force b = (0, f). Guards: `to_right` (x1 rising
//! through 0 in `left`), `to_left` (x1 falling through 0 in `right`).
//! Parameters: (k_left, k_right, d_left, d_right, f, x1_0, x2_0).

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, NoSettings};
use crate::error::ModelError;
use crate::model::{Dims, Direction, GuardInfo, HybridSystem, Scalar};

#[derive(Debug, Clone, Copy, Default)]
pub struct SwitchedLinear;

impl SwitchedLinear {
    pub fn default_params() -> Vec<f64> {
        vec![4.0, 25.0, 0.2, 0.5, 0.3, -1.0, 0.5]
    }
}

impl HybridSystem for SwitchedLinear {
    fn dims(&self) -> Dims {
        let params = [
            "k_left", "k_right", "d_left", "d_right", "f", "x1_0", "x2_0",
        ];
        Dims::new(["x1", "x2"], params)
            .param_defaults(Self::default_params())
            .modes(["left", "right"])
            .guards([
                GuardInfo::new("to_right", Direction::Rising),
                GuardInfo::new("to_left", Direction::Falling),
            ])
            .outputs(["x1", "x2"])
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        mode == k
    }
    fn initial_mode(&self, p: &[f64]) -> usize {
        usize::from(p[5] >= 0.0)
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![p[5], p[6]])
    }
    fn flow<D: Scalar>(
        &self, m: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let (k, d) = if m == 0 { (p[0], p[2]) } else { (p[1], p[3]) };
        dx[0] = x[1];
        dx[1] = -k * x[0] - d * x[1] + p[4];
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0]
    }
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, _t: D, x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((1 - m, x.to_vec()))
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = x[0];
        out[1] = x[1];
        Ok(())
    }
}

impl BuiltinSystem for SwitchedLinear {
    type Settings = NoSettings;
    fn build(_: &NoSettings) -> Result<Self, BuildError> {
        Ok(SwitchedLinear)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(SwitchedLinear::default_params())
    }
}
