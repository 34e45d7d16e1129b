//! The jump at an event — the one formula that serves the forward sensitivity, its
//! transpose the adjoint, and the per-event reports (theory.md §3–4; seed 000 (23a)–(25),
//! seed 003 (2.5)).

use super::saltation::Saltation;
use crate::error::{Error, ModelError};
use crate::integrate::trajectory::Ctx;
use crate::integrate::Trajectory;
use crate::model::{HybridSystem, StateMap};
use crate::setup::located;
use crate::setup::{ScalarJac, Setup};
use nalgebra::{DMatrix, DVector};

/// Where an event happens: the context before it, the guard, the instant and X⁻.
#[derive(Clone, Copy)]
struct EventPoint<'a> {
    ctx: &'a Ctx,
    k: usize,
    t: f64,
    x_minus: &'a [f64],
    terminal: bool,
}

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
    /// Ξ = R_X − (R_X f⁻ + R_t − f⁺) G_X / ġ   (the saltation matrix, as an operator:
    /// identity plus the reset's rows plus rank one when the reset's pattern is known)
    pub xi: Saltation,
    /// Ξ_θ = R_θ − (R_X f⁻ + R_t − f⁺) G_θ / ġ
    pub xi_theta: DMatrix<f64>,
}

impl Jump {
    /// Builds the jump of guard `k` at `(t, X⁻)` in the mode of `ctx` (theory.md §3),
    /// evaluating f⁻ and f⁺. A terminal event has the identity reset and f⁺ = 0, so that
    /// the jump maps the sensitivities to those of x(t_e(θ)): `S⁺ = S⁻ + f⁻ τ`.
    pub fn at<S: HybridSystem>(
        setup: &Setup<'_, S>, ctx: &Ctx, k: usize, t: f64, x_minus: &[f64], theta: &[f64],
        terminal: bool,
    ) -> Result<Jump, ModelError> {
        let mut f_minus = vec![0.0; setup.n()];
        setup.rhs(ctx, t, x_minus, theta, &mut f_minus)?;
        let at = EventPoint {
            ctx,
            k,
            t,
            x_minus,
            terminal,
        };
        Self::with_slopes(setup, &at, theta, DVector::from_vec(f_minus), None)
    }

    /// The jump of event `i` of a trajectory's tape, from what the simulation recorded:
    /// the segment's context, X⁻, and the slopes f⁻ and f⁺ (the first n components of
    /// each, so a tape of (X, S) serves too). No right-hand side is evaluated again.
    pub fn from_record<S: HybridSystem>(
        setup: &Setup<'_, S>, traj: &Trajectory, i: usize, theta: &[f64],
    ) -> Result<Jump, ModelError> {
        let n = setup.n();
        let e = &traj.events[i];
        let ctx = traj.event_ctx(i);
        let at = EventPoint {
            ctx: &ctx,
            k: e.guard,
            t: e.t,
            x_minus: &e.before.y[..n],
            terminal: e.terminal,
        };
        let f_minus = DVector::from_column_slice(&e.before.f[..n]);
        let f_plus = DVector::from_column_slice(&e.after.f[..n]);
        Self::with_slopes(setup, &at, theta, f_minus, Some(f_plus))
    }

    /// Every event's jump on a trajectory's tape, built once and shared by every consumer
    /// (the τ report, the objectives' seeds, the backward pass).
    pub fn tape<S: HybridSystem>(
        setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
    ) -> Result<Vec<Jump>, Error> {
        (0..traj.events.len())
            .map(|i| {
                Jump::from_record(setup, traj, i, theta).map_err(located(
                    setup,
                    traj.events[i].t,
                    traj.events[i].mode_before(),
                ))
            })
            .collect()
    }

    /// The guard's and reset's Jacobians at the event, combined with the slopes; f⁺ is
    /// evaluated at X⁺ when not given.
    fn with_slopes<S: HybridSystem>(
        setup: &Setup<'_, S>, at: &EventPoint<'_>, theta: &[f64], f_minus: DVector<f64>,
        f_plus: Option<DVector<f64>>,
    ) -> Result<Jump, ModelError> {
        let (n, nth) = (setup.n(), setup.ntheta());
        let EventPoint {
            ctx,
            k,
            t,
            x_minus,
            terminal,
        } = *at;
        let guard = setup.guard_jacobian(ctx, k, t, x_minus, theta)?;
        let gdot = guard.t + guard.x.dot(&f_minus);
        let (mode_after, x_plus, rt, rx, rth) = if terminal {
            (
                ctx.mode,
                DVector::from_column_slice(x_minus),
                DVector::zeros(n),
                // structured for a system that declares its resets' patterns; a system
                // without keeps the dense path throughout (its results bit for bit)
                match setup.sys().reset_pattern(ctx.mode, k) {
                    Some(_) => StateMap::identity(n),
                    None => StateMap::Dense(DMatrix::identity(n, n)),
                },
                DMatrix::zeros(n, nth),
            )
        } else {
            let r = setup.reset_jacobian(ctx.mode, k, t, x_minus, theta)?;
            (r.mode_after, r.x_plus, r.rt, r.rx, r.rtheta)
        };
        let f_plus = match f_plus {
            _ if terminal => DVector::zeros(n),
            Some(f) => f,
            None => {
                let c2 = Ctx {
                    mode: mode_after,
                    ..*ctx
                };
                let mut fp = vec![0.0; n];
                setup.rhs(&c2, t, x_plus.as_slice(), theta, &mut fp)?;
                DVector::from_vec(fp)
            }
        };
        Ok(Self::from_parts(
            mode_after, x_plus, f_minus, f_plus, guard, gdot, &rt, rx, &rth,
        ))
    }

