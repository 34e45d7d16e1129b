//! The Riccati equation on one smooth segment of the nominal, integrated backward with the
//! project's adaptive integrators (docs/theory.md §10; Anderson &
//! Moore, *Optimal Control: Linear Quadratic Methods*, 1990, §2.3):
//!
//! ```text
//! −Ṗ = AᵀP + PA − P B R⁻¹ Bᵀ P + Q,      A = f_x, B = f_u along (x_nom(t), u_nom(t)),
//! ```
//!
//! with `vec(P)` (column-major nx²) as the integrated vector, so that the integrator's
//! error test holds every entry of P to the setup's tolerances.

use super::linearize::linearization;
use super::weights::Weights;
use crate::error::ModelError;
use crate::integrate::trajectory::Ctx;
use crate::integrate::{NewtonJacobian, OdeRhs, Segment};
use crate::model::HybridSystem;
use crate::setup::Setup;
use nalgebra::DMatrix;

/// The backward Riccati system on one segment (the nominal state from its dense output).
pub(crate) struct RiccatiRhs<'r, 's, 'a, S: HybridSystem> {
    pub setup: &'s Setup<'a, S>,
    pub seg: &'r Segment<f64>,
    pub ctx: Ctx,
    pub theta: &'r [f64],
    pub w: &'r Weights,
}

impl<S: HybridSystem> RiccatiRhs<'_, '_, '_, S> {
    /// `(A, B)` at time t on the segment.
    fn ab(&self, t: f64) -> Result<(DMatrix<f64>, DMatrix<f64>), ModelError> {
        let mut x = vec![0.0; self.setup.n()];
        self.seg.state_at(t, &mut x);
        linearization(self.setup, &self.ctx, t, &x, self.theta)
    }

    /// `Ṗ = −(AᵀP + PA − P S P + Q)` with `S = B R⁻¹ Bᵀ`.
    pub fn p_dot(&self, t: f64, p: &DMatrix<f64>) -> Result<DMatrix<f64>, ModelError> {
        let (a, b) = self.ab(t)?;
        let s = &b * self.w.r_inv() * b.transpose();
        let ap = a.tr_mul(p);
        Ok(-(&ap + ap.transpose() - p * s * p + &self.w.q))
    }
}

impl<S: HybridSystem> OdeRhs<f64> for RiccatiRhs<'_, '_, '_, S> {
    fn dim(&self) -> usize {
        self.w.nx() * self.w.nx()
    }
    fn eval(&self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        let n = self.w.nx();
        let p = DMatrix::from_column_slice(n, n, y);
        dy.copy_from_slice(self.p_dot(t, &p)?.as_slice());
        Ok(())
    }
    /// `∂Ṗ/∂P · dP = −(Mᵀ dP + dP M)`, `M = A − S P`: in vec form
    /// `−(I ⊗ Mᵀ + Mᵀ ⊗ I)` (the implicit methods' Newton matrix).
    fn newton_jacobian(&self, t: f64, y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        let n = self.w.nx();
        let p = DMatrix::from_column_slice(n, n, y);
        let (a, b) = self.ab(t)?;
        let m = a - &b * self.w.r_inv() * b.transpose() * p;
        let id = DMatrix::<f64>::identity(n, n);
        let j = -(id.kronecker(&m.transpose()) + m.transpose().kronecker(&id));
        Ok(NewtonJacobian::dense(j, 1, 0))
    }
}
