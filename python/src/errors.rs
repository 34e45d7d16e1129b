//! Library errors as Python exceptions of the hierarchy in `hybridopt/errors.py`, with the
//! command line's message (the error and its causes joined by ": ", as `hybridopt` prints
//! them after "error: ") and a `kind` attribute naming the variant.

use hybridopt::sensitivity::corner::CornerError;
use hybridopt::sensitivity::simultaneous::SimultaneousError;
use hybridopt::Error;
use pyo3::prelude::*;

/// The Python class (in `hybridopt.errors`) and the `kind` of each library error.
fn class_and_kind(e: &Error) -> (&'static str, &'static str) {
    match e {
        Error::Problem { .. } => ("ProblemFileError", "problem"),
        Error::Invalid(_) => ("InvalidInputError", "invalid"),
        Error::BadTerm { .. } => ("InvalidInputError", "bad_term"),
        Error::BadHorizon { .. } => ("InvalidInputError", "bad_horizon"),
        Error::ThetaLength { .. } => ("InvalidInputError", "theta_length"),
        Error::NoObjective => ("InvalidInputError", "no_objective"),
        Error::NothingToOptimize => ("InvalidInputError", "nothing_to_optimize"),
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
        Error::Corner(c) => corner_class_and_kind(c),
        Error::Simultaneous(s) => simultaneous_class_and_kind(s),
        Error::Internal(_) => ("HybridoptError", "internal"),
        Error::Interrupted => ("HybridoptError", "interrupted"),
    }
}

/// The class and kind of a corner's error (the B-derivative at a simultaneous crossing;
/// `hybridopt bderiv`): `corner_` and the variant. The package reaches them through the
/// directional derivatives of the nonsmooth analysis only (an overflow); the rest are
/// mapped for completeness.
fn corner_class_and_kind(c: &CornerError) -> (&'static str, &'static str) {
    use CornerError as C;
    match c {
        // a case file's error: the file's class, the cause's kind
        C::File { source, .. } => ("ProblemFileError", corner_class_and_kind(source).1),
        C::Direction { source, .. } => corner_class_and_kind(source),
        C::Json { .. } => ("ProblemFileError", "corner_json"),
        C::SpeedOverflow { .. } => ("SimulationError", "corner_speed_overflow"),
        C::SaltationOverflow => ("SimulationError", "corner_saltation_overflow"),
        C::ValueOverflow { .. } => ("SimulationError", "corner_value_overflow"),
        C::NotTransversal { .. } => ("GrazingError", "corner_not_transversal"),
        C::SaltationGrazing { .. } => ("GrazingError", "corner_saltation_grazing"),
        C::Size { .. } => ("InvalidInputError", "corner_size"),
        C::CaseSize { .. } => ("InvalidInputError", "corner_case_size"),
        C::NoDirections { .. } => ("InvalidInputError", "corner_no_directions"),
        C::Length { .. } => ("InvalidInputError", "corner_length"),
        C::FieldCount { .. } => ("InvalidInputError", "corner_field_count"),
        C::NonFinite { .. } => ("InvalidInputError", "corner_non_finite"),
        C::ZeroNormal { .. } => ("InvalidInputError", "corner_zero_normal"),
        C::DependentNormals { .. } => ("InvalidInputError", "corner_dependent_normals"),
        C::Reversal { .. } => ("InvalidInputError", "corner_reversal"),
        C::Inconsistent { .. } => ("InvalidInputError", "corner_inconsistent"),
        C::NoField { .. } => ("InvalidInputError", "corner_no_field"),
        C::ZeroSpeed { .. } => ("InvalidInputError", "corner_zero_speed"),
        C::BadSign { .. } => ("InvalidInputError", "corner_bad_sign"),
        C::TooManySigns { .. } => ("InvalidInputError", "corner_too_many_signs"),
        C::Order { .. } => ("InvalidInputError", "corner_order"),
        C::TooManyPieces { .. } => ("InvalidInputError", "corner_too_many_pieces"),
        C::FlowSize { .. } => ("InvalidInputError", "corner_flow_size"),
        C::OnHyperplane { .. } => ("InvalidInputError", "corner_on_hyperplane"),
        C::Duration { .. } => ("InvalidInputError", "corner_duration"),
        C::Sliding { .. } => ("InvalidInputError", "corner_sliding"),
        C::DuplicateSigns { .. } => ("InvalidInputError", "corner_duplicate_signs"),
        C::MissingSigns { .. } => ("InvalidInputError", "corner_missing_signs"),
    }
}

/// The class and kind of an error of the nonsmooth analysis at simultaneous events (the
/// gradient's and the optimizer's piece gradients and one-sided derivatives):
/// `simultaneous_` and the variant.
fn simultaneous_class_and_kind(s: &SimultaneousError) -> (&'static str, &'static str) {
    use SimultaneousError as S;
    match s {
        // a group the analysis cannot handle at this θ (grazing, a mode that depends on
        // the order, a corner that is not transversal, …)
        S::Group { .. } => ("SimulationError", "simultaneous_group"),
        S::Diverged { .. } => ("SimulationError", "simultaneous_diverged"),
        S::TerminalInGroup { .. } => ("InvalidInputError", "simultaneous_terminal"),
        S::EventCost { .. } => ("InvalidInputError", "simultaneous_event_cost"),
        // arguments of the Rust API (mapped for completeness)
        S::NotAnOrder { .. } | S::NotAGuardOrder { .. } => {
            ("InvalidInputError", "simultaneous_order")
        }
        S::ColumnLength { .. }
        | S::NoDirection
        | S::DirectionLength { .. }
        | S::DirectionNotFinite { .. } => ("InvalidInputError", "simultaneous_direction"),
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
