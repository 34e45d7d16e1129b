//! One step of the 3-stage Radau IIA method of order 5 (Hairer & Wanner, *Solving ODEs
//! II*, §IV.5 and §IV.8): the stage system solved by simplified Newton with the real
//! Jacobian, the filtered embedded error estimate, and the collocation polynomial as dense
//! output. Generic over the scalar like SDIRK3: a dual run iterates the same Newton with the
//! same real matrix; its derivative parts contract at the same rate, and convergence is
//! judged on both (each on its own scale); the derivative parts' error estimate joins the
//! step control, as DOPRI5's.

use super::dense::DenseStep;
use super::stepper::{
    Attempt, NewtonJacobian, NewtonLu, OdeRhs, Tolerances, NEWTON_MAX_ITER, NEWTON_TOL,
};
use super::tableau::Radau5;
use crate::error::ModelError;
use crate::model::Scalar;
use nalgebra::DMatrix;

/// The stage matrix of one Jacobian block `J` (m × m): `I_{3m} − h (A_RK ⊗ J)`, with row
/// and column (stage s, component i) at `s·m + i` (Hairer & Wanner II, (IV.8.4) before the
/// transformation to one real and one complex system, which we skip at our sizes).
fn stage_matrix(tab: &Radau5, j: &DMatrix<f64>, h: f64) -> DMatrix<f64> {
    let m = j.nrows();
    DMatrix::from_fn(3 * m, 3 * m, |r, c| {
        let (s, i) = (r / m, r % m);
        let (q, k) = (c / m, c % m);
        let id = if r == c { 1.0 } else { 0.0 };
        id - h * tab.a[s][q] * j[(i, k)]
    })
}

/// The two real matrices of one step, factored: the stage system's `I − h(A_RK ⊗ J)` and
/// the error filter's `I − hγ0 J`, for the block form of [`NewtonJacobian`] (`copies`
/// blocks, then `rest` components with zero Jacobian, for which both are the identity).
struct RadauLu {
    stage: NewtonLu,
    filter: NewtonLu,
    m: usize,
    copies: usize,
}

impl RadauLu {
    fn new(tab: &Radau5, jac: &NewtonJacobian, h: f64) -> Option<Self> {
        Some(RadauLu {
            stage: NewtonLu::from_matrix(stage_matrix(tab, &jac.block, h), jac.copies)?,
            filter: NewtonLu::new(jac, h * tab.gamma0)?,
            m: jac.block.nrows(),
            copies: jac.copies,
        })
    }

    /// Applies the inverse stage matrix in place to a stage vector `r` (stage s at s·n):
    /// per copy, the block's components of the three stages are gathered, solved together
    /// and scattered back.
    fn solve_stages<D: Scalar>(&self, r: &mut [D], n: usize) {
        let m = self.m;
        let mut blk = vec![D::zero(); 3 * m];
        let mut x = vec![D::zero(); 3 * m];
        for c in 0..self.copies {
            for s in 0..3 {
                blk[s * m..(s + 1) * m].copy_from_slice(&r[s * n + c * m..s * n + (c + 1) * m]);
            }
            self.stage.solve_block(&mut blk, &mut x);
            for s in 0..3 {
                r[s * n + c * m..s * n + (c + 1) * m].copy_from_slice(&blk[s * m..(s + 1) * m]);
            }
        }
    }
}

/// The outcome of the stage iteration.
enum Stages<D> {
    /// The stage increments `Z_i = Y_i − y0` (stage i at i·n).
    Converged {
        z: Vec<D>,
        evals: usize,
    },
    Failed {
        evals: usize,
    },
}

