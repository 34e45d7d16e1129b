//! `[feedback]`: the LQR weights by state and control name (or one value per state or
//! control), the phase rule, the period-closing guard, the gains table's grid and the
//! robustness runs (docs/guide/problem-files.md, "[feedback]").

use super::document::{key, Document, Seg};
use super::schema::{FeedbackSpec, RobustnessSpecFile, WeightSpec};
use crate::error::Error;
use crate::feedback::{Clock, FeedbackSettings, RobustnessSettings, Weights};
use crate::model::Dims;

/// The settings of a `[feedback]` table.
pub(super) fn read(
    spec: &FeedbackSpec, dims: &Dims, doc: &Document<'_>,
) -> Result<FeedbackSettings, Error> {
    if dims.controls.is_empty() {
        return Err(doc.error(
            &[key("feedback")],
            "the system has no control channel to feed back through; [feedback] needs a system with controls",
        ));
    }
    let q = diagonal(&spec.q, "q", &dims.states, "state", doc)?;
    let r = diagonal(&spec.r, "r", &dims.controls, "control", doc)?;
    if let Some(i) = r.iter().position(|&v| v <= 0.0) {
        return Err(doc.error(
            &[key("feedback"), key("r")],
            format!(
                "the weight of control `{}` is {}: every control weight must be > 0 (R positive definite)",
                dims.controls[i], r[i]
            ),
        ));
    }
    let qf = match &spec.qf {
        Some(w) => diagonal(w, "qf", &dims.states, "state", doc)?,
        None => q.clone(),
    };
    let weights = Weights::diagonal(&q, &r, &qf).map_err(|e| doc.error(&[key("feedback")], e))?;
    let guard = spec
        .guard
        .as_ref()
        .map(|g| {
            dims.guards
                .iter()
                .position(|d| &d.name == g)
                .ok_or_else(|| {
                    doc.error(
                        &[key("feedback"), key("guard")],
                        format!(
                            "`{g}` is not a guard of the system; its guards: {}",
                            dims.guards
                                .iter()
                                .map(|d| d.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })
        })
        .transpose()?;
    let grid = spec.grid.unwrap_or(FeedbackSettings::GRID);
    if !(2..=100_000).contains(&grid) {
        return Err(doc.error(
            &[key("feedback"), key("grid")],
            format!("grid = {grid}: the gains table needs between 2 and 100000 points"),
        ));
    }
    let robustness = robustness(spec.robustness.as_ref(), dims, doc)?;
    Ok(FeedbackSettings {
        weights,
        clock: spec.clock.unwrap_or(Clock::Extend),
        guard,
        grid,
        robustness,
    })
}

/// A diagonal weight over `names` (the states or the controls): by name, names left out
/// weigh 0; or one value per name in order. Every value finite and ≥ 0.
fn diagonal(
    w: &WeightSpec, what: &str, names: &[String], noun: &str, doc: &Document<'_>,
) -> Result<Vec<f64>, Error> {
    let at = |k: Option<&str>| {
        let mut p: Vec<Seg> = vec![key("feedback"), key(what)];
        if let Some(k) = k {
            p.push(key(k));
        }
        p
    };
    let values = match w {
        WeightSpec::Named(m) => {
            let mut v = vec![0.0; names.len()];
            for (name, &x) in m {
                let i = names.iter().position(|n| n == name).ok_or_else(|| {
                    doc.error(
                        &at(Some(name)),
                        format!(
                            "`{name}` is not a {noun}; the {noun}s: {}",
                            names.join(", ")
                        ),
                    )
                })?;
                v[i] = x;
            }
            v
        }
        WeightSpec::Diagonal(v) if v.len() == names.len() => v.clone(),
        WeightSpec::Diagonal(v) => {
            return Err(doc.error(
                &at(None),
                format!(
                    "{} values for {} {noun}s: give one per {noun} ({}), or a table by name",
                    v.len(),
                    names.len(),
                    names.join(", ")
                ),
            ))
        }
    };
    if let Some(i) = values.iter().position(|x| !x.is_finite() || *x < 0.0) {
        let k = matches!(w, WeightSpec::Named(_)).then_some(names[i].as_str());
        return Err(doc.error(
            &at(k),
            format!(
                "the weight of {noun} `{}` is {}: a weight is a finite number ≥ 0",
                names[i], values[i]
            ),
        ));
    }
    Ok(values)
}

/// `[feedback.robustness]`, with its defaults.
fn robustness(
    spec: Option<&RobustnessSpecFile>, dims: &Dims, doc: &Document<'_>,
) -> Result<RobustnessSettings, Error> {
    let at = |k: &str| [key("feedback"), key("robustness"), key(k)];
    let empty = RobustnessSpecFile {
        trials: None,
        size: None,
        states: None,
        seed: None,
        steps: None,
        terminal_tolerance: None,
        event_time_tolerance: None,
        parameters: None,
    };
    let s = spec.unwrap_or(&empty);
    let size = s.size.unwrap_or(0.1);
    if !(size.is_finite() && size > 0.0) {
        return Err(doc.error(
            &at("size"),
            format!("size = {size}: the perturbation's half-width must be a finite number > 0"),
        ));
    }
    let steps = s.steps.unwrap_or(20);
    if steps == 0 {
        return Err(doc.error(&at("steps"), "steps = 0: a run must take at least 1 step"));
    }
    let states = match &s.states {
        None => (0..dims.states.len()).collect(),
        Some(v) if v.is_empty() => {
            return Err(doc.error(
                &at("states"),
                "states = []: name the states to perturb (leave the key out for all)",
            ))
        }
        Some(v) => v
            .iter()
            .map(|n| {
                dims.states.iter().position(|s| s == n).ok_or_else(|| {
                    doc.error(
                        &at("states"),
                        format!(
                            "`{n}` is not a state; the states: {}",
                            dims.states.join(", ")
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let (terminal_tolerance, event_time_tolerance, parameters) = targets(s, dims, doc)?;
    Ok(RobustnessSettings {
        trials: s.trials.unwrap_or(100),
        size,
        states,
        seed: s.seed.unwrap_or(46),
        steps,
        terminal_tolerance,
        event_time_tolerance,
        parameters,
    })
}

/// A run along a run's targets: `terminal_tolerance` (default 0.01, the outputs' units),
/// `event_time_tolerance` (default 0.01 s) and the perturbed parameters by name with
/// their half-widths (`parameters = { e = 0.02 }`, default none).
#[allow(clippy::type_complexity)]
fn targets(
    s: &RobustnessSpecFile, dims: &Dims, doc: &Document<'_>,
) -> Result<(f64, f64, Vec<(usize, f64)>), Error> {
    let at = |k: &str| vec![key("feedback"), key("robustness"), key(k)];
    let positive = |k: &str, v: Option<f64>| -> Result<f64, Error> {
        let v = v.unwrap_or(RobustnessSettings::TOLERANCE);
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(doc.error(
                &at(k),
                format!("{k} = {v}: a tolerance must be a finite number > 0"),
            ))
        }
    };
    let terminal = positive("terminal_tolerance", s.terminal_tolerance)?;
    let event_time = positive("event_time_tolerance", s.event_time_tolerance)?;
    let mut parameters = Vec::new();
    for (name, &w) in s.parameters.iter().flatten() {
        let mut path = at("parameters");
        path.push(key(name));
        let Some(i) = dims.params.iter().position(|p| p == name) else {
            return Err(doc.error(
                &path,
                format!(
                    "`{name}` is not a parameter; the parameters: {}",
                    dims.params.join(", ")
                ),
            ));
        };
        if !(w.is_finite() && w > 0.0) {
            return Err(doc.error(
                &path,
                format!("{name} = {w}: a parameter's half-width must be a finite number > 0"),
            ));
        }
        parameters.push((i, w));
    }
    Ok((terminal, event_time, parameters))
}
