//! # hybridopt
//!
//! Design and control optimization of hybrid dynamical systems, with exact direct and
//! adjoint sensitivities through events.
// Numeric code: index loops mirror the formulas, NaN-aware negated comparisons are
// deliberate (`!(err <= 1.0)` rejects NaN), and math kernels take many arguments.
#![allow(
    clippy::needless_range_loop,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::too_many_arguments
)]
pub mod artifacts;
pub mod control;
pub mod cost;
pub mod error;
pub mod integrate;
pub mod linalg;
pub mod model;
pub mod multibody;
pub mod optimize;
pub mod plot;
pub mod problem;
pub mod report;
pub mod sensitivity;
pub mod setup;
pub mod systems;

pub use error::{Error, ModelError, Result};
pub use model::{c, Dims, Direction, GuardInfo, HybridSystem, Scalar};
