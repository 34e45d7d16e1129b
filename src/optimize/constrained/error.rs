//! The constrained solver's errors, by kind.

/// Why the constrained solver cannot run or continue.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConstrainedError {
    /// The QP subproblem could not be solved (Clarabel's status).
    #[error("{0}")]
    Qp(String),
    /// A free final time that cannot be used (bounds, `stop_after`, the controls' span).
    #[error("free final time: {0}")]
    FreeTime(String),
    /// A constraint names an output, guard, occurrence or θ entry that does not exist.
    #[error("a constraint names {0}")]
    Index(String),
}
