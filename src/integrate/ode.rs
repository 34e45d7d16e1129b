//! What every integrator's step works with: the right-hand side, the Newton Jacobian in
//! its block form, the error tolerances and their norm, the Newton limits, and the outcome
//! of trying a step (below the steppers: dopri5.rs, sdirk3.rs, radau.rs, bdf/ and newton.rs read it).

use super::bdf::history::BdfHistory;
use super::dense::DenseStep;
use super::sparse::SparseBlock;
use crate::error::ModelError;
use crate::model::Scalar;
use nalgebra::DMatrix;

/// A right-hand side `ẏ = F(t, y)` as the integrators see it.
pub trait OdeRhs<D: Scalar> {
    fn dim(&self) -> usize;
    fn eval(&self, t: D, y: &[D], dy: &mut [D]) -> Result<(), ModelError>;
    /// The Jacobian `∂F/∂y` (real parts) for the Newton iteration of implicit methods.
    fn newton_jacobian(&self, t: f64, y: &[f64]) -> Result<NewtonJacobian, ModelError>;
    /// How many leading components enter the error test (default: all). Pure quadratures
    /// that nothing else depends on may be left out, as CVODES does by default.
    fn error_dim(&self) -> usize {
        self.dim()
    }
}

/// The Newton Jacobian, in the block form that sensitivity systems have:
/// `blockdiag(A, A, …, A, 0)` with `copies` copies of the square block `A` followed by
/// `rest` components with zero Jacobian (quadratures). The coupling of sensitivity columns
/// to the state through second derivatives is left out (simplified Newton).
#[derive(Debug, Clone)]
pub struct NewtonJacobian {
    pub block: JacobianBlock,
    pub copies: usize,
    pub rest: usize,
}

impl NewtonJacobian {
    /// A dense block.
    pub fn dense(block: DMatrix<f64>, copies: usize, rest: usize) -> Self {
        NewtonJacobian {
            block: JacobianBlock::Dense(block),
            copies,
            rest,
        }
    }
}

/// The square block of a [`NewtonJacobian`]: dense, or sparse on a declared pattern
/// (docs/theory.md §8, "Sparse Jacobians"; factored by a sparse LU in real runs).
#[derive(Debug, Clone)]
pub enum JacobianBlock {
    Dense(DMatrix<f64>),
    Sparse(SparseBlock),
}

impl JacobianBlock {
    /// The number of rows (= columns).
    pub fn dim(&self) -> usize {
        match self {
            JacobianBlock::Dense(m) => m.nrows(),
            JacobianBlock::Sparse(s) => s.dim(),
        }
    }

    /// The block as a dense matrix.
    pub fn to_dense(&self) -> std::borrow::Cow<'_, DMatrix<f64>> {
        match self {
            JacobianBlock::Dense(m) => std::borrow::Cow::Borrowed(m),
            JacobianBlock::Sparse(s) => std::borrow::Cow::Owned(s.to_dense()),
        }
    }

    /// `−Aᵀ` (the adjoint's block).
    pub fn neg_transpose(&self) -> JacobianBlock {
        match self {
            JacobianBlock::Dense(m) => JacobianBlock::Dense(-m.transpose()),
            JacobianBlock::Sparse(s) => JacobianBlock::Sparse(s.neg_transpose()),
        }
    }
}

/// Error tolerances: component i is weighted by `atol + rtol·max(|y0_i|, |y1_i|)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    pub rtol: f64,
    pub atol: f64,
}

impl Tolerances {
    /// RMS norm of `e` weighted by the tolerances (Hairer, Nørsett & Wanner I, (II.4.11)).
    pub fn norm<D: Scalar>(&self, e: &[f64], y0: &[D], y1: &[D]) -> f64 {
        self.norm_by(e.len(), |i| e[i], y0, y1)
    }

    /// [`Self::norm`] of the first `m` components of an error given by component.
    pub fn norm_by<D: Scalar>(
        &self, m: usize, e: impl Fn(usize) -> f64, y0: &[D], y1: &[D],
    ) -> f64 {
        if m == 0 {
            return 0.0;
        }
        let mut s = 0.0;
        for i in 0..m {
            let sc = self.atol + self.rtol * y0[i].re().abs().max(y1[i].re().abs());
            let r = e(i) / sc;
            s += r * r;
        }
        (s / m as f64).sqrt()
    }
}

/// The result of trying one step.
pub enum Attempt<D> {
    /// The step was computed; `err` is its weighted error norm (accept when ≤ 1).
    Done {
        y1: Vec<D>,
        f1: Vec<D>,
        err: f64,
        dense: DenseStep<D>,
        evals: usize,
        /// A multistep method's history after the step (to keep if the step is accepted);
        /// `None` for the one-step methods.
        history: Option<Box<BdfHistory<D>>>,
    },
    /// The implicit stage equations did not converge: retry with a smaller step.
    NewtonFailed { evals: usize },
}

impl<D> Attempt<D> {
    /// A computed step of a one-step method (no history to carry).
    pub(super) fn done(
        y1: Vec<D>, f1: Vec<D>, err: f64, dense: DenseStep<D>, evals: usize,
    ) -> Self {
        Attempt::Done {
            y1,
            f1,
            err,
            dense,
            evals,
            history: None,
        }
    }
}

/// Newton iteration limit per stage; convergence is declared when the weighted norm of
/// the update is below `NEWTON_TOL` (tight, so that derivatives through the stages are
/// accurate: Hairer & Wanner II, §IV.8 use κ·tol with κ ≈ 0.01–0.1; we are stricter).
pub(super) const NEWTON_MAX_ITER: usize = 12;
pub(super) const NEWTON_TOL: f64 = 1e-6;
