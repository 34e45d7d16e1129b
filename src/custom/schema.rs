//! The `[system]` table of a `kind = "custom"` problem file (serde). Order matters for
//! states, parameters, controls, modes and outputs (it is the engine's order), so those
//! are arrays; per-state expressions are tables keyed by the state's name.

use crate::model::Direction;
use serde::Deserialize;
use std::collections::BTreeMap;

/// `[system]` without `kind`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemSpec {
    /// `"custom"` (checked by the caller; present when read from the whole file).
    #[serde(default)]
    pub kind: Option<String>,
    /// State names, in order.
    pub states: Vec<String>,
    /// Parameter names, in order (their values and bounds are in `[parameters]`).
    #[serde(default)]
    pub parameters: Vec<String>,
    /// Time-varying control names (values from `[controls]`).
    #[serde(default)]
    pub controls: Vec<String>,
    /// Named constants usable in every expression.
    #[serde(default)]
    pub constants: BTreeMap<String, f64>,
    /// Default values of parameters (`defaults = { g = 9.81 }`): a parameter that
    /// `[parameters]` leaves out takes its default and is fixed. Without one it must be
    /// listed.
    #[serde(default)]
    pub defaults: BTreeMap<String, f64>,
    /// `x0(p)`: one expression of the parameters and constants per state.
    pub initial: BTreeMap<String, String>,
    /// The start mode (default: the first).
    pub initial_mode: Option<String>,
    /// The outputs `name = expr` (each mode may override the expression).
    #[serde(default)]
    pub outputs: Vec<OutputSpec>,
    /// The modes, in order.
    pub modes: Vec<ModeSpec>,
    /// Compile the expressions to machine code (default true; false interprets them).
    #[serde(default)]
    pub jit: Option<bool>,
}

/// A whole problem file seen only for its `[system]` table (the other tables are read by
/// `problem.rs`): deserializing from the text gives errors with line, column and a caret.
#[derive(Debug, Clone, Deserialize)]
pub struct FileSystem {
    pub system: SystemSpec,
}

/// One output.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    pub name: String,
    pub expr: String,
}

/// One mode.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeSpec {
    pub name: String,
    /// `ẋ`: one expression per state, keyed by the state's name.
    pub flow: BTreeMap<String, String>,
    /// The guards watched in this mode.
    #[serde(default)]
    pub guards: Vec<GuardSpec>,
    /// Output expressions that differ in this mode, keyed by the output's name.
    #[serde(default)]
    pub outputs: BTreeMap<String, String>,
}

/// One guard and its reset.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardSpec {
    /// Unique over all modes (cost terms refer to it).
    pub name: String,
    /// `g(t, x, u, p)`: the event is where it crosses zero in `direction`.
    pub expr: String,
    pub direction: Direction,
    /// A terminal guard ends the run.
    #[serde(default)]
    pub terminal: bool,
    /// The mode after the event (default: the same).
    pub next: Option<String>,
    /// `x⁺`: new values by state name, expressions of `t`, the state before the event,
    /// the parameters and constants; a state not listed keeps its value.
    #[serde(default)]
    pub reset: BTreeMap<String, String>,
}