/// Simplified Newton on the stage system `Z = h (A_RK ⊗ I) F(t + c h, y0 + Z)` from
/// `Z = 0` (stateless, so a replayed step is bit-identical):
///
/// ```text
/// (I − h A_RK ⊗ J) ΔZ = −Z + h (A_RK ⊗ I) F(t + c h, y0 + Z),   Z ← Z + ΔZ
/// ```
///
/// with the weighted RMS norm of ΔZ (scale `atol + rtol |y0_i|`). Converged when
/// `‖ΔZ‖ ≤ NEWTON_TOL`, or when the estimated remaining error `θ/(1 − θ) ‖ΔZ‖` is (θ the
/// observed contraction rate, Hairer & Wanner II, (IV.8.10)–(IV.8.11)), or when ‖ΔZ‖ is at
/// the round-off floor `10 ε ‖(|y0| + |Z|)/scale‖` (at tight tolerances that floor is above
/// `NEWTON_TOL`). Failed when θ ≥ 1, when `θ^(iterations left) ‖ΔZ‖` predicts no
/// convergence within [`NEWTON_MAX_ITER`], or on non-finite values.
#[allow(clippy::too_many_arguments)]
fn newton_stages<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R,
    tab: &Radau5,
    lu: &RadauLu,
    t: D,
    y: &[D],
    h: D,
    tol: &Tolerances,
) -> Result<Stages<D>, ModelError> {
    let n = y.len();
    let scale: Vec<f64> = y
        .iter()
        .map(|v| tol.atol + tol.rtol * v.re().abs())
        .collect();
    // a dual run's derivative parts on their own scale (as `derivative_error`)
    let scale_d: Vec<f64> = y
        .iter()
        .map(|v| tol.atol + tol.rtol * v.eps_part().abs())
        .collect();
    let rms_on = |sc: &[f64], v: &dyn Fn(usize) -> f64| -> f64 {
        let s: f64 = (0..3 * n).map(|k| (v(k) / sc[k % n]).powi(2)).sum();
        (s / (3 * n).max(1) as f64).sqrt()
    };
    let rms = |v: &dyn Fn(usize) -> f64| rms_on(&scale, v);
    let mut z = vec![D::zero(); 3 * n];
    let mut f = vec![D::zero(); 3 * n];
    let mut r = vec![D::zero(); 3 * n];
    let mut ys = vec![D::zero(); n];
    let mut evals = 0;
    let mut last = f64::INFINITY;
    for it in 0..NEWTON_MAX_ITER {
        for s in 0..3 {
            for i in 0..n {
                ys[i] = y[i] + z[s * n + i];
            }
            rhs.eval(t + h * tab.c[s], &ys, &mut f[s * n..(s + 1) * n])?;
        }
        evals += 3;
        for (k, rk) in r.iter_mut().enumerate() {
            let (s, i) = (k / n, k % n);
            let mut acc = D::zero();
            for q in 0..3 {
                acc += f[q * n + i] * tab.a[s][q];
            }
            *rk = h * acc - z[k];
        }
        lu.solve_stages(&mut r, n);
        let nrm_re = rms(&|k| r[k].re());
        // a dual run's derivative parts must converge too, on their own scale: judged on
        // the real parts alone, a derivative much larger than its value (the rectifier's
        // ∂/∂r, 1/r = 100) kept Newton's O(NEWTON_TOL) error relative to the value
        let nrm_d = if D::NDERIV > 0 {
            rms_on(&scale_d, &|k| r[k].eps_part())
        } else {
            0.0
        };
        let nrm = nrm_re.max(nrm_d);
        for (zk, rk) in z.iter_mut().zip(&r) {
            *zk += *rk;
        }
        if !nrm.is_finite() {
            return Ok(Stages::Failed { evals });
        }
        let floor = 10.0 * f64::EPSILON * rms(&|k| y[k % n].re().abs() + z[k].re().abs());
        let floor_d = if D::NDERIV > 0 {
            10.0 * f64::EPSILON
                * rms_on(&scale_d, &|k| {
                    y[k % n].eps_part().abs() + z[k].eps_part().abs()
                })
        } else {
            0.0
        };
        let theta = nrm / last;
        let eta = if it > 0 && theta < 1.0 {
            theta / (1.0 - theta)
        } else {
            1.0
        };
        let small = nrm_re <= NEWTON_TOL.max(floor) && nrm_d <= NEWTON_TOL.max(floor_d);
        if small || eta * nrm <= NEWTON_TOL {
            return Ok(Stages::Converged { z, evals });
        }
        if it > 0 {
            let left = (NEWTON_MAX_ITER - 1 - it) as i32;
            if theta >= 1.0 || theta.powi(left) * nrm > NEWTON_TOL {
                return Ok(Stages::Failed { evals });
            }
        }
        last = nrm;
    }
    Ok(Stages::Failed { evals })
}

