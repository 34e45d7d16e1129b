//! Sensitivities through *simultaneous* events: a trajectory meets n ≥ 2 guard surfaces at
//! one instant (a corner; theory.md §7, seed 003). The hybrid loop records such a group as
//! n events sharing one `group` id, applied in one crossing order; the sequential jumps of
//! `super::forward` and `super::adjoint` then give the derivative of *that* piece only.
//! The flow is piecewise differentiable there: the derivative depends on the order in which a
//! perturbed trajectory crosses the surfaces. This module exposes what exists instead of a
//! gradient:
//!
//! - [`SimultaneousEvent`]: the data of one group, with every crossing order's composed
//!   jump ([`OrderPiece`]: `S⁺ = Ξ S⁻ + Ξ_θ`, the product of the ordinary jumps of theory §3
//!   built by [`Jump::at`](crate::sensitivity::jump::Jump::at) with the intermediate modes) and, for identity resets, the
//!   B-derivative map ([`SimultaneousEvent::directional`], Algorithm 2.1 via
//!   [`super::corner`]).
//! - [`directional_derivative`]: the one-sided directional derivative `Dψ(θ; δθ)` by forward
//!   mode through the B-derivative at every group.
//! - [`piece_gradients`]: one gradient per crossing order of every group, and the
//!   `nonsmooth` flag.
//!
//! # The corner in an augmented state space
//!
//! The guards may depend on θ and t, which Algorithm 2.1 (stated for `ẋ = F(x)` with normals
//! in state space) does not cover directly. The corner is therefore built in the augmented
//! space `ρ̃ = (X, θ, t)` of dimension `n_X + nθ + 1`, where θ is a constant state and t a
//! state of unit speed:
//!
//! - normals `η̃_j = (G_X, G_θ, G_t)` of guard j (evaluated in the group's mode before);
//! - fields `Γ̃(b) = (F_{mode(b)}(t, X), 0, 1)`, where `mode(b)` is the mode reached by
//!   crossing exactly the surfaces with `b_j = +1`;
//! - the perturbation before the corner is taken at fixed time: `δρ̃⁻ = (S⁻δθ, δθ, 0)`.
//!
//! Algorithm 2.1 then computes the crossing-time offsets `τ_j = −(G_X δX + G_θ δθ)/(G_X F + G_t)`
//! of the general formula (theory §3), and returns `δρ̃⁺ = (S⁺δθ, δθ, 0)` (the θ and t
//! components are reproduced exactly). For n = 1 this is the ordinary jump with R = id:
//! `S⁺δθ = Ξ S⁻δθ + Ξ_θ δθ`. The X-block of a piece of the augmented corner equals the
//! [`OrderPiece`] built from [`Jump::at`](crate::sensitivity::jump::Jump::at) (tests/simultaneous.rs checks both).
//!
//! # Requirements and fallbacks
//!
//! - Every guard of the group is watched in every intermediate mode (else some crossing order
//!   is impossible and an error names it).
//! - The guard functions of the group do not depend on the mode among the intermediate modes
//!   (their normals are taken in the mode before).
//! - For identity resets, the mode reached must not depend on the crossing order (an error
//!   otherwise). For a group with a non-identity reset there is no B-derivative of this form
//!   (after a state jump the other surfaces are no longer met at the same point):
//!   [`SimultaneousEvent::directional`] falls back to the piece of the order the simulation
//!   applied (`corner` is `None`, `identity_resets` is false).
//! - A group containing a terminal event is not supported (an error).
//! - An event cost term (event time or output at an event) on an event of a simultaneous
//!   group is not supported by [`directional_derivative`] and [`piece_gradients`] (an error);
//!   running and terminal terms are.
//!
//! # How the directional derivatives and piece gradients are computed
//!
//! Both run one forward-sensitivity pass with a chosen set of columns, through the same hybrid
//! loop as a plain simulation: column c carries `S δθ_c`, integrated as
//! `ṡ = F_X s + F_θ δθ_c`, with the ordinary jump at every single event. At the first event of
//! a simultaneous group the whole group's map is applied to each column at once — the
//! B-derivative (directional derivatives) or a fixed order's composed jump (piece gradients)
//! — and the group's later events leave the columns unchanged. A plain simulation first finds
//! the groups; the sensitivity pass checks that it meets the same event sequence (a group as a
//! set: the order the loop applies within a group is decided by round-off in the crossing
//! times and may differ between runs), and reports an error naming the event otherwise.
//!
//! All piece gradients come from one pass (nθ columns per crossing order of each group), so
//! that they share one step sequence: their differences are then exactly the propagated
//! differences of the composed jumps, and the `nonsmooth` test (relative difference above
//! [`NONSMOOTH_TOL`]) is not blurred by integration error. For group g, the piece of order σ
//! uses σ at g and the recorded order (the one the plain simulation applied) at every other
//! group; the piece of the recorded order is the gradient the ordinary forward and adjoint
//! methods return whenever their runs apply the group in the same order (always when the
//! guards cross at bitwise the same time, as in the symmetric biped drop).
//!
//! Forward mode (rather than the adjoint with the pieces' transposed jumps) was chosen because
//! it handles any number of groups in one pass, needs no change to the adjoint, and costs
//! little at the sizes where piecewise gradients are wanted.

mod directional;
pub(crate) mod error;
mod event;
mod pieces;
mod plan;

pub use directional::{directional_derivative, directional_derivatives, DirectionalDerivative};
pub use error::{Divergence, GroupProblem, SimultaneousError, MAX_GROUP_SIZE};
pub use event::{simultaneous_events, OrderPiece, SimultaneousEvent};
pub use pieces::{
    is_nonsmooth, piece_gradients, GroupGradients, NonsmoothEvaluation, PieceGradient,
    NONSMOOTH_TOL,
};
