//! A system together with its horizon, controls and objectives: everything a simulation
//! needs besides the parameter values θ = (p, c) (physical parameters, then control
//! coefficients). The integrated state is `X = (x, z)`: the system's state and one
//! quadrature `ż = L` per running cost term (theory.md §1).

use crate::control::{Active, ControlGrid};
use crate::cost::{Objective, Term};
use crate::error::ModelError;
use crate::integrate::hybrid::{Ctx, GuardRate, HybridRhs};
use crate::integrate::{Checkpointing, EventOptions, NewtonJacobian, SolverOptions};
use crate::model::{jacobian_of, Dims, Direction, HybridSystem, Scalar};
use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;
use std::sync::Arc;

/// Reusable buffers of [`Setup::vjp_multi`].
#[derive(Debug, Default, Clone)]
pub struct VjpScratch {
    u: Vec<f64>,
    lam_x: Vec<f64>,
    yv: Vec<f64>,
    yref: Vec<f64>,
    ubar: Vec<f64>,
    ud: Vec<Dual64>,
    y: Vec<Dual64>,
}

/// How a setup holds its system: borrowed for a scoped run, or shared through an `Arc`
/// so that the setup owns what it needs and can live inside long-lived objects (a Python
/// handle, a job of a thread pool) as a `Setup<'static, S>`.
pub enum SystemRef<'a, S> {
    Borrowed(&'a S),
    Shared(Arc<S>),
}

impl<S> Clone for SystemRef<'_, S> {
    fn clone(&self) -> Self {
        match self {
            SystemRef::Borrowed(s) => SystemRef::Borrowed(s),
            SystemRef::Shared(s) => SystemRef::Shared(Arc::clone(s)),
        }
    }
}

impl<S> std::ops::Deref for SystemRef<'_, S> {
    type Target = S;
    fn deref(&self) -> &S {
        match self {
            SystemRef::Borrowed(s) => s,
            SystemRef::Shared(s) => s,
        }
    }
}

/// System + horizon + controls + objectives + solver settings.
#[derive(Clone)]
pub struct Setup<'a, S: HybridSystem> {
    sys: SystemRef<'a, S>,
    pub dims: Dims,
    pub t0: f64,
    pub t_end: f64,
    pub controls: Option<ControlGrid>,
    pub objectives: Vec<Objective>,
    /// Fixed times where the integration restarts (besides control nodes and the event
    /// times of tracking references, which are added automatically).
    pub extra_breakpoints: Vec<f64>,
    pub solver: SolverOptions,
    pub events: EventOptions,
    /// What the adjoint's forward run keeps of its dense output.
    pub checkpointing: Checkpointing,
    /// (objective, term) of each quadrature state z_j.
    running: Vec<(usize, usize)>,
}

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
    pub rx: DMatrix<f64>,
    pub rtheta: DMatrix<f64>,
}

impl<S: HybridSystem> Setup<'static, S> {
    /// A setup that shares ownership of its system, so that it borrows nothing and can
    /// be kept in long-lived objects or sent to other threads.
    pub fn shared(
        sys: Arc<S>,
        t0: f64,
        t_end: f64,
        controls: Option<ControlGrid>,
        objectives: Vec<Objective>,
    ) -> Self {
        Self::with_system(SystemRef::Shared(sys), t0, t_end, controls, objectives)
    }
}

impl<'a, S: HybridSystem> Setup<'a, S> {
    /// A setup that borrows its system.
    pub fn new(
        sys: &'a S,
        t0: f64,
        t_end: f64,
        controls: Option<ControlGrid>,
        objectives: Vec<Objective>,
    ) -> Self {
        Self::with_system(SystemRef::Borrowed(sys), t0, t_end, controls, objectives)
    }

    fn with_system(
        sys: SystemRef<'a, S>,
        t0: f64,
        t_end: f64,
        controls: Option<ControlGrid>,
        objectives: Vec<Objective>,
    ) -> Self {
        let dims = Dims::of(&*sys);
        let mut running = Vec::new();
        for (i, o) in objectives.iter().enumerate() {
            for (j, t) in o.terms.iter().enumerate() {
                if t.is_running() {
                    running.push((i, j));
                }
            }
        }
        Setup {
            sys,
            dims,
            t0,
            t_end,
            controls,
            objectives,
            extra_breakpoints: Vec::new(),
            solver: SolverOptions::default(),
            events: EventOptions::default(),
            checkpointing: Checkpointing::default(),
            running,
        }
    }

