//! The augmented system on X = (x, z) (theory.md §1): `F = (f, L_1, …)` with the running
//! costs as quadratures, its exact Jacobians (dual numbers), the guards and the resets.

use super::definition::Setup;
use crate::control::Active;
use crate::cost::Term;
use crate::error::ModelError;
use crate::integrate::hybrid::GuardRate;
use crate::integrate::trajectory::Ctx;
use crate::model::scratch::with_scratch;
use crate::model::{jacobian_of, jacobian_once, HybridSystem, Scalar, ScalarFn, StateMap};
use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;

/// `F = (f, L)` and its Jacobians at one point; the control part stays in `u` form with
/// the active basis, so that the adjoint's work is O(active coefficients).
#[derive(Debug, Clone)]
pub struct FlowJac {
    pub f: DVector<f64>,
    /// n×n (columns of z are zero: nothing depends on a quadrature)
    pub fx: DMatrix<f64>,
    pub fp: DMatrix<f64>,
    pub fu: DMatrix<f64>,
    pub active: Option<Active<f64>>,
}

/// A scalar function's value and gradients with respect to t, X and θ.
#[derive(Debug, Clone)]
pub struct ScalarJac {
    pub value: f64,
    pub t: f64,
    pub x: DVector<f64>,
    pub theta: DVector<f64>,
}

/// A reset's value and Jacobians.
#[derive(Debug, Clone)]
pub struct ResetJac {
    pub mode_after: usize,
    pub x_plus: DVector<f64>,
    pub rt: DVector<f64>,
    /// R_X as an operator: the identity plus the changed rows when the system declares
    /// the reset's pattern ([`HybridSystem::reset_pattern`]), else dense.
    pub rx: StateMap,
    pub rtheta: DMatrix<f64>,
}

impl<'a, S: HybridSystem> Setup<'a, S> {
    /// The reference output of a tracking term at time t (real).
    /// Generic in t: in a dual run the time carries a derivative after an event, and
    /// y_ref(t) must pass it on.
    #[inline]
    pub(super) fn reference_output<D: Scalar>(
        &self, term: &Term, ctx: &Ctx, t: D,
    ) -> Result<D, ModelError> {
        let Term::Track {
            output, reference, ..
        } = term
        else {
            return Ok(D::zero());
        };
        // a reference made for another θ (a wrapper's wider θ) would be read out of range
        if reference.theta.len() != self.ntheta() {
            return Err(ModelError::SizeMismatch {
                what: "a tracking term's reference θ".into(),
                expected: format!("{} entries (this setup's θ)", self.ntheta()),
                found: reference.theta.len().to_string(),
            });
        }
        let tr = &reference.trajectory;
        let tre = t.re();
        let prefer_left = tre >= 0.5 * (ctx.t_lo + ctx.t_hi);
        let si = tr.segment_index(tre, prefer_left);
        let seg = &tr.segments[si];
        let mut xr = vec![D::zero(); tr.y_final.len()];
        seg.state_at_generic(t, &mut xr);
        let thr: Vec<D> = reference.theta.iter().map(|&v| D::from(v)).collect();
        let u = self.controls_at(ctx, t, &thr);
        let mut y = vec![D::zero(); self.dims.outputs.len()];
        self.sys
            .outputs(seg.mode, t, &xr[..self.nx()], &u, &thr[..self.np()], &mut y)?;
        Ok(y[*output])
    }

    /// Reference outputs y_ref(t) of the running terms (0 for terms that track nothing).
    pub(super) fn reference_outputs<D: Scalar>(
        &self, ctx: &Ctx, t: D,
    ) -> Result<Vec<D>, ModelError> {
        let mut yref = vec![D::zero(); self.running.len()];
        self.reference_outputs_into(ctx, t, &mut yref)?;
        Ok(yref)
    }

    /// [`Self::reference_outputs`] into a slice (no allocation unless a term tracks).
    #[inline]
    fn reference_outputs_into<D: Scalar>(
        &self, ctx: &Ctx, t: D, yref: &mut [D],
    ) -> Result<(), ModelError> {
        for (r, &(o, term)) in yref.iter_mut().zip(&self.running) {
            let term = &self.objectives[o].terms[term];
            // a term that tracks nothing has no reference: no call (this runs at every
            // right-hand side)
            *r = if matches!(term, Term::Track { .. }) {
                self.reference_output(term, ctx, t)?
            } else {
                D::zero()
            };
        }
        Ok(())
    }

