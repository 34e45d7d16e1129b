//! Sensitivity analysis through events: the jump (the only one), forward (direct)
//! sensitivities, the continuous adjoint, and the two independent witnesses (central
//! finite differences and a whole-simulation dual-number run).

pub(crate) mod adjoint;
mod columns;
pub mod corner;
pub(crate) mod dual;
mod evaluate;
mod evaluation;
pub(crate) mod fd;
pub(crate) mod forward;
pub(crate) mod jump;
mod method;
pub(crate) mod node;
mod options;
mod residuals;
pub(crate) mod saltation;
pub(crate) mod seeds;
pub mod simultaneous;
mod term;
pub(crate) mod timing;

pub use evaluate::{evaluate, evaluate_with};
pub use evaluation::{Evaluation, EventSensitivity, FdDetails};
pub use fd::{
    fd_gradients, fd_gradients_with_steps, runs_per_parameter, FdGradients, FdOptions, FdScale,
};
pub use method::GradientMethod;
pub use options::{EvaluateOptions, Witness};
pub use residuals::{least_squares_obstacle, residuals, ResidualRun};
pub use term::term_jacobian;
pub use timing::{EvalTiming, TimingReport};
