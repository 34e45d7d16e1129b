//! The closed-loop linearization along a design: the transition matrix of
//! `δẋ = (A + BK) δx` over each segment with the jumps `δx⁺ = Ξ δx⁻` between them, and over
//! one period of a periodic design the monodromy `M = Ξ_c Φ_cl(T, 0)` whose eigenvalues
//! are the closed-loop Floquet multipliers (docs/theory.md §10).

use super::gains::Lqr;
use super::linearize::linearization;
use super::periodic::PeriodicLqr;
use crate::error::FeedbackError;
use crate::error::{Error, ModelError};
use crate::integrate::smooth::integrate_smooth;
use crate::integrate::{NewtonJacobian, OdeRhs, Segment, Stats};
use crate::model::HybridSystem;
use crate::sensitivity::jump::Jump;
use nalgebra::{Complex, DMatrix};

/// `Φ̇ = (A(t) + B(t) K(t)) Φ` on one segment, K from the design's dense output.
struct ClosedLoopFlow<'r, 'a, S: HybridSystem> {
    lqr: &'r Lqr<'a, S>,
    seg: &'r Segment<f64>,
    /// With K (closed loop), or A alone (open loop).
    feedback: bool,
}

impl<S: HybridSystem> ClosedLoopFlow<'_, '_, S> {
    fn matrix(&self, t: f64) -> Result<DMatrix<f64>, ModelError> {
        let setup = &self.lqr.setup;
        let mut x = vec![0.0; setup.n()];
        self.seg.state_at(t, &mut x);
        let (a, b) = linearization(setup, &self.seg.ctx(), t, &x, &self.lqr.theta)?;
        if !self.feedback {
            return Ok(a);
        }
        let k = self
            .lqr
            .gain_at(t)
            .map_err(|e| ModelError::Other(e.to_string()))?;
        Ok(a + b * k)
    }
}

impl<S: HybridSystem> OdeRhs<f64> for ClosedLoopFlow<'_, '_, S> {
    fn dim(&self) -> usize {
        self.lqr.weights.nx().pow(2)
    }
    fn eval(&self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        let n = self.lqr.weights.nx();
        let phi = DMatrix::from_column_slice(n, n, y);
        dy.copy_from_slice((self.matrix(t)? * phi).as_slice());
        Ok(())
    }
    fn newton_jacobian(&self, t: f64, _y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        let n = self.lqr.weights.nx();
        Ok(NewtonJacobian::dense(self.matrix(t)?, n, 0))
    }
}

impl<S: HybridSystem> Lqr<'_, S> {
    /// The closed-loop transition matrix over the whole nominal, `xi(i)` the jump at event
    /// `i` (the sweep's own jumps for [`Self::transition`]).
    pub(crate) fn transition_with(
        &self, xi: &dyn Fn(usize) -> Result<DMatrix<f64>, Error>, feedback: bool,
    ) -> Result<DMatrix<f64>, FeedbackError> {
        let n = self.weights.nx();
        let mut phi = DMatrix::<f64>::identity(n, n);
        let mut stats = Stats::default();
        for rs in &self.sweep.segments {
            let seg = &self.nominal.segments[rs.segment];
            let rhs = ClosedLoopFlow {
                lqr: self,
                seg,
                feedback,
            };
            let (y, _) = integrate_smooth(
                &rhs,
                seg.t_start,
                seg.t_end,
                phi.as_slice(),
                &self.setup.solver(),
                None,
                &mut stats,
                None,
            )
            .map_err(|e| FeedbackError::Nominal(format!("the closed-loop flow failed: {e:?}")))?;
            phi = DMatrix::from_column_slice(n, n, &y);
            for &i in &seg.end_events {
                phi = xi(i)? * phi;
            }
        }
        Ok(phi)
    }

    /// The closed-loop transition matrix `∂x(t_f)/∂x(t_0)` of the linearization with the
    /// exact saltations at the events ([`Jump::from_record`]).
    pub fn transition(&self) -> Result<DMatrix<f64>, FeedbackError> {
        self.transition_with(&|i| self.saltation(i), true)
    }

    /// The open-loop transition matrix (K = 0) with the same saltations.
    pub fn open_transition(&self) -> Result<DMatrix<f64>, FeedbackError> {
        self.transition_with(&|i| self.saltation(i), false)
    }

    /// The exact saltation matrix Ξ of the nominal's event `i` ([`Jump::from_record`]).
    fn saltation(&self, i: usize) -> Result<DMatrix<f64>, Error> {
        let e = &self.nominal.events[i];
        Jump::from_record(&self.setup, &self.nominal, i, &self.theta)
            .map(|j| j.xi.to_dense())
            .map_err(|source| Error::Model {
                t: e.t,
                mode: self.setup.dims().mode_name(e.mode_before()),
                source,
            })
    }
}

impl<S: HybridSystem> PeriodicLqr<'_, S> {
    /// The closed-loop monodromy `M = Ξ_c Φ_cl(T, 0)` (with the jumps of the events inside
    /// the period).
    pub fn monodromy(&self) -> Result<DMatrix<f64>, FeedbackError> {
        self.monodromy_with(true)
    }

    /// The open-loop monodromy `Ξ_c Φ(T, 0)` (K = 0) under the same phase rule: with
    /// [`Clock::Reset`](super::clock::Clock) the return map's of the orbit.
    pub fn open_loop_monodromy(&self) -> Result<DMatrix<f64>, FeedbackError> {
        self.monodromy_with(false)
    }

    fn monodromy_with(&self, feedback: bool) -> Result<DMatrix<f64>, FeedbackError> {
        let last = self.lqr.nominal.events.len() - 1;
        let lqr = &self.lqr;
        let xi = |i: usize| -> Result<DMatrix<f64>, Error> {
            if i == last {
                return Ok(self.closing.clone());
            }
            lqr.saltation(i)
        };
        lqr.transition_with(&xi, feedback)
    }

    /// The closed-loop Floquet multipliers (eigenvalues of [`Self::monodromy`]), largest
    /// modulus first.
    pub fn multipliers(&self) -> Result<Vec<Complex<f64>>, FeedbackError> {
        Ok(crate::linalg::eigenvalues(&self.monodromy()?))
    }
}
