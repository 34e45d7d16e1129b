//! The forced linear decay `y' = −y + sin t`, with `y(0) = 1` and the closed form
//! `y(t) = 1.5 e^{−t} + (sin t − cos t)/2` (the homogeneous solution plus the particular
//! one `(sin t − cos t)/2`): the smooth reference problem of the integrators' convergence
//! orders (DOPRI5, SDIRK3, Radau IIA, the BDFs). It lives beside the integrators, whose
//! own unit tests use it; tests, examples and benchmarks reach it as
//! `hybridopt::testing::Forced`.

use super::{NewtonJacobian, OdeRhs};
use crate::error::ModelError;
use nalgebra::DMatrix;

/// `y' = −y + sin t` (one state), with its exact Jacobian `∂f/∂y = −1`.
#[derive(Debug, Clone, Copy)]
pub struct Forced;

impl Forced {
    /// `y(t) = 1.5 e^{−t} + (sin t − cos t)/2`, the solution from `y(0) = 1`.
    pub fn exact(t: f64) -> Vec<f64> {
        vec![1.5 * (-t).exp() + 0.5 * (t.sin() - t.cos())]
    }
}

impl OdeRhs<f64> for Forced {
    fn dim(&self) -> usize {
        1
    }
    fn eval(&self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        dy[0] = -y[0] + t.sin();
        Ok(())
    }
    fn newton_jacobian(&self, _t: f64, _y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        Ok(NewtonJacobian::dense(
            DMatrix::from_element(1, 1, -1.0),
            1,
            0,
        ))
    }
}
