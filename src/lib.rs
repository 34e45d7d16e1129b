//! # hybridopt
//!
//! Design and control optimization of hybrid dynamical systems, with exact direct and
//! adjoint sensitivities through events.
pub mod error;
pub mod linalg;
pub mod model;
pub mod integrate;
pub mod sensitivity;
pub mod cost;
pub mod setup;
pub mod control;
pub mod multibody;
pub mod systems;
pub mod problem;
pub mod optimize;
pub mod plot;
pub mod report;

pub use error::{Error, ModelError, Result};
pub use model::{c, Direction, Dims, GuardInfo, HybridSystem, Scalar};
