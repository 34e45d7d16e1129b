//! The vector–Jacobian products of the adjoint's inner loop (theory.md §4).

use super::definition::Setup;
use crate::cost::Term;
use crate::error::ModelError;
use crate::integrate::trajectory::Ctx;
use crate::model::HybridSystem;

/// Reusable buffers of [`Setup::vjp_multi`].
#[derive(Debug, Default, Clone)]
pub struct VjpScratch {
    u: Vec<f64>,
    lam_x: Vec<f64>,
    yv: Vec<f64>,
    yref: Vec<f64>,
    ubar: Vec<f64>,
}

impl<'a, S: HybridSystem> Setup<'a, S> {
    /// The vector–Jacobian products `λᵀF_x`, `λᵀF_u`, `λᵀF_p` at real values (one
    /// cotangent; see [`Self::vjp_multi`]).
    pub fn vjp(
        &self, ctx: &Ctx, t: f64, xx: &[f64], theta: &[f64], lam: &[f64], out_x: &mut [f64],
        out_u: &mut [f64], out_p: &mut [f64],
    ) -> Result<(), ModelError> {
        let mut scratch = VjpScratch::default();
        self.vjp_multi(ctx, t, xx, theta, 1, lam, out_x, out_u, out_p, &mut scratch)
    }

    /// `Λᵀ F_X`, `Λᵀ F_u`, `Λᵀ F_p` for k cotangents `λ_j` of X = (x, z) at once (the
    /// vector adjoint's inner loop, theory.md §4), with `F = (f, L_1, …)`:
    ///
    /// ```text
    /// F_Xᵀλ = f_xᵀλ_x + h_xᵀȳ,   F_uᵀλ = f_uᵀλ_x + h_uᵀȳ + Σ_z λ_z ∂L_z/∂u,
    /// F_pᵀλ = f_pᵀλ_x + h_pᵀȳ,   ȳ = Σ_z λ_z ∂L_z/∂y
    /// ```
    ///
    /// (the quadratures' own columns of F_X are zero). The running terms' partials
    /// `∂L/∂y`, `∂L/∂u` come from dual passes through the cheap term formulas; the flow
    /// and outputs go through the system's [`HybridSystem::flow_vjp`] hook once for all k.
    /// Layouts: `lam` k×n, `out_x` k×nx, `out_u` k×nu, `out_p` k×np, row-major by cotangent.
    pub fn vjp_multi(
        &self, ctx: &Ctx, t: f64, xx: &[f64], theta: &[f64], k: usize, lam: &[f64],
        out_x: &mut [f64], out_u: &mut [f64], out_p: &mut [f64], sc: &mut VjpScratch,
    ) -> Result<(), ModelError> {
        let (nx, nu, np, n) = (self.nx(), self.nu(), self.np(), self.n());
        let ny = self.dims.outputs.len();
        // the buffers keep their length between calls: zeroed in place, no libc call
        zeroed(&mut sc.u, nu);
        self.controls_into(ctx, t, theta, &mut sc.u);
        // λ_x of every cotangent, contiguous (one cotangent: its own leading part)
        if k > 1 {
            sc.lam_x.clear();
            for j in 0..k {
                sc.lam_x.extend_from_slice(&lam[j * n..j * n + nx]);
            }
        }
        zeroed(&mut sc.ubar, k * nu);
        // the tracking references of the running terms (constants here)
        sc.yref.clear();
        for &(o, term) in &self.running {
            let term = &self.objectives[o].terms[term];
            sc.yref.push(if matches!(term, Term::Track { .. }) {
                self.reference_output(term, ctx, t)?
            } else {
                0.0
            });
        }
        zeroed(&mut sc.yv, ny);
        let u = &sc.u;
        let yref = &sc.yref;
        // ȳ_j = Σ_z λ_{j,z} ∂L_z/∂y at the outputs' values, which the hook evaluates with
        // the flow (one evaluation for both)
        let ybar_at = |y: &[f64], ybar: &mut [f64]| {
            for (z, &(o, term)) in self.running.iter().enumerate() {
                let term = &self.objectives[o].terms[term];
                let add = |i: usize, d: f64| {
                    for j in 0..k {
                        ybar[j * ny + i] += lam[j * n + nx + z] * d;
                    }
                };
                term.running_partials(y, u, yref[z], add, |_, _| {});
            }
        };
        let args = crate::model::VjpArgs {
            mode: ctx.mode,
            t,
            x: &xx[..nx],
            u,
            p: &theta[..np],
            k,
            lam: if k > 1 { &sc.lam_x } else { &lam[..nx] },
            ybar: if self.running.is_empty() {
                crate::model::OutputCotangent::None
            } else {
                crate::model::OutputCotangent::At(&ybar_at)
            },
        };
        self.sys.flow_vjp(
            args,
            crate::model::VjpOut {
                gx: &mut out_x[..k * nx],
                gu: &mut out_u[..k * nu],
                gp: &mut out_p[..k * np],
                y: &mut sc.yv,
            },
        )?;
        // Σ_z λ_{j,z} ∂L_z/∂u directly (effort terms), at the outputs the hook returned
        if nu > 0 && !self.running.is_empty() {
            for (z, &(o, term)) in self.running.iter().enumerate() {
                let term = &self.objectives[o].terms[term];
                let ubar = &mut sc.ubar;
                let add = |i: usize, d: f64| {
                    for j in 0..k {
                        ubar[j * nu + i] += lam[j * n + nx + z] * d;
                    }
                };
                term.running_partials(&sc.yv, &sc.u, sc.yref[z], |_, _| {}, add);
            }
        }
        for (g, b) in out_u[..k * nu].iter_mut().zip(&sc.ubar) {
            *g += b;
        }
        Ok(())
    }
}

/// `v` as `len` zeros (resized only when the length changes).
#[inline]
fn zeroed(v: &mut Vec<f64>, len: usize) {
    if v.len() == len {
        // element by element: a libc memset call costs more than a few stores
        for x in v.iter_mut() {
            *x = 0.0;
        }
    } else {
        v.clear();
        v.resize(len, 0.0);
    }
}
