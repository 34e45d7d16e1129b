//! Typed failures of the feedback design (weights that do not fit the system, a Riccati
//! sweep that does not converge, a nominal that cannot be linearized).

/// Every failure of the feedback module.
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    /// A simulation, a Jacobian or a backward integration failed.
    #[error(transparent)]
    Simulation(#[from] crate::error::Error),
    /// The closed loop's return map failed (the periodic solver's error, a
    /// [`crate::Error::Periodic`] or a simulation's).
    #[error(transparent)]
    Periodic(Box<crate::error::Error>),
    /// A weight matrix has the wrong size.
    #[error("feedback weight {what}: expected {expected}, got {found}")]
    WeightSize {
        what: &'static str,
        expected: String,
        found: String,
    },
    /// A weight is negative, not finite, or R is not positive definite.
    #[error("feedback weight {what}: {message}")]
    WeightValue { what: &'static str, message: String },
    /// The nominal run has no segment where a gain was asked for.
    #[error("no gain at t = {t}: the nominal runs over [{t0}, {tf}]")]
    OutOfRange { t: f64, t0: f64, tf: f64 },
    /// The periodic Riccati iteration did not settle.
    #[error("the periodic Riccati iteration did not converge in {sweeps} sweeps: the change of P(0) over the last sweep is {change:e} relative (tolerance {tol:e}); the orbit may not be stabilizable with these weights")]
    NoConvergence {
        sweeps: usize,
        change: f64,
        tol: f64,
    },
    /// The nominal has no event to close a period with.
    #[error("{0}")]
    Nominal(String),
}
