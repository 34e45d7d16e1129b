//! Multiple shooting through events (docs/guide/shooting.md): the horizon is split at
//! nodes `t_0 < t_1 < … < t_{K−1} < t_f` into K segments; each interior node's state is a
//! variable of the constrained solver, and continuity `x_k(t_{k+1}⁻; s_k, θ) = s_{k+1}` is a
//! set of equality constraints. A segment is an ordinary hybrid run — its events, jumps
//! and exact direct sensitivities included — so no mode schedule is fixed: the impacts
//! fall inside segments wherever the iterate puts them. The steps, one file each: the
//! nodes and the initial guess (nodes.rs), the functionals split over the segments
//! (split.rs), one segment's run (segment.rs), the problem the SQP sees (nlp.rs), the
//! errors (error.rs). The SQP is the constrained solver's (`super::constrained`).
//!
//! ```
//! use hybridopt::prelude::*;
//! use hybridopt::systems::BouncingBall;
//!
//! // the ball's restitution e and throw v0 that keep it nearest y = 0.5 over [0, 2]
//! // (θ = g, e, c, y0, v0), by 4 shooting segments with the impacts free inside them
//! let cost = Objective::new("f", vec![Term::squared(Quantity::Integral { output: 0 }, 0.5, 1.0)]);
//! let setup = Setup::builder(&BouncingBall).horizon(0.0, 2.0).objective(cost)
//!     .tolerances(1e-12, 1e-12).build();
//! let theta = [
//!     ThetaEntry::fixed("g", 9.81), ThetaEntry::free("e", 0.8).with_bounds(Some(0.1), Some(0.95)),
//!     ThetaEntry::fixed("c", 0.0), ThetaEntry::fixed("y0", 1.0),
//!     ThetaEntry::free("v0", 0.5).with_bounds(Some(-5.0), Some(5.0)),
//! ];
//! let shooting = Shooting { nodes: NodeTimes::Segments(4), guess: Guess::SingleShooting, closure: None };
//! let r = optimize_shooting(&setup, &theta, &Constraints::default(), &shooting,
//!     &OptimizerSettings::default(), None)?;
//! assert!(r.converged(), "{r}");
//! assert!(r.shooting.as_ref().unwrap().max_defect < 1e-9);
//! // the segments joined are a genuine run: single shooting at the final θ has its cost
//! let single = evaluate(&setup, &r.theta_final, GradientMethod::Adjoint)?;
//! assert!((single.values[0] - r.final_cost).abs() < 1e-8 * r.final_cost);
//! # Ok::<(), hybridopt::Error>(())
//! ```

mod anchor;
mod closing;
pub(crate) mod error;
mod evaluator;
mod fit;
mod nlp;
mod nodes;
mod problem;
mod report;
pub(crate) mod segment;
mod settings;
mod solve;
mod split;

pub(crate) use closing::{closing_problem, closing_result};
pub use error::ShootingError;
pub use evaluator::{shooting_point, ShootingEvaluator};
pub use fit::{optimize_shooting_fit, shooting_fit_point, NodeMove};
pub(crate) use nlp::ShootingNlp;
pub use nodes::{Node, NodeSide};
pub use report::{segment_trajectories, ClosureReport, NodeReport, ShootingReport};
pub use settings::{Closure, Guess, GuessTable, NodeTimes, Shooting};
pub use solve::optimize_shooting;
