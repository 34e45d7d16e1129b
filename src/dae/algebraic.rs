//! The algebraic states at a point: Newton on the algebraic equations in `f64`, then one
//! Newton correction in the caller's scalar, which makes every first derivative of z exact
//! (theory.md §6: the implicit function theorem).
//!
//! At the converged `z`, the residual's real part vanishes, so the correction
//!
//! ```text
//! z_D = z − K⁻¹ r(y_D, z, y*_D, p_D, t_D),   K = ∂r/∂z (real)
//! ```
//!
//! has the derivative part `−K⁻¹ (r_y ẏ + r_{y*} ẏ* + r_p ṗ + r_t ṫ)`: exactly
//! `dz = −k_z⁻¹ (k_y dy + …)` (seed 001 (5)–(6)). The residual r is `k` for index 1 and the
//! hidden constraint `k_y f + k_t` for index 2 (seed 001 §3.2, theory.md §6), the latter
//! by one dual pass of `k` along `(f, 1)`. (For nested duals this is exact to first order
//! only; the second-order periodic passes do not run on DAEs.)

use super::system::{DaeIndex, DaeSystem, Point};
use crate::error::ModelError;
use crate::linalg;
use crate::model::Scalar;
use num_dual::{Dual, Dual64};

/// Newton iterations allowed on the algebraic equations at one point.
pub const MAX_ITERATIONS: usize = 30;
/// Convergence: the Newton update is below this, relative to `1 + |z|_∞`: a few ulps, so
/// that z is as exact as the arithmetic allows (a linear law converges in one step).
pub const UPDATE_TOL: f64 = 1e-14;

/// The residual whose root is z: `k` (index 1) or `k_y f + k_t` (index 2).
pub fn residual<S: DaeSystem + ?Sized, D: Scalar>(
    sys: &S, mode: usize, at: Point<'_, D>, res: &mut [D],
) -> Result<(), ModelError> {
    match sys.index() {
        DaeIndex::One => sys.algebraic(mode, at, res),
        DaeIndex::Two => hidden_constraint(sys, mode, at, res),
    }
}

/// The hidden constraint of an index-2 system, `k_y f + k_t` (the time derivative of
/// `k(y(t), y*, p, t)` along the flow): one evaluation of `k` in dual numbers over `D`
/// at `(y + ε f, t + ε)`.
pub fn hidden_constraint<S: DaeSystem + ?Sized, D: Scalar>(
    sys: &S, mode: usize, at: Point<'_, D>, res: &mut [D],
) -> Result<(), ModelError> {
    let mut f = vec![D::zero(); at.y.len()];
    sys.flow(mode, at, &mut f)?;
    let lift = |v: &[D]| v.iter().map(|&a| Dual::<D>::from_re(a)).collect::<Vec<_>>();
    let y: Vec<Dual<D>> =
        at.y.iter()
            .zip(&f)
            .map(|(&yi, &fi)| Dual::new(yi, fi))
            .collect();
    let (z, memory, p) = (lift(at.z), lift(at.memory), lift(at.p));
    let point = Point {
        t: Dual::new(at.t, D::one()),
        y: &y,
        z: &z,
        memory: &memory,
        p: &p,
    };
    let mut k = vec![Dual::<D>::from_re(D::zero()); res.len()];
    sys.algebraic(mode, point, &mut k)?;
    for (r, ki) in res.iter_mut().zip(&k) {
        *r = ki.eps;
    }
    Ok(())
}

/// What [`solve`] needs to name a failure.
pub struct Where<'a> {
    pub mode_name: &'a str,
}

/// The algebraic states at `(t, y, y*, p)` in `mode`, exact to first order in every
/// derivative direction the scalar carries (see the module doc): [`solve_real`], then
/// [`correct`].
pub fn solve<S: DaeSystem + ?Sized, D: Scalar>(
    sys: &S, mode: usize, t: D, y: &[D], memory: &[D], p: &[D], at: &Where<'_>,
) -> Result<Vec<D>, ModelError> {
    if sys.dims().algebraic.is_empty() {
        return Ok(Vec::new());
    }
    let re = |v: &[D]| v.iter().map(|a| a.re()).collect::<Vec<f64>>();
    let real = solve_real(sys, mode, t.re(), &re(y), &re(memory), &re(p), at)?;
    correct(sys, mode, t, y, memory, p, &real)
}

/// Converged algebraic states at a real point and the residual's Jacobian `K = ∂r/∂z`
/// (row-major) at the last Newton iterate (within [`UPDATE_TOL`] of `z`: the correction
/// `K⁻¹ r` then differs from one with `K(z)` by `O(UPDATE_TOL)` relative).
#[derive(Debug, Clone)]
pub struct Solved {
    pub z: Vec<f64>,
    pub jac: Vec<f64>,
}

