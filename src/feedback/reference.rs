//! The nominal period tabulated for a controller that runs inside a simulation: x_ref, its
//! slope, u_nom and K on a uniform grid over `[0, T]`, evaluated in any scalar (so that a
//! closed-loop run can be differentiated by the engine's dual numbers), and extended past
//! both ends of the period for a perturbed impact that comes late or early.
//!
//! Between grid points x_ref is the cubic Hermite interpolant of its values and slopes
//! `f(x_ref, u_nom)` (fourth order); u_nom and K are linear (a piecewise-linear control on
//! a grid that divides the control nodes is exact; K is smooth, its error h²K̈/8).
//! Outside the period the reference is extended to first order along its slope at the end
//! it leaves (`x_ref(T) + f⁻ (τ − T)` after T, `x_ref(0) + f⁺ τ` before 0) with u_nom and K
//! held: Kong et al. (2021) integrate the mode's flow instead; the two differ by O(Δτ²),
//! which neither the linearization nor a small timing error sees.

use super::clock::Clock;
use super::gains::Lqr;
use super::knots::Knots;
use super::law::{RefPoint, Reference};
use crate::error::FeedbackError;
use crate::model::{HybridSystem, Scalar};
use nalgebra::DVector;

/// One period of a design, tabulated.
#[derive(Debug, Clone)]
pub struct PeriodTable {
    pub period: f64,
    /// Grid step T/(n − 1).
    h: f64,
    knots: Knots,
}

impl PeriodTable {
    /// Tabulates a design's nominal period at `n` evenly spaced phases (n ≥ 2), the slopes
    /// from the system's flow at the nominal. The last point is the period's end (before
    /// its closing event).
    pub fn from_lqr<S: HybridSystem>(lqr: &Lqr<'_, S>, n: usize) -> Result<Self, FeedbackError> {
        let (t0, tf) = lqr.span();
        let n = n.max(2);
        let h = (tf - t0) / (n - 1) as f64;
        let mut knots = Knots::with_capacity(n);
        let setup = lqr.setup();
        for i in 0..n {
            let t = if i + 1 == n { tf } else { t0 + h * i as f64 };
            let (mode, x, u) = lqr.nominal_at(t)?;
            let mut f = vec![0.0; setup.nx()];
            setup
                .sys()
                .flow(
                    mode,
                    t,
                    x.as_slice(),
                    u.as_slice(),
                    &lqr.theta()[..setup.np()],
                    &mut f,
                )
                .map_err(|source| crate::error::Error::Model {
                    t,
                    mode: setup.dims().mode_name(mode),
                    source,
                })?;
            knots.push(x, DVector::from_vec(f), u, &lqr.gain_at(t)?);
        }
        Ok(PeriodTable {
            period: tf - t0,
            h,
            knots,
        })
    }

    /// The same period with K = 0: the open loop (the nominal control replayed by phase).
    pub fn without_gains(&self) -> Self {
        let mut t = self.clone();
        t.knots.zero_gains();
        t
    }

    /// The reference at phase τ (module docs), in any scalar.
    pub fn at<D: Scalar>(&self, tau: D) -> RefPoint<D> {
        let n = self.knots.len();
        let tr = tau.re();
        if tr <= 0.0 {
            return self.knots.beyond(0, tau);
        }
        if tr >= self.period {
            return self.knots.beyond(n - 1, tau - self.period);
        }
        let i = ((tr / self.h) as usize).min(n - 2);
        let s = (tau - self.h * i as f64) / self.h;
        self.knots.between(i, s, self.h)
    }
}

impl Reference for PeriodTable {
    /// The phase τ alone.
    fn state_names(&self) -> Vec<String> {
        vec!["phase".into()]
    }
    fn start(&self) -> Vec<f64> {
        vec![0.0]
    }
    fn at<D: Scalar>(&self, c: &[D]) -> RefPoint<D> {
        PeriodTable::at(self, c[0])
    }
    /// τ⁺ by the clock rule ([`Clock::after_impact`]).
    fn after_impact<D: Scalar>(&self, clock: Clock, c: &[D]) -> Vec<D> {
        vec![clock.after_impact(c[0], self.period)]
    }
    fn without_gains(&self) -> Self {
        PeriodTable::without_gains(self)
    }
}
