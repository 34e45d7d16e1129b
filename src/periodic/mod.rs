//! Periodic hybrid orbits (walking gaits): fixed points of the return map on a Poincaré
//! section, their Floquet multipliers through the saltation matrices, their
//! sensitivities to the parameters, and continuation in a parameter.
//!
//! - [`section`]: the section (just after a guard's reset, or a hyperplane; period-k
//!   orbits) and the system that starts on it;
//! - [`hyperplane`]: a hyperplane section as one more guard of the system, and its chart;
//! - [`image`]: whether a start is the reset's image of the guard's surface;
//! - [`map`]: `P(x)`, `DP`, `∂P/∂p`, the period and `dT/d(x, p)` from one direct pass;
//! - [`newton`]: Newton's method on `P(x) − x = 0` with the exact `DP`;
//! - [`stability`]: multipliers on the section and of the full monodromy;
//! - [`second`]: `d(DP)` by the direct pass in dual numbers;
//! - [`sensitivity`]: `dx*/dp`, `dT/dp`, `d|λ|/dp`;
//! - [`continuation`]: natural-parameter continuation with period-doubling detection;
//! - [`spec`]: the `[periodic]` table of a problem file.

pub mod continuation;
pub mod error;
pub mod hyperplane;
pub mod image;
pub mod map;
pub mod newton;
pub mod objective;
pub mod optimize;
pub mod orbit;
pub mod reference;
pub mod second;
pub mod section;
pub mod sensitivity;
pub mod spec;
pub mod stability;

pub use error::PeriodicError;
