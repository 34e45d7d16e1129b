//! Transitions of a hybrid DAE: the state before the event (with its algebraic states)
//! mapped to the differential states and the memory after it (seed 001 (16c), (24);
//! theory.md §6).
//!
//! An implicit transition `T(y⁺, y⁻, z⁻, y*, p, t) = 0` is solved for `y⁺` by Newton in
//! `f64`; one Newton correction in the caller's scalar,
//!
//! ```text
//! y⁺_D = y⁺ − T_{y⁺}⁻¹ T(y⁺, y⁻_D, z⁻_D, y*_D, p_D, t_D),
//! ```
//!
//! then carries the exact first derivatives `dy⁺ = −T_{y⁺}⁻¹ (T_{y⁻} dy⁻ + T_{z⁻} dz⁻ + …)`
//! (the implicit function theorem), so the jump (theory.md §3) sees the exact `R_x`, `R_p`
//! and `R_t`. The algebraic states after the event are not part of the transition: they
//! follow from the new mode's algebraic equations at every evaluation (consistent
//! re-initialization).

use super::algebraic::{self, Where};
use super::system::{DaeSystem, Point, Transition};
use crate::error::ModelError;
use crate::linalg;
use crate::model::Scalar;
use num_dual::Dual64;

/// Newton iterations allowed on an implicit transition.
pub const MAX_ITERATIONS: usize = 30;
/// Convergence: the update below this relative to `1 + |y⁺|_∞`.
pub const UPDATE_TOL: f64 = 1e-14;

/// The state after the event.
pub struct After<D> {
    pub mode: usize,
    pub y: Vec<D>,
    pub memory: Vec<D>,
}

/// Names for the messages of a failed transition.
pub struct Names<'a> {
    pub mode: &'a str,
    pub guard: &'a str,
}

/// Applies the transition through guard `k` of `mode` at `(t, y⁻, y*)`: z⁻ from the old
/// mode's algebraic equations, `y⁺` explicit or by Newton, then the memory update.
pub fn apply<S: DaeSystem + ?Sized, D: Scalar>(
    sys: &S, mode: usize, k: usize, t: D, y: &[D], memory: &[D], p: &[D], names: &Names<'_>,
) -> Result<After<D>, ModelError> {
    let z = algebraic::solve(
        sys,
        mode,
        t,
        y,
        memory,
        p,
        &Where {
            mode_name: names.mode,
        },
    )?;
    let before = Point {
        t,
        y,
        z: &z,
        memory,
        p,
    };
    let (new_mode, y_after) = match sys.transition(mode, k, before)? {
        Transition::Explicit { mode: m, y } => (m, y),
        Transition::Implicit { mode: m, guess } => {
            (m, implicit(sys, mode, k, guess, before, names)?)
        }
    };
    let memory = sys.memory_update(mode, k, new_mode, &y_after, before);
    Ok(After {
        mode: new_mode,
        y: y_after,
        memory,
    })
}

/// Solves `T(y⁺, before) = 0` (the module doc).
fn implicit<S: DaeSystem + ?Sized, D: Scalar>(
    sys: &S, mode: usize, k: usize, guess: Vec<f64>, before: Point<'_, D>, names: &Names<'_>,
) -> Result<Vec<D>, ModelError> {
    let n = before.y.len();
    if guess.len() != n {
        return Err(ModelError::SizeMismatch {
            what: format!(
                "the guess of the implicit transition through guard '{}'",
                names.guard
            ),
            expected: format!("{n} values (one per differential state)"),
            found: guess.len().to_string(),
        });
    }
    let re = |v: &[D]| v.iter().map(|a| Dual64::from(a.re())).collect::<Vec<_>>();
    let (y, z, m, p) = (re(before.y), re(before.z), re(before.memory), re(before.p));
    let real_before = Point {
        t: Dual64::from(before.t.re()),
        y: &y,
        z: &z,
        memory: &m,
        p: &p,
    };
    let mut w = guess;
    let mut jt = jacobian(sys, mode, k, &w, real_before)?;
    let mut residual = f64::INFINITY;
    for _ in 0..MAX_ITERATIONS {
        let mut dw: Vec<f64> = jt.0.iter().map(|v| -v).collect();
        linalg::solve_in_place(
            n,
            &mut jt.1.clone(),
            &mut dw,
            1,
            "the transition Jacobian T_{y⁺}",
        )?;
        let size = dw.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let scale = 1.0 + w.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (wi, d) in w.iter_mut().zip(&dw) {
            *wi += d;
        }
        jt = jacobian(sys, mode, k, &w, real_before)?;
        residual = jt.0.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if !residual.is_finite() {
            break;
        }
        if size <= UPDATE_TOL * scale {
            return correct(sys, mode, k, &w, &jt.1, before);
        }
    }
    Err(ModelError::TransitionNewton {
        guard: names.guard.to_string(),
        mode: names.mode.to_string(),
        t: before.t.re(),
        residual,
        iterations: MAX_ITERATIONS,
    })
}

/// `y⁺ − T_{y⁺}⁻¹ T(y⁺, before_D)` in the caller's scalar.
fn correct<S: DaeSystem + ?Sized, D: Scalar>(
    sys: &S, mode: usize, k: usize, w: &[f64], jac: &[f64], before: Point<'_, D>,
) -> Result<Vec<D>, ModelError> {
    let n = w.len();
    let wd: Vec<D> = w.iter().map(|&v| D::from(v)).collect();
    let mut r = vec![D::zero(); n];
    sys.transition_residual(mode, k, &wd, before, &mut r)?;
    let mut a: Vec<D> = jac.iter().map(|&v| D::from(v)).collect();
    linalg::solve_in_place(n, &mut a, &mut r, 1, "the transition Jacobian T_{y⁺}")?;
    Ok(wd.iter().zip(&r).map(|(&wi, &ri)| wi - ri).collect())
}

/// `T` and `T_{y⁺}` (row-major) at a real point: one dual pass per differential state.
fn jacobian<S: DaeSystem + ?Sized>(
    sys: &S, mode: usize, k: usize, w: &[f64], before: Point<'_, Dual64>,
) -> Result<(Vec<f64>, Vec<f64>), ModelError> {
    let n = w.len();
    let mut value = vec![0.0; n];
    let mut jac = vec![0.0; n * n];
    let mut r = vec![Dual64::from(0.0); n];
    for j in 0..n {
        let mut wd: Vec<Dual64> = w.iter().map(|&v| Dual64::from(v)).collect();
        wd[j] = wd[j].derivative();
        sys.transition_residual(mode, k, &wd, before, &mut r)?;
        for i in 0..n {
            jac[i * n + j] = r[i].eps;
            value[i] = r[i].re;
        }
    }
    Ok((value, jac))
}
