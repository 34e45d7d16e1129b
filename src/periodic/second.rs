//! Second-order sensitivities through events: the derivative of the monodromy `DP` along
//! one direction `(δx, δp)` of (start state, parameters), exactly, by running the direct
//! sensitivity pass itself in dual numbers.
//!
//! The integrated vector is `(x, S)` with `S = ∂x/∂x0` (n×n), `Ṡ = f_x S`, and at every
//! event on the way `S⁺ = Ξ S⁻`, `Ξ = R_x − (R_x f⁻ + R_t − f⁺) g_x / ġ` (theory.md §3);
//! at the return, `DP = Ξ S⁻ + f⁺ τ`, `τ = −g_x S⁻ / ġ` (see [`super::map`]). Everything
//! is written over [`Dual64`] with the start `x0 + ε δx` and parameters `p + ε δp`; the
//! Jacobians `f_x`, `g_x`, `R_x` of a dual-valued point come from nested duals
//! (`Dual<Dual64>`: the outer derivative is in `x`, the inner one in `ε`). The simulator
//! carries `ε` through the event times (one Newton correction on a true step, exact to
//! first order), so the `ε` part of the result is the exact derivative `d(DP)` of the
//! discretised pass; its real part is `DP` again (a check against the `f64` pass).
//! The dual pass runs the explicit method (the implicit one would need the Newton matrix
//! in nested duals). It runs the system with the section's guard
//! ([`WithSectionGuard`]), so a hyperplane section's crossings are events with `Ξ = I`.

use super::map::MapOptions;
use super::section::Section;
use super::section_guard::WithSectionGuard;
use crate::error::Error;
use crate::error::ModelError;
use crate::integrate::hybrid::{simulate_hybrid, GuardRate, HybridRhs};
use crate::integrate::trajectory::Ctx;
use crate::integrate::{Method, NewtonJacobian};
use crate::model::{Dims, HybridSystem};
use crate::periodic_error::PeriodicError;
use nalgebra::DMatrix;
use num_dual::{Dual, Dual64};

/// A dual number whose parts are [`Dual64`]: `x` derivatives outside, `ε` inside.
pub type Nested = Dual<Dual64>;

fn lift(v: &[Dual64]) -> Vec<Nested> {
    v.iter().map(|&a| Nested::from_re(a)).collect()
}

/// The variational system in dual numbers.
struct Variational<'a, S: HybridSystem> {
    sys: &'a S,
    p: Vec<Dual64>,
    p_re: Vec<f64>,
    n: usize,
    /// The augmented system's names and guard table.
    dims: Dims,
}

/// Value, Jacobian in x and derivative in t of a vector function at a dual point, by
/// nested duals: n + 1 passes.
fn jac_x_t<F>(
    m: usize, t: Dual64, x: &[Dual64], f: F,
) -> Result<(Vec<Dual64>, Vec<Vec<Dual64>>, Vec<Dual64>), ModelError>
where
    F: Fn(Nested, &[Nested], &mut [Nested]) -> Result<(), ModelError>,
{
    let n = x.len();
    let mut out = vec![Nested::from_re(Dual64::from(0.0)); m];
    let mut jac = vec![vec![Dual64::from(0.0); n]; m];
    let mut value = vec![Dual64::from(0.0); m];
    for j in 0..n {
        let mut xd = lift(x);
        xd[j].eps = Dual64::from(1.0);
        f(Nested::from_re(t), &xd, &mut out)?;
        for i in 0..m {
            jac[i][j] = out[i].eps;
            value[i] = out[i].re;
        }
    }
    f(Nested::new(t, Dual64::from(1.0)), &lift(x), &mut out)?;
    let dt: Vec<Dual64> = out.iter().map(|o| o.eps).collect();
    if n == 0 {
        value = out.iter().map(|o| o.re).collect();
    }
    Ok((value, jac, dt))
}

/// The jump at an event in dual numbers: next mode, `x⁺`, `Ξ`, `f⁺`, and `g_x/ġ`.
struct DualJump {
    mode_after: usize,
    x_plus: Vec<Dual64>,
    xi: Vec<Vec<Dual64>>,
    f_plus: Vec<Dual64>,
    gx_over_gdot: Vec<Dual64>,
}

