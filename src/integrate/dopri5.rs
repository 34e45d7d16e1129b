//! Dormand–Prince 5(4): one explicit step, its stages and its error norm (with the
//! derivative parts' norm in a dual run).

use super::dense::DenseStep;
use super::ode::{Attempt, OdeRhs, Tolerances};
use super::tableau::dopri5;
use crate::error::ModelError;
use crate::model::scratch::with_stack;
use crate::model::Scalar;

pub(super) fn dopri5_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances,
) -> Result<Attempt<D>, ModelError> {
    let n = y.len();
    // the end value and slope on the stack for small systems, copied out once the step
    // is computed (no zeroed heap buffers to fill). Written out rather than through
    // `with_stack`: the closure form cost the ball 0.6 % more instructions (measured).
    let mut ends = [D::zero(); 2 * DOPRI5_STACK];
    let mut heap = Vec::new();
    let ends = if n <= DOPRI5_STACK {
        &mut ends[..2 * n]
    } else {
        heap.resize(2 * n, D::zero());
        &mut heap[..]
    };
    let (y1, f1) = ends.split_at_mut(n);
    let (err, dense) = dopri5_dense_into(rhs, t, y, f0, h, tol, y1, f1)?;
    Ok(Attempt::done(y1.to_vec(), f1.to_vec(), err, dense, 6))
}

/// Largest system whose DOPRI5 stages live on the stack.
const DOPRI5_STACK: usize = 16;

/// `Σ_s w_s k_s[i]` over the stages with a non-zero weight, in stage order (component i
/// of a stage sum; `k` holds stage s at `s·n`). One accumulator in a register per
/// component: no pass over a scratch vector per stage.
#[inline(always)]
fn stage_sum<D: Scalar>(w: &[f64], k: &[D], n: usize, i: usize) -> D {
    let mut acc = D::zero();
    for (s, &ws) in w.iter().enumerate() {
        if ws != 0.0 {
            acc += k[s * n + i] * ws;
        }
    }
    acc
}

/// One DOPRI5 step (Hairer, Nørsett & Wanner I, §II.5, Table 5.2) with its end value and
/// slope written into `y1`, `f1` (length n) and its interpolant returned with the weighted
/// error norm: `Y_s = y + h Σ_{j<s} a_sj k_j`, `k_s = F(t + c_s h, Y_s)`, `y1 = Y_7`
/// (FSAL), the error `h Σ e_s k_s` and the dense coefficient `r5 = h Σ d_s k_s`. The stage
/// slopes live on the stack for small systems: the interpolant is the step's only
/// allocation.
#[allow(clippy::too_many_arguments)]
pub(super) fn dopri5_dense_into<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, y1: &mut [D], f1: &mut [D],
) -> Result<(f64, DenseStep<D>), ModelError> {
    use dopri5::D as DD;
    let n = y.len();
    with_stages(n, |k| {
        let err = dopri5_stages(rhs, t, y, f0, h, tol, k, y1)?;
        f1.copy_from_slice(&k[6 * n..]);
        // r5 = h Σ_s d_s k_s, component by component (the sum in stage order)
        let dense = DenseStep::with_r5(t, h, y, y1, f0, f1, |i| h * stage_sum(&DD, k, n, i));
        Ok((err, dense))
    })
}

/// One DOPRI5 step (see [`dopri5_dense_into`]) with its end value and slope written into
/// `y1`, `f1` and no interpolant (the adjoint's backward pass): the weighted error norm.
/// No allocation for systems up to [`DOPRI5_STACK`] states.
#[allow(clippy::too_many_arguments)]
pub(super) fn dopri5_into<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, y1: &mut [D], f1: &mut [D],
) -> Result<f64, ModelError> {
    let n = y.len();
    with_stages(n, |k| {
        let err = dopri5_stages(rhs, t, y, f0, h, tol, k, y1)?;
        f1.copy_from_slice(&k[6 * n..]);
        Ok(err)
    })
}

/// `step` on DOPRI5's seven stage slopes (7n, zeroed): on the stack for systems up to
/// [`DOPRI5_STACK`] states, on the heap above. Systems up to [`DOPRI5_SMALL`] states get
/// a buffer of their tier, so that a step zeroes 56 scalars rather than 112.
#[inline(always)]
fn with_stages<D: Scalar, T>(n: usize, step: impl FnOnce(&mut [D]) -> T) -> T {
    if n <= DOPRI5_SMALL {
        with_stack::<{ 7 * DOPRI5_SMALL }, D, T>(7 * n, step)
    } else {
        with_stack::<{ 7 * DOPRI5_STACK }, D, T>(7 * n, step)
    }
}

/// The smaller stack tier of [`with_stages`] (the ball's forward run has 3 components,
/// its adjoint 8).
const DOPRI5_SMALL: usize = 8;

/// The stages of one DOPRI5 step (see [`dopri5_dense_into`]) into `k` and `ys` (y1 at the end;
/// `k[6n..]` is f1 by FSAL), returning the weighted error norm of `h Σ e_s k_s`.
#[allow(clippy::too_many_arguments)]
fn dopri5_stages<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, k: &mut [D], ys: &mut [D],
) -> Result<f64, ModelError> {
    use dopri5::{A, C, E};
    let n = y.len();
    k[..n].copy_from_slice(f0);
    for s in 1..7 {
        let (done, rest) = k.split_at_mut(s * n);
        // Y_s = y + h Σ_j a_sj k_j
        for (i, (v, &y0)) in ys.iter_mut().zip(y).enumerate() {
            *v = y0 + h * stage_sum(&A[s][..s], done, n, i);
        }
        rhs.eval(t + h * C[s], ys, &mut rest[..n])?;
    }
    // Stage 7 was evaluated at y1 (FSAL): ys holds y1.
    let hr = h.re();
    let m = rhs.error_dim();
    // h Σ e_s k_s component by component, weighted on the fly (one pass, no scratch)
    let mut err = tol.norm_by(
        m,
        |i| {
            let mut e = 0.0;
            for (s, &es) in E.iter().enumerate() {
                if es != 0.0 {
                    e += es * k[s * n + i].re();
                }
            }
            e * hr
        },
        &y[..m],
        &ys[..m],
    );
    if D::NDERIV > 0 {
        err = err.max(derivative_error(tol, hr, &E, k, n, &y[..m], &ys[..m]));
    }
    Ok(err)
}

/// The weighted error norm of the derivative parts of a dual run (the same embedded
/// estimate applied to the derivative), so that the witness's derivative is as accurate
/// as the tolerances ask (the analogue of including S in the direct method's error test).
fn derivative_error<D: Scalar>(
    tol: &Tolerances, h: f64, e: &[f64], k: &[D], stride: usize, y0: &[D], y1: &[D],
) -> f64 {
    let n = y0.len();
    let mut s = 0.0;
    for i in 0..n {
        let mut acc = 0.0;
        for (st, es) in e.iter().enumerate() {
            acc += es * k[st * stride + i].eps_part();
        }
        let sc = tol.atol + tol.rtol * y0[i].eps_part().abs().max(y1[i].eps_part().abs());
        let r = h * acc / sc;
        s += r * r;
    }
    if n == 0 {
        0.0
    } else {
        (s / n as f64).sqrt()
    }
}
