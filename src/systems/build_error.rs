//! Why a built-in system could not be built from its settings: [`BuildError`], and the
//! shear frame's own out-of-range settings ([`ShearFrameError`]), which it wraps.

use crate::custom::CustomError;
use crate::error::ModelError;

/// Why a system could not be built from valid settings.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A built-in system's settings are inconsistent (e.g. a ground above the mechanism).
    #[error("{0}")]
    Model(#[from] ModelError),
    /// A custom system's declarations or expressions are wrong.
    #[error(transparent)]
    Custom(#[from] CustomError),
    /// `initial_algebraic` names a state the system does not have.
    #[error("`{name}` is not an algebraic state; valid: {valid}")]
    UnknownAlgebraic { name: String, valid: String },
    /// `initial_algebraic` leaves out an algebraic state.
    #[error("missing a value for the algebraic state `{name}` (give all or none)")]
    MissingAlgebraic { name: String },
    /// `actuators` names a coordinate the mechanism does not have.
    #[error("`{name}` is not a coordinate of the mechanism; valid: {valid}")]
    UnknownActuator { name: String, valid: String },
    /// A shear frame's settings are out of range ([`ShearFrameError::key`] names the key).
    #[error(transparent)]
    ShearFrame(#[from] ShearFrameError),
}

/// Settings that do not describe a shear frame.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShearFrameError {
    /// `storeys` outside `1..=MAX_STOREYS`.
    #[error("storeys = {given} is out of range: a shear frame has 1 to {max} storeys")]
    Storeys { given: usize, max: usize },
}

impl ShearFrameError {
    /// The `[system]` key the error is about.
    pub fn key(&self) -> &'static str {
        match self {
            ShearFrameError::Storeys { .. } => "storeys",
        }
    }
}
