//! Integrators with dense output, step control and event location; the hybrid loop.

pub(crate) mod bdf;
pub(crate) mod controller;
pub(crate) mod dense;
mod dopri5;
pub(crate) mod forced;
pub(crate) mod hybrid;
pub(crate) mod instants;
mod lu;
mod method;
mod newton;
mod ode;
pub(crate) mod options;
pub(crate) mod radau;
pub(crate) mod sdirk3;
pub(crate) mod smooth;
mod sparse;
pub(crate) mod step;
pub(crate) mod tableau;
pub(crate) mod trajectory;

pub use bdf::history::BdfHistory;
pub use dense::DenseStep;
pub use instants::{Instant, OffRun};
pub use method::Method;
pub use newton::{Newton, NewtonCounts, JAC_RATE};
pub use ode::{Attempt, JacobianBlock, NewtonJacobian, OdeRhs, Tolerances};
pub use options::{Checkpointing, EventOptions, LinearAlgebra, SolverOptions};
pub use sparse::{SparseBlock, Structure};
pub use trajectory::{EventRecord, EventSide, ReplayWindow, Segment, Stats, Trajectory};
