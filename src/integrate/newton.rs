//! What an implicit integrator keeps from one step to the next: the Jacobian `J = ∂F/∂y`
//! and the factored iteration matrices, with the rules of Hairer & Wanner's RADAU5
//! (*Solving ODEs II*, §IV.8, "Step size selection" and "Implementation"; docs/theory.md
//! §8):
//!
//! - J is evaluated again at the next step's start only when the last step's simplified
//!   Newton contracted slowly, `θ > θ_J` with θ_J = [`JAC_RATE`] (RADAU5's `THET`), and
//!   after an event or at a new breakpoint interval (the flow, the mode or the state
//!   jumped);
//! - the matrices are factored again only when J changed or the step size did; the step
//!   size controller holds h when the new one is within `[1, 1.2] h` (RADAU5's `QUOT1`,
//!   `QUOT2`; [`Controller`](super::controller::Controller)), so smooth stretches reuse one
//!   factorization;
//! - when Newton fails (or a matrix is singular) with a Jacobian from an earlier point, J
//!   is evaluated at this point and the same step is tried once more before the step size
//!   is reduced.
//!
//! A checkpointed step must replay bit for bit, so each accepted step records whether J
//! was evaluated at its start ([`crate::integrate::DenseStep::fresh_jacobian`]), and a
//! replay window records where the J in force at its start was evaluated
//! ([`crate::integrate::ReplayWindow::jacobian_at`]); a replay evaluates J there and
//! follows the records ([`Newton::evaluate_at`], [`Newton::replaying`]).

use super::lu::{Factored, Lu};
use super::ode::{JacobianBlock, NewtonJacobian, OdeRhs};
use super::sparse::SparseLu;
use crate::error::ModelError;
use crate::model::Scalar;
use nalgebra::{Complex, DMatrix};

/// RADAU5's `THET`: J is evaluated again after a step whose Newton contraction rate
/// exceeded it. Hairer & Wanner's default, 0.001.
pub const JAC_RATE: f64 = 1e-3;

/// The factored iteration matrices of one method and step size.
pub(crate) enum Factors {
    /// SDIRK3: `I − hγ J` (one real matrix) for each of `copies` blocks; the rest is the
    /// identity. A sparse block is factored as `1/(hγ) I − J`, its solutions multiplied by
    /// `scale` = 1/(hγ) (1 for dense factors).
    Sdirk {
        lu: Factored<f64>,
        copies: usize,
        scale: f64,
    },
    /// Radau IIA after the transformation to the eigenbasis of `A⁻¹` (Hairer & Wanner II,
    /// (IV.8.15)–(IV.8.16)): the real `γ/h I − J` and the complex `(α + iβ)/h I − J`.
    /// Both for each of `copies` blocks; the rest (zero Jacobian) is `γ/h` and `(α + iβ)/h`.
    Radau {
        real: Factored<f64>,
        complex: Factored<Complex<f64>>,
        copies: usize,
    },
}

/// Work counters of the implicit integrators.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct NewtonCounts {
    /// Jacobian evaluations.
    pub jacobians: usize,
    /// Factorizations of the iteration matrices (one per step size and Jacobian).
    pub factorizations: usize,
    /// Simplified Newton iterations.
    pub iterations: usize,
}

impl NewtonCounts {
    /// No implicit step was taken (DOPRI5).
    pub fn is_zero(&self) -> bool {
        *self == NewtonCounts::default()
    }
}

impl std::ops::AddAssign for NewtonCounts {
    fn add_assign(&mut self, o: NewtonCounts) {
        self.jacobians += o.jacobians;
        self.factorizations += o.factorizations;
        self.iterations += o.iterations;
    }
}

/// What a stage iteration reports.
pub(crate) enum Solve<T> {
    /// Converged: the result, and the observed contraction rate θ.
    Converged(T, f64),
    /// Did not converge (or produced non-finite values).
    Failed,
}

/// The Newton state carried across the steps of one run (see the module doc).
pub struct Newton {
    jac: Option<NewtonJacobian>,
    /// J was evaluated at the current step's start.
    fresh: bool,
    /// J is to be evaluated at the current step's start before it is used.
    stale: bool,
    /// The factors, with the step size they were built for (dropped when J changes).
    factors: Option<(f64, Factors)>,
    /// The contraction rate of the last converged stage iteration.
    rate: f64,
    counts: NewtonCounts,
}

impl Default for Newton {
    fn default() -> Self {
        Self::new()
    }
}

impl Newton {
    /// No Jacobian yet: the first step evaluates one.
    pub fn new() -> Self {
        Newton {
            jac: None,
            fresh: false,
            stale: true,
            factors: None,
            rate: 0.0,
            counts: NewtonCounts::default(),
        }
    }

    /// The work so far.
    pub fn counts(&self) -> NewtonCounts {
        self.counts
    }

    /// Whether J was evaluated at the current step's start (recorded on the accepted step).
    pub fn fresh(&self) -> bool {
        self.fresh
    }

    /// The run moved on to the end of an accepted step: J is kept unless that step's
    /// Newton iteration contracted more slowly than [`JAC_RATE`].
    pub fn advance(&mut self) {
        self.fresh = false;
        if self.rate > JAC_RATE {
            self.stale = true;
        }
    }

