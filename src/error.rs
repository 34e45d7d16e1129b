//! The one error type of the library. Every variant carries the context a user needs to
//! find the cause: time, mode and guard for simulation failures; file, key and value for
//! input failures. Beside it: [`ModelError`] (a model's leaf code) and [`FeedbackError`] (the
//! feedback design's, which wraps it and which it wraps).

use std::path::PathBuf;

/// Failures inside a model's leaf code (flow, reset, outputs).
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ModelError {
    /// A linear system the model must solve (constraint matrix, impact law) is singular.
    #[error("singular linear system in {what} (pivot {pivot:e})")]
    Singular { what: String, pivot: f64 },
    /// Newton's iteration on a DAE's algebraic equations (or on its hidden constraint,
    /// index 2) did not converge (theory.md §6).
    #[error("the algebraic equations of mode '{mode}' have no solution near the guess at t = {t}: Newton's residual is {residual:e} after {iterations} iterations")]
    AlgebraicNewton {
        mode: String,
        t: f64,
        residual: f64,
        iterations: usize,
    },
    /// The Jacobian that makes a DAE solvable is singular: `k_z` (index 1) or `k_y f_z`
    /// (index 2).
    #[error("{what} is singular in mode '{mode}' at t = {t} (pivot {pivot:e} relative): the algebraic states are not determined there")]
    SingularAlgebraic {
        what: String,
        mode: String,
        t: f64,
        pivot: f64,
    },
    /// Start values that violate the algebraic equations or constraints of the start mode.
    #[error("inconsistent initial values in mode '{mode}' at t = {t}: {what} has residual {residual:e} (tolerance {tolerance:e})")]
    Inconsistent {
        what: String,
        mode: String,
        t: f64,
        residual: f64,
        tolerance: f64,
    },
    /// Newton's iteration on an implicit transition function did not converge.
    #[error("the transition through guard '{guard}' from mode '{mode}' at t = {t} has no solution near the guess: Newton's residual is {residual:e} after {iterations} iterations")]
    TransitionNewton {
        guard: String,
        mode: String,
        t: f64,
        residual: f64,
        iterations: usize,
    },
    /// A parameter or configuration value outside the range where the model is defined (a
    /// mass or length that is not positive, a stop out of reach, a negative Baumgarte
    /// coefficient): `system` names the model (empty for a setting shared by models),
    /// `values` the offending entries with their values, `valid` what the model needs. Give
    /// values in that range (the problem file's `[system]` or `[parameters]`).
    #[error("{}{valid} ({})", system_prefix(system), assignments(values))]
    ParameterOutOfRange {
        system: String,
        values: Vec<(String, f64)>,
        valid: String,
    },
    /// The run reached states where the model's law is not defined (`valid` is the
    /// condition, `values` the states and parameters in it): move θ or the start so the
    /// trajectory stays inside, or extend the law.
    #[error("{}{valid}; here {}", system_prefix(system), assignments(values))]
    OutsideDomain {
        system: String,
        values: Vec<(String, f64)>,
        valid: String,
    },
    /// A force element (`what`: a spring, a damper) between points `a` and `b` that
    /// coincide: its direction is undefined. Keep the points apart (parameters, start).
    #[error("{what} between points {a} and {b} has zero length: its direction is undefined")]
    ZeroLength { what: String, a: usize, b: usize },
    /// A model function called with vectors of the wrong sizes or an index it does not
    /// have (states, parameters, a mode, a guard; a reset or initial state returning the
    /// wrong number of values): a wrapper or a custom model passes or returns the wrong
    /// vectors. `what` names the function or model; `expected` and `found` the sizes.
    #[error("{what}: expected {expected}, got {found}")]
    SizeMismatch {
        what: String,
        expected: String,
        found: String,
    },
    /// A mechanism whose definition is invalid: `element` (a point, bar, point mass,
    /// spring, damper, constraint, coordinate, gravity) has `problem` (an index out of
    /// range, a shared coordinate, no mass). Fix the mechanism's definition.
    #[error("mechanism: {element} {problem}")]
    InvalidMechanism { element: String, problem: String },
    /// Something the model (or the pass that calls it) does not provide: `what` says what
    /// and, where there is one, what to use instead.
    #[error("{what}")]
    Unsupported { what: String },
    /// Replaying a checkpointed step at `t` (the adjoint pass rebuilding the forward run's
    /// steps) did not converge where the forward run's implicit stages did. Keep every
    /// step (no checkpointing) or use an explicit method.
    #[error("replaying a checkpointed step at t = {t}: the implicit stages did not converge where the forward run's did")]
    Replay { t: f64 },
    /// Any other model-specific failure: the message of a model written outside the
    /// library (custom systems return their own failures this way).
    #[error("{0}")]
    Other(String),
}

