//! Library errors as Python exceptions of the hierarchy in `hybridopt/errors.py`, with the
//! command line's message (the error and its causes joined by ": ", as `hybridopt` prints
//! them after "error: ") and a `kind` attribute naming the variant.

use hybridopt::Error;
use pyo3::prelude::*;

/// The Python class (in `hybridopt.errors`) and the `kind` of each library error.
fn class_and_kind(e: &Error) -> (&'static str, &'static str) {
    match e {
        Error::Problem { .. } => ("ProblemFileError", "problem"),
        Error::Invalid(_) => ("InvalidInputError", "invalid"),
        Error::BadTerm { .. } => ("InvalidInputError", "bad_term"),
        Error::BadHorizon { .. } => ("InvalidInputError", "bad_horizon"),
        // a command-line flag of the sweep (not reachable from the package, mapped for
        // completeness)
        Error::Flag { .. } => ("InvalidInputError", "flag"),
        // an animation asked of a system without geometry (the package draws none yet)
        Error::NoGeometry { .. } => ("InvalidInputError", "no_geometry"),
        Error::Io { .. } => ("FileAccessError", "io"),
        Error::Plot { .. } => ("FileAccessError", "plot"),
        Error::Zeno { .. } => ("ZenoError", "zeno"),
        Error::Sticking { .. } => ("ZenoError", "sticking"),
        Error::Grazing { .. } => ("GrazingError", "grazing"),
        Error::MissingEvent { .. } => ("MissingEventError", "missing_event"),
        Error::StepSizeUnderflow { .. } => ("StepSizeError", "step_size_underflow"),
        Error::Model { .. } => ("ModelError", "model"),
        Error::NonFinite { .. } => ("SimulationError", "non_finite"),
        Error::NewtonFailure { .. } => ("SimulationError", "newton_failure"),
        Error::TooManySteps { .. } => ("SimulationError", "too_many_steps"),
        Error::Optimizer(_) => ("OptimizerError", "optimizer"),
        Error::Bounds { .. } => ("InvalidInputError", "bounds"),
        // θ entries that do not match θ by name (the package passes the problem's own
        // entries, so mapped for completeness)
        Error::ThetaName { .. } => ("InvalidInputError", "theta_name"),
        Error::RestartsExhausted { .. } => ("OptimizerError", "restarts_exhausted"),
        // turned into the outcome "kink" inside `optimize` (mapped for completeness)
        Error::StoppedAtKink => ("OptimizerError", "stopped_at_kink"),
        Error::Constrained(c) => match c {
            hybridopt::optimize::ConstrainedError::Qp(_) => ("OptimizerError", "qp"),
            hybridopt::optimize::ConstrainedError::FreeTime(_) => {
                ("InvalidInputError", "free_time")
            }
            hybridopt::optimize::ConstrainedError::Index(_) => {
                ("InvalidInputError", "constraint_index")
            }
        },
        Error::Shooting(sh) => match sh {
            hybridopt::optimize::ShootingError::Nodes(_) => ("InvalidInputError", "shooting_nodes"),
            hybridopt::optimize::ShootingError::Unsupported { .. } => {
                ("InvalidInputError", "shooting_unsupported")
            }
            hybridopt::optimize::ShootingError::Guess { .. } => {
                ("ProblemFileError", "shooting_guess")
            }
            hybridopt::optimize::ShootingError::ModeMismatch { .. } => {
                ("OptimizerError", "shooting_mode_mismatch")
            }
        },
        Error::Interrupted => ("HybridoptError", "interrupted"),
    }
}

/// The message as the command line prints it ([`hybridopt::error::chain_message`]).
pub fn message(e: &Error) -> String {
    hybridopt::error::chain_message(e)
}

/// The Python exception for a library error.
pub fn to_py(py: Python<'_>, e: &Error) -> PyErr {
    let (class, kind) = class_and_kind(e);
    raise(py, class, kind, message(e))
}

/// An exception of class `class` (of `hybridopt.errors`) with `message` and `kind`.
pub fn raise(py: Python<'_>, class: &str, kind: &str, message: String) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = py.import("hybridopt.errors")?.getattr(class)?;
        let value = cls.call1((message.clone(),))?;
        value.setattr("kind", kind)?;
        Ok(PyErr::from_value(value))
    })();
    made.unwrap_or_else(|e| e)
}

/// An `InvalidInputError` (bad arguments from Python: a method name, a length, a key).
pub fn invalid(py: Python<'_>, message: String) -> PyErr {
    raise(py, "InvalidInputError", "invalid", message)
}

/// Converts a library result, raising its exception.
pub trait IntoPy<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}