impl<S: HybridSystem> Variational<'_, S> {
    fn flow(&self, mode: usize, t: Dual64, x: &[Dual64]) -> Result<Vec<Dual64>, ModelError> {
        let mut dx = vec![Dual64::from(0.0); self.n];
        self.sys.flow(mode, t, x, &[], &self.p, &mut dx)?;
        Ok(dx)
    }

    /// theory.md §3 with every factor in dual numbers.
    fn jump(&self, mode: usize, k: usize, t: Dual64, x: &[Dual64]) -> Result<DualJump, ModelError> {
        let n = self.n;
        let pn = lift(&self.p);
        let f_minus = self.flow(mode, t, x)?;
        let (_, gx, gt) = jac_x_t(1, t, x, |t, x, out| {
            out[0] = self.sys.guard(mode, k, t, x, &[], &pn);
            Ok(())
        })?;
        let gdot = gt[0] + (0..n).map(|i| gx[0][i] * f_minus[i]).sum::<Dual64>();
        let xr: Vec<f64> = x.iter().map(|v| v.re).collect();
        let (mode_after, _) = self.sys.reset(mode, k, t.re, &xr, &self.p_re)?;
        let (x_plus, rx, rt) = jac_x_t(n, t, x, |t, x, out| {
            let (_, xp) = self.sys.reset(mode, k, t, x, &pn)?;
            out.copy_from_slice(&xp);
            Ok(())
        })?;
        let f_plus = self.flow(mode_after, t, &x_plus)?;
        let v: Vec<Dual64> = (0..n)
            .map(|i| (0..n).map(|j| rx[i][j] * f_minus[j]).sum::<Dual64>() + rt[i] - f_plus[i])
            .collect();
        let gx_over_gdot: Vec<Dual64> = gx[0].iter().map(|&g| g / gdot).collect();
        let xi = (0..n)
            .map(|i| (0..n).map(|j| rx[i][j] - v[i] * gx_over_gdot[j]).collect())
            .collect();
        Ok(DualJump {
            mode_after,
            x_plus,
            xi,
            f_plus,
            gx_over_gdot,
        })
    }
}

/// `Ξ S` for S stored column-major after x in `y`.
fn apply(xi: &[Vec<Dual64>], y: &[Dual64], n: usize) -> Vec<Dual64> {
    let mut out = vec![Dual64::from(0.0); n * n];
    for c in 0..n {
        for i in 0..n {
            out[c * n + i] = (0..n).map(|j| xi[i][j] * y[n + c * n + j]).sum();
        }
    }
    out
}

impl<S: HybridSystem> HybridRhs<Dual64> for Variational<'_, S> {
    fn dim(&self) -> usize {
        self.n * (1 + self.n)
    }
    fn dims(&self) -> &Dims {
        &self.dims
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        self.sys.guard_active(mode, k)
    }
    /// `ẋ = f`, `Ṡ e_c = f_x S e_c` (a directional derivative per column, nested duals).
    fn rhs(&self, ctx: &Ctx, t: Dual64, y: &[Dual64], dy: &mut [Dual64]) -> Result<(), ModelError> {
        let n = self.n;
        let pn = lift(&self.p);
        let f = self.flow(ctx.mode, t, &y[..n])?;
        dy[..n].copy_from_slice(&f);
        let mut out = vec![Nested::from_re(Dual64::from(0.0)); n];
        for c in 0..n {
            let xd: Vec<Nested> = (0..n)
                .map(|i| Nested::new(y[i], y[n + c * n + i]))
                .collect();
            self.sys
                .flow(ctx.mode, Nested::from_re(t), &xd, &[], &pn, &mut out)?;
            for i in 0..n {
                dy[n + c * n + i] = out[i].eps;
            }
        }
        Ok(())
    }
    fn newton_jacobian(
        &self, _ctx: &Ctx, _t: f64, _y: &[f64],
    ) -> Result<NewtonJacobian, ModelError> {
        Err(ModelError::Unsupported {
            what: "the second-order pass runs the explicit method only".into(),
        })
    }
    fn guard(&self, ctx: &Ctx, k: usize, t: Dual64, y: &[Dual64]) -> Dual64 {
        self.sys.guard(ctx.mode, k, t, &y[..self.n], &[], &self.p)
    }
    fn guard_rate(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> GuardRate {
        let n = self.n;
        let g = crate::model::guard_jacobian(self.sys, ctx.mode, k, t, &y[..n], &[], &self.p_re);
        match g {
            Ok(j) => {
                let gx = j.x.row(0);
                let gv: f64 = (0..n).map(|i| gx[i] * v[i]).sum();
                let vn = v[..n].iter().map(|a| a * a).sum::<f64>().sqrt();
                GuardRate {
                    rate: j.t[0] + gv,
                    scale: j.t[0].abs() + gx.norm() * vn,
                }
            }
            Err(_) => GuardRate {
                rate: f64::NAN,
                scale: 1.0,
            },
        }
    }
    fn event(
        &self, ctx: &Ctx, k: usize, t: Dual64, y: &[Dual64], terminal: bool,
    ) -> Result<(usize, Vec<Dual64>), ModelError> {
        if terminal {
            return Ok((ctx.mode, y.to_vec()));
        }
        let n = self.n;
        let j = self.jump(ctx.mode, k, t, &y[..n])?;
        let mut out = j.x_plus.clone();
        out.extend(apply(&j.xi, y, n));
        Ok((j.mode_after, out))
    }
}