    /// A copy that carries only objective `i` (so that an optimizer that needs one cost
    /// does not pay for the others' quadratures and adjoint passes).
    pub fn only_objective(&self, i: usize) -> Setup<'a, S> {
        let mut s = Setup::with_system(
            self.sys.clone(),
            self.t0,
            self.t_end,
            self.controls.clone(),
            vec![self.objectives[i].clone()],
        );
        s.extra_breakpoints = self.extra_breakpoints.clone();
        s.solver = self.solver;
        s.events = self.events;
        s.checkpointing = self.checkpointing;
        s
    }

    /// The system.
    pub fn sys(&self) -> &S {
        &self.sys
    }

    pub fn nx(&self) -> usize {
        self.dims.nx()
    }
    pub fn nz(&self) -> usize {
        self.running.len()
    }
    /// Length of X = (x, z).
    pub fn n(&self) -> usize {
        self.nx() + self.nz()
    }
    pub fn np(&self) -> usize {
        self.dims.np()
    }
    pub fn nu(&self) -> usize {
        self.dims.nu()
    }
    /// Number of control coefficients.
    pub fn nc(&self) -> usize {
        self.controls.as_ref().map_or(0, |g| g.len())
    }
    pub fn ntheta(&self) -> usize {
        self.np() + self.nc()
    }
    /// Quadrature states (index into z) of each objective's running terms.
    pub fn running_of(&self, objective: usize) -> Vec<(usize, usize)> {
        self.running
            .iter()
            .enumerate()
            .filter(|(_, (o, _))| *o == objective)
            .map(|(z, &(_, term))| (z, term))
            .collect()
    }
    /// Names of θ: the parameters, then `control[k]` for each coefficient.
    pub fn theta_names(&self) -> Vec<String> {
        let mut v = self.dims.params.clone();
        if let Some(g) = &self.controls {
            for (j, name) in self.dims.controls.iter().enumerate() {
                for k in 0..g.n_coef() {
                    let _ = j;
                    v.push(format!("{name}[{k}]"));
                }
            }
        }
        v
    }

    /// Sorted breakpoints from t0 to t_end: control nodes, tracking references' event
    /// times, and the extra ones.
    pub fn breakpoints(&self) -> Vec<f64> {
        let mut b = vec![self.t0, self.t_end];
        if let Some(g) = &self.controls {
            b.extend(g.nodes());
        }
        b.extend(self.extra_breakpoints.iter().copied());
        for o in &self.objectives {
            for t in &o.terms {
                if let Term::Track { reference, .. } = t {
                    b.extend(reference.trajectory.events.iter().map(|e| e.t));
                }
            }
        }
        b.retain(|&t| t >= self.t0 && t <= self.t_end && t.is_finite());
        b.sort_by(|a, c| a.partial_cmp(c).unwrap());
        b.dedup_by(|a, c| (*a - *c).abs() <= 1e-13 * c.abs().max(1.0));
        b
    }

    /// The control interval a breakpoint interval lies in.
    pub fn control_interval(&self, ctx: &Ctx) -> Option<usize> {
        self.controls
            .as_ref()
            .map(|g| g.interval_of(0.5 * (ctx.t_lo + ctx.t_hi)))
    }

    /// Controls u(t) in the interval of `ctx`.
    pub fn controls_at<D: Scalar>(&self, ctx: &Ctx, t: D, theta: &[D]) -> Vec<D> {
        let mut u = vec![D::zero(); self.nu()];
        if let (Some(g), Some(i)) = (&self.controls, self.control_interval(ctx)) {
            g.values(i, t, &theta[self.np()..], &mut u);
        }
        u
    }

    /// Start mode and X0 = (x0(p), 0).
    pub fn initial<D: Scalar>(&self, theta: &[D]) -> Result<(usize, Vec<D>), ModelError> {
        let p = &theta[..self.np()];
        let mut x = self.sys.initial_state(p)?;
        if x.len() != self.nx() {
            return Err(ModelError::Other(format!(
                "initial_state returned {} values for {} states",
                x.len(),
                self.nx()
            )));
        }
        x.extend(std::iter::repeat_n(D::zero(), self.nz()));
        let pr: Vec<f64> = p.iter().map(|v| v.re()).collect();
        Ok((self.sys.initial_mode(&pr), x))
    }

    /// The reference output of a tracking term at time t (real).
    /// Generic in t: in a dual run the time carries a derivative after an event, and
    /// y_ref(t) must pass it on.
    fn reference_output<D: Scalar>(&self, term: &Term, ctx: &Ctx, t: D) -> Result<D, ModelError> {
        let Term::Track {
            output, reference, ..
        } = term
        else {
            return Ok(D::zero());
        };
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
    fn reference_outputs<D: Scalar>(&self, ctx: &Ctx, t: D) -> Result<Vec<D>, ModelError> {
        self.running
            .iter()
            .map(|&(o, term)| self.reference_output(&self.objectives[o].terms[term], ctx, t))
            .collect()
    }

    /// `F(t, x, u, p) = (f, L_1, …)` with u an independent argument and the tracking
    /// references given.
    fn flow_u<D: Scalar>(
        &self,
        ctx: &Ctx,
        t: D,
        x: &[D],
        u: &[D],
        p: &[D],
        yref: &[D],
        out: &mut [D],
    ) -> Result<(), ModelError> {
        let mut y = Vec::new();
        self.flow_u_scratch(ctx, t, x, u, p, yref, out, &mut y)
    }

    /// [`Self::flow_u`] with a reusable buffer for the outputs.
    fn flow_u_scratch<D: Scalar>(
        &self,
        ctx: &Ctx,
        t: D,
        x: &[D],
        u: &[D],
        p: &[D],
        yref: &[D],
        out: &mut [D],
        y: &mut Vec<D>,
    ) -> Result<(), ModelError> {
        let nx = self.nx();
        self.sys.flow(ctx.mode, t, x, u, p, &mut out[..nx])?;
        if self.running.is_empty() {
            return Ok(());
        }
        y.clear();
        y.resize(self.dims.outputs.len(), D::zero());
        self.sys.outputs(ctx.mode, t, x, u, p, y)?;
        for (j, &(o, term)) in self.running.iter().enumerate() {
            let term = &self.objectives[o].terms[term];
            out[nx + j] = term.running(y, u, yref[j]);
        }
        Ok(())
    }

    /// The vector–Jacobian products `λᵀF_x`, `λᵀF_u`, `λᵀF_p` at real values (one
    /// cotangent; see [`Self::vjp_multi`]).
    pub fn vjp(
        &self,
        ctx: &Ctx,
        t: f64,
        xx: &[f64],
        theta: &[f64],
        lam: &[f64],
        out_x: &mut [f64],
        out_u: &mut [f64],
        out_p: &mut [f64],
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
        &self,
        ctx: &Ctx,
        t: f64,
        xx: &[f64],
        theta: &[f64],
        k: usize,
        lam: &[f64],
        out_x: &mut [f64],
        out_u: &mut [f64],
        out_p: &mut [f64],
        sc: &mut VjpScratch,
    ) -> Result<(), ModelError> {
        let (nx, nu, np, n) = (self.nx(), self.nu(), self.np(), self.n());
        let ny = self.dims.outputs.len();
        sc.u.clear();
        sc.u.resize(nu, 0.0);
        if let (Some(g), Some(i)) = (&self.controls, self.control_interval(ctx)) {
            g.values(i, t, &theta[np..], &mut sc.u);
        }
        // λ_x of every cotangent, contiguous
        sc.lam_x.clear();
        for j in 0..k {
            sc.lam_x.extend_from_slice(&lam[j * n..j * n + nx]);
        }
        sc.ubar.clear();
        sc.ubar.resize(k * nu, 0.0);
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
        sc.yv.clear();
        sc.yv.resize(ny, 0.0);
        let u = &sc.u;
        let yref = &sc.yref;
        // ȳ_j = Σ_z λ_{j,z} ∂L_z/∂y at the outputs' values, which the hook evaluates with
        // the flow (one evaluation for both)
        let duals = std::cell::RefCell::new((&mut sc.ud, &mut sc.y));
        let ybar_at = |y: &[f64], ybar: &mut [f64]| {
            let mut guard = duals.borrow_mut();
            let (ud, yd) = &mut *guard;
            ud.clear();
            ud.extend(u.iter().map(|&v| Dual64::from(v)));
            yd.clear();
            yd.extend(y.iter().map(|&v| Dual64::from(v)));
            for (z, &(o, term)) in self.running.iter().enumerate() {
                let term = &self.objectives[o].terms[term];
                for i in 0..ny {
                    yd[i].eps = 1.0;
                    let d = term.running(yd, ud, Dual64::from(yref[z])).eps;
                    yd[i].eps = 0.0;
                    if d != 0.0 {
                        for j in 0..k {
                            ybar[j * ny + i] += lam[j * n + nx + z] * d;
                        }
                    }
                }
            }
        };
        let args = crate::model::VjpArgs {
            mode: ctx.mode,
            t,
            x: &xx[..nx],
            u,
            p: &theta[..np],
            k,
            lam: &sc.lam_x,
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
            sc.y.clear();
            sc.y.extend(sc.yv.iter().map(|&v| Dual64::from(v)));
            sc.ud.clear();
            sc.ud.extend(sc.u.iter().map(|&v| Dual64::from(v)));
            for (z, &(o, term)) in self.running.iter().enumerate() {
                let term = &self.objectives[o].terms[term];
                for i in 0..nu {
                    sc.ud[i].eps = 1.0;
                    let d = term.running(&sc.y, &sc.ud, Dual64::from(sc.yref[z])).eps;
                    sc.ud[i].eps = 0.0;
                    if d != 0.0 {
                        for j in 0..k {
                            sc.ubar[j * nu + i] += lam[j * n + nx + z] * d;
                        }
                    }
                }
            }
        }
        for (g, b) in out_u[..k * nu].iter_mut().zip(&sc.ubar) {
            *g += b;
        }
        Ok(())
    }

    /// `F(t, X, θ)`: the right-hand side of X.
    pub fn rhs<D: Scalar>(
        &self,
        ctx: &Ctx,
        t: D,
        xx: &[D],
        theta: &[D],
        out: &mut [D],
    ) -> Result<(), ModelError> {
        let u = self.controls_at(ctx, t, theta);
        let yref = self.reference_outputs(ctx, t)?;
        self.flow_u(
            ctx,
            t,
            &xx[..self.nx()],
            &u,
            &theta[..self.np()],
            &yref,
            out,
        )
    }

    /// `F` and its Jacobians (exact, dual numbers) at real values.
    pub fn flow_jacobian(
        &self,
        ctx: &Ctx,
        t: f64,
        xx: &[f64],
        theta: &[f64],
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

    /// Columns of θ touched by the control u_j through basis function a of `act`.
    pub fn control_column(&self, channel: usize, coef: usize) -> usize {
        let g = self.controls.as_ref().expect("controls");
        self.np() + channel * g.n_coef() + coef
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
    fn lift_scalar(
        &self,
        ctx: &Ctx,
        t: f64,
        value: f64,
        gt: f64,
        gx: &[f64],
        gu: &[f64],
        gp: &[f64],
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
        &self,
        ctx: &Ctx,
        k: usize,
        t: f64,
        xx: &[f64],
        theta: &[f64],
    ) -> Result<ScalarJac, ModelError> {
        let u = self.controls_at(ctx, t, theta);
        let j = jacobian_of(
            1,
            t,
            &xx[..self.nx()],
            &u,
            &theta[..self.np()],
            |t, x, u, p, o| {
                o[0] = self.sys.guard(ctx.mode, k, t, x, u, p);
                Ok(())
            },
        )?;
        Ok(self.lift_scalar(
            ctx,
            t,
            j.value[0],
            j.t[0],
            j.x.row(0).transpose().as_slice(),
            j.u.row(0).transpose().as_slice(),
            j.p.row(0).transpose().as_slice(),
            theta,
        ))
    }

    /// Output `i` and its gradients with respect to t, X, θ, in mode `ctx.mode`.
    pub fn output_jacobian(
        &self,
        ctx: &Ctx,
        t: f64,
        xx: &[f64],
        theta: &[f64],
    ) -> Result<Vec<ScalarJac>, ModelError> {
        let u = self.controls_at(ctx, t, theta);
        let ny = self.dims.outputs.len();
        let j = jacobian_of(
            ny,
            t,
            &xx[..self.nx()],
            &u,
            &theta[..self.np()],
            |t, x, u, p, o| self.sys.outputs(ctx.mode, t, x, u, p, o),
        )?;
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
        &self,
        mode: usize,
        k: usize,
        t: D,
        xx: &[D],
        theta: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let nx = self.nx();
        let (m2, mut xp) = self.sys.reset(mode, k, t, &xx[..nx], &theta[..self.np()])?;
        if xp.len() != nx {
            return Err(ModelError::Other(format!(
                "reset of guard {k} returned {} values for {nx} states",
                xp.len()
            )));
        }
        xp.extend_from_slice(&xx[nx..]);
        Ok((m2, xp))
    }

    /// The reset and its Jacobians `R_t, R_X, R_θ` (identity on z; no control dependence).
    pub fn reset_jacobian(
        &self,
        mode: usize,
        k: usize,
        t: f64,
        xx: &[f64],
        theta: &[f64],
    ) -> Result<ResetJac, ModelError> {
        let nx = self.nx();
        let n = self.n();
        let (m2, j) =
            crate::model::reset_jacobian(&*self.sys, nx, mode, k, t, &xx[..nx], &theta[..self.np()])?;
        let mut xp = DVector::zeros(n);
        let mut rt = DVector::zeros(n);
        let mut rx = DMatrix::identity(n, n);
        let mut rth = DMatrix::zeros(n, self.ntheta());
        for i in 0..nx {
            xp[i] = j.value[i];
            rt[i] = j.t[i];
            for c in 0..nx {
                rx[(i, c)] = j.x[(i, c)];
            }
            for c in 0..self.np() {
                rth[(i, c)] = j.p[(i, c)];
            }
        }
        for i in nx..n {
            xp[i] = xx[i];
        }
        Ok(ResetJac {
            mode_after: m2,
            x_plus: xp,
            rt,
            rx,
            rtheta: rth,
        })
    }

    /// The objectives' values on a finished trajectory (generic: the dual witness
    /// evaluates the same formula in dual numbers).
    pub fn objective_values<D: Scalar>(
        &self,
        traj: &crate::integrate::Trajectory<D>,
        theta: &[D],
    ) -> Result<Vec<D>, crate::error::Error> {
        let nx = self.nx();
        let ny = self.dims.outputs.len();
        let mut vals = Vec::with_capacity(self.objectives.len());
        // outputs at tf (unless a terminal event ended the run: then terminal terms are
        // evaluated at that event, x⁻, like event terms)
        let term_ev = traj.events.last().filter(|e| e.terminal);
        let (tf, yf_state, mode_f) = match term_ev {
            Some(e) => (e.t, e.y_minus.clone(), e.mode_before),
            None => (traj.t_final, traj.y_final.clone(), traj.mode_final),
        };
        let last_seg = traj.segments.last();
        let ctx_f = Ctx {
            mode: mode_f,
            t_lo: last_seg.map_or(self.t0, |s| s.t_lo),
            t_hi: last_seg.map_or(self.t_end, |s| s.t_hi),
        };
        let uf = self.controls_at(&ctx_f, tf, theta);
        let mut yf = vec![D::zero(); ny];
        self.sys
            .outputs(
                mode_f,
                tf,
                &yf_state[..nx],
                &uf,
                &theta[..self.np()],
                &mut yf,
            )
            .map_err(|e| crate::error::Error::Model {
                t: tf.re(),
                mode: self.dims.mode_name(mode_f),
                source: e,
            })?;
        for (oi, obj) in self.objectives.iter().enumerate() {
            let mut v = D::zero();
            for (z, _) in self.running_of(oi) {
                v += traj.y_final[nx + z];
            }
            for term in &obj.terms {
                v += term.parameter_value(theta);
                if term.is_terminal() {
                    v += term.terminal(&yf);
                }
                if let Some((guard, occ)) = term.event() {
                    let (idx, ctx) = self.find_event(traj, guard, occ)?;
                    let e = &traj.events[idx];
                    let u = self.controls_at(&ctx, e.t, theta);
                    let mut y = vec![D::zero(); ny];
                    self.sys
                        .outputs(
                            e.mode_before,
                            e.t,
                            &e.y_minus[..nx],
                            &u,
                            &theta[..self.np()],
                            &mut y,
                        )
                        .map_err(|er| crate::error::Error::Model {
                            t: e.t.re(),
                            mode: self.dims.mode_name(e.mode_before),
                            source: er,
                        })?;
                    v += term.event_value(e.t, &y);
                }
            }
            vals.push(v);
        }
        Ok(vals)
    }

    /// The `occurrence`-th (1-based) event of `guard`, and the context just before it.
    pub fn find_event<D: Scalar>(
        &self,
        traj: &crate::integrate::Trajectory<D>,
        guard: usize,
        occurrence: usize,
    ) -> Result<(usize, Ctx), crate::error::Error> {
        let mut count = 0;
        for (i, e) in traj.events.iter().enumerate() {
            if e.guard == guard {
                count += 1;
                if count == occurrence {
                    // the segment that ends at this event
                    let seg = traj
                        .segments
                        .iter()
                        .find(|s| s.end_events.contains(&i))
                        .or(traj.segments.last());
                    let ctx = Ctx {
                        mode: e.mode_before,
                        t_lo: seg.map_or(self.t0, |s| s.t_lo),
                        t_hi: seg.map_or(self.t_end, |s| s.t_hi),
                    };
                    return Ok((i, ctx));
                }
            }
        }
        Err(crate::error::Error::MissingEvent {
            guard: self.dims.guard_name(guard),
            occurrence,
            fired: count,
            t0: self.t0,
            t1: self.t_end,
        })
    }

    /// ġ = G_t + G_X·v at real values, with its scale (for the grazing test).
    pub fn guard_rate(
        &self,
        ctx: &Ctx,
        k: usize,
        t: f64,
        xx: &[f64],
        v: &[f64],
        theta: &[f64],
    ) -> GuardRate {
        let td = Dual64::new(t, 1.0);
        let xd: Vec<Dual64> = xx.iter().zip(v).map(|(&a, &b)| Dual64::new(a, b)).collect();
        let thd: Vec<Dual64> = theta.iter().map(|&a| Dual64::from(a)).collect();
        let rate = self.guard_value(ctx, k, td, &xd, &thd).eps;
        // scale: |g_t| + ‖g_x‖‖v‖ by two more passes
        let xd0: Vec<Dual64> = xx.iter().map(|&a| Dual64::from(a)).collect();
        let gt = self.guard_value(ctx, k, td, &xd0, &thd).eps.abs();
        let vn = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        let gxv = (rate - self.guard_value(ctx, k, td, &xd0, &thd).eps).abs();
        let _ = gxv;
        let scale = gt + self.guard_x_norm(ctx, k, t, xx, theta) * vn;
        GuardRate { rate, scale }
    }

    fn guard_x_norm(&self, ctx: &Ctx, k: usize, t: f64, xx: &[f64], theta: &[f64]) -> f64 {
        let mut s = 0.0;
        let thd: Vec<Dual64> = theta.iter().map(|&a| Dual64::from(a)).collect();
        for i in 0..self.nx() {
            let xd: Vec<Dual64> = xx
                .iter()
                .enumerate()
                .map(|(j, &a)| Dual64::new(a, if i == j { 1.0 } else { 0.0 }))
                .collect();
            let g = self.guard_value(ctx, k, Dual64::from(t), &xd, &thd).eps;
            s += g * g;
        }
        s.sqrt()
    }

    /// Guard k at X (generic).
    pub fn guard_value<D: Scalar>(&self, ctx: &Ctx, k: usize, t: D, xx: &[D], theta: &[D]) -> D {
        let u = self.controls_at(ctx, t, theta);
        self.sys
            .guard(ctx.mode, k, t, &xx[..self.nx()], &u, &theta[..self.np()])
    }
}

/// The plain hybrid system in X (any scalar): what `simulate` and the dual witness run.
pub struct Plain<'s, 'a, S: HybridSystem, D> {
    pub setup: &'s Setup<'a, S>,
    pub theta: Vec<D>,
    pub theta_re: Vec<f64>,
}

impl<'s, 'a, S: HybridSystem, D: Scalar> Plain<'s, 'a, S, D> {
    pub fn new(setup: &'s Setup<'a, S>, theta: Vec<D>) -> Self {
        let theta_re = theta.iter().map(|v| v.re()).collect();
        Plain {
            setup,
            theta,
            theta_re,
        }
    }
}

/// The guard metadata shared by every [`HybridRhs`] over a [`Setup`].
macro_rules! guard_meta {
    () => {
        fn mode_name(&self, mode: usize) -> String {
            self.setup.dims.mode_name(mode)
        }
        fn guard_name(&self, k: usize) -> String {
            self.setup.dims.guard_name(k)
        }
        fn n_guards(&self) -> usize {
            self.setup.dims.guards.len()
        }
        fn guard_active(&self, mode: usize, k: usize) -> bool {
            self.setup.sys().guard_active(mode, k)
        }
        fn guard_direction(&self, k: usize) -> Direction {
            self.setup.dims.guards[k].direction
        }
        fn guard_terminal(&self, k: usize) -> bool {
            self.setup.dims.guards[k].terminal
        }
    };
}
pub(crate) use guard_meta;

/// The guards of an integrated vector that starts with X (X, then sensitivity columns):
/// for [`HybridRhs`] implementations with `setup` and `theta: Vec<f64>` fields.
macro_rules! guards_on_leading_state {
    () => {
        fn guard(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64]) -> f64 {
            self.setup
                .guard_value(ctx, k, t, &y[..self.setup.n()], &self.theta)
        }
        fn guard_rate(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> GuardRate {
            let n = self.setup.n();
            self.setup
                .guard_rate(ctx, k, t, &y[..n], &v[..n], &self.theta)
        }
    };
}
pub(crate) use guards_on_leading_state;

impl<S: HybridSystem, D: Scalar> HybridRhs<D> for Plain<'_, '_, S, D> {
    guard_meta!();
    fn dim(&self) -> usize {
        self.setup.n()
    }
    fn rhs(&self, ctx: &Ctx, t: D, y: &[D], dy: &mut [D]) -> Result<(), ModelError> {
        self.setup.rhs(ctx, t, y, &self.theta, dy)
    }
    fn newton_jacobian(&self, ctx: &Ctx, t: f64, y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        let j = self.setup.flow_jacobian(ctx, t, y, &self.theta_re)?;
        Ok(NewtonJacobian {
            block: j.fx,
            copies: 1,
            rest: 0,
        })
    }
    fn guard(&self, ctx: &Ctx, k: usize, t: D, y: &[D]) -> D {
        self.setup.guard_value(ctx, k, t, y, &self.theta)
    }
    fn guard_rate(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> GuardRate {
        self.setup.guard_rate(ctx, k, t, y, v, &self.theta_re)
    }
    fn event(
        &self,
        ctx: &Ctx,
        k: usize,
        t: D,
        y: &[D],
        terminal: bool,
    ) -> Result<(usize, Vec<D>), ModelError> {
        if terminal {
            return Ok((ctx.mode, y.to_vec()));
        }
        self.setup.reset(ctx.mode, k, t, y, &self.theta)
    }
}

impl<S: HybridSystem> Setup<'_, S> {
    /// Simulates X from t0 to t_end (or a terminal event) at θ.
    pub fn simulate(
        &self,
        theta: &[f64],
    ) -> Result<crate::integrate::Trajectory, crate::error::Error> {
        self.simulate_generic(theta.to_vec())
    }

    /// The simulation for the adjoint: the same steps and events as [`Self::simulate`],
    /// with the dense output kept under [`Self::checkpointing`] (the backward pass replays
    /// compacted windows; tables and plots need [`Self::simulate`]).
    pub fn simulate_for_adjoint(
        &self,
        theta: &[f64],
    ) -> Result<crate::integrate::Trajectory, crate::error::Error> {
        self.simulate_keeping(theta.to_vec(), self.checkpointing)
    }

    /// The same simulation in any scalar (dual numbers give the witness derivative).
    pub fn simulate_generic<D: Scalar>(
        &self,
        theta: Vec<D>,
    ) -> Result<crate::integrate::Trajectory<D>, crate::error::Error> {
        self.simulate_keeping(theta, Checkpointing::Never)
    }

    fn simulate_keeping<D: Scalar>(
        &self,
        theta: Vec<D>,
        keep: Checkpointing,
    ) -> Result<crate::integrate::Trajectory<D>, crate::error::Error> {
        self.check_theta(theta.len())?;
        let (m0, x0) = self
            .initial(&theta)
            .map_err(|e| crate::error::Error::Model {
                t: self.t0,
                mode: "initial".into(),
                source: e,
            })?;
        let plain = Plain::new(self, theta);
        crate::integrate::hybrid::simulate_hybrid_with(
            &plain,
            x0,
            m0,
            &self.breakpoints(),
            &self.solver,
            &self.events,
            keep,
        )
    }

    pub(crate) fn check_theta(&self, len: usize) -> Result<(), crate::error::Error> {
        if len != self.ntheta() {
            return Err(crate::error::Error::Invalid(format!(
                "θ has {len} entries, the setup needs {} ({} parameters + {} control coefficients)",
                self.ntheta(),
                self.np(),
                self.nc()
            )));
        }
        Ok(())
    }
}
