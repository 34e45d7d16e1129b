//! The exact vector–Jacobian product of a mechanism's flow and outputs by implicit
//! differentiation of the equations behind its accelerations (theory.md §5, §6; design.md,
//! "Derivative hooks"), for every formulation.
//!
//! **The unknowns and their residual.** Each formulation computes unknowns `s` that solve
//! `R(z; s) = 0`, `z = (q, v, p)`, where `R` is cheap to evaluate at a given `s` (no solve),
//! and reads the flow `g = (q̇, a)` and the outputs `h` explicitly from `(z, s)`:
//!
//! ```text
//! index 1:  s = (a, μ),     R = (F − M a − Φ_qᵀμ,  C − Φ_q a)            (= r − K s)
//! penalty:  s = a,          R = F̄ − M̄ a,  μ* = μ*(a) read from a          (seed 000 (29)–(31))
//! index 2:  s = (η, a, λ),  R = (Φ_q v − Φ_qΦ_qᵀη,  F − M a − Φ_qᵀλ,  −(Φ_q v)_q q̇ − Φ_q a),
//!           q̇ = v − Φ_qᵀη                                               (GGL, reduced form)
//! ```
//!
//! The actuators' forces `B u` enter every `R` additively in the force rows
//! (multibody/actuators.rs), so `R_u = B` there and the controls' part of the product is
//! `−w_jᵀ B` with the same `w_j` (no extra pass).
//!
//! With `s_z = −R_s⁻¹ R_z`, the product for cotangents `(λ_j, ȳ_j)` on `(g, h)` is
//!
//! ```text
//! b_j = λ_jᵀ ∂g/∂(s, z) + ȳ_jᵀ ∂h/∂(s, z)       (explicit partials at fixed s)
//! R_sᵀ w_j = b_{j,s},    λ_jᵀ g_z + ȳ_jᵀ h_z |_total = b_{j,z} − w_jᵀ R_z
//! ```
//!
//! `R_s = −K` is symmetric for index 1 and penalty, so the factorization of `K` that gave
//! `s` serves the cotangents too (one factorization per point); for index 2, `R_s` (block
//! triangular: Gram matrix, then the saddle matrix with the η-dependence of the quadratic
//! term) comes from the same dual passes and `R_sᵀ` is factored. All partials come from dual
//! passes through `R`, `g` and `h` only, [`LANES`] directions of `(s, q, v, p)` at a time:
//! passes over `s` alone reuse the real mass matrix, forces and constraints, passes without
//! parameter directions the real mass matrix (it depends on `p` only), and only outputs with
//! a nonzero cotangent are differentiated ([`MultibodySystem::outputs_wanted`]).
//!
//! **Reuse.** The linearization (factorization and partials) of the last point is kept in
//! the mechanism's [`VjpCache`], keyed by the exact point `(mode, t, x, p)` and the
//! formulation: an explicit Runge–Kutta step of the backward pass evaluates its last two
//! stages at the same time (DOPRI5's `c₆ = c₇ = 1`), where the second product then costs
//! one small solve and two products with the stored partials.

use super::constraints::{velocity_hessian_product, Constraint, ConstraintEval};
use super::dynamics::{
    baumgarte_rhs, ggl_velocity, index2_acceleration, penalty_multipliers, penalty_system,
    saddle_matrix, Accel, Dynamics, PENALTY_MATRIX, SADDLE_MATRIX,
};
use super::linearization::{Key, Kind, Linearization, Partials, Primal};
use super::system::MultibodySystem;
use crate::error::ModelError;
use crate::linalg::Lu;
use crate::model::{lane_seed, Lanes, Scalar, VjpArgs, VjpOut, LANES};

/// What a singular `R_s` of the index-2 formulation is called in errors.
const INDEX2_SYSTEM: &str = "index-2 system (Gram and saddle-point matrices) ∂R/∂(η, a, λ)";

/// `v` lifted into [`Lanes`], entry `i` seeded in lane `lane_of(i)`.
fn lift(v: &[f64], lane_of: impl Fn(usize) -> Option<usize>) -> Vec<Lanes> {
    v.iter()
        .enumerate()
        .map(|(i, &r)| lane_seed(r, lane_of(i)))
        .collect()
}

/// Calls `f(d, ∂x/∂d)` for the nonzero derivatives of `x` along directions `first..last`
/// (lane `d − first`).
#[inline]
fn nonzero_lanes(x: &Lanes, first: usize, last: usize, mut f: impl FnMut(usize, f64)) {
    if let Some(e) = x.eps.0.as_ref() {
        for (l, &dv) in e.as_slice()[..last - first].iter().enumerate() {
            if dv != 0.0 {
                f(first + l, dv);
            }
        }
    }
}

