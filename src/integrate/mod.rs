//! Integrators with dense output, step control and event location; the hybrid loop.

pub(crate) mod dense;
pub mod hybrid;
mod lu;
mod newton;
pub mod options;
pub(crate) mod radau;
pub mod smooth;
mod sparse;
pub mod stepper;
pub mod tableau;
pub mod trajectory;

pub use dense::DenseStep;
pub use newton::{Newton, NewtonCounts, JAC_RATE};
pub use options::{Checkpointing, EventOptions, LinearAlgebra, SolverOptions};
pub use sparse::{SparseBlock, Structure};
pub use stepper::{JacobianBlock, Method, NewtonJacobian, OdeRhs, Tolerances};
pub use trajectory::{EventRecord, ReplayWindow, Segment, Stats, Trajectory};