/// `DP`, its derivative along `(δx, δp)`, and `P`'s derivative along it (which the
/// implicit-function theorem predicts: `δx` when `δx = dx*/dp · δp` at a fixed point).
#[derive(Debug, Clone)]
pub struct MonodromyDerivative {
    pub monodromy: DMatrix<f64>,
    pub d_monodromy: DMatrix<f64>,
    pub d_return: Vec<f64>,
    pub d_period: f64,
}

/// Runs the dual pass (module docs).
pub fn monodromy_derivative<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64], dp: &[f64], dx: &[f64],
) -> Result<MonodromyDerivative, Error> {
    let n = x.len();
    let aug = WithSectionGuard::new(sys, sec);
    let k = aug.section_guard;
    let pd: Vec<Dual64> = p.iter().zip(dp).map(|(&a, &b)| Dual64::new(a, b)).collect();
    let var = Variational {
        sys: &aug,
        p: pd,
        p_re: p.to_vec(),
        n,
        dims: aug.dims(),
    };
    let mut y0: Vec<Dual64> = x.iter().zip(dx).map(|(&a, &b)| Dual64::new(a, b)).collect();
    for c in 0..n {
        for i in 0..n {
            y0.push(Dual64::from(if i == c { 1.0 } else { 0.0 }));
        }
    }
    let mut solver = opts.solver;
    solver.method = Method::Dopri5;
    let mut events = opts.events;
    events.stop_after = Some((k, sec.count));
    let traj = simulate_hybrid(&var, y0, sec.mode, &[0.0, opts.t_max], &solver, &events)?;
    let e = match traj.events.last() {
        Some(e) if e.terminal && e.guard == k => e,
        _ => {
            return Err(PeriodicError::NoReturn {
                guard: var.dims.guard_name(k),
                fired: traj.events.iter().filter(|e| e.guard == k).count(),
                count: sec.count,
                t_max: opts.t_max,
                state: x.to_vec(),
            }
            .into())
        }
    };
    let j = var
        .jump(e.mode_before(), k, e.t, &e.before.y[..n])
        .map_err(|source| crate::error::Error::Model {
            t: e.t.re,
            mode: var.dims.mode_name(e.mode_before()),
            source,
        })?;
    // DP = Ξ S⁻ + f⁺ τ, τ = −g_x S⁻/ġ
    let xs = apply(&j.xi, &e.before.y, n);
    let mut m = DMatrix::zeros(n, n);
    let mut dm = DMatrix::zeros(n, n);
    for c in 0..n {
        let tau: Dual64 = -(0..n)
            .map(|i| j.gx_over_gdot[i] * e.before.y[n + c * n + i])
            .sum::<Dual64>();
        for i in 0..n {
            let v = xs[c * n + i] + j.f_plus[i] * tau;
            m[(i, c)] = v.re;
            dm[(i, c)] = v.eps;
        }
    }
    Ok(MonodromyDerivative {
        monodromy: m,
        d_monodromy: dm,
        d_return: j.x_plus.iter().map(|v| v.eps).collect(),
        d_period: e.t.eps,
    })
}
