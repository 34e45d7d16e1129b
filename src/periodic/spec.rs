//! The `[periodic]` table of a problem file:
//!
//! ```toml
//! [periodic]
//! guard = "heel_strike"        # the section: just after this guard's reset, or instead
//! # hyperplane = { normal = { theta = 1.0 }, offset = 0.0, direction = "falling" }
//! #                            # the section n·x = c crossed in that direction
//! count = 1                    # crossings of the section per period (period-k orbits)
//! mode = "default"             # the mode on the section (default: the first)
//! free = ["theta", "dtheta"]   # components free on the section (DP is reported in them;
//!                              # on a hyperplane, n − 1 of them leave the last one to be
//!                              # solved from n·x = c)
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
//! Exactly one of `guard` and `hyperplane` names the section. A hyperplane's normal names
//! states (the others have coefficient 0), and the guess must lie on it.
//!
//! The integration settings are those of `[simulation]` (rtol, atol, method).

use super::error::PeriodicError;
use super::hyperplane::{Crossing, Hyperplane};
use super::map::MapOptions;
use super::newton::NewtonOptions;
use super::section::{Section, SectionKind};
use crate::model::Dims;
use crate::problem::Problem;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    guard: Option<String>,
    hyperplane: Option<RawHyperplane>,
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

/// `hyperplane = { normal = { state = coefficient, … }, offset = c, direction = … }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHyperplane {
    normal: BTreeMap<String, f64>,
    offset: f64,
    direction: Crossing,
}

fn one() -> usize {
    1
}

/// Builds a [`PeriodicError::InvalidSection`] for `file`.
fn section_error(file: &str) -> impl Fn(&str, String) -> PeriodicError + '_ {
    move |key, message| PeriodicError::InvalidSection {
        file: file.to_string(),
        key: key.to_string(),
        message,
    }
}

/// The section's kind from `guard` or `hyperplane` (exactly one of them).
fn section_kind(raw: &Raw, d: &Dims, file: &str) -> Result<SectionKind, PeriodicError> {
    let err = section_error(file);
    match (&raw.guard, &raw.hyperplane) {
        (Some(g), None) => {
            let guard = d.guards.iter().position(|x| &x.name == g).ok_or_else(|| {
                let valid: Vec<&str> = d.guards.iter().map(|g| g.name.as_str()).collect();
                err(
                    "guard",
                    format!(
                        "guard = \"{g}\" is unknown; valid guards: {}",
                        valid.join(", ")
                    ),
                )
            })?;
            Ok(SectionKind::AfterReset { guard })
        }
        (None, Some(h)) => Ok(SectionKind::Hyperplane(hyperplane(h, d, file)?)),
        (Some(_), Some(_)) => Err(err(
            "guard, hyperplane",
            "both are given: the section is either just after a guard's reset (guard) or a hyperplane (hyperplane), not both".into(),
        )),
        (None, None) => Err(err(
            "guard, hyperplane",
            "neither is given: name the section, e.g. guard = \"heel_strike\" or hyperplane = { normal = { theta = 1.0 }, offset = 0.0, direction = \"falling\" }".into(),
        )),
    }
}

/// The hyperplane with its states resolved; every coefficient and the offset finite, the
/// normal not zero.
fn hyperplane(h: &RawHyperplane, d: &Dims, file: &str) -> Result<Hyperplane, PeriodicError> {
    let err = section_error(file);
    let mut normal = vec![0.0; d.nx()];
    for (name, &v) in &h.normal {
        let i = d.states.iter().position(|s| s == name).ok_or_else(|| {
            err(
                "hyperplane.normal",
                format!(
                    "state `{name}` is unknown; valid states: {}",
                    d.states.join(", ")
                ),
            )
        })?;
        if !v.is_finite() {
            return Err(err(
                "hyperplane.normal",
                format!("{name} = {v} is not finite"),
            ));
        }
        normal[i] = v;
    }
    if normal.iter().all(|&v| v == 0.0) {
        return Err(err(
            "hyperplane.normal",
            format!(
                "the normal is zero: give a nonzero coefficient for at least one state of {}",
                d.states.join(", ")
            ),
        ));
    }
    if !h.offset.is_finite() {
        return Err(err(
            "hyperplane.offset",
            format!("offset = {} is not finite", h.offset),
        ));
    }
    Ok(Hyperplane {
        normal,
        offset: h.offset,
        crossing: h.direction,
    })
}

/// On a hyperplane: `n − 1` free components must leave one with a nonzero coefficient
/// (solved from `n·x = c`), and the guess must lie on the hyperplane (to `zero_tol`).
fn check_hyperplane(
    h: &Hyperplane, free: &[usize], guess: &[f64], d: &Dims, zero_tol: f64, file: &str,
) -> Result<(), PeriodicError> {
    let err = section_error(file);
    if free.len() + 1 == d.nx() && h.dependent(free).is_none() {
        let rest = (0..d.nx()).find(|i| !free.contains(i)).unwrap_or(0);
        return Err(err(
            "free",
            format!(
                "the state left out of free, `{}`, has coefficient 0 in the hyperplane's normal: it cannot be solved from n·x = c; leave out a state with a nonzero coefficient",
                d.states[rest]
            ),
        ));
    }
    let r = h.value(guess);
    if r.abs() > zero_tol {
        // the component to correct: the dependent one, else the largest coefficient
        let k = h.dependent(free).unwrap_or_else(|| {
            (0..d.nx())
                .max_by(|&a, &b| h.normal[a].abs().total_cmp(&h.normal[b].abs()))
                .unwrap_or(0)
        });
        return Err(err(
            "guess",
            format!(
                "n·x − c = {r:e} at the guess: it must lie on the hyperplane (to {zero_tol:e}), e.g. {} = {}",
                d.states[k],
                guess[k] - r / h.normal[k]
            ),
        ));
    }
    Ok(())
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
        let kind = section_kind(&raw, d, &file)?;
        if raw.count == 0 {
            return Err(bad(
                "count = 0: a period needs at least one crossing of the section".into(),
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
        if let SectionKind::Hyperplane(h) = &kind {
            check_hyperplane(h, &free, &guess, d, pr.events.zero_tol, &file)?;
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
                kind,
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
