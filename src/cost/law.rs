//! How a cost term weighs its one [`Quantity`](super::Quantity) (an output, an event time,
//! a parameter, …): the plain and the squared kinds of theory.md §1, stated once for
//! every term.

use crate::model::Scalar;

/// A term's law on its quantity `v`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Law {
    /// `w·v`
    Plain { weight: f64 },
    /// `w·(v − target)²`
    Squared { target: f64, weight: f64 },
}

impl Law {
    /// `w·v`, or `w·(v − target)²` evaluated as `d·d·w` with `d = v − target` (the
    /// terms of theory.md §1).
    pub fn value<D: Scalar>(self, v: D) -> D {
        match self {
            Law::Plain { weight } => v * weight,
            Law::Squared { target, weight } => {
                let d = v - target;
                d * d * weight
            }
        }
    }

    /// The derivative of [`Self::value`] in `v`: `w`, or `2w(v − target)`.
    pub fn slope(self, v: f64) -> f64 {
        match self {
            Law::Plain { weight } => weight,
            Law::Squared { target, weight } => 2.0 * weight * (v - target),
        }
    }
}
