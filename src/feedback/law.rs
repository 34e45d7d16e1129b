//! What a closed loop's law reads: a tabulated reference (x_ref, u_nom, K) indexed by the
//! controller's own states, and how those states jump at an impact (docs/theory.md §10,
//! "The closed loop"). Two references implement it: one period of a periodic design
//! ([`super::reference::PeriodTable`], the phase τ alone) and a time-varying design along
//! a run with events ([`super::timeline::Timeline`], the phase τ and the count of impacts
//! k, which picks the nominal segment the system is in).
//!
//! The controller's first state is always the phase τ (`τ̇ = 1`); the others are discrete
//! (rate 0) and change only at impacts.

use super::clock::Clock;
use crate::model::Scalar;

/// The reference at the controller's states: x_ref, u_nom, K (nu×nx, row-major).
pub struct RefPoint<D> {
    pub x: Vec<D>,
    pub u: Vec<D>,
    pub k: Vec<D>,
}

/// A tabulated reference for the law `u = sat(u_nom + K (x − x_ref))` (module docs).
pub trait Reference: Clone + Send + Sync {
    /// The names of the controller's states, the phase first (appended to the system's).
    fn state_names(&self) -> Vec<String>;
    /// The controller's states at the nominal's start.
    fn start(&self) -> Vec<f64>;
    /// x_ref, u_nom and K at the controller's states `c`, in any scalar.
    fn at<D: Scalar>(&self, c: &[D]) -> RefPoint<D>;
    /// The controller's states just after an impact at `c`, under the rule `clock`.
    fn after_impact<D: Scalar>(&self, clock: Clock, c: &[D]) -> Vec<D>;
    /// The same reference with K = 0 (the open loop: the nominal control replayed).
    fn without_gains(&self) -> Self;
}
