//! Everything a user of the library needs, in one import: `use hybridopt::prelude::*;`.
//!
//! The system trait, its names and its scalar ([`HybridSystem`], [`Dims`], [`Scalar`], [`c`], the dual numbers
//! of [`num_dual`]), the setup ([`Setup`], [`SetupBuilder`]), the costs ([`Objective`],
//! [`Term`], [`EventGuard`]), the gradients ([`evaluate`], [`evaluate_with`],
//! [`EvaluateOptions`], [`Evaluation`]), the optimizer ([`optimize()`], [`ThetaEntry`],
//! [`OptimizerSettings`], [`OptimizeResult`], [`Outcome`]), problem files ([`Problem`])
//! and the errors.
//!
//! ```
//! use hybridopt::prelude::*;
//!
//! /// ẋ = −k x, one guard (x falls through ½) that halves nothing: it only marks the time.
//! struct Decay;
//! impl HybridSystem for Decay {
//!     fn dims(&self) -> Dims {
//!         Dims::new(["x"], ["k"]).guards([GuardInfo::new("half", Direction::Falling)]).outputs(["x"])
//!     }
//!     fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> { Ok(vec![c(1.0)]) }
//!     fn flow<D: Scalar>(&self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D])
//!         -> Result<(), ModelError> { dx[0] = -p[0] * x[0]; Ok(()) }
//!     fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
//!         x[0] - 0.5
//!     }
//!     fn reset<D: Scalar>(&self, m: usize, _k: usize, _t: D, x: &[D], _p: &[D])
//!         -> Result<(usize, Vec<D>), ModelError> { Ok((m, x.to_vec())) }
//!     fn outputs<D: Scalar>(&self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], y: &mut [D])
//!         -> Result<(), ModelError> { y[0] = x[0]; Ok(()) }
//! }
//!
//! // the crossing time t = ln 2 / k: dt/dk = −ln 2 / k²
//! let cost = Objective::new("t", vec![Term::plain(Quantity::EventTime { guard: EventGuard::Any, occurrence: 1 }, 1.0)]);
//! let setup = Setup::builder(&Decay).horizon(0.0, 2.0).objective(cost).tolerances(1e-12, 1e-14).build();
//! let ev = evaluate(&setup, &[1.0], GradientMethod::Adjoint)?;
//! assert!((ev.values[0] - 2f64.ln()).abs() < 1e-9);
//! assert!((ev.gradients[0][0] + 2f64.ln()).abs() < 1e-8);
//! # Ok::<(), hybridopt::Error>(())
//! ```

pub use crate::constraint::{Constraint, ConstraintBounds, ConstraintKind, Constraints, FreeTime};
pub use crate::cost::{EventGuard, Law, Objective, Quantity, Term};
pub use crate::error::{Error, ModelError, Result};
pub use crate::model::{c, Dims, Direction, GuardInfo, HybridSystem, Scalar};
pub use crate::optimize::{
    constrained_point, optimize, optimize_constrained, optimize_ilqr, optimize_ilqr_constrained,
    optimize_ilqr_periodic, optimize_shooting, ConstrainedPoint, ConstrainedReport,
    ConstraintReport, ConstraintRow, Globalization, Guess, IlqrError, KinkPolicy, NodeTimes,
    OptimizeResult, OptimizerSettings, Outcome, Shooting, ShootingReport, SolverKind, ThetaEntry,
    Transform,
};
pub use crate::problem::Problem;
pub use crate::sensitivity::{
    evaluate, evaluate_with, EvaluateOptions, Evaluation, EventSensitivity, GradientMethod, Witness,
};
pub use crate::setup::{Setup, SetupBuilder};
pub use num_dual::{self, Dual64, DualNum};