    /// The flow, mode or state jumped (an event, a new breakpoint interval), or a replay
    /// window starts: J is evaluated at the next step's start.
    pub fn invalidate(&mut self) {
        self.fresh = false;
        self.stale = true;
        self.factors = None;
    }

    /// Replaying a recorded step: J is evaluated at its start exactly when the forward run
    /// did (`fresh`), so the replayed step is the forward run's, bit for bit.
    pub fn replaying(&mut self, fresh: bool) {
        self.fresh = false;
        self.stale = fresh || self.jac.is_none();
    }

    /// J evaluated at `(t, y)`, an earlier point than the next step's start (a replay
    /// window's inherited Jacobian): in hand, not fresh, not stale.
    pub fn evaluate_at<D: Scalar, R: OdeRhs<D> + ?Sized>(
        &mut self, rhs: &R, t: f64, y: &[f64],
    ) -> Result<(), ModelError> {
        self.jacobian_now(rhs, t, y)?;
        self.fresh = false;
        Ok(())
    }

    fn jacobian_now<D: Scalar, R: OdeRhs<D> + ?Sized>(
        &mut self, rhs: &R, t: f64, y: &[f64],
    ) -> Result<(), ModelError> {
        self.jac = Some(rhs.newton_jacobian(t, y)?);
        self.counts.jacobians += 1;
        self.fresh = true;
        self.stale = false;
        self.factors = None;
        Ok(())
    }

    /// J at `(t, y)` if it is stale, else the one in hand.
    fn jacobian<D: Scalar, R: OdeRhs<D> + ?Sized>(
        &mut self, rhs: &R, t: f64, y: &[f64],
    ) -> Result<(), ModelError> {
        if self.stale || self.jac.is_none() {
            self.jacobian_now(rhs, t, y)?;
        }
        Ok(())
    }

    /// One step's stage iteration with the factors for step size `h` (built by `build`
    /// from J when J or h changed), retried once with J evaluated at `(t, y)` when it
    /// fails with an older J. `None`: failed with a fresh J (the step must shrink).
    /// `solve` returns its result and the number of Newton iterations it took.
    pub(crate) fn step<D: Scalar, R: OdeRhs<D> + ?Sized, T>(
        &mut self, rhs: &R, (t, y): (f64, &[f64]), h: f64,
        build: impl Fn(&NewtonJacobian) -> Option<Factors>,
        mut solve: impl FnMut(&Factors) -> Result<(Solve<T>, usize), ModelError>,
    ) -> Result<Option<T>, ModelError> {
        loop {
            self.jacobian(rhs, t, y)?;
            let have = matches!(&self.factors, Some((hf, _)) if *hf == h);
            if !have {
                let jac = self.jac.as_ref().expect("evaluated above");
                self.factors = build(jac).map(|f| (h, f));
                self.counts.factorizations += 1;
            }
            let outcome = match &self.factors {
                Some((_, f)) => {
                    let (outcome, iterations) = solve(f)?;
                    self.counts.iterations += iterations;
                    outcome
                }
                None => Solve::Failed,
            };
            match outcome {
                Solve::Converged(v, rate) => {
                    self.rate = rate;
                    return Ok(Some(v));
                }
                Solve::Failed if !self.fresh => self.stale = true,
                Solve::Failed => return Ok(None),
            }
        }
    }

    /// The factors in hand (for the error estimate after a converged iteration).
    pub(crate) fn factors(&self) -> Option<&Factors> {
        self.factors.as_ref().map(|(_, f)| f)
    }
}

/// The factored iteration matrix `I − c J` of SDIRK3 (c = hγ) and the BDFs (c = h/α_k),
/// block by block: a sparse block (in real runs) factored as `1/c I − J` with its
/// solutions scaled by 1/c, a dense one as it is.
pub(super) fn shifted_factors(j: &NewtonJacobian, c: f64, sparse: bool) -> Option<Factors> {
    let (lu, scale) = match &j.block {
        JacobianBlock::Sparse(s) if sparse => (
            Factored::Sparse(Box::new(SparseLu::<f64>::factor(s, 1.0 / c)?)),
            1.0 / c,
        ),
        b => {
            let b = b.to_dense();
            let k = b.nrows();
            let mat = DMatrix::<f64>::identity(k, k) - &*b * c;
            (Factored::Dense(Lu::of(&mat)?), 1.0)
        }
    };
    Some(Factors::Sdirk {
        lu,
        copies: j.copies,
        scale,
    })
}

/// Applies `blockdiag((I − cJ)⁻¹, …, I)` of [`shifted_factors`] to `r` in place (`x` a
/// scratch of the block's size or more).
pub(super) fn shifted_solve<D: Scalar>(f: &Factors, r: &mut [D], x: &mut [D]) {
    let Factors::Sdirk { lu, copies, scale } = f else {
        unreachable!("shifted factors are built by `shifted_factors`")
    };
    let k = lu.dim();
    for c in 0..*copies {
        let block = &mut r[c * k..(c + 1) * k];
        lu.solve(block, &mut x[..k]);
        if *scale != 1.0 {
            block.iter_mut().for_each(|v| *v *= *scale);
        }
    }
}
