//! The jump at an event — the one formula that serves the forward sensitivity, its
//! transpose the adjoint, and the per-event reports (theory.md §3–4; seed 000 (23a)–(25),
//! seed 003 (2.5)).

use crate::error::ModelError;
use crate::integrate::hybrid::Ctx;
use crate::model::HybridSystem;
use crate::setup::{ScalarJac, Setup};
use nalgebra::{DMatrix, DVector};

/// Everything the sensitivity analysis needs at one event.
#[derive(Debug, Clone)]
pub struct Jump {
    pub mode_after: usize,
    pub x_plus: DVector<f64>,
    /// f⁻ = F_m(t_e, X⁻)
    pub f_minus: DVector<f64>,
    /// f⁺ = F_{m'}(t_e, X⁺); zero after a terminal event (the state freezes)
    pub f_plus: DVector<f64>,
    /// The guard's value and gradients G_t, G_X, G_θ at the event.
    pub guard: ScalarJac,
    /// ġ = G_t + G_X f⁻
    pub gdot: f64,
    /// Ξ = R_X − (R_X f⁻ + R_t − f⁺) G_X / ġ   (the saltation matrix)
    pub xi: DMatrix<f64>,
    /// Ξ_θ = R_θ − (R_X f⁻ + R_t − f⁺) G_θ / ġ
    pub xi_theta: DMatrix<f64>,
}

impl Jump {
    /// Builds the jump of guard `k` at `(t, X⁻)` in the mode of `ctx` (theory.md §3).
    /// A terminal event has the identity reset and f⁺ = 0, so that the jump maps the
    /// sensitivities to those of x(t_e(θ)): `S⁺ = S⁻ + f⁻ τ`.
    pub fn at<S: HybridSystem>(
        setup: &Setup<'_, S>,
        ctx: &Ctx,
        k: usize,
        t: f64,
        x_minus: &[f64],
        theta: &[f64],
        terminal: bool,
    ) -> Result<Jump, ModelError> {
        let n = setup.n();
        let nth = setup.ntheta();
        let mut f_minus = vec![0.0; n];
        setup.rhs(ctx, t, x_minus, theta, &mut f_minus)?;
        let f_minus = DVector::from_vec(f_minus);
        let guard = setup.guard_jacobian(ctx, k, t, x_minus, theta)?;
        let gdot = guard.t + guard.x.dot(&f_minus);
        let (mode_after, x_plus, rt, rx, rth) = if terminal {
            (
                ctx.mode,
                DVector::from_column_slice(x_minus),
                DVector::zeros(n),
                DMatrix::identity(n, n),
                DMatrix::zeros(n, nth),
            )
        } else {
            let r = setup.reset_jacobian(ctx.mode, k, t, x_minus, theta)?;
            (r.mode_after, r.x_plus, r.rt, r.rx, r.rtheta)
        };
        let f_plus = if terminal {
            DVector::zeros(n)
        } else {
            let c2 = Ctx {
                mode: mode_after,
                ..*ctx
            };
            let mut fp = vec![0.0; n];
            setup.rhs(&c2, t, x_plus.as_slice(), theta, &mut fp)?;
            DVector::from_vec(fp)
        };
        Ok(Self::from_parts(
            mode_after, x_plus, f_minus, f_plus, guard, gdot, &rt, &rx, &rth,
        ))
    }

    /// Assembles Ξ and Ξ_θ from the reset's Jacobians and the fields on both sides.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        mode_after: usize,
        x_plus: DVector<f64>,
        f_minus: DVector<f64>,
        f_plus: DVector<f64>,
        guard: ScalarJac,
        gdot: f64,
        rt: &DVector<f64>,
        rx: &DMatrix<f64>,
        rtheta: &DMatrix<f64>,
    ) -> Jump {
        // v = R_X f⁻ + R_t − f⁺
        let v = rx * &f_minus + rt - &f_plus;
        let xi = rx - (&v * guard.x.transpose()) / gdot;
        let xi_theta = rtheta - (&v * guard.theta.transpose()) / gdot;
        Jump {
            mode_after,
            x_plus,
            f_minus,
            f_plus,
            guard,
            gdot,
            xi,
            xi_theta,
        }
    }

    /// Event-time sensitivity τ = dt_e/dθ = −(G_X S⁻ + G_θ)/ġ (theory (23a)).
    pub fn tau(&self, s_minus: &DMatrix<f64>) -> DVector<f64> {
        -(s_minus.transpose() * &self.guard.x + &self.guard.theta) / self.gdot
    }

    /// Forward map S⁺ = Ξ S⁻ + Ξ_θ.
    pub fn forward(&self, s_minus: &DMatrix<f64>) -> DMatrix<f64> {
        &self.xi * s_minus + &self.xi_theta
    }

    /// Adjoint map going backward across the event (theory §4):
    /// λ⁻ = Ξᵀλ⁺ + c_X,  μ⁻ = μ⁺ + Ξ_θᵀλ⁺ + c_θ, with `c` from [`Jump::event_cost`].
    pub fn adjoint(
        &self,
        lambda_plus: &DVector<f64>,
        mu_plus: &DVector<f64>,
        c: Option<&(DVector<f64>, DVector<f64>)>,
    ) -> (DVector<f64>, DVector<f64>) {
        let mut l = self.xi.transpose() * lambda_plus;
        let mut m = mu_plus + self.xi_theta.transpose() * lambda_plus;
        if let Some((cx, ct)) = c {
            l += cx;
            m += ct;
        }
        (l, m)
    }

    /// The adjoint contributions of an event cost E(t_e, X⁻, θ) (theory §4):
    /// c_X = E_Xᵀ − (E_t + E_X f⁻) G_Xᵀ/ġ,  c_θ = E_θᵀ − (E_t + E_X f⁻) G_θᵀ/ġ.
    pub fn event_cost(&self, e: &ScalarJac) -> (DVector<f64>, DVector<f64>) {
        let s = (e.t + e.x.dot(&self.f_minus)) / self.gdot;
        (&e.x - &self.guard.x * s, &e.theta - &self.guard.theta * s)
    }

    /// The total derivative of an event cost in forward mode:
    /// dE/dθ = E_t τ + E_X (S⁻ + f⁻ τ) + E_θ.
    pub fn event_cost_forward(&self, e: &ScalarJac, s_minus: &DMatrix<f64>) -> DVector<f64> {
        let tau = self.tau(s_minus);
        let ex_s = s_minus.transpose() * &e.x;
        &tau * (e.t + e.x.dot(&self.f_minus)) + ex_s + &e.theta
    }
}
