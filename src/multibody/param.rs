//! References to mechanism numbers that may be design parameters.
//!
//! Every number of a [`Mechanism`](super::Mechanism) that a user may want to optimize
//! (masses, spring stiffnesses and natural lengths, constraint lengths, fixed-point
//! coordinates) is a [`ParamRef`]: either a constant or an index into the parameter vector
//! `p`. Model code reads it with [`ParamRef::value`] in the model's scalar `D`, so that a
//! dual-number evaluation carries the exact derivative with respect to that parameter.

use crate::error::ModelError;
use crate::model::{c, Scalar};

/// A mechanism number: a constant, or the parameter `p[i]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamRef {
    /// A fixed value (no derivative).
    Const(f64),
    /// The parameter `p[i]`.
    Param(usize),
}

impl ParamRef {
    /// The value in the model's scalar: `c(v)` for a constant, `p[i]` for a parameter
    /// (with its dual part, so derivatives with respect to `p[i]` are exact).
    pub fn value<D: Scalar>(&self, p: &[D]) -> Result<D, ModelError> {
        match *self {
            ParamRef::Const(v) => Ok(c(v)),
            ParamRef::Param(i) => p.get(i).copied().ok_or_else(|| ModelError::SizeMismatch {
                what: format!("mechanism parameter #{i}"),
                expected: format!("more than {i} parameters"),
                found: p.len().to_string(),
            }),
        }
    }

    /// The parameter index this refers to, if any.
    pub fn index(&self) -> Option<usize> {
        match *self {
            ParamRef::Const(_) => None,
            ParamRef::Param(i) => Some(i),
        }
    }
}

impl From<f64> for ParamRef {
    fn from(v: f64) -> Self {
        ParamRef::Const(v)
    }
}
