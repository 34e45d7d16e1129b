//! What the SQP needs of a problem (sqp.rs): single shooting (nlp.rs) and multiple shooting
//! (`crate::optimize::shooting`) implement it.

use super::point::Point;
use crate::error::Error;
use nalgebra::DMatrix;

/// What the iteration needs of a problem: its variables' bounds and start, the evaluation
/// of the cost and the constraint rows with exact gradients at a point, and the part of
/// the cost's Hessian known in closed form. Single shooting ([`super::nlp::Nlp`]) and
/// multiple shooting (`crate::optimize::shooting`) are the two problems.
pub(crate) trait Problem {
    /// The variables' lower and upper bounds (closed; infinite where open).
    fn bounds(&self) -> (&[f64], &[f64]);
    /// The start point (the iteration clamps it into the bounds).
    fn x0(&self) -> Vec<f64>;
    /// f, ∇f and every row at x.
    fn evaluate(&self, x: &[f64]) -> Result<Point, Error>;
    /// The cost's Hessian where known in closed form (to start the quasi-Newton
    /// approximation from), else `None`.
    fn known_hessian(&self) -> Option<DMatrix<f64>>;
    /// Why the iteration should stop at an accepted iterate short of convergence for the
    /// caller to change the problem's discretization (multiple shooting: an event on a
    /// node), else `None`.
    fn halt(&self, _p: &Point) -> Option<String> {
        None
    }
}
