//! Multiple shooting's errors, by kind.

/// Why a multiple-shooting problem cannot be set up or its result cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShootingError {
    /// The node times are not strictly increasing inside the horizon, or fewer than two
    /// segments were asked for.
    #[error("node times: {0}")]
    Nodes(String),
    /// Something the single-shooting setup has that multiple shooting does not take yet.
    #[error("{what} is not available with multiple shooting: {instead}")]
    Unsupported {
        what: &'static str,
        instead: &'static str,
    },
    /// An initial-guess table that cannot be used (the file, the column or row, why).
    #[error("initial guess {file}: {message}")]
    Guess { file: String, message: String },
    /// At the converged point, a segment ends in a mode other than the one its next node
    /// was given (from the initial guess): the continuity constraints compare states of
    /// two different modes, so the trajectory they join is not a solution. Move the node
    /// away from the switch, or start from a guess whose modes match.
    #[error("node {node} at t = {t}: the segment before it ends in mode '{found}', but the node is in mode '{expected}' (taken from the initial guess)")]
    ModeMismatch {
        node: usize,
        t: f64,
        expected: String,
        found: String,
    },
}
