//! The integration methods a run can use, with the orders their step control reads.

use super::tableau::{dopri5, Radau5, Sdirk3};

/// The integration methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Dormand–Prince 5(4), explicit, 4th-order dense output. The default: non-stiff problems.
    #[default]
    Dopri5,
    /// Alexander's L-stable SDIRK 3(2) with the exact Jacobian and cubic Hermite dense
    /// output: stiff problems (penalty contact, stiff springs).
    Sdirk3,
    /// The 3-stage Radau IIA collocation method of order 5 (Hairer & Wanner II, §IV.5,
    /// §IV.8): stiffly accurate and L-stable, simplified Newton with the exact Jacobian,
    /// the filtered embedded error estimate of order 3 and the collocation polynomial as
    /// dense output. Stiff problems at tight tolerances, and DAEs in reduced form.
    Radau5,
    /// The variable-order BDFs of orders 1–5 as Shampine & Reichelt's NDFs (MATLAB's
    /// ode15s; docs/theory.md §8, "BDF"): one Newton matrix `I − cJ` and, once converged,
    /// one right-hand side per step. Large stiff systems (its steps cost a fraction of
    /// Radau IIA's); restarted at order 1 after every event and breakpoint.
    Bdf,
}

impl Method {
    /// Order of the error estimate + 1 (the exponent base of the controller).
    pub fn error_order(self) -> usize {
        match self {
            Method::Dopri5 => dopri5::EMBEDDED_ORDER + 1,
            Method::Sdirk3 => Sdirk3::EMBEDDED_ORDER + 1,
            Method::Radau5 => Radau5::EMBEDDED_ORDER + 1,
            // the order-1 start (the BDF chooses its own step sizes)
            Method::Bdf => 2,
        }
    }
    /// A multistep method: its history restarts at order 1 at every segment start (so the
    /// first step is chosen afresh, not inherited), and the slope a step returns is its
    /// corrector's, `F(t1, y1)` only to the Newton tolerance (a step cut at an event
    /// evaluates F for an exact f⁻).
    pub fn is_multistep(self) -> bool {
        self == Method::Bdf
    }

    /// The order (a BDF run's starting order: it varies from 1 to 5).
    pub fn order(self) -> usize {
        match self {
            Method::Dopri5 => dopri5::ORDER,
            Method::Sdirk3 => Sdirk3::ORDER,
            Method::Radau5 => Radau5::ORDER,
            Method::Bdf => 1,
        }
    }
}
