//! Systems written in the problem file (`[system] kind = "custom"`): named states,
//! parameters, controls, constants and modes, with per mode the flow, guards (with their
//! resets) and outputs as expressions. Each expression is parsed once (`parser`) into a
//! flat arena with resolved slots (`expr`) and evaluated generically over the scalar,
//! so every Jacobian stays exact. See docs/guide/custom-systems.md.

mod compilation;
mod error;
pub(crate) mod expr;
#[cfg(feature = "jit")]
mod jit;
mod lexer;
pub(crate) mod parser;
mod program;
mod reverse;
pub(crate) mod schema;
mod system;

pub use compilation::{Compilation, MAX_NODES};
pub use error::{CustomError, ExprError};
pub use system::CustomSystem;
