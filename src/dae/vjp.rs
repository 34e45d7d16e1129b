//! The flow's vector–Jacobian products of a [`super::Dae`] by the implicit function
//! theorem (theory.md §6): z is solved once, and the products go through it in closed form
//! instead of one dual Newton correction per input direction.
//!
//! With the reduced flow `F(x, p) = (f(y, z(x, p), y*, p, t), 0)` on `x = (y, y*)`, the
//! outputs `h = (z, o(y, z, y*, p, t))` and the algebraic residual r (`k` for index 1,
//! `k_y f + k_t` for index 2) defining `z(x, p)` by `r = 0`, `z_x = −r_z⁻¹ r_x`, so for each
//! cotangent pair `(λ, ȳ)`:
//!
//! ```text
//! a  = f_zᵀ λ_y + h_zᵀ ȳ,        r_zᵀ b = a,
//! gx = f_xᵀ λ_y + h_xᵀ ȳ − r_xᵀ b,   gp = f_pᵀ λ_y + h_pᵀ ȳ − r_pᵀ b
//! ```
//!
//! (`λ_y` the differential part of λ: the memory's flow is zero). The partials of f, r and
//! o in every input direction, z included, come from vector-dual passes at the fixed z;
//! `tests/dae_vjp.rs` holds the result to the dual-pass default.

use super::algebraic::residual;
use super::system::{DaeSystem, Point};
use crate::error::ModelError;
use crate::linalg;
use crate::model::{lane_eps, lane_seed, Lanes, OutputCotangent, VjpArgs, VjpOut, LANES};

/// The explicit partials of f, r and o in each input direction (y, y*, p, then z),
/// column by column at the point.
struct Partials {
    f: Vec<f64>,
    r: Vec<f64>,
    o: Vec<f64>,
}

/// The partials in every direction of `(y, y*, p, z)` through f, r and (when `with_o`) o,
/// [`LANES`] directions per vector-dual pass: a transcendental function costs one scalar
/// evaluation per pass, however many directions it carries.
fn partials<S: DaeSystem>(
    sys: &S, a: &VjpArgs<'_>, ny: usize, z: &[f64], n_out: usize, with_o: bool,
) -> Result<Partials, ModelError> {
    let (nx, np, nz) = (a.x.len(), a.p.len(), z.len());
    let ndir = nx + np + nz;
    let zero = Lanes::from_re(0.0);
    let (mut fd, mut rd, mut od) = (vec![zero; ny], vec![zero; nz], vec![zero; n_out]);
    let mut out = Partials {
        f: vec![0.0; ndir * ny],
        r: vec![0.0; ndir * nz],
        o: vec![0.0; if with_o { ndir * n_out } else { 0 }],
    };
    let t = Lanes::from_re(a.t);
    for first in (0..ndir).step_by(LANES) {
        // direction d = first + lane: x, then p, then z
        let lane = |d: usize| (d >= first && d < first + LANES).then(|| d - first);
        let seeded = |v: &[f64], offset: usize| -> Vec<Lanes> {
            v.iter()
                .enumerate()
                .map(|(i, &r)| lane_seed(r, lane(offset + i)))
                .collect()
        };
        let (xd, pd, zd) = (seeded(a.x, 0), seeded(a.p, nx), seeded(z, nx + np));
        let (y, memory) = xd.split_at(ny);
        let at = Point {
            t,
            y,
            z: &zd,
            memory,
            p: &pd,
        };
        sys.flow(a.mode, at, &mut fd)?;
        residual(sys, a.mode, at, &mut rd)?;
        if with_o {
            sys.outputs(a.mode, at, &mut od)?;
        }
        for d in first..(first + LANES).min(ndir) {
            let l = d - first;
            let eps = |dst: &mut [f64], src: &[Lanes]| {
                dst.iter_mut()
                    .zip(src)
                    .for_each(|(o, s)| *o = lane_eps(s, l));
            };
            eps(&mut out.f[d * ny..(d + 1) * ny], &fd);
            eps(&mut out.r[d * nz..(d + 1) * nz], &rd);
            if with_o {
                eps(&mut out.o[d * n_out..(d + 1) * n_out], &od);
            }
        }
    }
    Ok(out)
}

/// [`crate::HybridSystem::flow_vjp`] of a DAE at its algebraic states `z` (the module doc);
/// `ny` differential states, `n_out` outputs of the system's own (after the z).
pub fn flow_vjp<S: DaeSystem>(
    sys: &S, ny: usize, n_out: usize, z: &[f64], a: VjpArgs<'_>, out: VjpOut<'_>,
) -> Result<(), ModelError> {
    let (nx, np, nz, k) = (a.x.len(), a.p.len(), z.len(), a.k);
    let nh = nz + n_out;
    let mut h = vec![0.0; nh];
    if let OutputCotangent::At(_) = a.ybar {
        h[..nz].copy_from_slice(z);
        let (y, memory) = a.x.split_at(ny);
        let at = Point {
            t: a.t,
            y,
            z,
            memory,
            p: a.p,
        };
        sys.outputs(a.mode, at, &mut h[nz..])?;
        out.y[..nh].copy_from_slice(&h);
    }
    let mut buf = Vec::new();
    let ybar = a.ybar.resolve(&h, k, &mut buf);
    let with_y = !ybar.is_empty();
    let d = partials(sys, &a, ny, z, n_out, with_y)?;
    // the explicit part λ_yᵀ f_d + ȳᵀ h_d of direction d for cotangent j
    let explicit = |j: usize, dir: usize| -> f64 {
        let lam = &a.lam[j * nx..j * nx + ny];
        let mut s: f64 = lam
            .iter()
            .zip(&d.f[dir * ny..(dir + 1) * ny])
            .map(|(l, f)| l * f)
            .sum();
        if with_y {
            let yb = &ybar[j * nh..(j + 1) * nh];
            s += yb[nz..]
                .iter()
                .zip(&d.o[dir * n_out..(dir + 1) * n_out])
                .map(|(b, o)| b * o)
                .sum::<f64>();
            if dir >= nx + np {
                s += yb[dir - nx - np];
            }
        }
        s
    };
    // r_zᵀ B = A, one column per cotangent: row c of r_zᵀ is the z_c column of r
    let zdir = nx + np;
    let mut rzt = d.r[zdir * nz..(zdir + nz) * nz].to_vec();
    let mut b = vec![0.0; nz * k];
    for j in 0..k {
        for i in 0..nz {
            b[i * k + j] = explicit(j, zdir + i);
        }
    }
    linalg::solve_in_place(nz, &mut rzt, &mut b, k, "the algebraic Jacobian")?;
    for j in 0..k {
        let total = |dir: usize| -> f64 {
            let rd = &d.r[dir * nz..(dir + 1) * nz];
            explicit(j, dir) - (0..nz).map(|i| b[i * k + j] * rd[i]).sum::<f64>()
        };
        for i in 0..nx {
            out.gx[j * nx + i] = total(i);
        }
        for q in 0..np {
            out.gp[j * np + q] = total(nx + q);
        }
    }
    out.gu.iter_mut().for_each(|v| *v = 0.0);
    Ok(())
}
