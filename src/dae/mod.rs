//! Hybrid differential-algebraic systems and systems with memory (seed 001; theory.md §6).
//!
//! * [`DaeSystem`]: the model interface — differential states y, algebraic states z, a
//!   memory y* captured at transitions; semi-explicit index 1 or Hessenberg index 2;
//!   explicit or implicit transitions; its names in one [`DaeDims`].
//! * [`Dae`]: the reduced formulation that makes such a system a [`crate::HybridSystem`]
//!   (z solved by Newton at every evaluation, exact derivatives by the implicit function
//!   theorem; memory carried as states constant between transitions).
//! * `algebraic` and `transition`: the two Newton solves and their exact derivatives.

mod adapter;
pub(crate) mod algebraic;
mod cache;
mod dims;
mod system;
pub(crate) mod transition;
mod vjp;

pub use adapter::{Dae, CONSISTENCY_TOL};
pub use dims::DaeDims;
pub use system::{DaeIndex, DaeSystem, Point, Transition};
