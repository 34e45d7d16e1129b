//! # hybridopt
//!
//! Design and control optimization of hybrid dynamical systems — trajectories that jump or
//! switch at events — with exact direct and adjoint sensitivities through events.
//!
//! A system (theory.md §1) has modes m, flows `ẋ = f_m(t, x, u, p)`, guards `g_{m,k}` with
//! crossing directions, and resets `x⁺ = R_{m,k}(t, x⁻, p)`. A cost
//! `ψ = ∫ L dt + Φ(x(tf)) + Σ E(t_e, x⁻)` is differentiated by
//!
//! * forward sensitivities `Ṡ = f_x S + f_p` with the jump `S⁺ = Ξ S⁻ + Ξ_p` at every event,
//!   `Ξ = R_x − (R_x f⁻ + R_t − f⁺) g_x/ġ`, `τ = dt_e/dp = −(g_x S⁻ + g_p)/ġ`
//!   (`sensitivity/jump.rs`, the only place the jump is written);
//! * the continuous adjoint `λ̇ = −f_xᵀλ`, `μ̇ = −f_pᵀλ` with `λ⁻ = Ξᵀλ⁺ + c_x`,
//!   `μ⁻ = μ⁺ + Ξ_pᵀλ⁺ + c_p` (`sensitivity/adjoint/`);
//! * two witnesses: central finite differences and the whole simulation in dual numbers;
//! * at simultaneous crossings, the B-derivative (Algorithm 2.1 of Council, Revzen & Burden)
//!   and the gradient of every crossing order ([`sensitivity::corner`],
//!   [`sensitivity::simultaneous`]).
//!
//! Implement [`HybridSystem`] for your own system (generic over a num-dual [`Scalar`], so
//! every Jacobian is exact), wrap it in a [`Setup`] with [`Objective`]s, and call
//! [`evaluate`] (or [`evaluate_with`] for witnesses, the FD step and τ) or [`optimize()`].
//! Everything is at the root and in [`prelude`]; a problem file is a [`Problem`]:
//!
//! ```
//! use hybridopt::prelude::*;
//! use hybridopt::systems::BouncingBall;
//!
//! // ψ = (t₃ − 2)²: the ball's third impact at t = 2 s; θ = (g, e, c, y0, v0)
//! let third = Quantity::EventTime { guard: EventGuard::Guard(0), occurrence: 3 };
//! let cost = Objective::new("timing", vec![Term::squared(third, 2.0, 1.0)]);
//! let setup = Setup::new(&BouncingBall, 0.0, 3.0, None, vec![cost]);
//! let theta = [9.81, 0.8, 0.0, 1.0, 0.5];
//! let adjoint = evaluate(&setup, &theta, GradientMethod::Adjoint)?;
//! let direct = evaluate(&setup, &theta, GradientMethod::Direct)?;
//! for (a, d) in adjoint.gradients[0].iter().zip(&direct.gradients[0]) {
//!     assert!((a - d).abs() <= 1e-6 * a.abs().max(1e-6));
//! }
//! # Ok::<(), hybridopt::Error>(())
//! ```
//!
//! The modules below the root are the method's parts (integrators, sensitivities, systems,
//! reports); the root and [`prelude`] are the API.
// Numeric code: index loops mirror the formulas, NaN-aware negated comparisons are
// deliberate (`!(err <= 1.0)` rejects NaN), and math kernels take many arguments.
#![allow(
    clippy::needless_range_loop,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::too_many_arguments
)]
pub mod animate;
pub(crate) mod atomic_file;
pub(crate) mod constraint;
pub mod control;
pub mod cost;
pub mod custom;
pub mod dae;
pub mod error;
pub mod feedback;
pub(crate) mod format;
pub(crate) mod geometry;
pub mod integrate;
pub mod interrupt;
pub(crate) mod linalg;
pub mod model;
pub mod multibody;
pub mod optimize;
pub mod output;
pub mod periodic;
mod periodic_error;
pub mod plot;
pub mod prelude;
pub mod problem;
pub(crate) mod random;
pub mod sensitivity;
pub mod setup;
pub(crate) mod sparsity;
pub mod sweep;
pub mod systems;
pub(crate) mod table;
pub mod testing;

pub use prelude::*;

/// The README, whose Rust block (the tour's program) runs as a doctest (only when doctests
/// are collected, so that editing the README does not rebuild the library).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[allow(rustdoc::broken_intra_doc_links)]
pub mod readme_tour {}

/// The library guide, whose Rust blocks (a problem file from Rust, and the "Write your own
/// system" program, equal to `examples/custom_system.rs`) run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/guide/library.md")]
#[allow(rustdoc::broken_intra_doc_links)]
pub mod guide_library {}

/// The guide to hybrid DAEs, whose Rust block (a DAE of index 1 with its `dims()`) runs
/// as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../docs/guide/dae-and-memory.md")]
#[allow(rustdoc::broken_intra_doc_links)]
pub mod guide_dae {}
