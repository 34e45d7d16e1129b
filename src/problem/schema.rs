//! The problem file's tables as serde types. Every kind is a serde enum: the system
//! ([`SystemSpec`], each kind with its own settings), the integration method, the control
//! basis, the cost terms and constraints ([`CostSpec`], [`ConstraintSpec`]: a
//! [`QuantitySpec`] or a kind of their own, each with the keys it takes, `kinds.rs`), the
//! solver, the gradient method and the kink policy. Unknown keys are rejected.

pub use super::quantity_spec::QuantitySpec;
use crate::control::Basis;
use crate::integrate::Method;
use crate::optimize::{Globalization, KinkPolicy, SolverKind};
use crate::sensitivity::GradientMethod;
pub use crate::systems::SystemSpec;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    pub name: Option<String>,
    pub description: Option<String>,
    pub system: SystemSpec,
    pub simulation: SimulationSpec,
    /// Parameters left out take the system's defaults (see `parameters.rs`).
    #[serde(default)]
    pub parameters: BTreeMap<String, ParamSpec>,
    pub controls: Option<ControlSpec>,
    #[serde(default)]
    pub cost: Vec<CostSpec>,
    /// `[[constraint]]` tables (see `constraints.rs`).
    #[serde(default)]
    pub constraint: Vec<ConstraintSpec>,
    pub reference: Option<ReferenceSpec>,
    pub optimizer: Option<OptimizerSpec>,
    pub plot: Option<PlotSpec>,
    /// The periodic-orbit settings (see `periodic.rs`).
    pub periodic: Option<PeriodicTable>,
    /// Multiple shooting (see `shooting.rs`).
    pub shooting: Option<ShootingSpec>,
    /// `[[experiment]]` tables (see `experiments.rs`).
    #[serde(default)]
    pub experiment: Vec<ExperimentSpec>,
    /// `[feedback]`: LQR weights, the phase rule and the robustness runs (see
    /// `feedback.rs`).
    pub feedback: Option<FeedbackSpec>,
}

/// `[periodic]` (docs/guide/periodic-orbits.md): the section (a guard's reset or a
/// hyperplane), the free components, the guess and Newton's settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodicTable {
    pub guard: Option<String>,
    pub hyperplane: Option<HyperplaneTable>,
    #[serde(default = "one_crossing")]
    pub count: usize,
    pub mode: Option<String>,
    pub free: Vec<String>,
    pub guess: BTreeMap<String, f64>,
    pub t_max: Option<f64>,
    pub tol: Option<f64>,
    pub max_iters: Option<usize>,
    #[serde(default)]
    pub sensitivities: Vec<String>,
    pub objective: Option<crate::periodic::ObjectiveSpec>,
}

/// `hyperplane = { normal = { state = coefficient, … }, offset = c, direction = … }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyperplaneTable {
    pub normal: BTreeMap<String, f64>,
    pub offset: f64,
    pub direction: crate::periodic::Crossing,
}

fn one_crossing() -> usize {
    1
}

/// `[feedback]` (docs/guide/problem-files.md, "[feedback]").
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackSpec {
    pub q: WeightSpec,
    pub r: WeightSpec,
    pub qf: Option<WeightSpec>,
    pub clock: Option<crate::feedback::Clock>,
    pub guard: Option<String>,
    pub grid: Option<usize>,
    pub robustness: Option<RobustnessSpecFile>,
}

/// A diagonal weight: by name (`{ theta_s = 10.0 }`, names left out weigh 0) or one value
/// per state (or control) in the system's order.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum WeightSpec {
    Named(BTreeMap<String, f64>),
    Diagonal(Vec<f64>),
}

/// `[feedback.robustness]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobustnessSpecFile {
    pub trials: Option<usize>,
    pub size: Option<f64>,
    pub states: Option<Vec<String>>,
    pub seed: Option<u64>,
    pub steps: Option<usize>,
    pub terminal_tolerance: Option<f64>,
    pub event_time_tolerance: Option<f64>,
    pub parameters: Option<BTreeMap<String, f64>>,
}

/// `[shooting]`: the nodes (`segments = K` or `nodes = [t_1, …]`), the guess
/// (`guess = "single_shooting"` or a CSV file's path) and a periodic closing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShootingSpec {
    pub segments: Option<usize>,
    pub nodes: Option<Vec<f64>>,
    pub guess: Option<String>,
    pub periodic: Option<ClosingSpec>,
}

/// `[shooting] periodic = { guard = "…", states = [ … ] }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosingSpec {
    pub guard: String,
    pub states: Option<Vec<String>>,
}

/// `[simulation]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    #[serde(default)]
    pub t0: f64,
    pub t_end: TEndSpec,
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
    pub method: Option<Method>,
    pub max_events: Option<usize>,
    pub h_max: Option<f64>,
    pub linear_algebra: Option<crate::integrate::LinearAlgebra>,
    pub grazing_tol: Option<f64>,
    pub stop_after: Option<StopSpec>,
}

/// `t_end`: a number, or `{ value, optimize, lower, upper }` (a free final time when
/// `optimize = true`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum TEndSpec {
    Fixed(f64),
    Table(FreeTimeSpec),
}