/// A real constraint evaluation as constant [`Lanes`].
fn lift_eval(ev: &ConstraintEval<f64>) -> ConstraintEval<Lanes> {
    let none = |_: usize| None;
    ConstraintEval {
        m: ev.m,
        n: ev.n,
        phi: lift(&ev.phi, none),
        jac: lift(&ev.jac, none),
        phidot: lift(&ev.phidot, none),
        quad: lift(&ev.quad, none),
    }
}

/// `Φ_qᵀ w` (n) for row-major `Φ_q` (m×n).
fn jac_t_times<D: Scalar>(ev: &ConstraintEval<D>, w: &[D]) -> Vec<D> {
    let mut out = vec![D::zero(); ev.n];
    for (row, &wr) in w.iter().enumerate().take(ev.m) {
        for (o, &j) in out.iter_mut().zip(ev.jac_row(row)) {
            *o += j * wr;
        }
    }
    out
}

/// `Φ_q u` (m).
fn jac_times<D: Scalar>(ev: &ConstraintEval<D>, u: &[D]) -> Vec<D> {
    (0..ev.m)
        .map(|row| {
            ev.jac_row(row)
                .iter()
                .zip(u)
                .fold(D::zero(), |s, (&j, &x)| s + j * x)
        })
        .collect()
}

/// `F − M a` (n) for a row-major n×n `M`; `F` without `M`.
fn force_minus_mass_times<D: Scalar>(mass: Option<&[D]>, force: &[D], a: &[D]) -> Vec<D> {
    let n = a.len();
    let Some(mass) = mass else {
        return force.to_vec();
    };
    (0..n)
        .map(|i| {
            let ma = mass[i * n..(i + 1) * n]
                .iter()
                .zip(a)
                .fold(D::zero(), |s, (&m, &x)| s + m * x);
            force[i] - ma
        })
        .collect()
}

/// `F − M a − Φ_qᵀ μ` (n).
fn force_balance<D: Scalar>(
    mass: Option<&[D]>, force: &[D], ev: &ConstraintEval<D>, a: &[D], mu: &[D],
) -> Vec<D> {
    let mut r = force_minus_mass_times(mass, force, a);
    for (ri, ci) in r.iter_mut().zip(jac_t_times(ev, mu)) {
        *ri -= ci;
    }
    r
}

/// The residual `R(z; s)` (when `with_r`) and the flow's and outputs' readings at `(z, s)`
/// of the module docs, in any scalar; `mass`, `force`, `ev` are those of `z`. Without
/// `mass` the term `M a` is left out of `R` (for passes in which it is constant: only the
/// derivatives of `R` are read there).
#[allow(clippy::too_many_arguments)]
fn residual_and_reading<D: Scalar>(
    kind: Kind, dynm: &Dynamics, points: &[super::bodies::Point], cons: &[Constraint],
    mass: Option<&[D]>, force: &[D], ev: &ConstraintEval<D>, v: &[D], s: &[D], with_r: bool,
) -> (Vec<D>, Accel<D>) {
    let (n, m) = (ev.n, ev.m);
    let reading = |qdot: Vec<D>, a: &[D], mu: Vec<D>| Accel {
        qdot,
        a: a.to_vec(),
        mu,
        phi: ev.phi.clone(),
        phidot: ev.phidot.clone(),
    };
    match kind {
        Kind::Index1 => {
            let (a, mu) = s.split_at(n);
            let mut r = Vec::new();
            if with_r {
                r = force_balance(mass, force, ev, a, mu);
                let c = baumgarte_rhs(ev, dynm.xi, dynm.omega);
                r.extend(c.iter().zip(jac_times(ev, a)).map(|(&c, pa)| c - pa));
            }
            (r, reading(v.to_vec(), a, mu.to_vec()))
        }
        Kind::Penalty => {
            let mut r = Vec::new();
            if with_r {
                // a constant M (None) contributes no derivative: zeros serve
                let zeros;
                let mass = match mass {
                    Some(m) => m,
                    None => {
                        zeros = vec![D::zero(); n * n];
                        &zeros
                    }
                };
                let (mbar, fbar) = penalty_system(mass, force, ev, dynm.alpha, dynm.xi, dynm.omega);
                r = force_minus_mass_times(Some(&mbar), &fbar, s);
            }
            let mu = penalty_multipliers(ev, s, dynm.alpha, dynm.xi, dynm.omega);
            (r, reading(v.to_vec(), s, mu))
        }
        Kind::Index2 => {
            let (eta, rest) = s.split_at(m);
            let (a, lam) = rest.split_at(n);
            let u = jac_t_times(ev, eta);
            let qdot: Vec<D> = v.iter().zip(&u).map(|(&vi, &ui)| vi - ui).collect();
            let mut r = Vec::new();
            if with_r {
                r.extend(
                    ev.phidot
                        .iter()
                        .zip(jac_times(ev, &u))
                        .map(|(&pd, gu)| pd - gu),
                );
                r.extend(force_balance(mass, force, ev, a, lam));
                let hess = velocity_hessian_product(cons, points, v, &qdot);
                r.extend(hess.iter().zip(jac_times(ev, a)).map(|(&h, pa)| -h - pa));
            }
            (r, reading(qdot, a, lam.to_vec()))
        }
    }
}

