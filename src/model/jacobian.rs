//! Jacobians of the model functions by forward-mode dual numbers: one direction a pass.
use super::{lane_eps, lane_seed, HybridSystem, Lanes, ResetPattern, Scalar, StateMap, LANES};
use crate::error::ModelError;
use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;

/// Where the inputs of a model function sit in one flat seed vector `(t, x, u, p)`.
#[derive(Debug, Clone, Copy)]
struct Layout {
    nx: usize,
    nu: usize,
    np: usize,
}

impl Layout {
    fn n(&self) -> usize {
        1 + self.nx + self.nu + self.np
    }
    /// Sets the derivative part of input direction `j` (0: t, then x, u, p) to `eps`
    /// in dual inputs that already hold the values; the time is seeded by the caller.
    fn set_eps(&self, j: usize, eps: f64, x: &mut [Dual64], u: &mut [Dual64], p: &mut [Dual64]) {
        let (nx, nu) = (self.nx, self.nu);
        match j {
            0 => {}
            j if j <= nx => x[j - 1].eps = eps,
            j if j <= nx + nu => u[j - 1 - nx].eps = eps,
            j => p[j - 1 - nx - nu].eps = eps,
        }
    }
}

/// A vector-valued function's value and its Jacobian split by argument.
#[derive(Debug, Clone)]
pub struct Jacobian {
    pub value: DVector<f64>,
    pub t: DVector<f64>,
    pub x: DMatrix<f64>,
    pub u: DMatrix<f64>,
    pub p: DMatrix<f64>,
}

/// Differentiates a model function `F(t, x, u, p) ∈ R^m` exactly with forward-mode dual
/// numbers (one pass per input direction).
pub fn jacobian_of<F>(
    m: usize, t: f64, x: &[f64], u: &[f64], p: &[f64], f: F,
) -> Result<Jacobian, ModelError>
where
    F: Fn(Dual64, &[Dual64], &[Dual64], &[Dual64], &mut [Dual64]) -> Result<(), ModelError>,
{
    let lay = Layout {
        nx: x.len(),
        nu: u.len(),
        np: p.len(),
    };
    let mut full = DMatrix::zeros(m, lay.n());
    let mut value = DVector::zeros(m);
    let mut out = vec![Dual64::from(0.0); m];
    // one set of dual inputs, re-seeded per direction (no allocation per pass)
    let lift = |v: &[f64]| v.iter().map(|&a| Dual64::from(a)).collect::<Vec<_>>();
    let (mut xd, mut ud, mut pd) = (lift(x), lift(u), lift(p));
    for j in 0..lay.n() {
        // direction j seeded, j − 1 cleared: O(1) per pass (the other ε parts stay 0), so
        // a guard that reads a few of a thousand states costs O(n) in all, not O(n²)
        if j > 0 {
            lay.set_eps(j - 1, 0.0, &mut xd, &mut ud, &mut pd);
        }
        lay.set_eps(j, 1.0, &mut xd, &mut ud, &mut pd);
        let td = Dual64::new(t, if j == 0 { 1.0 } else { 0.0 });
        out.iter_mut().for_each(|o| *o = Dual64::from(0.0));
        f(td, &xd, &ud, &pd, &mut out)?;
        for i in 0..m {
            full[(i, j)] = out[i].eps;
            if j == 0 {
                value[i] = out[i].re;
            }
        }
    }
    if lay.n() == 0 {
        let td = Dual64::from(t);
        f(td, &xd, &ud, &pd, &mut out)?;
        for i in 0..m {
            value[i] = out[i].re;
        }
    }
    Ok(Jacobian {
        value,
        t: full.column(0).into_owned(),
        x: full.columns(1, lay.nx).into_owned(),
        u: full.columns(1 + lay.nx, lay.nu).into_owned(),
        p: full.columns(1 + lay.nx + lay.nu, lay.np).into_owned(),
    })
}