    /// Assembles Ξ and Ξ_θ from the reset's Jacobians and the fields on both sides:
    /// `v = R_X f⁻ + R_t − f⁺`, `Ξ = R_X − v G_Xᵀ/ġ` ([`Saltation`]: structured when R_X
    /// is), `Ξ_θ = R_θ − v G_θᵀ/ġ` (theory.md §3).
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        mode_after: usize, x_plus: DVector<f64>, f_minus: DVector<f64>, f_plus: DVector<f64>,
        guard: ScalarJac, gdot: f64, rt: &DVector<f64>, rx: StateMap, rtheta: &DMatrix<f64>,
    ) -> Jump {
        // v = R_X f⁻ + R_t − f⁺
        let v = rx.mul_vec(&f_minus) + rt - &f_plus;
        // R_θ − v G_θᵀ/ġ entry by entry (no outer-product temporaries)
        let xi_theta = DMatrix::from_fn(rtheta.nrows(), rtheta.ncols(), |i, j| {
            rtheta[(i, j)] - v[i] * guard.theta[j] / gdot
        });
        let xi = Saltation::new(rx, v, &guard.x, gdot);
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

    /// Drops Ξ and Ξ_θ (what a consumer that has mapped the sensitivities keeps: the
    /// guard, f⁻ and ġ serve τ and the event costs' seeds).
    pub fn forget_maps(&mut self) {
        self.xi = Saltation::empty();
        self.xi_theta = DMatrix::zeros(0, 0);
    }

    /// Event-time sensitivity τ = dt_e/dθ = −(G_X S⁻ + G_θ)/ġ (theory (23a)).
    pub fn tau(&self, s_minus: &DMatrix<f64>) -> DVector<f64> {
        -(s_minus.transpose() * &self.guard.x + &self.guard.theta) / self.gdot
    }

    /// Forward map S⁺ = Ξ S⁻ + Ξ_θ.
    pub fn forward(&self, s_minus: &DMatrix<f64>) -> DMatrix<f64> {
        self.xi.mul(s_minus) + &self.xi_theta
    }

    /// Adjoint map going backward across the event (theory §4):
    /// λ⁻ = Ξᵀλ⁺ + c_X,  μ⁻ = μ⁺ + Ξ_θᵀλ⁺ + c_θ, with `c` from [`Jump::event_cost`].
    pub fn adjoint(
        &self, lambda_plus: &DVector<f64>, mu_plus: &DVector<f64>,
        c: Option<&(DVector<f64>, DVector<f64>)>,
    ) -> (DVector<f64>, DVector<f64>) {
        let mut l = DMatrix::from_column_slice(lambda_plus.len(), 1, lambda_plus.as_slice());
        let mut m = DMatrix::from_column_slice(mu_plus.len(), 1, mu_plus.as_slice());
        self.adjoint_columns(&mut l, &mut m, [c]);
        (l.column(0).into_owned(), m.column(0).into_owned())
    }

    /// [`Jump::adjoint`] for all k columns at once (the vector adjoint, Λ n×k, M nθ×k),
    /// in place: Λ⁻ = ΞᵀΛ⁺ + C_X,  M⁻ = M⁺ + Ξ_θᵀΛ⁺ + C_θ, column j's event cost from
    /// the j-th of `costs`.
    pub fn adjoint_columns<'c>(
        &self, lam: &mut DMatrix<f64>, mu: &mut DMatrix<f64>,
        costs: impl IntoIterator<Item = Option<&'c (DVector<f64>, DVector<f64>)>>,
    ) {
        *mu += self.xi_theta.tr_mul(lam);
        *lam = self.xi.tr_mul(lam);
        for (j, c) in costs.into_iter().enumerate() {
            if let Some((cx, ct)) = c {
                let mut l = lam.column_mut(j);
                l += cx;
                let mut m = mu.column_mut(j);
                m += ct;
            }
        }
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