    /// `F(t, x, u, p) = (f, L_1, …)` with u an independent argument and the tracking
    /// references given.
    pub(super) fn flow_u<D: Scalar>(
        &self, ctx: &Ctx, t: D, x: &[D], u: &[D], p: &[D], yref: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let ny = if self.running.is_empty() {
            0
        } else {
            self.dims.outputs.len()
        };
        with_scratch(ny, |y| self.flow_u_into(ctx, t, x, u, p, yref, out, y))
    }

    /// [`Self::flow_u`] with a buffer for the outputs (length ny when there are running
    /// terms; unused otherwise).
    #[allow(clippy::too_many_arguments)]
    fn flow_u_into<D: Scalar>(
        &self, ctx: &Ctx, t: D, x: &[D], u: &[D], p: &[D], yref: &[D], out: &mut [D], y: &mut [D],
    ) -> Result<(), ModelError> {
        let nx = self.nx();
        if self.running.is_empty() {
            return self.sys.flow(ctx.mode, t, x, u, p, &mut out[..nx]);
        }
        self.sys
            .flow_outputs(ctx.mode, t, x, u, p, &mut out[..nx], y)?;
        for (j, &(o, term)) in self.running.iter().enumerate() {
            let term = &self.objectives[o].terms[term];
            out[nx + j] = term.running(y, u, yref[j]);
        }
        Ok(())
    }

    /// `F(t, X, θ)`: the right-hand side of X. Its buffers (u, the references, the
    /// outputs) live on the stack for small systems, so a step does not allocate.
    pub fn rhs<D: Scalar>(
        &self, ctx: &Ctx, t: D, xx: &[D], theta: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let (nx, np, nu, nr) = (self.nx(), self.np(), self.nu(), self.running.len());
        let ny = if nr == 0 { 0 } else { self.dims.outputs.len() };
        // one scratch for u, the references and the outputs
        with_scratch(nu + nr + ny, |buf| {
            let (u, rest) = buf.split_at_mut(nu);
            let (yref, y) = rest.split_at_mut(nr);
            self.controls_into(ctx, t, theta, u);
            self.reference_outputs_into(ctx, t, yref)?;
            self.flow_u_into(ctx, t, &xx[..nx], u, &theta[..np], yref, out, y)
        })
    }

    /// `F` and its Jacobians (exact, dual numbers) at real values.
    pub fn flow_jacobian(
        &self, ctx: &Ctx, t: f64, xx: &[f64], theta: &[f64],
    ) -> Result<FlowJac, ModelError> {
        let u = self.controls_at(ctx, t, theta);
        let n = self.n();
        let nx = self.nx();
        // f_t is not used downstream, so the references enter as constants
        let yref: Vec<Dual64> = self
            .reference_outputs(ctx, t)?
            .iter()
            .map(|&v| Dual64::from(v))
            .collect();
        let jac = jacobian_of(
            n,
            t,
            &xx[..nx],
            &u,
            &theta[..self.np()],
            |t, x, u, p, out| self.flow_u(ctx, t, x, u, p, &yref, out),
        )?;
        let mut fx = DMatrix::zeros(n, n);
        fx.columns_mut(0, nx).copy_from(&jac.x);
        let active = match (&self.controls, self.control_interval(ctx)) {
            (Some(g), Some(i)) => Some(g.active(i, t)),
            _ => None,
        };
        Ok(FlowJac {
            f: jac.value,
            fx,
            fp: jac.p,
            fu: jac.u,
            active,
        })
    }

    /// Dense `∂F/∂θ = [F_p | F_u φ(t)]` (n×nθ).
    pub fn f_theta(&self, j: &FlowJac) -> DMatrix<f64> {
        let n = self.n();
        let mut m = DMatrix::zeros(n, self.ntheta());
        m.columns_mut(0, self.np()).copy_from(&j.fp);
        if let Some(act) = &j.active {
            for ch in 0..self.nu() {
                for a in 0..act.n {
                    let col = self.control_column(ch, act.idx[a]);
                    for i in 0..n {
                        m[(i, col)] += j.fu[(i, ch)] * act.w[a];
                    }
                }
            }
        }
        m
    }

    /// Chain rule from (t, x, u, p)-gradients to (t, X, θ)-gradients of a scalar function
    /// of u(t; c): `d/dt` gains `g_u u̇`, `d/dc` is `g_u φ(t)`.
    pub(super) fn lift_scalar(
        &self, ctx: &Ctx, t: f64, value: f64, gt: f64, gx: &[f64], gu: &[f64], gp: &[f64],
        theta: &[f64],
    ) -> ScalarJac {
        let n = self.n();
        let mut x = DVector::zeros(n);
        for (i, v) in gx.iter().enumerate() {
            x[i] = *v;
        }
        let mut th = DVector::zeros(self.ntheta());
        for (i, v) in gp.iter().enumerate() {
            th[i] = *v;
        }
        let mut dt = gt;
        if let (Some(g), Some(iv)) = (&self.controls, self.control_interval(ctx)) {
            let act = g.active(iv, t);
            let td = Dual64::new(t, 1.0);
            let thd: Vec<Dual64> = theta.iter().map(|&v| Dual64::from(v)).collect();
            let ud = self.controls_at(ctx, td, &thd);
            for ch in 0..self.nu() {
                dt += gu[ch] * ud[ch].eps;
                for a in 0..act.n {
                    th[self.control_column(ch, act.idx[a])] += gu[ch] * act.w[a];
                }
            }
        }
        ScalarJac {
            value,
            t: dt,
            x,
            theta: th,
        }
    }

