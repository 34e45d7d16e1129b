//! The problem-file schema (TOML, serde) and its validation. Every error names the file
//! and the key or value, and says what would be valid; unknown keys are rejected with
//! their line.

use crate::control::{Basis, ControlGrid};
use crate::cost::{Objective, Reference, Term};
use crate::error::Error;
use crate::integrate::{EventOptions, Method, SolverOptions};
use crate::model::{Dims, HybridSystem};
use crate::sensitivity::GradientMethod;
use crate::setup::Setup;
use crate::systems::builtin::Builtin;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    name: Option<String>,
    description: Option<String>,
    system: toml::Table,
    simulation: SimulationSpec,
    parameters: BTreeMap<String, ParamSpec>,
    controls: Option<ControlSpec>,
    #[serde(default)]
    cost: Vec<CostSpec>,
    reference: Option<ReferenceSpec>,
    optimizer: Option<OptimizerSpec>,
    plot: Option<PlotSpec>,
    /// The periodic-orbit settings, validated by [`crate::periodic::spec`].
    periodic: Option<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SimulationSpec {
    #[serde(default)]
    t0: f64,
    t_end: f64,
    rtol: Option<f64>,
    atol: Option<f64>,
    method: Option<String>,
    max_events: Option<usize>,
    h_max: Option<f64>,
    grazing_tol: Option<f64>,
    stop_after: Option<StopSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StopSpec {
    guard: String,
    occurrence: usize,
}

/// One parameter in the file.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct ParamSpec {
    value: f64,
    #[serde(default)]
    optimize: bool,
    lower: Option<f64>,
    upper: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ControlSpec {
    basis: String,
    intervals: usize,
    #[serde(default)]
    channels: BTreeMap<String, ChannelSpec>,
}

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
struct ChannelSpec {
    #[serde(default)]
    initial: f64,
    lower: Option<f64>,
    upper: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CostSpec {
    kind: String,
    output: Option<String>,
    target: Option<f64>,
    weight: Option<f64>,
    guard: Option<String>,
    occurrence: Option<usize>,
    param: Option<String>,
    objective: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReferenceSpec {
    #[serde(default)]
    params: BTreeMap<String, f64>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OptimizerSpec {
    solver: Option<String>,
    gradient: Option<String>,
    max_iters: Option<u64>,
    memory: Option<usize>,
    tol_grad: Option<f64>,
    tol_cost: Option<f64>,
    first_step: Option<f64>,
    at_kink: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlotSpec {
    outputs: Vec<String>,
    /// `[plot.geometry]`: see [`crate::animate::spec`].
    geometry: Option<toml::Value>,
    /// x–y figures of one output against another, e.g. `loops = [["eps", "sigma"]]`.
    #[serde(default)]
    loops: Vec<[String; 2]>,
}

/// How a bounded parameter is mapped to an unconstrained optimization variable.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Transform {
    /// No bounds: z = x / scale.
    Identity { scale: f64 },
    /// x > lower: z = ln(x − lower).
    Log { lower: f64 },
    /// x < upper: z = ln(upper − x).
    LogUpper { upper: f64 },
    /// lower < x < upper: z = logit((x − lower)/(upper − lower)).
    Logit { lower: f64, upper: f64 },
}

impl Transform {
    /// From the bounds (documented choice: bounds imply the transform).
    pub fn from_bounds(lower: Option<f64>, upper: Option<f64>, value: f64) -> Transform {
        match (lower, upper) {
            (None, None) => Transform::Identity {
                scale: value.abs().max(1.0),
            },
            (Some(l), None) => Transform::Log { lower: l },
            (None, Some(u)) => Transform::LogUpper { upper: u },
            (Some(l), Some(u)) => Transform::Logit { lower: l, upper: u },
        }
    }
    /// z = T(x)
    pub fn to_z(&self, x: f64) -> f64 {
        match *self {
            Transform::Identity { scale } => x / scale,
            Transform::Log { lower } => (x - lower).ln(),
            Transform::LogUpper { upper } => (upper - x).ln(),
            Transform::Logit { lower, upper } => {
                let s = (x - lower) / (upper - lower);
                (s / (1.0 - s)).ln()
            }
        }
    }
    /// x = T⁻¹(z) and dx/dz.
    pub fn to_x(&self, z: f64) -> (f64, f64) {
        match *self {
            Transform::Identity { scale } => (z * scale, scale),
            Transform::Log { lower } => {
                let e = z.exp();
                (lower + e, e)
            }
            Transform::LogUpper { upper } => {
                let e = z.exp();
                (upper - e, -e)
            }
            Transform::Logit { lower, upper } => {
                let s = 1.0 / (1.0 + (-z).exp());
                (lower + (upper - lower) * s, (upper - lower) * s * (1.0 - s))
            }
        }
    }
}

/// A parameter of θ as the problem sets it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ThetaEntry {
    pub name: String,
    pub value: f64,
    pub optimize: bool,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub transform: Transform,
}

/// Which solver the optimizer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SolverKind {
    Lbfgs,
    Gd,
}

impl SolverKind {
    pub fn parse(s: &str) -> Option<SolverKind> {
        match s {
            "lbfgs" => Some(SolverKind::Lbfgs),
            "gd" => Some(SolverKind::Gd),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Lbfgs => "lbfgs",
            SolverKind::Gd => "gd",
        }
    }
}

/// Parses a gradient method name.
pub fn parse_gradient_method(s: &str) -> Option<GradientMethod> {
    match s {
        "adjoint" => Some(GradientMethod::Adjoint),
        "direct" => Some(GradientMethod::Direct),
        "fd" => Some(GradientMethod::Fd),
        "dual" => Some(GradientMethod::Dual),
        _ => None,
    }
}

/// Optimizer settings with their defaults.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OptimizerSettings {
    /// Default L-BFGS.
    pub solver: SolverKind,
    /// Default adjoint.
    pub gradient: GradientMethod,
    /// Default 100.
    pub max_iters: u64,
    /// L-BFGS memory. Default 7 (Nocedal & Wright suggest 3–20).
    pub memory: usize,
    /// Stop when ‖∇ψ̃‖ < tol_grad for the scaled cost ψ̃ (the gradient at the start has norm
    /// 1/first_step). Default 1e-9.
    pub tol_grad: f64,
    /// Stop when |ψ̃_k − ψ̃_{k−1}| < tol_cost (scaled). Default 1e-15.
    pub tol_cost: f64,
    /// Length of the first trial step in the transformed, scaled variables. Default 0.5.
    pub first_step: f64,
    /// What to do where ψ is nonsmooth in the optimized variables. Default: descend along
    /// the min-norm element of the pieces' gradients.
    pub at_kink: crate::optimize::KinkPolicy,
}

impl Default for OptimizerSettings {
    fn default() -> Self {
        OptimizerSettings {
            solver: SolverKind::Lbfgs,
            gradient: GradientMethod::Adjoint,
            max_iters: 100,
            memory: 7,
            tol_grad: 1e-9,
            tol_cost: 1e-15,
            first_step: 0.5,
            at_kink: crate::optimize::KinkPolicy::Descent,
        }
    }
}

/// A validated cost term: the engine's [`Term`], except that a tracking term's reference
/// run is made when the setup is built.
#[derive(Debug, Clone)]
pub enum CostTerm {
    Term(Term),
    Track { output: usize, weight: f64 },
}

/// A cost term of the file, its names resolved against the system.
#[derive(Debug, Clone)]
pub struct CostEntry {
    pub kind: String,
    pub term: CostTerm,
    pub objective: String,
}

/// A validated problem.
#[derive(Debug, Clone)]
pub struct Problem {
    pub name: String,
    pub description: String,
    pub file: PathBuf,
    pub system: Builtin,
    pub dims: Dims,
    pub t0: f64,
    pub t_end: f64,
    pub solver: SolverOptions,
    pub events: EventOptions,
    /// θ = (parameters, control coefficients), in the engine's order.
    pub theta: Vec<ThetaEntry>,
    pub controls: Option<ControlGrid>,
    pub costs: Vec<CostEntry>,
    /// Parameter overrides for a tracking reference run.
    pub reference: Option<BTreeMap<String, f64>>,
    pub optimizer: OptimizerSettings,
    pub plot_outputs: Vec<usize>,
    /// The `[periodic]` table as written (validated by `periodic::spec::PeriodicSpec`).
    pub periodic: Option<toml::Table>,
    /// `[plot.geometry]`: a geometry from the outputs, for pictures of the motion.
    pub plot_geometry: Option<crate::animate::GeometrySpec>,
    /// `[plot] loops`: pairs (x, y) of output indices drawn against each other
    /// ([`crate::plot_loop`]).
    pub plot_loops: Vec<(usize, usize)>,
}

/// The line of the first occurrence of `key` as a TOML key in `text` (for messages).
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with(key) && t[key.len()..].trim_start().starts_with(['=', '.', ' '])
        })
        .map(|i| i + 1)
        .or_else(|| text.lines().position(|l| l.contains(key)).map(|i| i + 1))
}

