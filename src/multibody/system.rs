//! A constrained mechanism as a hybrid system: [`MultibodySystem`] is what a mechanism
//! model writes (names, guards, resets, the constraint set of each mode, outputs given the
//! accelerations); the flow `ẋ = (q̇, a)` and its exact vector–Jacobian product come once,
//! from here, for every natural-coordinate mechanism (theory.md §5). `q̇ = v` for index 1
//! and penalty; the index-2 formulation's `q̇ = v − Φ_qᵀη` (GGL, [`super::dynamics`]) is
//! differentiated by the exact dual default of [`HybridSystem::flow_vjp`], not by the
//! implicit hook below.
//!
//! **The VJP by implicit differentiation.** The accelerations solve a linear system
//! `K(q, p) s = r(q, v, p)`: index-1 `s = (a, μ)`, `K = [[M, Φ_qᵀ], [Φ_q, 0]]`,
//! `r = (F, C)`; penalty `s = a`, `K = M̄`, `r = F̄` (seed 000 (29)–(32)). With the residual
//! `R(x, p; s) = r − K s` held at the solution, `s_x = K⁻¹ R_x`, so for a cotangent `s̄`
//!
//! ```text
//! s̄ᵀ s_x = wᵀ R_x(x, p; s),   Kᵀ w = s̄     (K is symmetric in both formulations)
//! ```
//!
//! one factorization and one solve with k right-hand sides per evaluation, then one dual
//! pass per input direction through the residual only (mass matrix, forces, constraints —
//! no solve), instead of a dual pass through the whole solve per direction (design.md,
//! "Derivative hooks"). Outputs that read the accelerations or multipliers add their
//! cotangent to `s̄` (penalty multipliers μ* = α(Φ_q a + …) through `a`), so flow and outputs
//! share the one solve.

use super::constraints::{Constraint, ConstraintEval};
use super::dynamics::{
    baumgarte_rhs, penalty_multipliers, penalty_system, saddle_matrix, Accel, Dynamics,
    Formulation, PENALTY_MATRIX, SADDLE_MATRIX,
};
use super::mechanism::Mechanism;
use crate::error::ModelError;
use crate::linalg::Lu;
use crate::model::{
    lane_eps, lane_seed, vjp_by_dual_passes, vjp_by_scalar_duals, GuardInfo, HybridSystem, Lanes,
    OutputCotangent, Scalar, VjpArgs, VjpOut, LANES, SCALAR_DUAL_DIRECTIONS,
};

/// A planar mechanism with modes, events and outputs. Every type that implements it is a
/// [`HybridSystem`] whose flow is `ẋ = (v, a(q, v, p))` with `a` from the mechanism under
/// the mode's constraint set and the configured formulation, and whose `flow_vjp` is the
/// implicit-differentiation product of the module docs. The state is `x = (q, v)` with
/// `q` the mechanism's `n` coordinates. Mechanisms take no controls.
pub trait MultibodySystem: Send + Sync {
    /// The mechanism (points, bodies, forces, its own constraint set).
    fn mechanism(&self) -> &Mechanism;
    /// The formulation and its coefficients.
    fn dynamics(&self) -> &Dynamics;
    /// The constraint set of a mode (the mechanism's own by default).
    fn constraints(&self, _mode: usize) -> &[Constraint] {
        &self.mechanism().constraints
    }
    /// Checks the sizes of a state and a parameter vector (and the mode) before any
    /// evaluation; a mismatch is a [`ModelError`], never a panic.
    fn check<D: Scalar>(&self, mode: usize, x: &[D], p: &[D]) -> Result<(), ModelError>;
    fn state_names(&self) -> Vec<String>;
    fn param_names(&self) -> Vec<String>;
    fn mode_names(&self) -> Vec<String> {
        vec!["default".to_string()]
    }
    fn guards(&self) -> Vec<GuardInfo>;
    fn guard_active(&self, _mode: usize, _k: usize) -> bool {
        true
    }
    fn output_names(&self) -> Vec<String>;
    fn initial_mode(&self, _p: &[f64]) -> usize {
        0
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError>;
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], p: &[D]) -> D;
    fn reset<D: Scalar>(
        &self,
        mode: usize,
        k: usize,
        t: D,
        x: &[D],
        p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError>;
    /// The outputs at `(q, v)` given the accelerations, multipliers and residuals `acc`
    /// of that point (so that flow and outputs share one solve).
    fn outputs_with<D: Scalar>(
        &self,
        mode: usize,
        t: D,
        q: &[D],
        v: &[D],
        acc: &Accel<D>,
        p: &[D],
        out: &mut [D],
    ) -> Result<(), ModelError>;

    /// The mechanism's geometry for pictures (see [`HybridSystem::geometry`]); none by
    /// default.
    fn geometry(&self) -> Option<&dyn crate::animate::Geometry> {
        None
    }

    /// Accelerations, multipliers and residuals in `mode` at `x = (q, v)`.
    fn accelerations<D: Scalar>(
        &self,
        mode: usize,
        x: &[D],
        p: &[D],
    ) -> Result<Accel<D>, ModelError> {
        self.check(mode, x, p)?;
        let n = self.mechanism().n;
        self.mechanism().acceleration_with(
            self.dynamics(),
            self.constraints(mode),
            &x[..n],
            &x[n..],
            p,
        )
    }
}