/// The real solution at the point (module docs): `s` by the formulation's own equations.
fn primal<M: MultibodySystem>(
    sys: &M, kind: Kind, args: &VjpArgs<'_>,
) -> Result<Primal, ModelError> {
    let mech = sys.mechanism();
    let dynm = sys.dynamics();
    let cons = sys.constraints(args.mode);
    let n = mech.n;
    let (q, v) = args.x.split_at(n);
    let mass = mech.mass_matrix(args.p)?;
    let mut force = mech.forces(q, v, args.p)?;
    mech.add_actuation(args.u, &mut force)?;
    let ev = mech.evaluate(cons, q, v, args.p)?;
    let m = ev.m;
    let (s, k_lu) = match kind {
        Kind::Index1 | Kind::Penalty => {
            let (kmat, mut s, what) = if kind == Kind::Index1 {
                let mut r = force.clone();
                r.extend(baumgarte_rhs(&ev, dynm.xi, dynm.omega));
                (saddle_matrix(&mass, &ev.jac, n, m), r, SADDLE_MATRIX)
            } else {
                let (mbar, fbar) =
                    penalty_system(&mass, &force, &ev, dynm.alpha, dynm.xi, dynm.omega);
                (mbar, fbar, PENALTY_MATRIX)
            };
            let lu = Lu::factor(s.len(), kmat, what)?;
            lu.solve_in_place(&mut s, 1);
            (s, Some(lu))
        }
        Kind::Index2 => {
            let (mut s, qdot) = ggl_velocity(&ev, v)?;
            let hess = velocity_hessian_product(cons, &mech.points, v, &qdot);
            let (a, lam) = index2_acceleration(&mass, &force, &ev, &hess)?;
            s.extend(a);
            s.extend(lam);
            (s, None)
        }
    };
    let (_, acc) = residual_and_reading(
        kind,
        dynm,
        &mech.points,
        cons,
        Some(&mass),
        &force,
        &ev,
        v,
        &s,
        false,
    );
    Ok(Primal {
        mass,
        force,
        ev,
        s,
        acc,
        k_lu,
        y: None,
    })
}

