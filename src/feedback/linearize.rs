//! The linearization along the nominal: `A(t) = f_x`, `B(t) = f_u` at `(x_nom(t), u_nom(t))`,
//! exact through the model's dual-number Jacobians ([`Setup::flow_jacobian`]; the controls
//! u are the system's control channels, the nominal's u(t) from the setup's control grid).

use crate::error::ModelError;
use crate::integrate::trajectory::Ctx;
use crate::model::HybridSystem;
use crate::setup::Setup;
use nalgebra::DMatrix;

/// `(A, B) = (∂f_m/∂x, ∂f_m/∂u)` at `(t, x)` in the context `ctx` (nx×nx and nx×nu).
pub(crate) fn linearization<S: HybridSystem>(
    setup: &Setup<'_, S>, ctx: &Ctx, t: f64, x: &[f64], theta: &[f64],
) -> Result<(DMatrix<f64>, DMatrix<f64>), ModelError> {
    let nx = setup.nx();
    let mut xx = x[..nx].to_vec();
    xx.resize(setup.n(), 0.0);
    let j = setup.flow_jacobian(ctx, t, &xx, theta)?;
    Ok((
        j.fx.view((0, 0), (nx, nx)).into_owned(),
        j.fu.rows(0, nx).into_owned(),
    ))
}

/// The LQR gain `K = −R⁻¹ Bᵀ P` (so that `u = u_nom + K (x − x_ref)`).
pub(crate) fn gain(r_inv: &DMatrix<f64>, b: &DMatrix<f64>, p: &DMatrix<f64>) -> DMatrix<f64> {
    -(r_inv * b.transpose() * p)
}