/// Newton on the residual in `f64` from the system's guess: `K Δz = −r`, `z ← z + Δz`
/// until `|Δz|_∞ ≤ UPDATE_TOL (1 + |z|_∞)`. The residual and K are evaluated once per
/// iteration, never after the converged update (a linear law with an exact guess costs
/// one evaluation).
pub fn solve_real<S: DaeSystem + ?Sized>(
    sys: &S, mode: usize, t: f64, y: &[f64], memory: &[f64], p: &[f64], at: &Where<'_>,
) -> Result<Solved, ModelError> {
    let mut z = sys.algebraic_guess(mode, t, y, memory, p);
    let nz = z.len();
    let mut last = f64::INFINITY;
    for _ in 0..MAX_ITERATIONS {
        let (r, jac) = real_jacobian(sys, mode, t, y, &z, memory, p)?;
        last = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if !last.is_finite() {
            break;
        }
        let mut dz: Vec<f64> = r.iter().map(|v| -v).collect();
        linalg::solve_in_place(nz, &mut jac.clone(), &mut dz, 1, "")
            .map_err(|e| singular(sys, e, t, at))?;
        let size = dz.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let scale = 1.0 + z.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (zi, d) in z.iter_mut().zip(&dz) {
            *zi += d;
        }
        if size <= UPDATE_TOL * scale {
            return Ok(Solved { z, jac });
        }
    }
    Err(ModelError::AlgebraicNewton {
        mode: at.mode_name.to_string(),
        t,
        residual: last,
        iterations: MAX_ITERATIONS,
    })
}

/// `z − K⁻¹ r(y_D, z, …)` in the caller's scalar (the module doc's correction). In `f64`
/// it is one more Newton step on the real value, which makes z exact to round-off (a
/// parameter that cancels in exact arithmetic, as the pendulum's mass, then also cancels
/// in the runs that central FD differences).
pub fn correct<S: DaeSystem + ?Sized, D: Scalar>(
    sys: &S, mode: usize, t: D, y: &[D], memory: &[D], p: &[D], solved: &Solved,
) -> Result<Vec<D>, ModelError> {
    let (z, jac) = (&solved.z, &solved.jac);
    let nz = z.len();
    let zd: Vec<D> = z.iter().map(|&v| D::from(v)).collect();
    let mut r = vec![D::zero(); nz];
    residual(
        sys,
        mode,
        Point {
            t,
            y,
            z: &zd,
            memory,
            p,
        },
        &mut r,
    )?;
    let mut a: Vec<D> = jac.iter().map(|&v| D::from(v)).collect();
    linalg::solve_in_place(nz, &mut a, &mut r, 1, "the algebraic Jacobian")?;
    Ok(zd.iter().zip(&r).map(|(&zi, &ri)| zi - ri).collect())
}

/// The residual and its Jacobian `∂r/∂z` (row-major) at a real point: one dual pass per
/// algebraic state.
#[allow(clippy::type_complexity)]
fn real_jacobian<S: DaeSystem + ?Sized>(
    sys: &S, mode: usize, t: f64, y: &[f64], z: &[f64], memory: &[f64], p: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), ModelError> {
    let nz = z.len();
    let lift = |v: &[f64]| v.iter().map(|&a| Dual64::from(a)).collect::<Vec<_>>();
    let (yd, md, pd) = (lift(y), lift(memory), lift(p));
    let mut value = vec![0.0; nz];
    let mut jac = vec![0.0; nz * nz];
    let mut r = vec![Dual64::from(0.0); nz];
    for j in 0..nz {
        let mut zd = lift(z);
        zd[j] = zd[j].derivative();
        let point = Point {
            t: Dual64::from(t),
            y: &yd,
            z: &zd,
            memory: &md,
            p: &pd,
        };
        residual(sys, mode, point, &mut r)?;
        for i in 0..nz {
            jac[i * nz + j] = r[i].eps;
            value[i] = r[i].re;
        }
    }
    Ok((value, jac))
}

/// A singular `k_z` or `k_y f_z`, named as such.
fn singular<S: DaeSystem + ?Sized>(sys: &S, e: ModelError, t: f64, at: &Where<'_>) -> ModelError {
    let pivot = match e {
        ModelError::Singular { pivot, .. } => pivot,
        other => return other,
    };
    let what = match sys.index() {
        DaeIndex::One => "k_z (the Jacobian of the algebraic equations in z)",
        DaeIndex::Two => "k_y f_z (the Jacobian of the hidden constraint in z)",
    };
    ModelError::SingularAlgebraic {
        what: what.to_string(),
        mode: at.mode_name.to_string(),
        t,
        pivot,
    }
}
