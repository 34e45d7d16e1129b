//! Integrators with dense output, step control and event location; the hybrid loop.

pub(crate) mod bdf;
pub(crate) mod dense;
pub(crate) mod forced;
pub(crate) mod hybrid;
pub(crate) mod instants;
mod lu;
mod newton;
mod ode;
pub(crate) mod options;
pub(crate) mod radau;
pub(crate) mod smooth;
mod sparse;
pub(crate) mod stepper;
pub(crate) mod tableau;
pub(crate) mod trajectory;

pub use bdf::history::BdfHistory;
pub use dense::DenseStep;
pub use instants::{Instant, OffRun};
pub use newton::{Newton, NewtonCounts, JAC_RATE};
pub use ode::{JacobianBlock, NewtonJacobian, OdeRhs, Tolerances};
pub use options::{Checkpointing, EventOptions, LinearAlgebra, SolverOptions};
pub use sparse::{SparseBlock, Structure};
pub use stepper::Method;
pub use trajectory::{EventRecord, EventSide, ReplayWindow, Segment, Stats, Trajectory};