/// `t_end = { value = 2.5, optimize = true, lower = 1, upper = 4 }`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreeTimeSpec {
    pub value: f64,
    #[serde(default)]
    pub optimize: bool,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

impl TEndSpec {
    /// The start value.
    pub fn value(&self) -> f64 {
        match *self {
            TEndSpec::Fixed(v) => v,
            TEndSpec::Table(t) => t.value,
        }
    }
    /// The latest t_end can reach (its upper bound when free, else its value).
    pub fn latest(&self) -> f64 {
        match *self {
            TEndSpec::Table(FreeTimeSpec {
                optimize: true,
                upper: Some(u),
                ..
            }) => u.max(self.value()),
            _ => self.value(),
        }
    }
}

/// `[simulation] stop_after = { guard, occurrence }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopSpec {
    pub guard: String,
    pub occurrence: usize,
}

/// One parameter in `[parameters]`.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    pub value: f64,
    #[serde(default)]
    pub optimize: bool,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

/// `[controls]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlSpec {
    pub basis: Basis,
    pub intervals: usize,
    #[serde(default)]
    pub channels: BTreeMap<String, ChannelSpec>,
    /// A CSV table (`t` and a column per channel it sets) whose values start the
    /// coefficients in place of the channels' `initial`.
    pub guess: Option<String>,
}

/// `[controls.channels.NAME]`.
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct ChannelSpec {
    #[serde(default)]
    pub initial: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

/// One `[[cost]]` term: its kind with the keys that kind takes (read by `kinds.rs`), its
/// `weight` (default 1) and `objective` (default "cost": terms with the same objective
/// are summed).
#[derive(Debug, Clone)]
pub struct CostSpec {
    pub what: CostKindSpec,
    pub weight: f64,
    pub objective: Option<String>,
}

/// What a cost term weighs.
#[derive(Debug, Clone)]
pub enum CostKindSpec {
    /// w q (`terminal`, `integral`, …) or w (q − target)² (`terminal_squared`, …): a
    /// quantity and, for a squared kind, its `target`.
    Weighed {
        quantity: QuantitySpec,
        target: Option<f64>,
    },
    /// w ∫ (y − y_ref)² dt against the run with `[reference.params]`.
    Track { output: String },
    /// w ∫ |u|² dt.
    Effort,
    /// w Σ ((y(t_i) − d_i)/σ)² over a measured record (a CSV file; with `[[experiment]]`
    /// tables, each experiment's `data` file instead); σ per output column (default 1;
    /// a `sigma_<output>` column overrides it per sample).
    Data {
        file: Option<String>,
        sigma: BTreeMap<String, f64>,
    },
}

impl CostSpec {
    /// The objective the term belongs to (default "cost").
    pub fn objective(&self) -> String {
        self.objective.clone().unwrap_or_else(|| "cost".into())
    }

    /// Whether it weighs the final time.
    pub fn is_final_time(&self) -> bool {
        matches!(&self.what, CostKindSpec::Weighed { quantity, .. } if quantity.kind.name == "final_time")
    }
}

/// One `[[constraint]]` table: its kind with the keys that kind takes (read by
/// `kinds.rs`), its bounds (`equals`, or `lower` and/or `upper`) and optional `name`.
#[derive(Debug, Clone)]
pub struct ConstraintSpec {
    pub what: ConstraintKindSpec,
    pub equals: Option<f64>,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub name: Option<String>,
}

/// What a constraint bounds: a quantity, or an output at every t of the horizon.
#[derive(Debug, Clone)]
pub enum ConstraintKindSpec {
    Quantity(QuantitySpec),
    Path { output: String },
}

/// One `[[experiment]]`: a record fitted together with the others, with its own fixed
/// parameter values (initial state, inputs) and horizon.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    pub name: String,
    /// The record's CSV file, relative to the problem file.
    pub data: String,
    /// Values of parameters that are not optimized, for this experiment.
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    /// This experiment's horizon end (default: `[simulation] t_end`).
    pub t_end: Option<f64>,
}

/// `[reference]`: the parameters of a tracking term's reference run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSpec {
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
}

/// `[optimizer]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct OptimizerSpec {
    pub solver: Option<SolverKind>,
    pub gradient: Option<GradientMethod>,
    pub max_iters: Option<u64>,
    pub memory: Option<usize>,
    pub tol_grad: Option<f64>,
    pub tol_cost: Option<f64>,
    pub first_step: Option<f64>,
    pub at_kink: Option<KinkPolicy>,
    /// The constrained solver's KKT tolerance.
    pub tol_kkt: Option<f64>,
    /// The constrained solver's globalization (`line_search`, `trust_region`).
    pub globalization: Option<Globalization>,
}

/// `[plot]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    pub outputs: Vec<String>,
    /// `[plot.geometry]`: see [`crate::animate::spec`].
    pub geometry: Option<toml::Value>,
    /// x–y figures of one output against another, e.g. `loops = [["eps", "sigma"]]`.
    #[serde(default)]
    pub loops: Vec<[String; 2]>,
}