/// The embedded error estimate (Hairer & Wanner II, (IV.8.19)) of one part of the scalars
/// (`part`: the real part, or a dual run's derivative part):
/// `err = (I − hγ0 J)⁻¹ γ0 [h f + d1 Z1 + d2 Z2 + d3 Z3]` with `f = f(t0, y0)`; for
/// (IV.8.20), `f = f(t0, y0 + err)` of the first estimate.
fn error_estimate<D: Scalar>(
    tab: &Radau5,
    lu: &RadauLu,
    h: D,
    f: &[D],
    z: &[D],
    part: impl Fn(&D) -> f64,
) -> Vec<f64> {
    let n = f.len();
    // summed in the scalar before taking the part: with a dual h (a step from an event
    // time) the h-derivative of h f and of the Z_i cancel as the values do
    let mut e: Vec<f64> = (0..n)
        .map(|i| {
            let mut acc = h * f[i];
            for s in 0..3 {
                acc += z[s * n + i] * tab.d[s];
            }
            tab.gamma0 * part(&acc)
        })
        .collect();
    lu.filter.solve(&mut e);
    e
}

/// The weighted norm of a dual run's derivative-part error estimate (scale
/// `atol + rtol max(|ẏ0_i|, |ẏ1_i|)` of the derivative parts), so that the witness's
/// derivative is as accurate as the tolerances ask, as DOPRI5 does for dual runs.
fn derivative_error<D: Scalar>(
    tab: &Radau5,
    lu: &RadauLu,
    tol: &Tolerances,
    h: D,
    (f0, z): (&[D], &[D]),
    (y0, y1): (&[D], &[D]),
    md: usize,
) -> f64 {
    let e = error_estimate(tab, lu, h, f0, z, |v| v.eps_part());
    if md == 0 {
        return 0.0;
    }
    let s: f64 = (0..md)
        .map(|i| {
            let sc = tol.atol + tol.rtol * y0[i].eps_part().abs().max(y1[i].eps_part().abs());
            (e[i] / sc).powi(2)
        })
        .sum();
    (s / md as f64).sqrt()
}

/// One Radau IIA(5) step from `(t, y)` with slope `f0` and step `h`. Stiffly accurate:
/// `y1 = y0 + Z3`; `f1 = F(t + h, y1)` is evaluated (exact f⁻ at events). The error is
/// (IV.8.19); when it is ≥ 1 the refined (IV.8.20) decides (RADAU5 refines only on the
/// first step and after a rejection; a step here does not know its history, and the
/// refinement only matters when the first estimate rejects). The dense output is the
/// collocation polynomial. A dual run also controls the error of its derivative parts
/// (the same estimate on them), as DOPRI5 does. A singular Newton matrix or a failed stage
/// iteration is [`Attempt::NewtonFailed`].
pub fn radau5_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R,
    t: D,
    y: &[D],
    f0: &[D],
    h: D,
    tol: &Tolerances,
) -> Result<Attempt<D>, ModelError> {
    let tab = Radau5::new();
    let n = y.len();
    let hr = h.re();
    let yr: Vec<f64> = y.iter().map(|v| v.re()).collect();
    let jac = rhs.newton_jacobian(t.re(), &yr)?;
    let Some(lu) = RadauLu::new(&tab, &jac, hr) else {
        return Ok(Attempt::NewtonFailed { evals: 0 });
    };
    let (z, mut evals) = match newton_stages(rhs, &tab, &lu, t, y, h, tol)? {
        Stages::Converged { z, evals } => (z, evals),
        Stages::Failed { evals } => return Ok(Attempt::NewtonFailed { evals }),
    };
    let y1: Vec<D> = (0..n).map(|i| y[i] + z[2 * n + i]).collect();
    let mut f1 = vec![D::zero(); n];
    rhs.eval(t + h, &y1, &mut f1)?;
    evals += 1;
    let md = rhs.error_dim();
    let e = error_estimate(&tab, &lu, h, f0, &z, |v| v.re());
    let mut err = tol.norm(&e[..md], &y[..md], &y1[..md]);
    if err >= 1.0 && err.is_finite() {
        let ye: Vec<D> = (0..n).map(|i| y[i] + D::from(e[i])).collect();
        let mut fe = vec![D::zero(); n];
        rhs.eval(t, &ye, &mut fe)?;
        evals += 1;
        let e2 = error_estimate(&tab, &lu, h, &fe, &z, |v| v.re());
        err = tol.norm(&e2[..md], &y[..md], &y1[..md]);
    }
    if D::NDERIV > 0 {
        let ed = derivative_error(&tab, &lu, tol, h, (f0, &z), (y, &y1), md);
        err = err.max(ed);
    }
    let dense = DenseStep::collocation(t, h, y, &z, [tab.c[0], tab.c[1]]);
    Ok(Attempt::Done {
        y1,
        f1,
        err,
        dense,
        evals,
    })
}
