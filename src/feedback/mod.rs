//! Feedback through impacts: time-varying and periodic LQR along a nominal hybrid run, with
//! the exact saltation jump of the Riccati solution at every event (docs/theory.md §10;
//! guide/feedback.md).
//!
//! The files: weights.rs (Q, R, Q_f), linearize.rs (A = f_x, B = f_u and K = −R⁻¹BᵀP),
//! riccati.rs (the Riccati equation on one segment), sweep.rs (the backward sweep with
//! the jumps), gains.rs (the design along a run and its dense output), clock.rs (a periodic
//! controller's phase rule and its period-closing jump), periodic.rs (periodic LQR),
//! monodromy.rs (the closed-loop linearization and its multipliers), law.rs (what a closed
//! loop's law reads: the [`Reference`] trait), reference.rs (a period tabulated for a
//! controller), run_table.rs (a run with events tabulated, each segment extended past its
//! events), closed_loop.rs (the closed loop as a system),
//! floquet.rs (its multipliers by the periodic machinery), steps.rs (closed-loop runs step
//! by step), track.rs (a closed-loop run along a run with events and its targets),
//! track_trials.rs (perturbed starts along a run, open against closed loop), robustness.rs (perturbed starts, open against closed loop), settings.rs (a problem
//! file's `[feedback]` table, resolved); its error, [`FeedbackError`], is in `crate::error`.

mod clock;
mod closed_loop;
mod floquet;
mod gains;
mod knots;
mod law;
mod linearize;
mod monodromy;
mod periodic;
mod reference;
mod riccati;
mod robustness;
mod run_table;
mod settings;
mod steps;
mod sweep;
mod track;
mod track_trials;
mod weights;

pub use crate::error::FeedbackError;
pub use clock::Clock;
pub use closed_loop::ClosedLoop;
pub use floquet::{multipliers_without, return_floquet, ReturnFloquet};
pub use gains::{tvlqr, GainSample, Lqr};
pub use law::{RefPoint, Reference};
pub use periodic::{periodic_lqr, PeriodicLqr, PeriodicOptions};
pub use reference::PeriodTable;
pub use robustness::{robustness, RobustnessReport, RobustnessSpec};
pub use run_table::RunTable;
pub use settings::{FeedbackSettings, RobustnessSettings};
pub use steps::{run_steps, run_steps_bounded, StepRecord, StepsOutcome};
pub use sweep::{Knot, RiccatiSegment, Sweep};
pub use track::{run_track, simulate_track, Targets, TrackRun};
pub use track_trials::{track_trials, TrackReport, TrackSpec};
pub use weights::Weights;
