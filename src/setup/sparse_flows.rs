//! The sparse Newton structures of a setup's modes: for a mode whose flow declares a
//! sparsity pattern, the block's structure, a column colouring and the pattern's entries,
//! computed once when first asked for and shared by the setup's clones (newton.rs fills
//! and uses them).

use crate::integrate::Structure;
use crate::sparsity::Colouring;
use std::sync::{Arc, OnceLock};

/// What a mode's pattern gives, computed once per setup and mode.
#[derive(Debug)]
pub(super) struct SparseFlow {
    pub(super) structure: Arc<Structure>,
    pub(super) colouring: Colouring,
    /// The pattern's entries: (position in the block, row, column).
    pub(super) entries: Vec<(usize, usize, usize)>,
}

/// The per-mode [`SparseFlow`]s of a setup (`None` for a mode without a pattern), filled
/// when first asked for; shared by the setup's clones.
#[derive(Debug, Clone, Default)]
pub(super) struct SparseFlows(pub(super) Arc<Vec<OnceLock<Option<SparseFlow>>>>);

impl SparseFlows {
    pub(super) fn new(modes: usize) -> Self {
        SparseFlows(Arc::new((0..modes).map(|_| OnceLock::new()).collect()))
    }
}
