//! A system together with its horizon, controls and objectives: everything a simulation
//! needs besides the parameter values θ = (p, c) (physical parameters, then control
//! coefficients). The integrated state is `X = (x, z)`: the system's state and one
//! quadrature `ż = L` per running cost term (theory.md §1).
//!
//! The setup is a small data struct; what it computes is split by concept:
//! - `augmented`: the augmented system on X — F, its Jacobians, guards and resets;
//! - `vjp`: the vector–Jacobian products of the adjoint's inner loop;
//! - `timeline`: breakpoints and the controls active in each interval;
//! - `objectives`: the objectives' values on a trajectory and the events they name;
//! - `simulate`: the plain hybrid system in X and the simulations;
//! - `system_ref`: how a setup holds its system (borrowed or shared);
//! - `builder`: [`Setup::builder`], the defaults and what differs from them.

mod augmented;
mod builder;
mod data;
mod definition;
mod located;
mod newton;
mod objectives;
mod simulate;
mod sparse_flows;
mod system_ref;
mod table;
mod theta;
mod timeline;
mod validate;
mod vjp;

pub use augmented::{FlowJac, ResetJac, ScalarJac};
pub use builder::SetupBuilder;
pub(crate) use data::SampleCotangent;
pub use definition::Setup;
pub(crate) use located::located;
pub(crate) use simulate::guards_on_leading_state;
pub use simulate::Plain;
pub use system_ref::SystemRef;
pub use table::{trajectory_table, Table, POINTS_PER_STEP};
pub use theta::{ThetaEntry, Transform};
pub(crate) use vjp::VjpScratch;
