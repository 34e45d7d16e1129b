//! The validated settings of a periodic-orbit problem, read from the `[periodic]` table
//! of a problem file (`crate::problem`'s `periodic.rs` checks each key against the system
//! and names the file, key and line of what is wrong):
//!
//! ```toml
//! [periodic]
//! guard = "heel_strike"        # the section: just after this guard's reset, or instead
//! # hyperplane = { normal = { theta = 1.0 }, offset = 0.0, direction = "falling" }
//! #                            # the section n·x = c crossed in that direction
//! count = 1                    # crossings of the section per period (period-k orbits)
//! mode = "default"             # the mode on the section (default: the first)
//! free = ["theta", "dtheta"]   # components free on the section (DP is reported in them;
//!                              # on a hyperplane, n − 1 of them leave the last one to be
//!                              # solved from n·x = c)
//! guess = { theta = 0.2, phi = 0.4, dtheta = -0.2, dphi = -0.0137 }  # every state
//! t_max = 20.0                 # longest period before "no return" (default [simulation] t_end)
//! tol = 1e-12                  # Newton: ‖P(x) − x‖∞ (default 1e-12)
//! max_iters = 30
//! sensitivities = ["gamma"]    # parameters to differentiate the orbit by (default none)
//! objective = { kind = "spectral_radius" }  # for `hybridopt optimize`: also "period",
//!                              # { kind = "speed", output = "step_length" },
//!                              # { kind = "target", state = "theta", value = 0.2 }
//! ```
//!
//! Exactly one of `guard` and `hyperplane` names the section. A hyperplane's normal names
//! states (the others have coefficient 0), and the guess must lie on it.
//!
//! The integration settings are those of `[simulation]` (rtol, atol, method).

use super::map::MapOptions;
use super::newton::NewtonOptions;
use super::section::Section;

/// The validated settings of a periodic-orbit problem.
#[derive(Debug, Clone)]
pub struct PeriodicSpec {
    pub section: Section,
    pub map: MapOptions,
    pub newton: NewtonOptions,
    /// The start of Newton's method (every state).
    pub guess: Vec<f64>,
    /// Indices of the parameters to differentiate by.
    pub sensitivities: Vec<usize>,
    /// What `hybridopt optimize` minimizes on this orbit.
    pub objective: Option<super::objective::Objective>,
}