impl<M: MultibodySystem> HybridSystem for M {
    fn state_names(&self) -> Vec<String> {
        MultibodySystem::state_names(self)
    }
    fn param_names(&self) -> Vec<String> {
        MultibodySystem::param_names(self)
    }
    fn mode_names(&self) -> Vec<String> {
        MultibodySystem::mode_names(self)
    }
    fn guards(&self) -> Vec<GuardInfo> {
        MultibodySystem::guards(self)
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        MultibodySystem::guard_active(self, mode, k)
    }
    fn output_names(&self) -> Vec<String> {
        MultibodySystem::output_names(self)
    }
    fn geometry(&self) -> Option<&dyn crate::animate::Geometry> {
        MultibodySystem::geometry(self)
    }
    fn initial_mode(&self, p: &[f64]) -> usize {
        MultibodySystem::initial_mode(self, p)
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        MultibodySystem::initial_state(self, p)
    }
    /// `ẋ = (q̇, a)`, `q̇ = v` except for index 2 (theory.md §5; seed 000 (29)–(32);
    /// index 2: [`super::dynamics::ggl_velocity`]).
    fn flow<D: Scalar>(
        &self,
        mode: usize,
        _t: D,
        x: &[D],
        _u: &[D],
        p: &[D],
        dx: &mut [D],
    ) -> Result<(), ModelError> {
        let acc = self.accelerations(mode, x, p)?;
        let n = self.mechanism().n;
        dx[..n].copy_from_slice(&acc.qdot);
        dx[n..].copy_from_slice(&acc.a);
        Ok(())
    }
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        MultibodySystem::guard(self, mode, k, t, x, p)
    }
    fn reset<D: Scalar>(
        &self,
        mode: usize,
        k: usize,
        t: D,
        x: &[D],
        p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        MultibodySystem::reset(self, mode, k, t, x, p)
    }
    fn outputs<D: Scalar>(
        &self,
        mode: usize,
        t: D,
        x: &[D],
        _u: &[D],
        p: &[D],
        out: &mut [D],
    ) -> Result<(), ModelError> {
        let acc = self.accelerations(mode, x, p)?;
        let n = self.mechanism().n;
        self.outputs_with(mode, t, &x[..n], &x[n..], &acc, p, out)
    }
    fn flow_vjp(&self, args: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError> {
        mechanism_vjp(self, args, out)
    }
}

/// The residual `R = r − K s` of the acceleration system at fixed `s` (module docs), in
/// any scalar: index-1 `(F − M a − Φ_qᵀμ, C − Φ_q a)`, penalty `F̄ − M̄ a`.
fn residual<D: Scalar>(
    kind: Solved,
    dynamics: &Dynamics,
    mass: &[D],
    force: &[D],
    ev: &ConstraintEval<D>,
    a: &[D],
    mu: &[D],
) -> Vec<D> {
    let (n, m) = (ev.n, ev.m);
    match kind {
        Solved::Index1 => {
            let mut r = force.to_vec();
            for i in 0..n {
                for j in 0..n {
                    r[i] -= mass[i * n + j] * a[j];
                }
            }
            for row in 0..m {
                for i in 0..n {
                    r[i] -= ev.jac[row * n + i] * mu[row];
                }
            }
            let c = baumgarte_rhs(ev, dynamics.xi, dynamics.omega);
            for (row, cv) in c.into_iter().enumerate() {
                let mut v = cv;
                for i in 0..n {
                    v -= ev.jac[row * n + i] * a[i];
                }
                r.push(v);
            }
            r
        }
        Solved::Penalty => {
            let (mbar, mut fbar) =
                penalty_system(mass, force, ev, dynamics.alpha, dynamics.xi, dynamics.omega);
            for i in 0..n {
                for j in 0..n {
                    fbar[i] -= mbar[i * n + j] * a[j];
                }
            }
            fbar
        }
    }
}