    /// Guard k and its gradients with respect to t, X, θ.
    pub fn guard_jacobian(
        &self, ctx: &Ctx, k: usize, t: f64, xx: &[f64], theta: &[f64],
    ) -> Result<ScalarJac, ModelError> {
        /// Guard k in the mode of the event as a [`ScalarFn`].
        struct GuardFn<'s, S> {
            sys: &'s S,
            mode: usize,
            k: usize,
        }
        impl<S: HybridSystem> ScalarFn for GuardFn<'_, S> {
            fn call<D: Scalar>(
                &self, t: D, x: &[D], u: &[D], p: &[D], o: &mut [D],
            ) -> Result<(), ModelError> {
                o[0] = self.sys.guard(self.mode, self.k, t, x, u, p);
                Ok(())
            }
        }
        let u = self.controls_at(ctx, t, theta);
        let guard = GuardFn {
            sys: &*self.sys,
            mode: ctx.mode,
            k,
        };
        let j = jacobian_once(1, t, &xx[..self.nx()], &u, &theta[..self.np()], &guard)?;
        // one row each: a 1×n column-major matrix holds its row contiguously
        Ok(self.lift_scalar(
            ctx,
            t,
            j.value[0],
            j.t[0],
            j.x.as_slice(),
            j.u.as_slice(),
            j.p.as_slice(),
            theta,
        ))
    }

    /// Output `i` and its gradients with respect to t, X, θ, in mode `ctx.mode`.
    pub fn output_jacobian(
        &self, ctx: &Ctx, t: f64, xx: &[f64], theta: &[f64],
    ) -> Result<Vec<ScalarJac>, ModelError> {
        /// The outputs in the mode of `ctx` as a [`ScalarFn`].
        struct OutputsFn<'s, S> {
            sys: &'s S,
            mode: usize,
        }
        impl<S: HybridSystem> ScalarFn for OutputsFn<'_, S> {
            fn call<D: Scalar>(
                &self, t: D, x: &[D], u: &[D], p: &[D], o: &mut [D],
            ) -> Result<(), ModelError> {
                self.sys.outputs(self.mode, t, x, u, p, o)
            }
        }
        let u = self.controls_at(ctx, t, theta);
        let ny = self.dims.outputs.len();
        let outputs = OutputsFn {
            sys: &*self.sys,
            mode: ctx.mode,
        };
        let j = jacobian_once(ny, t, &xx[..self.nx()], &u, &theta[..self.np()], &outputs)?;
        Ok((0..ny)
            .map(|i| {
                self.lift_scalar(
                    ctx,
                    t,
                    j.value[i],
                    j.t[i],
                    j.x.row(i).transpose().as_slice(),
                    j.u.row(i).transpose().as_slice(),
                    j.p.row(i).transpose().as_slice(),
                    theta,
                )
            })
            .collect())
    }

    /// The reset of X: `x⁺ = R(t, x⁻, p)`, `z⁺ = z⁻`.
    pub fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, xx: &[D], theta: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let nx = self.nx();
        let (m2, mut xp) = self.sys.reset(mode, k, t, &xx[..nx], &theta[..self.np()])?;
        if xp.len() != nx {
            return Err(ModelError::SizeMismatch {
                what: format!("reset of guard {k}"),
                expected: format!("{nx} values (one per state)"),
                found: xp.len().to_string(),
            });
        }
        xp.extend_from_slice(&xx[nx..]);
        Ok((m2, xp))
    }

    /// The reset and its Jacobians `R_t, R_X, R_θ` (identity on z; no control dependence);
    /// R_X structured when the system declares the reset's pattern (docs/theory.md §3, "The
    /// jump as an operator").
    pub fn reset_jacobian(
        &self, mode: usize, k: usize, t: f64, xx: &[f64], theta: &[f64],
    ) -> Result<ResetJac, ModelError> {
        let nx = self.nx();
        let n = self.n();
        let (x, p) = (&xx[..nx], &theta[..self.np()]);
        let (m2, value, rt_x, rx, rp) = match self.sys.reset_pattern(mode, k) {
            Some(pattern) => {
                let (m2, r) =
                    crate::model::reset_jacobian_on(&*self.sys, nx, mode, k, t, x, p, &pattern)?;
                (m2, r.value, r.t, r.x, r.p)
            }
            None => {
                let (m2, j) = crate::model::reset_jacobian(&*self.sys, nx, mode, k, t, x, p)?;
                (m2, j.value, j.t, StateMap::Dense(j.x), j.p)
            }
        };
        let mut xp = DVector::zeros(n);
        let mut rt = DVector::zeros(n);
        xp.rows_mut(0, nx).copy_from(&value.rows(0, nx));
        xp.rows_mut(nx, n - nx).copy_from_slice(&xx[nx..n]);
        rt.rows_mut(0, nx).copy_from(&rt_x.rows(0, nx));
        // block copies (column-major, contiguous): the state block of a 1,024-state
        // system is 8 MB, which an element loop in row order crossed column by column
        let rx = rx.kept_beyond(n);
        let mut rth = DMatrix::zeros(n, self.ntheta());
        rth.view_mut((0, 0), (nx, self.np()))
            .copy_from(&rp.view((0, 0), (nx, self.np())));
        Ok(ResetJac {
            mode_after: m2,
            x_plus: xp,
            rt,
            rx,
            rtheta: rth,
        })
    }

    /// ġ = G_t + G_X·v at real values, with its scale |g_t| + ‖g_x‖‖v‖ (for the grazing
    /// test): dual passes along (1, v), along t, and along each x_i, on one dual point.
    pub fn guard_rate(
        &self, ctx: &Ctx, k: usize, t: f64, xx: &[f64], v: &[f64], theta: &[f64],
    ) -> GuardRate {
        let vn = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        with_dual_point(xx, theta, |xd, thd| {
            let rate = self.slope_on(ctx, k, t, xd, thd, v);
            let gt = self
                .guard_value(ctx, k, Dual64::new(t, 1.0), xd, thd)
                .eps
                .abs();
            let mut s = 0.0;
            for i in 0..self.nx() {
                xd[i].eps = 1.0;
                let g = self.guard_value(ctx, k, Dual64::from(t), xd, thd).eps;
                xd[i].eps = 0.0;
                s += g * g;
            }
            GuardRate {
                rate,
                scale: gt + s.sqrt() * vn,
            }
        })
    }

    /// ġ = G_t + G_X·v at real values: one dual pass along (1, v).
    pub fn guard_slope(
        &self, ctx: &Ctx, k: usize, t: f64, xx: &[f64], v: &[f64], theta: &[f64],
    ) -> f64 {
        with_dual_point(xx, theta, |xd, thd| self.slope_on(ctx, k, t, xd, thd, v))
    }

    /// [`Self::guard_slope`] on a loaded dual point: seeds X's derivative parts with v,
    /// evaluates along (1, v), and clears them again (so the caller's scratch stays a
    /// point with zero derivative parts).
    fn slope_on(
        &self, ctx: &Ctx, k: usize, t: f64, xd: &mut [Dual64], thd: &[Dual64], v: &[f64],
    ) -> f64 {
        for (d, &b) in xd.iter_mut().zip(v) {
            d.eps = b;
        }
        let rate = self.guard_value(ctx, k, Dual64::new(t, 1.0), xd, thd).eps;
        for d in xd.iter_mut() {
            d.eps = 0.0;
        }
        rate
    }

    /// Guard k at X (generic; no allocation for small systems).
    pub fn guard_value<D: Scalar>(&self, ctx: &Ctx, k: usize, t: D, xx: &[D], theta: &[D]) -> D {
        with_scratch(self.nu(), |u| {
            self.controls_into(ctx, t, theta, u);
            self.sys
                .guard(ctx.mode, k, t, &xx[..self.nx()], u, &theta[..self.np()])
        })
    }
}

/// Runs `f` on X and θ as dual numbers with zero derivative parts, on stack scratch for
/// small systems (the guard's slope and scale passes seed their directions into it).
fn with_dual_point<R>(
    xx: &[f64], theta: &[f64], f: impl FnOnce(&mut [Dual64], &mut [Dual64]) -> R,
) -> R {
    with_scratch(xx.len() + theta.len(), |buf: &mut [Dual64]| {
        let (xd, thd) = buf.split_at_mut(xx.len());
        for (d, &a) in xd.iter_mut().zip(xx) {
            *d = Dual64::from(a);
        }
        for (d, &a) in thd.iter_mut().zip(theta) {
            *d = Dual64::from(a);
        }
        f(xd, thd)
    })
}