/// `"{system}: "`, or nothing for a setting shared by models.
fn system_prefix(system: &str) -> String {
    if system.is_empty() {
        String::new()
    } else {
        format!("{system}: ")
    }
}

/// `name = value, …`.
fn assignments(values: &[(String, f64)]) -> String {
    values
        .iter()
        .map(|(name, v)| format!("{name} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every error the library returns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An event where the trajectory touches a guard tangentially: the event time has no
    /// derivative there, so no gradient is returned. Move θ away from the grazing point
    /// (a slightly different start or parameter), or raise the threshold in the event
    /// options only if the crossing is known to be transversal.
    #[error("grazing event: guard '{guard}' in mode '{mode}' at t = {t}: its rate along the flow |dg/dt| = {rate:e} is below {threshold:e}, so the event time is not differentiable there")]
    Grazing {
        t: f64,
        mode: String,
        guard: String,
        rate: f64,
        threshold: f64,
    },
    /// More events than `max_events` before the horizon: events accumulate (a ball
    /// coming to rest) or a guard keeps firing. Shorten the horizon, stop the run at an
    /// occurrence (`stop_after`), or raise `max_events` if the events are genuine.
    #[error("more than max_events = {max_events} events by t = {t} (mode '{mode}', last guard '{guard}'): Zeno behaviour (events accumulating), or a long run whose events are genuine — then raise [simulation] max_events")]
    Zeno {
        t: f64,
        mode: String,
        guard: String,
        max_events: usize,
    },
    /// A guard fires again right after its own reset: the state is left on the guard
    /// surface (a resting contact the model has no mode for, or a reset that does not
    /// move the state off the guard). Give the model a mode for the contact, or fix the
    /// reset.
    #[error("guard '{guard}' crosses again immediately after its own reset at t = {t} in mode '{mode}': the state sticks to the guard surface (Zeno behaviour, or a resting contact the model has no mode for)")]
    Sticking { t: f64, mode: String, guard: String },
    /// The adaptive step fell below the minimum: the flow is too stiff for an explicit
    /// method, or singular there. Use an implicit integrator (Radau) for stiff systems,
    /// loosen the tolerances, or check the model near the reported time.
    #[error("step-size underflow at t = {t} in mode '{mode}': step {h:e} is below the minimum {h_min:e}")]
    StepSizeUnderflow {
        t: f64,
        mode: String,
        h: f64,
        h_min: f64,
    },
    /// A NaN or infinity appeared in the state, a derivative or an output: a division by
    /// zero or a blow-up in the model. Check the model's expressions at the reported
    /// time and mode, and the parameter values.
    #[error("non-finite value in {what} at t = {t} in mode '{mode}'")]
    NonFinite { t: f64, mode: String, what: String },
    /// The model's own code failed ([`ModelError`]): a singular constraint matrix, a DAE
    /// whose algebraic equations have no solution, inconsistent start values. The source
    /// says which; fix the model or its parameters there.
    #[error("model failure at t = {t} in mode '{mode}': {source}")]
    Model {
        t: f64,
        mode: String,
        #[source]
        source: ModelError,
    },
    /// The implicit integrator's Newton iteration did not converge even after the step
    /// was cut to the minimum: the implicit equations have no solution near the guess
    /// (a singular or discontinuous flow). Check the model at the reported time (a
    /// division by a state that reaches zero, a flow that is not continuous within a
    /// mode), or loosen the tolerances.
    #[error("implicit integrator: Newton iteration did not converge at t = {t} in mode '{mode}' even with step {h:e}")]
    NewtonFailure { t: f64, mode: String, h: f64 },
    /// The run took more steps than `max_steps` before the horizon: tolerances far too
    /// tight for the horizon, a stiff flow under an explicit method, or a fast
    /// oscillation. Raise `[simulation] max_steps`, loosen the tolerances, shorten the
    /// horizon, or use the implicit integrator for stiff flows.
    #[error("too many steps ({max_steps}) by t = {t} in mode '{mode}'")]
    TooManySteps {
        t: f64,
        mode: String,
        max_steps: usize,
    },
    /// A cost term or constraint refers to an occurrence of a guard that did not happen
    /// in the run (occurrences count from 1). Lengthen the horizon, move the start so the
    /// event happens, or refer to an occurrence that does.
    #[error("a cost term or constraint needs occurrence {occurrence} of guard '{guard}', but it fired {fired} time(s) in [{t0}, {t1}]")]
    MissingEvent {
        guard: String,
        occurrence: usize,
        fired: usize,
        t0: f64,
        t1: f64,
    },
    /// A data sample after the run's end (a terminal event stopped the run first), or at
    /// an instant that was not a breakpoint of it (samples given to a setup that did not
    /// run them).
    #[error("the data record {record} has a sample at t = {t}, but the run ended at t = {t_final} (or did not stop there); samples must lie in the horizon the run covers")]
    SampleOffRun {
        record: String,
        t: f64,
        t_final: f64,
    },
    /// A cost term naming something the setup does not have: an output, a guard, a
    /// parameter index out of range, or occurrence 0 (occurrences count from 1).
    #[error(
        "objective '{objective}', term {term} (0-based): {what} {index} does not exist; {valid}"
    )]
    BadTerm {
        objective: String,
        term: usize,
        /// "output", "guard", "occurrence" or "parameter".
        what: &'static str,
        index: usize,
        /// The valid range, in words.
        valid: String,
    },
    /// θ (or a vector of θ's length: a motion's parameters) with `found` entries where
    /// the setup has `parameters` parameters and `controls` control coefficients. Give one
    /// value per entry of [`crate::setup::Setup::theta_names`].
    #[error("θ has {found} entries, the setup needs {} ({parameters} parameters + {controls} control coefficients)", parameters + controls)]
    ThetaLength {
        found: usize,
        parameters: usize,
        controls: usize,
    },
    /// The setup has no objective (no cost term), so there is nothing to differentiate or
    /// minimize. Add a cost term (`[[cost]]` in a problem file); a periodic orbit's
    /// sensitivities come from [`crate::periodic`] instead.
    #[error("no objective to differentiate: the setup has no cost terms (a problem file needs at least one [[cost]]; a [periodic] problem's orbit, multipliers and their sensitivities come from `hybridopt periodic`)")]
    NoObjective,
    /// A point of an optimization problem (e.g. [`crate::optimize::ShootingEvaluator::point`])
    /// given another number of values than the problem has variables (their names listed).
    #[error("{found} variable values for {} variables ({})", variables.len(), variables.join(", "))]
    VariableCount {
        found: usize,
        variables: Vec<String>,
    },
    /// No entry of θ is free: no parameter is marked `optimize = true` and there are no
    /// control coefficients. Mark at least one parameter `optimize = true`.
    #[error(
        "no parameter is marked `optimize = true`, there are no controls and t_end is fixed: nothing to optimize"
    )]
    NothingToOptimize,
    /// Something the library does not do in this combination (`what`), and what to do
    /// instead (`instead`): the dual witness with SDIRK3, a motion drawn from a
    /// checkpointed trajectory.
    #[error("{what} ({instead})")]
    Unsupported { what: String, instead: String },
    /// `hybridopt merge` was not given every shard of the sweep: `missing` are the shard
    /// indices (1-based) of `count` that no folder holds (`count` is 0 when no folder was
    /// given). Give every shard's folder.
    #[error("{}", missing_shards_text(missing, *count))]
    MissingShards { missing: Vec<usize>, count: usize },
    /// A horizon that is empty, reversed or not finite.
    #[error("the horizon [{t0}, {t_end}] is empty or not finite: t_end must be finite and greater than t0")]
    BadHorizon { t0: f64, t_end: f64 },
    /// A problem file that cannot be used: TOML syntax, an unknown key, a value out of
    /// range; the message names the key. Fix the file there (every key is in the guide's
    /// docs/guide/problem-files.md).
    #[error("{file}: {message}")]
    Problem { file: PathBuf, message: String },
    /// An input the library cannot use that has no more specific variant (the few
    /// free-form cases nobody branches on: a sweep's shard data that do not fit together,
    /// finite differences that found no usable step, a geometry with no finite point); the
    /// message says what and what to give instead.
    #[error("invalid input: {0}")]
    Invalid(String),
    /// A command-line flag with a value that cannot be used: the flag, the value as given,
    /// and what would be valid.
    #[error("{flag} {value}: {message}")]
    Flag {
        flag: String,
        value: String,
        message: String,
    },
    /// The optimization library (argmin) failed in a way that is not a cost evaluation's
    /// error: the message is the solver's own. It usually means a non-finite cost or
    /// gradient reached the solver; check the start point's gradient with `gradient`.
    #[error("optimizer: {0}")]
    Optimizer(String),
    /// An entry of θ whose value or bounds cannot be optimized: a non-finite value or
    /// bound, inverted bounds, or a start value not strictly inside its bounds.
    #[error("parameter `{name}` = {value}: the value must be finite and strictly inside finite, ordered bounds (lower = {}, upper = {})", bound_text(*lower), bound_text(*upper))]
    Bounds {
        name: String,
        value: f64,
        lower: Option<f64>,
        upper: Option<f64>,
    },
    /// An entry of θ given to the optimizer that does not match the setup's θ by name: a
    /// name θ does not have, a name given twice, or a parameter left out that the system
    /// has no default value for. Name the entries as [`crate::setup::Setup::theta_names`]
    /// does (parameters, then control coefficients `channel[k]`).
    #[error("θ entry `{name}`: {problem}; θ's entries are {}", valid.join(", "))]
    ThetaName {
        name: String,
        /// "no such parameter", "given twice", or "left out, and the system has no
        /// default value for it".
        problem: &'static str,
        /// θ's names, in order.
        valid: Vec<String>,
    },
    /// The optimizer met a kink with the kink policy `stop`: [`crate::optimize::optimize`]
    /// turns it into the outcome [`crate::optimize::Outcome::Kink`] (it leaves the
    /// optimizer only if a caller evaluates the adapter itself).
    #[error("stopped at a kink (kink policy \"stop\")")]
    StoppedAtKink,
    /// A trial point left the cost's domain again after the most line-search restarts
    /// allowed ([`crate::optimize::MAX_RESTARTS`]); `source` is the last such error.
    #[error("optimizer: a trial point left the cost's domain after {restarts} line-search restart(s), the most allowed: {source}")]
    RestartsExhausted {
        restarts: usize,
        #[source]
        source: Box<Error>,
    },
    /// Reading or writing a file failed (a missing file, a folder that cannot be
    /// created, no permission); the path and the system's reason are given.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Drawing a figure failed (the plotting backend's message); the path names the
    /// figure. Check that the output folder is writable.
    #[error("plotting {path}: {message}")]
    Plot { path: PathBuf, message: String },
    /// A picture or animation was asked of a system that has no geometry.
    #[error("system '{system}' has no geometry, so its motion cannot be drawn: only mechanical systems can be animated. A system gets one by implementing hybridopt::animate::Geometry (its shapes at a state and its static scene) and returning it from HybridSystem::geometry")]
    NoGeometry { system: String },
    /// The constrained solver cannot run or continue (a QP it cannot solve, a free final
    /// time it cannot use, a constraint the setup cannot have).
    #[error("constrained solver: {0}")]
    Constrained(#[from] crate::optimize::constrained::error::ConstrainedError),
    /// Multiple shooting cannot run or its result cannot be used (node times, the guess
    /// table, what it does not take yet, a mode mismatch at a node).
    #[error("multiple shooting: {0}")]
    Shooting(#[from] crate::optimize::shooting::error::ShootingError),
    /// The hybrid iLQR cannot run on the problem (what it does not take, named).
    #[error("ilqr: {0}")]
    Ilqr(#[from] crate::optimize::ilqr::error::IlqrError),
    /// The B-derivative at a corner cannot be computed: a corner whose data are not a
    /// transversal crossing (sizes, a zero or dependent normal, a grazing or sliding field),
    /// a bad crossing order or direction, an overflow, or a `hybridopt bderiv` case that
    /// names a key wrongly. The variant says which, with the offending item.
    #[error("{0}")]
    Corner(#[from] crate::sensitivity::corner::CornerError),
    /// The nonsmooth analysis at simultaneous events (the crossing orders' pieces, the
    /// directional derivatives, the piece gradients) cannot handle a group or an input: the
    /// variant says which (a group it does not support, a bad direction, a sensitivity pass
    /// that met other events than the plain run, an event cost on a group's event).
    #[error("{0}")]
    Simultaneous(#[from] crate::sensitivity::simultaneous::error::SimultaneousError),
    /// The periodic-orbit solver cannot find or use the orbit (no return to the section,
    /// a start off it, Newton's method that does not converge, free components that do not
    /// chart the section, a derivative that does not exist, invalid settings): the variant
    /// says which. A simulation's own failure comes as itself.
    #[error(transparent)]
    Periodic(#[from] crate::periodic_error::PeriodicError),
    /// The feedback design cannot be made (weights that do not fit, a periodic Riccati
    /// iteration that does not settle, a nominal with no period to close); a simulation's
    /// own failure comes as itself ([`Error::from_feedback`]).
    #[error("feedback: {0}")]
    Feedback(Box<FeedbackError>),
    /// A broken internal invariant (a bug, not a bad input): the message says which. Please
    /// report it with the input that triggered it.
    #[error("internal error (a bug; please report it): {0}")]
    Internal(String),
    /// An interruption (Ctrl-C) was requested through [`crate::interrupt::request`].
    #[error("interrupted (Ctrl-C)")]
    Interrupted,
}

impl Error {
    /// A feedback design's failure: a simulation's error as itself, the others wrapped.
    pub fn from_feedback(e: FeedbackError) -> Error {
        match e {
            FeedbackError::Simulation(e) => e,
            other => Error::Feedback(Box::new(other)),
        }
    }

    /// Whether the error means the parameters left the region where the cost is defined
    /// and differentiable (events that the cost needs disappear, grazing, sticking, Zeno):
    /// an optimizer may back off from such a point.
    pub fn is_domain_error(&self) -> bool {
        matches!(
            self,
            Error::MissingEvent { .. }
                | Error::SampleOffRun { .. }
                | Error::Grazing { .. }
                | Error::Sticking { .. }
                | Error::Zeno { .. }
        )
    }
}

/// The feedback design's failures ([`crate::feedback`]); it lives beside [`Error`] because each
/// wraps the other (a simulation's failure inside a design, a design's failure as a run's).
/// Every failure of the feedback module.
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    /// A simulation, a Jacobian or a backward integration failed.
    #[error(transparent)]
    Simulation(#[from] Error),
    /// The closed loop's return map failed (the periodic solver's error, a
    /// [`crate::Error::Periodic`] or a simulation's).
    #[error(transparent)]
    Periodic(Box<Error>),
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

/// [`Error::MissingShards`]'s message.
fn missing_shards_text(missing: &[usize], count: usize) -> String {
    if count == 0 {
        return "merge: no shard folders given".into();
    }
    let list: Vec<String> = missing.iter().map(|i| format!("{i}/{count}")).collect();
    format!(
        "merge: shard(s) {} missing; give every shard's folder",
        list.join(", ")
    )
}

/// A bound as an error message shows it ("none" when absent).
fn bound_text(b: Option<f64>) -> String {
    b.map_or("none".to_string(), |v| v.to_string())
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The message of an error with its causes, as the command line and the Python package
/// print it: the error, then each cause joined by ": ", leaving out a cause whose text the
/// message already holds (an I/O error names its OS error itself, so it is said once).
pub fn chain_message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        cause = c.source();
    }
    msg
}