const COST_KINDS: [&str; 10] = [
    "parameter_squared",
    "integral",
    "integral_squared",
    "track",
    "effort",
    "terminal",
    "terminal_squared",
    "event_time",
    "event_time_squared",
    "event_output_squared",
];

impl Problem {
    /// Reads and validates a problem file.
    pub fn load(path: &Path) -> Result<Problem, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates problem text (`path` names it in messages).
    pub fn parse(text: &str, path: &Path) -> Result<Problem, Error> {
        let perr = |m: String| Error::Problem {
            file: path.to_path_buf(),
            message: m,
        };
        let spec: FileSpec =
            toml::from_str(text).map_err(|e| perr(e.to_string().trim_end().to_string()))?;
        let at = |key: &str| line_of(text, key).map_or(String::new(), |l| format!(" (line {l})"));

        // --- system ---
        let mut sys_table = spec.system.clone();
        let kind = match sys_table.remove("kind") {
            Some(toml::Value::String(s)) => s,
            Some(other) => {
                return Err(perr(format!(
                    "[system] kind must be a string, got {other}{}",
                    at("kind")
                )))
            }
            None => {
                return Err(perr(format!(
                    "[system] needs `kind`; valid kinds: {}",
                    crate::systems::builtin::KINDS.join(", ")
                )))
            }
        };
        let system = if kind == "custom" {
            let sys = crate::custom::CustomSystem::from_file_text(text)
                .map_err(|e| perr(e.located(text)))?;
            Builtin::Custom(Box::new(sys))
        } else {
            Self::builtin(&kind, sys_table, text, &perr)?
        };
        let dims = Dims::of(&system);

        // --- simulation ---
        let sim = &spec.simulation;
        if !sim.t0.is_finite() || !sim.t_end.is_finite() || sim.t_end <= sim.t0 {
            return Err(perr(format!(
                "[simulation] t_end = {} must be finite and greater than t0 = {}{}",
                sim.t_end,
                sim.t0,
                at("t_end")
            )));
        }
        let mut solver = SolverOptions::default();
        let mut events = EventOptions::default();
        for (key, v) in [("rtol", sim.rtol), ("atol", sim.atol)] {
            if let Some(v) = v {
                if !(v > 0.0 && v < 1.0) {
                    return Err(perr(format!(
                        "[simulation] {key} = {v} is invalid: a tolerance must be in (0, 1){}",
                        at(key)
                    )));
                }
            }
        }
        if let Some(v) = sim.rtol {
            solver.rtol = v;
        }
        if let Some(v) = sim.atol {
            solver.atol = v;
        }
        if let Some(m) = &sim.method {
            solver.method = match m.as_str() {
                "dopri5" => Method::Dopri5,
                "sdirk3" => Method::Sdirk3,
                "radau5" => Method::Radau5,
                other => {
                    return Err(perr(format!(
                        "[simulation] method = \"{other}\" is unknown; valid: \"dopri5\" (explicit), \"sdirk3\" (implicit, L-stable) or \"radau5\" (implicit, L-stable, order 5){}",
                        at("method")
                    )))
                }
            };
        }
        if let Some(h) = sim.h_max {
            if !(h > 0.0) {
                return Err(perr(format!(
                    "[simulation] h_max = {h} must be positive{}",
                    at("h_max")
                )));
            }
            solver.h_max = h;
        }
        if let Some(n) = sim.max_events {
            events.max_events = n;
        }
        if let Some(g) = sim.grazing_tol {
            if !(g >= 0.0) {
                return Err(perr(format!(
                    "[simulation] grazing_tol = {g} must be ≥ 0{}",
                    at("grazing_tol")
                )));
            }
            events.grazing_tol = g;
        }

        if let Some(st) = &sim.stop_after {
            let k = dims
                .guards
                .iter()
                .position(|g| g.name == st.guard)
                .ok_or_else(|| {
                    perr(format!(
                        "[simulation] stop_after: guard `{}` is unknown; valid guards: {}{}",
                        st.guard,
                        dims.guards
                            .iter()
                            .map(|g| g.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        at("stop_after")
                    ))
                })?;
            if st.occurrence == 0 {
                return Err(perr(format!(
                    "[simulation] stop_after: occurrence counts from 1{}",
                    at("stop_after")
                )));
            }
            events.stop_after = Some((k, st.occurrence));
        }

        // --- parameters ---
        let mut theta = Vec::new();
        for name in &dims.params {
            let Some(ps) = spec.parameters.get(name) else {
                return Err(perr(format!(
                    "[parameters] is missing `{name}`; system \"{kind}\" needs all of: {}",
                    dims.params.join(", ")
                )));
            };
            theta.push(Self::theta_entry(name, ps, &perr, &at)?);
        }
        for name in spec.parameters.keys() {
            if !dims.params.contains(name) {
                return Err(perr(format!(
                    "[parameters] `{name}` is not a parameter of system \"{kind}\"{}; its parameters are: {}",
                    at(name),
                    dims.params.join(", ")
                )));
            }
        }

        // --- controls ---
        let controls = match &spec.controls {
            None => {
                if !dims.controls.is_empty() {
                    return Err(perr(format!(
                        "system \"{kind}\" has controls ({}) but the file has no [controls] table",
                        dims.controls.join(", ")
                    )));
                }
                None
            }
            Some(cs) => {
                if dims.controls.is_empty() {
                    return Err(perr(format!(
                        "[controls]: system \"{kind}\" has no controls{}",
                        at("[controls]")
                    )));
                }
                let basis = match cs.basis.as_str() {
                    "piecewise_constant" => Basis::PiecewiseConstant,
                    "piecewise_linear" => Basis::PiecewiseLinear,
                    "cubic_bspline" => Basis::CubicBspline,
                    other => {
                        return Err(perr(format!(
                            "[controls] basis = \"{other}\" is unknown; valid: piecewise_constant, piecewise_linear, cubic_bspline{}",
                            at("basis")
                        )))
                    }
                };
                if cs.intervals == 0 || cs.intervals > 100_000 {
                    return Err(perr(format!(
                        "[controls] intervals = {} must be between 1 and 100000{}",
                        cs.intervals,
                        at("intervals")
                    )));
                }
                for name in cs.channels.keys() {
                    if !dims.controls.contains(name) {
                        return Err(perr(format!(
                            "[controls.channels] `{name}` is not a control of \"{kind}\"; its controls are: {}",
                            dims.controls.join(", ")
                        )));
                    }
                }
                let grid = ControlGrid {
                    basis,
                    t0: sim.t0,
                    t1: sim.t_end,
                    intervals: cs.intervals,
                    channels: dims.controls.len(),
                };
                for name in &dims.controls {
                    let ch = cs.channels.get(name).cloned().unwrap_or_default();
                    let ps = ParamSpec {
                        value: ch.initial,
                        optimize: true,
                        lower: ch.lower,
                        upper: ch.upper,
                    };
                    for k in 0..grid.n_coef() {
                        theta.push(Self::theta_entry(&format!("{name}[{k}]"), &ps, &perr, &at)?);
                    }
                }
                Some(grid)
            }
        };

        // --- costs ---
        // a periodic-orbit problem needs no cost (its objectives are the orbit's)
        if spec.cost.is_empty() && spec.periodic.is_none() {
            return Err(perr(
                "the file has no [[cost]] terms; at least one is needed".into(),
            ));
        }
        let mut costs = Vec::new();
        for (i, c) in spec.cost.iter().enumerate() {
            let names: Vec<String> = theta.iter().map(|e| e.name.clone()).collect();
            costs.push(Self::cost_entry(i, c, &dims, &names, &perr)?);
        }
        if costs.iter().any(|c| c.kind == "track") && spec.reference.is_none() {
            return Err(perr(
                "a `track` cost term needs a [reference] table with the parameters that generate the reference run".into(),
            ));
        }
        let reference = match spec.reference {
            Some(r) => {
                for name in r.params.keys() {
                    if !dims.params.contains(name) {
                        return Err(perr(format!(
                            "[reference.params] `{name}` is not a parameter; valid: {}",
                            dims.params.join(", ")
                        )));
                    }
                }
                Some(r.params)
            }
            None => None,
        };

        // --- optimizer ---
        let os = spec.optimizer.unwrap_or_default();
        let mut optimizer = OptimizerSettings::default();
        if let Some(s) = &os.solver {
            optimizer.solver = SolverKind::parse(s).ok_or_else(|| {
                perr(format!(
                    "[optimizer] solver = \"{s}\" is unknown; valid: \"lbfgs\", \"gd\"{}",
                    at("solver")
                ))
            })?;
        }
        if let Some(g) = &os.gradient {
            optimizer.gradient = parse_gradient_method(g).ok_or_else(|| {
                perr(format!(
                    "[optimizer] gradient = \"{g}\" is unknown; valid: \"adjoint\", \"direct\", \"fd\", \"dual\"{}",
                    at("gradient")
                ))
            })?;
        }
        if let Some(n) = os.max_iters {
            optimizer.max_iters = n;
        }
        if let Some(m) = os.memory {
            if m == 0 {
                return Err(perr(format!(
                    "[optimizer] memory must be ≥ 1{}",
                    at("memory")
                )));
            }
            optimizer.memory = m;
        }
        for (key, v) in [
            ("tol_grad", os.tol_grad),
            ("tol_cost", os.tol_cost),
            ("first_step", os.first_step),
        ] {
            if let Some(v) = v {
                if !(v >= 0.0) || !v.is_finite() {
                    return Err(perr(format!(
                        "[optimizer] {key} = {v} must be a finite number ≥ 0{}",
                        at(key)
                    )));
                }
            }
        }
        if let Some(v) = os.tol_grad {
            optimizer.tol_grad = v;
        }
        if let Some(v) = os.tol_cost {
            optimizer.tol_cost = v;
        }
        if let Some(v) = os.first_step {
            if v == 0.0 {
                return Err(perr(format!(
                    "[optimizer] first_step must be > 0{}",
                    at("first_step")
                )));
            }
            optimizer.first_step = v;
        }

        if let Some(k) = &os.at_kink {
            optimizer.at_kink = match k.as_str() {
                "descent" => crate::optimize::KinkPolicy::Descent,
                "stop" => crate::optimize::KinkPolicy::Stop,
                other => {
                    return Err(perr(format!(
                    "[optimizer] at_kink = \"{other}\" is unknown; valid: \"descent\", \"stop\"{}",
                    at("at_kink")
                )))
                }
            };
        }

        let plot_outputs = match &spec.plot {
            Some(p) => p
                .outputs
                .iter()
                .map(|o| {
                    dims.output_index(o).ok_or_else(|| {
                        perr(format!(
                            "[plot] output `{o}` is unknown; valid outputs: {}",
                            dims.outputs.join(", ")
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => (0..dims.outputs.len().min(6)).collect(),
        };

        let plot_loops = crate::plot_loop::parse_loops(
            spec.plot.as_ref().map_or(&[][..], |p| &p.loops[..]),
            &dims.outputs,
        )
        .map_err(|m| perr(format!("{m}{}", at("loops"))))?;

        let plot_geometry = match spec.plot.as_ref().and_then(|p| p.geometry.clone()) {
            Some(v) => Some(
                crate::animate::GeometrySpec::parse(v, &dims.outputs)
                    .map_err(|e| perr(format!("[plot.geometry] {}{}", e.message, at(&e.key))))?,
            ),
            None => None,
        };

        let name = spec.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "problem".into())
        });
        Ok(Problem {
            name,
            description: spec.description.unwrap_or_default(),
            file: path.to_path_buf(),
            system,
            dims,
            t0: sim.t0,
            t_end: sim.t_end,
            solver,
            events,
            theta,
            controls,
            costs,
            reference,
            optimizer,
            plot_outputs,
            periodic: spec.periodic,
            plot_geometry,
            plot_loops,
        })
    }

    /// A built-in system from its kind and `[system]` table; the error points at the line
    /// of the key its message names.
    fn builtin(
        kind: &str,
        table: toml::Table,
        text: &str,
        perr: &dyn Fn(String) -> Error,
    ) -> Result<Builtin, Error> {
        Builtin::from_table(kind, table).map_err(|m| {
            // point at the offending key's line where the message names one
            let line = m
                .split('`')
                .nth(1)
                .and_then(|k| line_of(text, k))
                .map_or(String::new(), |l| format!(" (line {l})"));
            perr(format!("{m}{line}"))
        })
    }

    fn theta_entry(
        name: &str,
        ps: &ParamSpec,
        perr: &dyn Fn(String) -> Error,
        at: &dyn Fn(&str) -> String,
    ) -> Result<ThetaEntry, Error> {
        let bad = |m: String| {
            perr(format!(
                "parameter `{name}`: {m}{}",
                at(name.split('[').next().unwrap_or(name))
            ))
        };
        if !ps.value.is_finite() {
            return Err(bad(format!("value {} is not finite", ps.value)));
        }
        if let (Some(l), Some(u)) = (ps.lower, ps.upper) {
            if !(l < u) {
                return Err(bad(format!(
                    "bounds are inverted or empty: lower = {l} must be below upper = {u}"
                )));
            }
        }
        for (which, b) in [("lower", ps.lower), ("upper", ps.upper)] {
            if let Some(b) = b {
                if !b.is_finite() {
                    return Err(bad(format!(
                        "{which} bound {b} is not finite (omit it for no bound)"
                    )));
                }
            }
        }
        if let Some(l) = ps.lower {
            if !(ps.value > l) {
                return Err(bad(format!(
                    "initial value {} is outside its bounds: it must be strictly above lower = {l}",
                    ps.value
                )));
            }
        }
        if let Some(u) = ps.upper {
            if !(ps.value < u) {
                return Err(bad(format!(
                    "initial value {} is outside its bounds: it must be strictly below upper = {u}",
                    ps.value
                )));
            }
        }
        Ok(ThetaEntry {
            name: name.to_string(),
            value: ps.value,
            optimize: ps.optimize,
            lower: ps.lower,
            upper: ps.upper,
            transform: Transform::from_bounds(ps.lower, ps.upper, ps.value),
        })
    }

    fn cost_entry(
        i: usize,
        c: &CostSpec,
        dims: &Dims,
        theta_names: &[String],
        perr: &dyn Fn(String) -> Error,
    ) -> Result<CostEntry, Error> {
        let who = format!("[[cost]] #{} (kind \"{}\")", i + 1, c.kind);
        if !COST_KINDS.contains(&c.kind.as_str()) {
            return Err(perr(format!(
                "[[cost]] #{}: kind \"{}\" is unknown; valid kinds: {}",
                i + 1,
                c.kind,
                COST_KINDS.join(", ")
            )));
        }
        let k = c.kind.as_str();
        let needs_output = matches!(
            k,
            "integral"
                | "integral_squared"
                | "track"
                | "terminal"
                | "terminal_squared"
                | "event_output_squared"
        );
        let needs_target = matches!(
            k,
            "integral_squared"
                | "terminal_squared"
                | "event_time_squared"
                | "event_output_squared"
                | "parameter_squared"
        );
        let needs_event = k.starts_with("event_");
        let check = |present: bool, needed: bool, key: &str| -> Result<(), Error> {
            match (present, needed) {
                (false, true) => Err(perr(format!("{who}: needs `{key}`"))),
                (true, false) => Err(perr(format!("{who}: `{key}` does not apply to this kind"))),
                _ => Ok(()),
            }
        };
        check(c.output.is_some(), needs_output, "output")?;
        check(c.target.is_some(), needs_target, "target")?;
        check(c.guard.is_some(), needs_event, "guard")?;
        check(c.occurrence.is_some(), needs_event, "occurrence")?;
        check(c.param.is_some(), k == "parameter_squared", "param")?;
        let param = match &c.param {
            Some(name) => Some(theta_names.iter().position(|n| n == name).ok_or_else(|| {
                perr(format!(
                    "{who}: param `{name}` is unknown; valid: {}",
                    dims.params.join(", ")
                ))
            })?),
            None => None,
        };
        let output = match &c.output {
            Some(o) => Some(dims.output_index(o).ok_or_else(|| {
                perr(format!(
                    "{who}: output `{o}` is unknown; valid outputs: {}",
                    dims.outputs.join(", ")
                ))
            })?),
            None => None,
        };
        let guard =
            match &c.guard {
                Some(g) => Some(dims.guards.iter().position(|x| &x.name == g).ok_or_else(
                    || {
                        perr(format!(
                            "{who}: guard `{g}` is unknown; valid guards: {}",
                            dims.guards
                                .iter()
                                .map(|g| g.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    },
                )?),
                None => None,
            };
        if c.occurrence == Some(0) {
            return Err(perr(format!("{who}: occurrence counts from 1")));
        }
        if k == "effort" && dims.controls.is_empty() {
            return Err(perr(format!("{who}: the system has no controls")));
        }
        let weight = c.weight.unwrap_or(1.0);
        if !weight.is_finite() {
            return Err(perr(format!("{who}: weight {weight} is not finite")));
        }
        if let Some(t) = c.target {
            if !t.is_finite() {
                return Err(perr(format!("{who}: target {t} is not finite")));
            }
        }
        // every field a kind needs was checked above; a missing one here is a bug, not input
        let need =
            |v: Option<usize>, key: &str| v.ok_or_else(|| perr(format!("{who}: needs `{key}`")));
        let target = || {
            c.target
                .ok_or_else(|| perr(format!("{who}: needs `target`")))
        };
        let w = weight;
        let term = match k {
            "integral" => CostTerm::Term(Term::Integral {
                output: need(output, "output")?,
                weight: w,
            }),
            "integral_squared" => CostTerm::Term(Term::IntegralSquared {
                output: need(output, "output")?,
                target: target()?,
                weight: w,
            }),
            "track" => CostTerm::Track {
                output: need(output, "output")?,
                weight: w,
            },
            "effort" => CostTerm::Term(Term::Effort { weight: w }),
            "parameter_squared" => CostTerm::Term(Term::ParameterSquared {
                index: need(param, "param")?,
                target: target()?,
                weight: w,
            }),
            "terminal" => CostTerm::Term(Term::Terminal {
                output: need(output, "output")?,
                weight: w,
            }),
            "terminal_squared" => CostTerm::Term(Term::TerminalSquared {
                output: need(output, "output")?,
                target: target()?,
                weight: w,
            }),
            "event_time" => CostTerm::Term(Term::EventTime {
                guard: need(guard, "guard")?,
                occurrence: need(c.occurrence, "occurrence")?,
                weight: w,
            }),
            "event_time_squared" => CostTerm::Term(Term::EventTimeSquared {
                guard: need(guard, "guard")?,
                occurrence: need(c.occurrence, "occurrence")?,
                target: target()?,
                weight: w,
            }),
            _ => CostTerm::Term(Term::EventOutputSquared {
                guard: need(guard, "guard")?,
                occurrence: need(c.occurrence, "occurrence")?,
                output: need(output, "output")?,
                target: target()?,
                weight: w,
            }),
        };
        Ok(CostEntry {
            kind: c.kind.clone(),
            term,
            objective: c.objective.clone().unwrap_or_else(|| "cost".into()),
        })
    }

    /// Sets a parameter's value (`--param NAME=VALUE`), checking the name and the bounds.
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<(), Error> {
        let np = self.dims.np();
        let Some(e) = self.theta[..np].iter_mut().find(|e| e.name == name) else {
            return Err(Error::Invalid(format!(
                "--param {name}: unknown parameter; valid: {}",
                self.dims.params.join(", ")
            )));
        };
        if !value.is_finite() {
            return Err(Error::Invalid(format!(
                "--param {name}={value}: not a finite number"
            )));
        }
        if e.lower.is_some_and(|l| !(value > l)) || e.upper.is_some_and(|u| !(value < u)) {
            return Err(Error::Invalid(format!(
                "--param {name}={value}: outside the bounds ({:?}, {:?}) of the problem file",
                e.lower, e.upper
            )));
        }
        e.value = value;
        e.transform = Transform::from_bounds(e.lower, e.upper, value);
        Ok(())
    }

    /// The values of θ.
    pub fn theta_values(&self) -> Vec<f64> {
        self.theta.iter().map(|e| e.value).collect()
    }

    /// The names of the objectives in order of first appearance.
    pub fn objective_names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for c in &self.costs {
            if !v.contains(&c.objective) {
                v.push(c.objective.clone());
            }
        }
        v
    }

    /// The engine setup (runs the reference simulation of tracking terms).
    pub fn setup(&self) -> Result<Setup<'_, Builtin>, Error> {
        let mut base = Setup::new(
            &self.system,
            self.t0,
            self.t_end,
            self.controls.clone(),
            vec![],
        );
        base.solver = self.solver;
        base.events = self.events;
        let reference = match &self.reference {
            Some(over) if self.costs.iter().any(|c| c.kind == "track") => {
                let mut th = self.theta_values();
                for (name, v) in over {
                    let i = self.dims.param_index(name).ok_or_else(|| Error::Problem {
                        file: self.file.clone(),
                        message: format!("[reference.params] `{name}` is not a parameter"),
                    })?;
                    th[i] = *v;
                }
                let traj = base.simulate(&th)?;
                Some(Arc::new(Reference {
                    trajectory: traj,
                    theta: th,
                }))
            }
            _ => None,
        };
        let mut objectives = Vec::new();
        for name in self.objective_names() {
            let mut terms = Vec::new();
            for c in self.costs.iter().filter(|c| c.objective == name) {
                let term = match &c.term {
                    CostTerm::Term(t) => t.clone(),
                    CostTerm::Track { output, weight } => Term::Track {
                        output: *output,
                        weight: *weight,
                        reference: reference.clone().ok_or_else(|| Error::Problem {
                            file: self.file.clone(),
                            message: "a `track` cost term needs a [reference] table".into(),
                        })?,
                    },
                };
                terms.push(term);
            }
            objectives.push(Objective::new(&name, terms));
        }
        let mut s = Setup::new(
            &self.system,
            self.t0,
            self.t_end,
            self.controls.clone(),
            objectives,
        );
        s.solver = self.solver;
        s.events = self.events;
        Ok(s)
    }

    /// Indices of θ that are optimized.
    pub fn free_indices(&self) -> Vec<usize> {
        (0..self.theta.len())
            .filter(|&i| self.theta[i].optimize)
            .collect()
    }

    /// The system (for generic calls).
    pub fn system(&self) -> &impl HybridSystem {
        &self.system
    }
}
