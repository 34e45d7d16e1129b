//! The least-squares solvers' and statistics' errors: inputs that cannot be used. A
//! failing evaluation is not one of them (the solvers report it as an outcome with their
//! best point, see outcome.rs).

/// Why a least-squares solve or its statistics cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LsqError {
    /// A variable's bounds or start value cannot be used (NaN, lower > upper, a start that
    /// is not finite). The start is clamped into finite bounds, so only these fail.
    #[error("variable {index}: lower bound {lower}, upper bound {upper}, start {start}: the bounds must be ordered and not NaN, the start finite")]
    Bounds {
        index: usize,
        lower: f64,
        upper: f64,
        start: f64,
    },
    /// The problem returned an array of the wrong size (or no Jacobian when asked).
    #[error("{what} has shape {got:?}, expected {expected:?}")]
    Shape {
        what: &'static str,
        expected: (usize, usize),
        got: (usize, usize),
    },
    /// A setting out of its range (named, with the valid range).
    #[error("setting {name} = {value}: {valid}")]
    Setting {
        name: &'static str,
        value: f64,
        valid: &'static str,
    },
    /// Statistics need more samples than free parameters (m − n > 0).
    #[error("{samples} residuals and {parameters} free parameters: the statistics need more residuals than free parameters")]
    NoDegreesOfFreedom { samples: usize, parameters: usize },
    /// The constraints' Jacobian C (on the free variables) has dependent rows, so the
    /// null-space step is not defined.
    #[error("the constraint Jacobian's rows are dependent (pivot {pivot:e} relative to the largest): the constraints are redundant or contradict the fixed variables")]
    DependentConstraints { pivot: f64 },
}
