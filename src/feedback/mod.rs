//! Feedback through impacts: time-varying and periodic LQR along a nominal hybrid run, with
//! the exact saltation jump of the Riccati solution at every event (docs/theory.md §10;
//! guide/feedback.md).
//!
//! The files: weights.rs (Q, R, Q_f), linearize.rs (A = f_x, B = f_u and K = −R⁻¹BᵀP),
//! riccati.rs (the Riccati equation on one segment), sweep.rs (the backward sweep with
//! the jumps), gains.rs (the design along a run and its dense output), clock.rs (a periodic
//! controller's phase rule and its period-closing jump), periodic.rs (periodic LQR),
//! monodromy.rs (the closed-loop linearization and its multipliers), reference.rs (a
//! period tabulated for a controller), closed_loop.rs (the closed loop as a system),
//! floquet.rs (its multipliers by the periodic machinery), steps.rs (closed-loop runs step
//! by step), robustness.rs (perturbed starts, open against closed loop), settings.rs (a problem
//! file's `[feedback]` table, resolved), error.rs.

mod clock;
mod closed_loop;
mod error;
mod floquet;
mod gains;
mod linearize;
mod monodromy;
mod periodic;
mod reference;
mod riccati;
mod robustness;
mod settings;
mod steps;
mod sweep;
mod weights;

pub use clock::Clock;
pub use closed_loop::ClosedLoop;
pub use error::FeedbackError;
pub use floquet::{multipliers_without, return_floquet, ReturnFloquet};
pub use gains::{tvlqr, GainSample, Lqr};
pub use periodic::{periodic_lqr, PeriodicLqr, PeriodicOptions};
pub use reference::{PeriodTable, RefPoint};
pub use robustness::{robustness, RobustnessReport, RobustnessSpec};
pub use settings::{FeedbackSettings, RobustnessSettings};
pub use steps::{run_steps, run_steps_bounded, StepRecord, StepsOutcome};
pub use sweep::{Knot, RiccatiSegment, Sweep};
pub use weights::Weights;
