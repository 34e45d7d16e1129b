//! Internals that the test suite (`tests/`) and the benchmarks (`benches/`) reach: not a
//! stable API, and not what a user of the library needs (use the crate root, [`crate::prelude`]
//! and the public modules instead). Everything here may change or go without notice.
//!
//! - the integrator's single steps ([`try_step`], [`Attempt`]), its smooth driver
//!   ([`integrate_smooth`]) and the context of one step ([`Ctx`]);
//! - the sensitivity passes behind [`crate::evaluate`]: [`forward_sensitivity`],
//!   [`adjoint_gradients`], [`adjoint_with_history`] (the adjoint's trajectory),
//!   [`adjoint_piece_gradients`] with [`PieceOverride`], [`dual_gradients`], the jump
//!   ([`Jump`]) and a term's Jacobian ([`term_jacobian`], [`ScalarJac`]);
//! - the return map's pieces ([`return_value`], [`fd_monodromy`], [`section_basis`],
//!   [`cycle_table`], [`MapOptions`], [`Stencil`]), its Newton solve ([`solve`]) and
//!   second derivative ([`monodromy_derivative`]);
//! - the oracles: the bouncing ball's closed form ([`ball_oracle`]), the simplest
//!   walker's published fixed points ([`walker`]) and the forced decay `y' = −y + sin t`
//!   with its closed form ([`Forced`]), and the linear oscillator against a stop whose
//!   feedback gains through impacts have a closed form ([`linear_impact`]), and the exact
//!   event-driven flow of a piecewise-constant field at a corner
//!   ([`piecewise_constant_flow`], [`PiecewiseConstantFlow`], [`Crossing`]);
//! - the custom system's expression parser ([`parse`], [`Scope`], [`Node`], [`Env`]), the
//!   multibody formulations' accelerations, and the built-in systems' index constants
//!   (modes, guards, parameters).

pub mod linear_impact;
pub mod walker;

pub use crate::custom::expr::{Env, Node};
pub use crate::custom::parser::{parse, Scope};
pub use crate::integrate::forced::Forced;
pub use crate::integrate::smooth::integrate_smooth;
pub use crate::integrate::step::try_step;
pub use crate::integrate::trajectory::Ctx;
pub use crate::integrate::Attempt;
pub use crate::multibody::constraints::evaluate;
pub use crate::multibody::dynamics::{baumgarte_rhs, index1_acceleration, penalty_acceleration};
pub use crate::periodic::map::{
    cycle_table, fd_monodromy, return_value, section_basis, MapOptions, Stencil,
};
pub use crate::periodic::newton::{solve, FixedPoint, JacobianSource, NewtonOptions, FD_STEP};

pub use crate::periodic::second::monodromy_derivative;
pub use crate::sensitivity::adjoint::{
    adjoint_gradients, adjoint_piece_gradients, adjoint_with_history, PieceOverride,
};
pub use crate::sensitivity::corner::oracle::{
    piecewise_constant_flow, Crossing, PiecewiseConstantFlow,
};
pub use crate::sensitivity::dual::dual_gradients;
pub use crate::sensitivity::forward::{forward_sensitivity, ForwardResult};
pub use crate::sensitivity::jump::Jump;
pub use crate::sensitivity::node::{
    events_on_nodes, node_directional, node_piece_gradients, NodeEvent,
};
pub use crate::sensitivity::saltation::Saltation;
pub use crate::sensitivity::term_jacobian;
pub use crate::setup::ScalarJac;
pub use crate::systems::biped::{
    G_LIFT1, G_LIFT2, G_TOUCH1, G_TOUCH2, MODE_BOTH, MODE_FOOT1, MODE_FOOT2, MODE_NONE, P_BETA,
    P_BETA_S, P_THETA0, P_THETADOT0, P_X0, P_XDOT0, P_Y0, P_YDOT0,
};
pub use crate::systems::bouncing_ball::oracle as ball_oracle;
pub use crate::systems::five_bar::{PIVOT_A, PIVOT_B};
pub use crate::systems::locking_pendulum::{MODE_FREE, MODE_SLIDING};
pub use crate::systems::rectifier::{OFF, ON};
pub use crate::systems::shear_frame::STATES_PER_STOREY;
