//! The `[periodic]` table of a problem file:
//!
//! ```toml
//! [periodic]
//! guard = "heel_strike"        # the section: just after this guard's reset
//! count = 1                    # firings of that guard per period (period-k orbits)
//! mode = "default"             # the mode on the section (default: the first)
//! free = ["theta", "dtheta"]   # components free on the section (DP is reported in them)
//! guess = { theta = 0.2, phi = 0.4, dtheta = -0.2, dphi = -0.0137 }  # every state
//! t_max = 20.0                 # longest period before "no return" (default [simulation] t_end)
//! tol = 1e-12                  # Newton: ‖P(x) − x‖∞ (default 1e-12)
//! max_iters = 30
//! sensitivities = ["gamma"]    # parameters to differentiate the orbit by (default none)
//! objective = { kind = "spectral_radius" }  # for `hybridopt optimize`: also "period",
//!                              # { kind = "speed", output = "step_length" },
//!                              # { kind = "target", state = "theta", value = 0.2 }
//! ```
//!
//! The integration settings are those of `[simulation]` (rtol, atol, method).

use super::error::PeriodicError;
use super::map::MapOptions;
use super::newton::NewtonOptions;
use super::section::Section;
use crate::problem::Problem;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    guard: String,
    #[serde(default = "one")]
    count: usize,
    mode: Option<String>,
    free: Vec<String>,
    guess: BTreeMap<String, f64>,
    t_max: Option<f64>,
    tol: Option<f64>,
    max_iters: Option<usize>,
    #[serde(default)]
    sensitivities: Vec<String>,
    objective: Option<super::objective::ObjectiveSpec>,
}

fn one() -> usize {
    1
}

/// The validated settings of a periodic-orbit problem.
#[derive(Debug, Clone)]
pub struct PeriodicSpec {
    pub section: Section,
    pub map: MapOptions,
    pub newton: NewtonOptions,
    /// The start of Newton's method (every state).
    pub guess: Vec<f64>,
    /// Indices of the parameters to differentiate by.
    pub sensitivities: Vec<usize>,
    /// What `hybridopt optimize` minimizes on this orbit.
    pub objective: Option<super::objective::Objective>,
}

impl PeriodicSpec {
    /// Reads and validates `[periodic]` of a problem; every failure names the file, the
    /// key, the value and what would be valid.
    pub fn from_problem(pr: &Problem) -> Result<PeriodicSpec, PeriodicError> {
        let file = pr.file.display().to_string();
        let bad = |m: String| PeriodicError::Invalid(format!("{file}: [periodic] {m}"));
        let table = pr
            .periodic
            .clone()
            .ok_or_else(|| PeriodicError::Invalid(format!("{file}: no [periodic] table (it names the section, the free components and the guess)")))?;
        let raw: Raw = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| bad(e.message().to_string()))?;
        let d = &pr.dims;
        let guard = d
            .guards
            .iter()
            .position(|g| g.name == raw.guard)
            .ok_or_else(|| {
                let valid: Vec<&str> = d.guards.iter().map(|g| g.name.as_str()).collect();
                bad(format!(
                    "guard = \"{}\" is unknown; valid guards: {}",
                    raw.guard,
                    valid.join(", ")
                ))
            })?;
        if raw.count == 0 {
            return Err(bad(
                "count = 0: a period needs at least one firing of the guard".into(),
            ));
        }
        let mode = match &raw.mode {
            None => 0,
            Some(m) => d.modes.iter().position(|x| x == m).ok_or_else(|| {
                bad(format!(
                    "mode = \"{m}\" is unknown; valid modes: {}",
                    d.modes.join(", ")
                ))
            })?,
        };
        let state = |name: &str, key: &str| {
            d.states.iter().position(|s| s == name).ok_or_else(|| {
                bad(format!(
                    "{key}: state `{name}` is unknown; valid states: {}",
                    d.states.join(", ")
                ))
            })
        };
        let mut free = Vec::new();
        for f in &raw.free {
            let i = state(f, "free")?;
            if free.contains(&i) {
                return Err(bad(format!("free: `{f}` is listed twice")));
            }
            free.push(i);
        }
        // the section has at most n − 1 dimensions (the flow direction is not on it)
        if free.is_empty() || free.len() >= d.nx() {
            return Err(bad(format!(
                "free must list 1 to {} states (a section has at most n − 1 dimensions)",
                d.nx() - 1
            )));
        }
        for k in raw.guess.keys() {
            state(k, "guess")?;
        }
        let mut guess = Vec::with_capacity(d.nx());
        for s in &d.states {
            let v = raw.guess.get(s).copied().ok_or_else(|| {
                bad(format!("guess: state `{s}` is missing; the guess gives every state ({}) on the section", d.states.join(", ")))
            })?;
            if !v.is_finite() {
                return Err(bad(format!("guess: {s} = {v} is not finite")));
            }
            guess.push(v);
        }
        let t_max = raw.t_max.unwrap_or(pr.t_end - pr.t0);
        if !(t_max > 0.0 && t_max.is_finite()) {
            return Err(bad(format!("t_max = {t_max} must be positive and finite")));
        }
        let mut newton = NewtonOptions::default();
        if let Some(t) = raw.tol {
            if !(t > 0.0 && t < 1.0) {
                return Err(bad(format!("tol = {t} must be in (0, 1)")));
            }
            newton.tol = t;
        }
        if let Some(m) = raw.max_iters {
            newton.max_iters = m;
        }
        let mut sensitivities = Vec::new();
        for s in &raw.sensitivities {
            let i = d.param_index(s).ok_or_else(|| {
                bad(format!(
                    "sensitivities: parameter `{s}` is unknown; valid parameters: {}",
                    d.params.join(", ")
                ))
            })?;
            sensitivities.push(i);
        }
        let objective = match &raw.objective {
            Some(o) => Some(o.resolve(d).map_err(bad)?),
            None => None,
        };
        Ok(PeriodicSpec {
            section: Section {
                guard,
                count: raw.count,
                mode,
                free,
            },
            map: MapOptions {
                solver: pr.solver,
                events: pr.events,
                t_max,
            },
            newton,
            guess,
            sensitivities,
            objective,
        })
    }
}