/// The multipliers that go with accelerations `a` held fixed: index-1's solved `μ` (given),
/// penalty's `μ*(a)` (recomputed, so that its dependence on a and on (q, v, p) is seen).
fn multipliers<D: Scalar>(
    kind: Solved,
    dynamics: &Dynamics,
    ev: &ConstraintEval<D>,
    a: &[D],
    mu: &[D],
) -> Vec<D> {
    match kind {
        Solved::Index1 => mu.to_vec(),
        Solved::Penalty => penalty_multipliers(ev, a, dynamics.alpha, dynamics.xi, dynamics.omega),
    }
}

/// The linear system the hook differentiates implicitly (module docs).
#[derive(Debug, Clone, Copy)]
enum Solved {
    /// Index 1: `K = [[M, Φ_qᵀ], [Φ_q, 0]]`, `s = (a, μ)`.
    Index1,
    /// Penalty: `K = M̄`, `s = a`.
    Penalty,
}

/// The exact dual-number VJP of [`HybridSystem::flow_vjp`]'s default, used for the index-2
/// formulation: its flow chains two solves (η, then (a, λ) with a right-hand side that
/// depends on η), which the implicit hook does not cover yet.
fn dual_vjp<M: MultibodySystem>(
    sys: &M,
    args: VjpArgs<'_>,
    out: VjpOut<'_>,
) -> Result<(), ModelError> {
    if args.x.len() + args.u.len() + args.p.len() <= SCALAR_DUAL_DIRECTIONS {
        vjp_by_scalar_duals(sys, args, out)
    } else {
        vjp_by_dual_passes(sys, args, out)
    }
}

/// `v` lifted into [`Lanes`], entry `i` seeded in lane `lane_of(i)`.
fn lift(v: &[f64], lane_of: impl Fn(usize) -> Option<usize>) -> Vec<Lanes> {
    v.iter()
        .enumerate()
        .map(|(i, &r)| lane_seed(r, lane_of(i)))
        .collect()
}