/// A model function `F(t, x, u, p) ∈ R^m` that can be evaluated in any scalar, so that
/// [`jacobian_once`] can take all of its derivative directions in one vector-dual pass.
pub trait ScalarFn {
    fn call<D: Scalar>(
        &self, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError>;
}

/// [`jacobian_of`] in one [`Lanes`] pass when the `1 + nx + nu + np` input directions fit
/// in [`LANES`] (the event tape's guard and reset Jacobians: one model evaluation and one
/// allocation instead of one of each per direction); otherwise one dual pass per
/// direction. The derivatives are exact either way.
pub fn jacobian_once<F: ScalarFn>(
    m: usize, t: f64, x: &[f64], u: &[f64], p: &[f64], f: &F,
) -> Result<Jacobian, ModelError> {
    let lay = Layout {
        nx: x.len(),
        nu: u.len(),
        np: p.len(),
    };
    let n = lay.n();
    if n > LANES {
        return jacobian_of(m, t, x, u, p, |t, x, u, p, out| f.call(t, x, u, p, out));
    }
    // lane 0: t, then x, u, p in order (the columns of `jacobian_of`); the seeds and the
    // outputs in one scratch (on the stack for small systems)
    crate::model::scratch::with_scratch(n - 1 + m, |buf: &mut [Lanes]| {
        for (i, (d, &a)) in buf.iter_mut().zip(x.iter().chain(u).chain(p)).enumerate() {
            *d = lane_seed(a, Some(1 + i));
        }
        let (xd, rest) = buf.split_at_mut(lay.nx);
        let (ud, rest) = rest.split_at_mut(lay.nu);
        let (pd, out) = rest.split_at_mut(lay.np);
        f.call(lane_seed(t, Some(0)), xd, ud, pd, out)?;
        let col = |i: usize, j: usize| lane_eps(&out[i], j);
        Ok(Jacobian {
            value: DVector::from_iterator(m, out.iter().map(|o| o.re)),
            t: DVector::from_fn(m, |i, _| col(i, 0)),
            x: DMatrix::from_fn(m, lay.nx, |i, j| col(i, 1 + j)),
            u: DMatrix::from_fn(m, lay.nu, |i, j| col(i, 1 + lay.nx + j)),
            p: DMatrix::from_fn(m, lay.np, |i, j| col(i, 1 + lay.nx + lay.nu + j)),
        })
    })
}

/// `f_m` and its Jacobians `f_t, f_x, f_u, f_p`.
pub fn flow_jacobian<S: HybridSystem + ?Sized>(
    sys: &S, nx: usize, mode: usize, t: f64, x: &[f64], u: &[f64], p: &[f64],
) -> Result<Jacobian, ModelError> {
    jacobian_of(nx, t, x, u, p, |t, x, u, p, out| {
        sys.flow(mode, t, x, u, p, out)
    })
}

/// `g_{m,k}` and its gradients `g_t, g_x, g_u, g_p` (each a 1-row Jacobian).
pub fn guard_jacobian<S: HybridSystem + ?Sized>(
    sys: &S, mode: usize, k: usize, t: f64, x: &[f64], u: &[f64], p: &[f64],
) -> Result<Jacobian, ModelError> {
    jacobian_of(1, t, x, u, p, |t, x, u, p, out| {
        out[0] = sys.guard(mode, k, t, x, u, p);
        Ok(())
    })
}

/// The reset of guard k in mode m as a [`ScalarFn`] (no control argument), remembering the
/// mode after. With `cols`, its `x` argument holds those states only, the others fixed at
/// `base` (the directions of a [`ResetPattern`]); without, every state.
struct ResetFn<'s, S: ?Sized> {
    sys: &'s S,
    mode: usize,
    k: usize,
    cols: Option<(&'s [usize], &'s [f64])>,
    next: std::cell::Cell<usize>,
}

impl<S: HybridSystem + ?Sized> ScalarFn for ResetFn<'_, S> {
    fn call<D: Scalar>(
        &self, t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let full: Vec<D>;
        let x = match self.cols {
            None => x,
            Some((cols, base)) => {
                let mut v: Vec<D> = base.iter().map(|&a| D::from(a)).collect();
                for (&j, &xj) in cols.iter().zip(x) {
                    v[j] = xj;
                }
                full = v;
                &full
            }
        };
        let (next, xp) = self.sys.reset(self.mode, self.k, t, x, p)?;
        if xp.len() != out.len() {
            return Err(ModelError::SizeMismatch {
                what: format!("reset of guard {}", self.k),
                expected: format!("{} values (one per state)", out.len()),
                found: xp.len().to_string(),
            });
        }
        out.copy_from_slice(&xp);
        self.next.set(next);
        Ok(())
    }
}

