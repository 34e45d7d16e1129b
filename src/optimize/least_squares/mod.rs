//! Least squares for identification from measured data (issue 45): min ½‖r(x)‖² with r the
//! residuals (y(tᵢ) − dᵢ)/σᵢ and their exact Jacobian, by Levenberg–Marquardt with bounds
//! (lm.rs); with multiple shooting's continuity constraints c(w) = 0 by the generalized
//! Gauss–Newton method (constrained.rs); and the statistics at the optimum — residual
//! variance, covariance, standard errors, correlations, confidence intervals with the
//! Student-t quantile (statistics.rs, student.rs). The theory is in docs/theory.md §9 ("Least squares: Gauss–Newton,
//! multiple shooting, confidence intervals").
//!
//! The part knows nothing of the engine: a problem is anything implementing
//! [`Residuals`] or [`ConstrainedResiduals`].
//!
//! ```
//! use hybridopt::optimize::{levenberg_marquardt, BoxBounds, LmSettings, Residuals};
//! use nalgebra::{DMatrix, DVector};
//!
//! // y = a·exp(−b t) through three exact samples of a = 2, b = 0.5
//! struct Decay;
//! impl Residuals for Decay {
//!     type Error = std::convert::Infallible;
//!     fn residuals(&self, x: &[f64], jac: bool)
//!         -> Result<(DVector<f64>, Option<DMatrix<f64>>), Self::Error> {
//!         let t = [0.0, 1.0, 2.0];
//!         let r = DVector::from_iterator(3, t.iter().map(|&t| x[0] * (-x[1] * t).exp()
//!             - 2.0 * (-0.5 * t).exp()));
//!         let j = jac.then(|| DMatrix::from_fn(3, 2, |i, k| {
//!             let e = (-x[1] * t[i]).exp();
//!             if k == 0 { e } else { -x[0] * t[i] * e }
//!         }));
//!         Ok((r, j))
//!     }
//! }
//! let fit = levenberg_marquardt(&Decay, &[1.0, 1.0], &BoxBounds::free(2), &LmSettings::default())?;
//! assert!(fit.outcome.converged(), "{}", fit.message);
//! assert!((fit.x[0] - 2.0).abs() < 1e-10 && (fit.x[1] - 0.5).abs() < 1e-10);
//! # Ok::<(), hybridopt::optimize::LsqError>(())
//! ```

mod bounds;
mod calls;
mod constrained;
mod error;
mod lm;
mod nullspace;
mod outcome;
mod problem;
mod settings;
mod statistics;
mod student;
mod trust;

pub use bounds::{BoundSide, BoxBounds};
pub use constrained::generalized_gauss_newton;
pub use error::LsqError;
pub use lm::levenberg_marquardt;
pub use outcome::{GgnIteration, GgnResult, LmIteration, LmResult, LsqOutcome};
pub use problem::{ConstrainedResiduals, Linearization, Residuals};
pub use settings::{GgnSettings, LmSettings};
pub use statistics::{
    constrained_statistics, statistics, Identifiability, ParameterStatistics, Statistics,
    CONFIDENCE, ILL_CONDITIONED,
};
pub use student::{normal_quantile, student_t_cdf, student_t_quantile};

#[cfg(test)]
mod tests;
