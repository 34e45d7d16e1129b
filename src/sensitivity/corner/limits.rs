//! The limits and tolerances of the corner's computations.

/// Largest number of surfaces at a corner (the corner stores 2^n fields).
pub const MAX_SURFACES: usize = 16;

/// Largest number of surfaces for which [`all_pieces`](super::all_pieces) enumerates the n! pieces.
pub const MAX_ENUMERATED_SURFACES: usize = 8;

/// Largest number of matrix entries (n! · d²) that [`all_pieces`](super::all_pieces) will allocate (1 GiB of f64).
pub const MAX_PIECE_ENTRIES: usize = 1 << 27;

/// Relative threshold of the transversality checks: a normal speed `η_jᵀΓ(b)` with
/// `|η_jᵀΓ(b)| ≤ TRANSVERSALITY_TOL · ‖η_j‖ ‖Γ(b)‖` is treated as zero (grazing).
pub const TRANSVERSALITY_TOL: f64 = 1e-12;

/// Relative threshold of the independence check on the normals: the smallest singular value of
/// the matrix of unit normals must exceed this times the largest.
pub const INDEPENDENCE_TOL: f64 = 1e-12;
