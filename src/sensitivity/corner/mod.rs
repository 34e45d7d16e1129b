//! The B-derivative of a piecewise-differentiable flow at a simultaneous crossing of several
//! surfaces of discontinuity (a *corner*): Algorithm 2.1 of Council, Revzen and Burden,
//! *Representing and computing the B-derivative of an EC^r vector field's PC^r flow*
//! (seed 003; restated in `docs/theory.md` §7).
//!
//! # Setting
//!
//! A trajectory meets n ≥ 1 guard surfaces `h_j = 0` at the same instant, at the point ρ ∈ R^d.
//! The resets are the identity (a pure vector-field discontinuity). The data at the corner are
//!
//! - the normals `η_j = ∇h_j(ρ)`, stored as the rows of an n×d matrix, linearly independent;
//! - the limiting fields `Γ(b) = F_b(ρ)` for every sign vector `b ∈ {−1, +1}^n`, where
//!   `b_j = −1` means "before surface j" and `b_j = +1` "after surface j".
//!
//! # Sign-vector convention (masks)
//!
//! A sign vector is stored as a bit mask: **bit j is set ⇔ `b_j = +1`**. So mask 0 is
//! `(−1, …, −1)` (the field before every surface) and mask `2^n − 1` is `(+1, …, +1)`. The
//! fields of a [`Corner`] are indexed by this mask.
//!
//! # Transversality (event selection)
//!
//! [`Corner::new`] checks the event-selection condition of seed 003, Definition 2.1: every
//! field has a nonzero normal speed `η_jᵀΓ(b)` across every surface j, and for a fixed j all
//! of them have the same sign, so the trajectory crosses every surface transversally, once, in
//! the same direction whatever the order (no grazing, no sliding, no re-crossing). The
//! orientation of a normal is free: the formulas below are invariant under `η_j → −η_j`.
//!
//! # What is computed
//!
//! `B` maps a perturbation `δρ⁻` of the state just before the corner to the perturbation
//! `δρ⁺ = B(δρ⁻)` just after it. `B` is continuous and piecewise linear with up to n! pieces;
//! the active piece is the product of ordinary saltation matrices taken in the crossing order
//! of the perturbed trajectory (seed 003 (6.4)). The flow's derivative is
//! `Dφ_t(x; δx) = Dφ_{t−s}(x_s) · B(Dφ_s(x) δx)` (seed 003 (2.10)).
//!
//! The module also holds an exact event-driven oracle for piecewise-constant fields
//! (`ẋ = F(sign x)`, seed 003 §3.1, `docs/reference-models.md` §4), used to check `B` against
//! finite differences of the exact flow (public through [`crate::testing`]). The JSON cases of `hybridopt bderiv` are read and
//! written in [`crate::output::bderiv`].

mod bderivative;
mod error;
mod geometry;
mod limits;
pub(crate) mod oracle;
mod pieces;
mod signs;

pub use bderivative::{bderivative, bderivative_value, BResult};
pub use error::{CornerError, LengthOf};
pub use geometry::Corner;
pub use limits::{
    INDEPENDENCE_TOL, MAX_ENUMERATED_SURFACES, MAX_PIECE_ENTRIES, MAX_SURFACES, TRANSVERSALITY_TOL,
};
pub use pieces::{all_pieces, saltation, saltation_for_order, Piece};
pub use signs::{format_signs, mask_to_signs, signs_to_mask};
