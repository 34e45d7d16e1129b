//! The problem's calls as the solvers make them: counted, their shapes checked, and a
//! failure or a non-finite value turned into text (the solvers shorten the step and go
//! on; only a wrong shape — a bug of the problem — is an error).

use super::error::LsqError;
use super::problem::{ConstrainedResiduals, Linearization, Residuals};
use nalgebra::{DMatrix, DVector};

/// An evaluated point of an unconstrained fit.
#[derive(Debug, Clone)]
pub(super) struct Evaluated {
    pub x: Vec<f64>,
    pub r: DVector<f64>,
    pub j: Option<DMatrix<f64>>,
    /// ½‖r‖².
    pub cost: f64,
}

/// The counts of calls.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counts {
    pub residuals: usize,
    pub jacobians: usize,
}

/// Checks an array's shape against the expected one.
pub(super) fn shape(
    what: &'static str, got: (usize, usize), expected: (usize, usize),
) -> Result<(), LsqError> {
    if got == expected {
        Ok(())
    } else {
        Err(LsqError::Shape {
            what,
            expected,
            got,
        })
    }
}

/// Whether every entry is finite.
fn finite<'a>(v: impl IntoIterator<Item = &'a f64>) -> bool {
    v.into_iter().all(|x| x.is_finite())
}

/// One call of r (and J) at x. The outer error: a wrong shape (m is fixed by the first
/// call); the inner: the problem's error or a non-finite entry, as text.
pub(super) fn residuals<P: Residuals>(
    problem: &P, x: &[f64], jacobian: bool, m: &mut Option<usize>, counts: &mut Counts,
) -> Result<Result<Evaluated, String>, LsqError> {
    counts.residuals += 1;
    counts.jacobians += usize::from(jacobian);
    let (r, j) = match problem.residuals(x, jacobian) {
        Ok(v) => v,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let rows = *m.get_or_insert(r.len());
    shape("the residual vector", (r.len(), 1), (rows, 1))?;
    if jacobian {
        let jm = j.as_ref().map_or((0, 0), |j| j.shape());
        shape("the Jacobian", jm, (rows, x.len()))?;
    }
    if !finite(r.iter()) || !j.as_ref().is_none_or(|j| finite(j.iter())) {
        return Ok(Err("a residual or Jacobian entry is not finite".into()));
    }
    let cost = 0.5 * r.norm_squared();
    Ok(Ok(Evaluated {
        x: x.to_vec(),
        r,
        j: if jacobian { j } else { None },
        cost,
    }))
}

/// One call of r, c (and J, C) at w; shapes fixed by the first call.
pub(super) fn constrained<P: ConstrainedResiduals>(
    problem: &P, w: &[f64], jacobian: bool, sizes: &mut Option<(usize, usize)>, counts: &mut Counts,
) -> Result<Result<Linearization, String>, LsqError> {
    counts.residuals += 1;
    counts.jacobians += usize::from(jacobian);
    let l = match problem.evaluate(w, jacobian) {
        Ok(v) => v,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let (m, p) = *sizes.get_or_insert((l.r.len(), l.c.len()));
    shape("the residual vector", (l.r.len(), 1), (m, 1))?;
    shape("the constraint vector", (l.c.len(), 1), (p, 1))?;
    if jacobian {
        let got = |a: &Option<DMatrix<f64>>| a.as_ref().map_or((0, 0), |a| a.shape());
        shape("the residual Jacobian", got(&l.jr), (m, w.len()))?;
        shape("the constraint Jacobian", got(&l.jc), (p, w.len()))?;
    }
    let jac_ok = |a: &Option<DMatrix<f64>>| a.as_ref().is_none_or(|a| finite(a.iter()));
    if !finite(l.r.iter()) || !finite(l.c.iter()) || !jac_ok(&l.jr) || !jac_ok(&l.jc) {
        return Ok(Err(
            "a residual, constraint or Jacobian entry is not finite".into(),
        ));
    }
    Ok(Ok(l))
}

/// max |vᵢ| (0 for an empty vector).
pub(super) fn max_abs(v: &DVector<f64>) -> f64 {
    v.iter().fold(0.0, |a, x| a.max(x.abs()))
}
