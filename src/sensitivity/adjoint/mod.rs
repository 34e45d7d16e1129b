//! The continuous adjoint (theory.md §4; seed 000 (18)–(25)), for every objective of a
//! vector ψ in one backward pass: `Λ = [λ_1 … λ_k]` (n×k) and `M = [μ_1 … μ_k]` (nθ×k)
//! integrated backward over each smooth segment on the forward run's dense output, with the
//! transposed jump applied to all columns at every event. The adjoint never integrates
//! across an event time.
//!
//! **Steps.** One backward pass serves every objective, so the backward step count no
//! longer multiplies with the number of objectives (the five-bar's three seed costs: 1,594
//! backward steps for all three against 4,364 for three passes; the forward run takes
//! 1,016). The step size is controlled on all of (Λ, M), with μ integrated from its
//! accumulated value so that the relative tolerance sees the gradient's own scale, and
//! each column integrated divided by its size on the segment (`column_scale`), so that
//! the absolute tolerance is relative to ‖λ_j‖ too: 1,193 backward steps on the five-bar
//! (its ∫ÿ₂ columns have ‖λ‖∞ ≈ 100), with the gradient as accurate as before. Stepping
//! on the forward mesh instead was tried and measured: 629 of its 1,016 steps failed the
//! adjoint's error test (λ needs ~1.5× the forward's steps on the five-bar at 1e-10), which
//! cost 13,672 right-hand sides against 9,604 for the adaptive pass.
//!
//! **Cost.** Each backward stage needs `Λᵀ F_X`, `Λᵀ F_u`, `Λᵀ F_p` for all k columns at
//! once ([`Setup::vjp_multi`](crate::setup::Setup::vjp_multi), through the system's `flow_vjp` hook); the control
//! coefficients enter only through the few active in the current control interval, so K
//! coefficients add O(active) work per step.
//!
//! **Rooms.** `pass` walks the trajectory from tf to t0: the seeds at tf, the
//! transposed jumps at each segment's end, the value at t0; `segment` integrates one
//! segment's columns back (packed by their scale into the vector `layout` describes);
//! `rhs` is the backward system it integrates; `states` gives that system x(t) from the
//! forward run.

mod layout;
mod pass;
mod rhs;
mod segment;
mod states;

pub use pass::{adjoint_gradients, adjoint_piece_gradients, adjoint_with_history, PieceOverride};
pub use segment::MuHistory;