/// The explicit partials of `R`, `g` and the wanted outputs along every direction of
/// `(s, q, v, p)`, [`LANES`] at a time (module docs).
fn partials<M: MultibodySystem>(
    sys: &M, kind: Kind, args: &VjpArgs<'_>, pr: &Primal, wanted: Vec<bool>, mut pa: Partials,
) -> Result<Partials, ModelError> {
    let mech = sys.mechanism();
    let dynm = sys.dynamics();
    let cons = sys.constraints(args.mode);
    let n = mech.n;
    let nx = 2 * n;
    let nk = pr.s.len();
    let nd = nk + nx + args.p.len();
    let ny = wanted.len();
    let any_output = wanted.iter().any(|&w| w);
    let (q, v) = args.x.split_at(n);
    let none = |_: usize| None;
    let td = Lanes::from_re(args.t);
    let mut y = vec![Lanes::from_re(0.0); ny];
    pa.gh.clear();
    pa.rz.clear();
    pa.rs.clear();
    pa.rs
        .resize(if kind == Kind::Index2 { nk * nk } else { 0 }, 0.0);
    for first in (0..nd).step_by(LANES) {
        let last = (first + LANES).min(nd);
        let lane_of = |d: usize| (d >= first && d < last).then(|| d - first);
        let on_z = last > nk;
        let on_p = last > nk + nx;
        // R_s is needed only where it is not −K
        let with_r = on_z || kind == Kind::Index2;
        let sd = lift(&pr.s, lane_of);
        let qd = lift(q, |i| lane_of(nk + i));
        let vd = lift(v, |i| lane_of(nk + n + i));
        let pd = lift(args.p, |i| lane_of(nk + nx + i));
        // M depends on p only: with neither p nor s seeded, `M a` has no derivative (and
        // a pass that reads no `R` needs no M)
        let massd = if on_p {
            Some(mech.mass_matrix(&pd)?)
        } else if first < nk && with_r {
            Some(lift(&pr.mass, none))
        } else {
            None
        };
        let (forced, evd) = if on_z {
            // B u is constant along every direction here: its value only
            let mut f = mech.forces(&qd, &vd, &pd)?;
            mech.add_actuation(&lift(args.u, none), &mut f)?;
            (f, mech.evaluate(cons, &qd, &vd, &pd)?)
        } else {
            (lift(&pr.force, none), lift_eval(&pr.ev))
        };
        let (r, acc) = residual_and_reading(
            kind,
            dynm,
            &mech.points,
            cons,
            massd.as_deref(),
            &forced,
            &evd,
            &vd,
            &sd,
            with_r,
        );
        if any_output {
            sys.outputs_wanted(args.mode, td, &qd, &vd, &acc, &pd, &wanted, &mut y)?;
        }
        // the nonzero derivatives of this pass's directions, row by row
        let Partials { gh, rz, rs, .. } = &mut pa;
        for (i, ri) in r.iter().enumerate() {
            nonzero_lanes(ri, first, last, |d, dv| {
                if d >= nk {
                    rz.push((i, d - nk, dv));
                } else if !rs.is_empty() {
                    rs[i * nk + d] = dv;
                }
            });
        }
        let rows = acc.qdot.iter().chain(&acc.a).enumerate();
        let outs = y.iter().enumerate().filter(|&(o, _)| wanted[o]);
        for (row, x) in rows.chain(outs.map(|(o, yo)| (nx + o, yo))) {
            nonzero_lanes(x, first, last, |d, dv| gh.push((row, d, dv)));
        }
    }
    pa.rs_t = if kind == Kind::Index2 {
        let mut t = vec![0.0; nk * nk];
        for i in 0..nk {
            for c in 0..nk {
                t[c * nk + i] = pa.rs[i * nk + c];
            }
        }
        Some(Lu::factor(nk, t, INDEX2_SYSTEM)?)
    } else {
        None
    };
    pa.wanted = wanted;
    pa.nd = nd;
    Ok(pa)
}

/// The products of the module docs from a point's linearization: `b_j`, then `w_j`, then
/// `b_{j,z} − w_jᵀ R_z` into `out.gx`, `out.gp`, and `−w_jᵀ R_u` (the actuators' `B`) into
/// `out.gu`. `ybar` is k×ny with its nonzero entries
/// among the outputs the partials cover; `b` is scratch.
fn apply(
    lin: &Linearization, actuators: &[usize], args: &VjpArgs<'_>, ybar: &[f64], b: &mut Vec<f64>,
    out: &mut VjpOut<'_>,
) {
    let pa = lin.partials.as_ref().expect("partials");
    let pr = &lin.primal;
    let (k, nd, nk) = (args.k, pa.nd, pr.s.len());
    let nx = args.x.len();
    let nz = nd - nk;
    let ny = ybar.len() / k.max(1);
    // b (k × nd), then w = its first nk columns transposed (nk × k) in front of it
    b.clear();
    b.resize(k * nd + nk * k, 0.0);
    let (bb, w) = b.split_at_mut(k * nd);
    for j in 0..k {
        let (lam, yb) = (&args.lam[j * nx..(j + 1) * nx], &ybar[j * ny..(j + 1) * ny]);
        let bj = &mut bb[j * nd..(j + 1) * nd];
        for &(row, d, v) in &pa.gh {
            let c = if row < nx { lam[row] } else { yb[row - nx] };
            bj[d] += c * v;
        }
        for i in 0..nk {
            w[i * k + j] = bj[i];
        }
    }
    // R_sᵀ w = b_s; with R_s = −K, w = −K⁻¹ b_s
    let sign = match (&pa.rs_t, &pr.k_lu) {
        (Some(lu), _) => {
            lu.solve_in_place(w, k);
            -1.0
        }
        (None, Some(lu)) => {
            lu.solve_in_place(w, k);
            1.0
        }
        (None, None) => unreachable!("a linearization has K or R_sᵀ factored"),
    };
    for &(i, d, v) in &pa.rz {
        for j in 0..k {
            bb[j * nd + nk + d] += sign * w[i * k + j] * v;
        }
    }
    let np = nz - nx;
    for j in 0..k {
        let bz = &bb[j * nd + nk..(j + 1) * nd];
        out.gx[j * nx..(j + 1) * nx].copy_from_slice(&bz[..nx]);
        out.gp[j * np..(j + 1) * np].copy_from_slice(&bz[nx..]);
    }
    actuated_part(pr, actuators, args, w, sign, out);
}