/// [`HybridSystem::flow_vjp`] of a mechanism by implicit differentiation of its
/// acceleration system (module docs): for each cotangent j, with `λ_j = (λ_q, λ_v)` on
/// `ẋ = (v, a)` and `ȳ_j` on the outputs,
///
/// ```text
/// s̄_j = (λ_v + h_aᵀȳ_j, h_μᵀȳ_j),   K w_j = s̄_j,
/// g_j = w_jᵀ R_(q,v,p) + ȳ_jᵀ h_(q,v,p)|_s + (0, λ_q, 0)
/// ```
pub fn mechanism_vjp<M: MultibodySystem>(
    sys: &M,
    args: VjpArgs<'_>,
    out: VjpOut<'_>,
) -> Result<(), ModelError> {
    let mech = sys.mechanism();
    let dynm = sys.dynamics();
    let kind = match dynm.formulation {
        Formulation::Index1 => Solved::Index1,
        Formulation::Penalty => Solved::Penalty,
        Formulation::Index2 => return dual_vjp(sys, args, out),
    };
    let cons = sys.constraints(args.mode);
    sys.check(args.mode, args.x, args.p)?;
    let n = mech.n;
    let (np, k) = (args.p.len(), args.k);
    let nx = 2 * n;

    let (q, v) = args.x.split_at(n);
    // K (symmetric) and r at the point, factored once: s = K⁻¹r, later W = K⁻¹S̄
    let mass = mech.mass_matrix(args.p)?;
    let force = mech.forces(q, v, args.p)?;
    let ev = mech.evaluate(cons, q, v, args.p)?;
    let m = ev.m;
    let (kmat, mut s, nk, what) = match kind {
        Solved::Index1 => {
            let mut r = force.clone();
            r.extend(baumgarte_rhs(&ev, dynm.xi, dynm.omega));
            (saddle_matrix(&mass, &ev.jac, n, m), r, n + m, SADDLE_MATRIX)
        }
        Solved::Penalty => {
            let (mbar, fbar) = penalty_system(&mass, &force, &ev, dynm.alpha, dynm.xi, dynm.omega);
            (mbar, fbar, n, PENALTY_MATRIX)
        }
    };
    let lu = Lu::factor(nk, kmat, what)?;
    lu.solve_in_place(&mut s, 1);
    let acc = Accel {
        mu: match kind {
            Solved::Index1 => s[n..].to_vec(),
            Solved::Penalty => penalty_multipliers(&ev, &s[..n], dynm.alpha, dynm.xi, dynm.omega),
        },
        qdot: v.to_vec(),
        a: s[..n].to_vec(),
        phi: ev.phi.clone(),
        phidot: ev.phidot.clone(),
    };
    // the outputs from the same solve, when the cotangents depend on them
    if let OutputCotangent::At(_) = args.ybar {
        sys.outputs_with(args.mode, args.t, q, v, &acc, args.p, out.y)?;
    }
    let mut buf = Vec::new();
    let ybar = args.ybar.resolve(out.y, k, &mut buf);
    let ny = ybar.len() / k.max(1);
    // s̄ (nk × k, row-major): λ_v, plus the outputs' reading of the solution
    let mut w = vec![0.0; nk * k];
    for j in 0..k {
        for i in 0..n {
            w[i * k + j] = args.lam[j * nx + n + i];
        }
    }
    let none = |_: usize| None;
    let (qd0, vd0, pd0) = (lift(q, none), lift(v, none), lift(args.p, none));
    let td = Lanes::from_re(args.t);
    let mut y = vec![Lanes::from_re(0.0); ny];
    if ny > 0 {
        // the outputs' reading of the solution: directions a_i (and μ_i for index-1),
        // LANES at a time
        let evd = mech.evaluate(cons, &qd0, &vd0, &pd0)?;
        for first in (0..nk).step_by(LANES) {
            let lane_of = |d: usize| (d >= first && d < first + LANES).then(|| d - first);
            let ad = lift(&acc.a, lane_of);
            let mud = lift(&acc.mu, |i| lane_of(n + i));
            let accd = Accel {
                mu: multipliers(kind, dynm, &evd, &ad, &mud),
                qdot: vd0.clone(),
                a: ad,
                phi: evd.phi.clone(),
                phidot: evd.phidot.clone(),
            };
            sys.outputs_with(args.mode, td, &qd0, &vd0, &accd, &pd0, &mut y)?;
            for d in first..(first + LANES).min(nk) {
                for j in 0..k {
                    let yb = &ybar[j * ny..(j + 1) * ny];
                    w[d * k + j] += yb
                        .iter()
                        .zip(&y)
                        .map(|(b, yv)| b * lane_eps(yv, d - first))
                        .sum::<f64>();
                }
            }
        }
    }
    lu.solve_in_place(&mut w, k);
    // the residual (and the outputs at fixed s) along the input directions (q, v, p),
    // LANES at a time: no solve in these passes
    let (a_c, mu_c) = (lift(&acc.a, none), lift(&acc.mu, none));
    for first in (0..nx + np).step_by(LANES) {
        let lane_of = |d: usize| (d >= first && d < first + LANES).then(|| d - first);
        let qd = lift(q, lane_of);
        let vd = lift(v, |i| lane_of(n + i));
        let pd = lift(args.p, |i| lane_of(nx + i));
        let massd = mech.mass_matrix(&pd)?;
        let forced = mech.forces(&qd, &vd, &pd)?;
        let evd = mech.evaluate(cons, &qd, &vd, &pd)?;
        let r = residual(kind, dynm, &massd, &forced, &evd, &a_c, &mu_c);
        if ny > 0 {
            let accd = Accel {
                mu: multipliers(kind, dynm, &evd, &a_c, &mu_c),
                qdot: vd.clone(),
                a: a_c.clone(),
                phi: evd.phi.clone(),
                phidot: evd.phidot.clone(),
            };
            sys.outputs_with(args.mode, td, &qd, &vd, &accd, &pd, &mut y)?;
        }
        for d in first..(first + LANES).min(nx + np) {
            let l = d - first;
            for j in 0..k {
                let mut g: f64 = (0..nk).map(|i| w[i * k + j] * lane_eps(&r[i], l)).sum();
                if ny > 0 {
                    let yb = &ybar[j * ny..(j + 1) * ny];
                    g += yb
                        .iter()
                        .zip(&y)
                        .map(|(b, yv)| b * lane_eps(yv, l))
                        .sum::<f64>();
                }
                if d < nx {
                    if d >= n {
                        // q̇ = v
                        g += args.lam[j * nx + (d - n)];
                    }
                    out.gx[j * nx + d] = g;
                } else {
                    out.gp[j * np + d - nx] = g;
                }
            }
        }
    }
    out.gu.iter_mut().for_each(|g| *g = 0.0);
    Ok(())
}