/// `R_{m,k}` with its Jacobians `R_t, R_x, R_p` (the `u` block is empty), and the next mode.
pub fn reset_jacobian<S: HybridSystem + ?Sized>(
    sys: &S, nx: usize, mode: usize, k: usize, t: f64, x: &[f64], p: &[f64],
) -> Result<(usize, Jacobian), ModelError> {
    let f = ResetFn {
        sys,
        mode,
        k,
        cols: None,
        next: std::cell::Cell::new(mode),
    };
    let jac = jacobian_once(nx, t, x, &[], p, &f)?;
    Ok((f.next.get(), jac))
}

/// A reset's value and Jacobians with `R_x` as an operator (docs/theory.md §3, "The jump
/// as an operator").
#[derive(Debug, Clone)]
pub struct StructuredReset {
    pub value: DVector<f64>,
    pub t: DVector<f64>,
    pub x: StateMap,
    pub p: DMatrix<f64>,
}

/// [`reset_jacobian`] along the directions of a [`ResetPattern`]: t, the states the changed
/// values read, and p — `1 + |cols| + n_p` directions (one vector-dual pass when they fit
/// in [`crate::model::LANES`]) instead of `1 + n_x + n_p`; `R_x` kept as the identity with
/// the changed rows ([`StateMap::Rows`]). The entries the pattern leaves out are the
/// identity's: a pattern must contain every entry the reset can make differ from it.
#[allow(clippy::too_many_arguments)]
pub fn reset_jacobian_on<S: HybridSystem + ?Sized>(
    sys: &S, nx: usize, mode: usize, k: usize, t: f64, x: &[f64], p: &[f64], pattern: &ResetPattern,
) -> Result<(usize, StructuredReset), ModelError> {
    if pattern.dim() != nx {
        return Err(ModelError::SizeMismatch {
            what: format!("reset pattern of guard {k}"),
            expected: format!("{nx} states"),
            found: pattern.dim().to_string(),
        });
    }
    let cols = pattern.columns();
    let f = ResetFn {
        sys,
        mode,
        k,
        cols: Some((&cols, x)),
        next: std::cell::Cell::new(mode),
    };
    let xs: Vec<f64> = cols.iter().map(|&j| x[j]).collect();
    let jac = jacobian_once(nx, t, &xs, &[], p, &f)?;
    let rows = pattern
        .rows()
        .iter()
        .map(|(i, read)| {
            let row = read
                .iter()
                .map(|j| {
                    let at = cols.binary_search(j).expect("a read state is a column");
                    (*j, jac.x[(*i, at)])
                })
                .collect();
            (*i, row)
        })
        .collect();
    // rows the pattern keeps have R_t = 0 and R_p = 0 by its contract; their computed
    // entries are exact zeros for a correct pattern
    Ok((
        f.next.get(),
        StructuredReset {
            value: jac.value,
            t: jac.t,
            x: StateMap::Rows { n: nx, rows },
            p: jac.p,
        },
    ))
}

/// The outputs and their Jacobians.
pub fn outputs_jacobian<S: HybridSystem + ?Sized>(
    sys: &S, ny: usize, mode: usize, t: f64, x: &[f64], u: &[f64], p: &[f64],
) -> Result<Jacobian, ModelError> {
    jacobian_of(ny, t, x, u, p, |t, x, u, p, out| {
        sys.outputs(mode, t, x, u, p, out)
    })
}

/// `x0(p)` and `dx0/dp`.
pub fn initial_jacobian<S: HybridSystem + ?Sized>(
    sys: &S, nx: usize, p: &[f64],
) -> Result<(DVector<f64>, DMatrix<f64>), ModelError> {
    let jac = jacobian_of(nx, 0.0, &[], &[], p, |_t, _x, _u, p, out| {
        let x0 = sys.initial_state(p)?;
        out.copy_from_slice(&x0);
        Ok(())
    })?;
    Ok((jac.value, jac.p))
}
