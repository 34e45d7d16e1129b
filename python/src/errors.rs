//! Library errors as Python exceptions of the hierarchy in `hybridopt/errors.py`, with the
//! command line's message (the error and its causes joined by ": ", as `hybridopt` prints
//! them after "error: ") and a `kind` attribute naming the variant.

use std::borrow::Cow;

use hybridopt::periodic::PeriodicError;
use hybridopt::sensitivity::corner::CornerError;
use hybridopt::sensitivity::simultaneous::SimultaneousError;
use hybridopt::Error;
use pyo3::prelude::*;

/// The Python class (in `hybridopt.errors`) and the `kind` of each library error.
fn class_and_kind(e: &Error) -> (&'static str, Cow<'static, str>) {
    let (class, kind) = match e {
        Error::Problem { .. } => ("ProblemFileError", "problem"),
        Error::Invalid(_) => ("InvalidInputError", "invalid"),
        Error::BadTerm { .. } => ("InvalidInputError", "bad_term"),
        Error::BadHorizon { .. } => ("InvalidInputError", "bad_horizon"),
        Error::ThetaLength { .. } => ("InvalidInputError", "theta_length"),
        Error::NoObjective => ("InvalidInputError", "no_objective"),
        Error::NothingToOptimize => ("InvalidInputError", "nothing_to_optimize"),
        Error::VariableCount { .. } => ("InvalidInputError", "variable_count"),
        Error::Unsupported { .. } => ("InvalidInputError", "unsupported"),
        // a flag's value (`--param` names the value a parameter is set to, also from the
        // package: `Problem.set_value`)
        Error::Flag { .. } => ("InvalidInputError", "flag"),
        // `hybridopt merge` (not reachable from the package, mapped for completeness)
        Error::MissingShards { .. } => ("InvalidInputError", "missing_shards"),
        // an animation asked of a system without geometry (the package draws none yet)
        Error::NoGeometry { .. } => ("InvalidInputError", "no_geometry"),
        Error::Io { .. } => ("FileAccessError", "io"),
        Error::Plot { .. } => ("FileAccessError", "plot"),
        Error::Zeno { .. } => ("ZenoError", "zeno"),
        Error::Sticking { .. } => ("ZenoError", "sticking"),
        Error::Grazing { .. } => ("GrazingError", "grazing"),
        Error::MissingEvent { .. } => ("MissingEventError", "missing_event"),
        // a data sample after a terminal event ended the run
        Error::SampleOffRun { .. } => ("MissingEventError", "sample_off_run"),
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
            // a constraint naming an output, guard or occurrence the system lacks: a problem
            // file names them and is checked at load (ProblemFileError naming the key), so
            // the package meets it only through the Rust API (mapped for completeness)
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
        // `corner_` and `simultaneous_` and the variant (the cause's for a case file)
        Error::Corner(c) => return (corner_class(c), variant_kind("corner", corner_cause(c))),
        Error::Simultaneous(s) => return (simultaneous_class(s), variant_kind("simultaneous", s)),
        // a feedback design that cannot be made; a Riccati iteration that does not settle
        Error::Feedback(f) => match **f {
            hybridopt::feedback::FeedbackError::NoConvergence { .. } => {
                ("OptimizerError", "feedback_no_convergence")
            }
            _ => ("InvalidInputError", "feedback"),
        },
        // the periodic-orbit solver (the gait optimizer of a `[periodic]` problem): `periodic_`
        // and the variant
        Error::Periodic(pe) => return (periodic_class(pe), variant_kind("periodic", pe)),
        // a problem the iLQR / DDP does not take (`[shooting]`, an integral constraint, …)
        Error::Ilqr(_) => ("InvalidInputError", "ilqr_unsupported"),
        Error::Internal(_) => ("HybridoptError", "internal"),
        Error::Interrupted => ("HybridoptError", "interrupted"),
    };
    (class, Cow::Borrowed(kind))
}

/// `<prefix>_<variant>`: the variant's name in snake case, taken from its `Debug` form
/// (`NotTransversal { .. }` → `corner_not_transversal`), for the enums whose every variant
/// is a kind of its own.
fn variant_kind(prefix: &str, e: &impl std::fmt::Debug) -> Cow<'static, str> {
    let mut kind = prefix.to_string();
    for c in format!("{e:?}")
        .chars()
        .take_while(char::is_ascii_alphanumeric)
    {
        if c.is_ascii_uppercase() {
            kind.push('_');
        }
        kind.push(c.to_ascii_lowercase());
    }
    kind.into()
}

/// The class of a corner's error (the B-derivative at a simultaneous crossing; `hybridopt
/// bderiv`). The package reaches them through the directional derivatives of the nonsmooth
/// analysis only (an overflow); the rest are mapped for completeness.
fn corner_class(c: &CornerError) -> &'static str {
    use CornerError as C;
    match c {
        C::File { .. } | C::Json { .. } => "ProblemFileError",
        C::Direction { source, .. } => corner_class(source),
        C::SpeedOverflow { .. } | C::SaltationOverflow | C::ValueOverflow { .. } => {
            "SimulationError"
        }
        C::NotTransversal { .. } | C::SaltationGrazing { .. } => "GrazingError",
        _ => "InvalidInputError",
    }
}

/// The class of a periodic-orbit solver's error: a Newton iteration that does not settle
/// or a derivative that does not exist is the optimizer's, a missing return the run's
/// event's, the rest bad input.
fn periodic_class(e: &PeriodicError) -> &'static str {
    match e {
        PeriodicError::NoConvergence { .. } | PeriodicError::Nonsmooth(_) => "OptimizerError",
        PeriodicError::NoReturn { .. } => "MissingEventError",
        PeriodicError::OffSection { .. }
        | PeriodicError::BadSection { .. }
        | PeriodicError::Invalid(_) => "InvalidInputError",
    }
}

/// What a corner's error is about: the cause inside a case file's or a direction's.
fn corner_cause(c: &CornerError) -> &CornerError {
    match c {
        CornerError::File { source, .. } | CornerError::Direction { source, .. } => {
            corner_cause(source)
        }
        c => c,
    }
}

/// The class of an error of the nonsmooth analysis at simultaneous events (the gradient's
/// and the optimizer's piece gradients and one-sided derivatives).
fn simultaneous_class(s: &SimultaneousError) -> &'static str {
    match s {
        // a group the analysis cannot handle at this θ (grazing, a mode that depends on the
        // order, a corner that is not transversal), a pass that met other events
        SimultaneousError::Group { .. } | SimultaneousError::Diverged { .. } => "SimulationError",
        // what the analysis does not take (a terminal event, an event cost in a group) and
        // arguments of the Rust API
        _ => "InvalidInputError",
    }
}

/// The message as the command line prints it ([`hybridopt::error::chain_message`]).
pub fn message(e: &Error) -> String {
    hybridopt::error::chain_message(e)
}

/// The Python exception for a library error.
pub fn to_py(py: Python<'_>, e: &Error) -> PyErr {
    let (class, kind) = class_and_kind(e);
    raise(py, class, &kind, message(e))
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
