//! Planar constrained multibody dynamics in natural coordinates (theory.md §5; seed 000 §3).
//!
//! - `param.rs`: [`ParamRef`], a mechanism number that is a constant or a design parameter.
//! - `bodies.rs`: points, uniform bars and point masses (mass matrix, gravity loads).
//! - `forces.rs`: springs, dampers, gravity.
//! - `actuators.rs`: generalized forces on coordinates as control channels.
//! - `constraints.rs`: distance, point-on-line and point-fixed constraints (`Φ`, `Φ_q`, `Φ̇`,
//!   `(Φ_q v)_q v`).
//! - `dynamics.rs`: the index-1 (Baumgarte) and penalty formulations.
//! - `impacts.rs`: kinematic reversal, inelastic impact with a change of constraints, Newton
//!   restitution.
//! - `mechanism.rs`: [`Mechanism`], the assembly of all of the above.
//! - `system.rs`: [`MultibodySystem`], a mechanism with modes and events as a hybrid system.
//! - `implicit.rs`: the exact VJP of its flow by implicit differentiation, every formulation.
//!
//! Everything is generic over [`crate::model::Scalar`], so a model built from these parts
//! has exact Jacobians (through the linear solves of `crate::linalg`).

pub(crate) mod actuators;
pub(crate) mod bodies;
pub(crate) mod constraints;
pub(crate) mod dynamics;
pub(crate) mod forces;
mod hybrid;
pub(crate) mod impacts;
pub(crate) mod implicit;
mod linearization;
pub(crate) mod mechanism;
pub(crate) mod param;
pub(crate) mod system;

pub use bodies::{Bar, Point, PointMass};
pub use constraints::{Constraint, ConstraintEval};
pub use dynamics::{Accel, Dynamics, Formulation};
pub use forces::{Damper, Spring};
pub use impacts::{dependent_velocities, inelastic_impact, kinematic_reversal, newton_restitution};
pub use mechanism::Mechanism;
pub use param::ParamRef;
pub use system::{mechanism_state, rest_state, MultibodySystem};
