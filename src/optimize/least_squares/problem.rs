//! What the solvers need of a problem: the residual vector and, on request, its Jacobian
//! (lm.rs); for multiple shooting also the equality constraints and theirs
//! (constrained.rs). The traits know nothing of the engine, so that the solvers and
//! their tests run on closed-form problems; the lead's data cost implements them with the
//! direct sensitivities.

use nalgebra::{DMatrix, DVector};
use std::fmt;

/// The residuals r(x) (m of them, already divided by their σ) and, when `jacobian` is
/// true, their Jacobian J = ∂r/∂x (m×n). The error type is the problem's own (as the
/// `Smooth` objective of the quasi-Newton driver): the solver only displays it.
pub trait Residuals {
    type Error: fmt::Display;
    /// r(x) and, if asked, J(x). A trial point outside the problem's domain is an error;
    /// the solvers then shorten the step, so it must not be a panic.
    #[allow(clippy::type_complexity)]
    fn residuals(
        &self, x: &[f64], jacobian: bool,
    ) -> Result<(DVector<f64>, Option<DMatrix<f64>>), Self::Error>;
}

/// One evaluation of a constrained least-squares problem: residuals r (m), equality
/// constraints c (p) and, when asked, their Jacobians J = ∂r/∂w (m×n) and C = ∂c/∂w (p×n).
#[derive(Debug, Clone)]
pub struct Linearization {
    pub r: DVector<f64>,
    pub c: DVector<f64>,
    pub jr: Option<DMatrix<f64>>,
    pub jc: Option<DMatrix<f64>>,
}

/// min ½‖r(w)‖² subject to c(w) = 0: multiple shooting's fit (w = node states and
/// parameters, c = the continuity gaps). Both come from one simulation of every segment,
/// so one method returns both.
pub trait ConstrainedResiduals {
    type Error: fmt::Display;
    /// r(w), c(w) and, if `jacobian`, their Jacobians.
    fn evaluate(&self, w: &[f64], jacobian: bool) -> Result<Linearization, Self::Error>;
}
