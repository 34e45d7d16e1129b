//! How a periodic controller's phase runs across impacts, and the jump of the Riccati
//! solution that each rule implies at the event that closes a period (docs/theory.md §10,
//! periodic LQR). Along a run that is not periodic the same two rules apply at every
//! impact ([`super::run_table`]: `Extend` keeps the nominal clock, `Reset` restarts it at
//! the next stretch's nominal start; docs/theory.md §10, "The closed loop along a run").
//!
//! The phase τ indexes the nominal period `[0, T]`: the law is
//! `u = u_nom(τ) + K(τ)(x − x_ref(τ))`. When the actual impact comes before or after the
//! nominal one (a perturbed gait), the two rules differ:
//!
//! - [`Clock::Reset`]: τ restarts at every actual impact (`τ⁺ = 0`): the gains of the step
//!   the system is in, the timing error forgotten. To first order
//!   `δx⁺ = R_x (δx⁻ + f⁻ δt_e)`, `δt_e = −g_x δx⁻/ġ`, so the jump is
//!   `Ξ_R = R_x − (R_x f⁻ + R_t) g_xᵀ/ġ` (the saltation without its `f⁺` term: it
//!   annihilates f⁻; the return map of the shooting closure's multipliers is this one).
//! - [`Clock::Extend`]: τ keeps the nominal clock (`τ⁺ = τ − T`) and the reference is
//!   extended past its event on either side (Kong, Payne, Council & Johnson 2021): an
//!   early impact is compared with the next step's reference extended backward, a late one
//!   with this step's extended forward. The jump is the full saltation
//!   `Ξ = R_x − (R_x f⁻ + R_t − f⁺) g_xᵀ/ġ` with `f⁺ = f(x_ref(0), u_nom(0))`, the field at
//!   the start of the next period.

use nalgebra::{DMatrix, DVector};

/// The phase rule of a controller at an early or late impact (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// τ⁺ = 0 at every actual impact.
    Reset,
    /// τ⁺ = τ − T: the nominal clock, the reference extended past its event.
    Extend,
}

impl Clock {
    /// The name used in files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Clock::Reset => "reset",
            Clock::Extend => "extend",
        }
    }

    /// The period-closing jump (module docs) from the reset's Jacobians `R_x`, `R_t`, the
    /// guard's gradient `g_x` and rate `ġ`, the field before the event `f⁻` and the field
    /// at the period's start `f⁺`.
    pub fn closing_jump(
        self, rx: &DMatrix<f64>, rt: &DVector<f64>, gx: &DVector<f64>, gdot: f64,
        f_minus: &DVector<f64>, f_start: &DVector<f64>,
    ) -> DMatrix<f64> {
        let mut v = rx * f_minus + rt;
        if self == Clock::Extend {
            v -= f_start;
        }
        rx - v * gx.transpose() / gdot
    }

    /// The phase after an impact at phase τ of a period T.
    pub fn after_impact<D: crate::model::Scalar>(self, tau: D, period: f64) -> D {
        match self {
            Clock::Reset => D::zero(),
            Clock::Extend => tau - period,
        }
    }
}