/// The controls' part of the product (actuators.rs): `R_u = B` in the force rows (from
/// row 0, or m for index 2), so `λᵀ g_u = sign · w'ᵀ B` with the solve's `w'` (k per row).
fn actuated_part(
    pr: &Primal, actuators: &[usize], args: &VjpArgs<'_>, w: &[f64], sign: f64,
    out: &mut VjpOut<'_>,
) {
    let k = args.k;
    let nu = args.u.len();
    out.gu.iter_mut().for_each(|g| *g = 0.0);
    if nu == 0 {
        return;
    }
    // the force balance is R's first block, after the Gram block for index 2 (no K)
    let off = if pr.k_lu.is_some() { 0 } else { pr.ev.m };
    for j in 0..k {
        for (c, &i) in actuators.iter().enumerate().take(nu) {
            out.gu[j * nu + c] = sign * w[(off + i) * k + j];
        }
    }
}

/// [`crate::model::HybridSystem::flow_vjp`] of a mechanism by implicit differentiation
/// (module docs), reusing the mechanism's last linearization when the point is the same.
pub fn mechanism_vjp<M: MultibodySystem>(
    sys: &M, args: VjpArgs<'_>, mut out: VjpOut<'_>,
) -> Result<(), ModelError> {
    sys.check(args.mode, args.x, args.p)?;
    let mech = sys.mechanism();
    let dynm = sys.dynamics();
    let kind = Kind::of(dynm.formulation);
    let key = Key::of(&args, dynm, sys.constraints(args.mode));
    // another thread holding the cache: work without it
    let mut slot = mech.vjp_cache.0.try_lock().ok();
    let mut lin = match slot.as_mut().and_then(|s| s.take()) {
        Some(l) if l.key == key => l,
        // the last point's buffers serve the new one
        old => {
            let (spare, scratch) = old.map_or_else(Default::default, |l| {
                (l.partials.unwrap_or_default(), l.scratch)
            });
            Box::new(Linearization {
                primal: primal(sys, kind, &args)?,
                key,
                partials: None,
                spare,
                scratch,
            })
        }
    };
    debug_assert_eq!(lin.primal.s.len(), kind.unknowns(mech.n, lin.primal.ev.m));
    if let crate::model::OutputCotangent::At(_) = args.ybar {
        if lin.primal.y.is_none() {
            let mut y = vec![0.0; out.y.len()];
            let n = mech.n;
            let (q, v) = args.x.split_at(n);
            sys.outputs_with(args.mode, args.t, q, v, &lin.primal.acc, args.p, &mut y)?;
            lin.primal.y = Some(y);
        }
        out.y
            .copy_from_slice(lin.primal.y.as_deref().expect("outputs"));
    }
    let mut buf = Vec::new();
    let ybar = args.ybar.resolve(out.y, args.k, &mut buf);
    let ny = ybar.len() / args.k.max(1);
    let wanted: Vec<bool> = (0..ny)
        .map(|o| (0..args.k).any(|j| ybar[j * ny + o] != 0.0))
        .collect();
    let any_wanted = wanted.iter().any(|&w| w);
    let covered = lin.partials.as_ref().is_some_and(|pa| {
        !any_wanted
            || (pa.wanted.len() == ny && wanted.iter().zip(&pa.wanted).all(|(&w, &h)| !w || h))
    });
    if !covered {
        let spare = lin
            .partials
            .take()
            .unwrap_or(std::mem::take(&mut lin.spare));
        lin.partials = Some(partials(sys, kind, &args, &lin.primal, wanted, spare)?);
    }
    let mut b = std::mem::take(&mut lin.scratch);
    apply(&lin, &mech.actuators, &args, ybar, &mut b, &mut out);
    lin.scratch = b;
    if let Some(s) = slot.as_mut() {
        **s = Some(lin);
    }
    Ok(())
}
