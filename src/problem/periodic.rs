//! `[periodic]`: the Poincaré section (just after a guard's reset, or a hyperplane), the
//! free components that chart it, the guess on it, Newton's settings, the parameters to
//! differentiate by and the gait objective (docs/guide/periodic-orbits.md). Every error
//! names the file, the key, its line and what would be valid.

use super::document::{key, Document, Seg};
use super::schema::{HyperplaneTable, PeriodicTable};
use crate::error::Error;
use crate::integrate::{EventOptions, SolverOptions};
use crate::model::Dims;
use crate::periodic::{Hyperplane, MapOptions, NewtonOptions, PeriodicSpec, Section, SectionKind};

/// What `[periodic]` is read against: the system's names and the run's settings.
pub(super) struct Context<'d, 'a> {
    pub dims: &'d Dims,
    pub solver: SolverOptions,
    pub events: EventOptions,
    /// `t_end − t0`: the default `t_max`.
    pub horizon: f64,
    pub doc: &'d Document<'a>,
}

impl<'d, 'a> Context<'d, 'a> {
    pub fn new(
        dims: &'d Dims, solver: SolverOptions, events: EventOptions, horizon: f64,
        doc: &'d Document<'a>,
    ) -> Self {
        Context {
            dims,
            solver,
            events,
            horizon,
            doc,
        }
    }

    fn error(&self, keys: &[&str], message: impl std::fmt::Display) -> Error {
        let path: Vec<Seg> = std::iter::once("periodic")
            .chain(keys.iter().copied())
            .map(key)
            .collect();
        self.doc.error(&path, message)
    }

    /// The index of state `name`, or an error at `keys` naming the valid states.
    fn state(&self, name: &str, keys: &[&str]) -> Result<usize, Error> {
        let d = self.dims;
        d.states.iter().position(|s| s == name).ok_or_else(|| {
            self.error(
                keys,
                format!(
                    "state `{name}` is unknown; valid states: {}",
                    d.states.join(", ")
                ),
            )
        })
    }
}

/// The validated settings of a `[periodic]` table.
pub(super) fn read(t: &PeriodicTable, cx: &Context<'_, '_>) -> Result<PeriodicSpec, Error> {
    let kind = section_kind(t, cx)?;
    if t.count == 0 {
        return Err(cx.error(
            &["count"],
            "count = 0: a period needs at least one crossing of the section",
        ));
    }
    let mode = mode(t, cx)?;
    let free = free(t, cx)?;
    let guess = guess(t, cx)?;
    if let SectionKind::Hyperplane(h) = &kind {
        check_hyperplane(h, &free, &guess, cx)?;
    }
    let t_max = t.t_max.unwrap_or(cx.horizon);
    if !(t_max > 0.0 && t_max.is_finite()) {
        return Err(cx.error(
            &["t_max"],
            format!("t_max = {t_max} must be positive and finite"),
        ));
    }
    let objective = match &t.objective {
        Some(o) => Some(
            o.resolve(cx.dims)
                .map_err(|m| cx.error(&["objective"], m))?,
        ),
        None => None,
    };
    Ok(PeriodicSpec {
        section: Section {
            kind,
            count: t.count,
            mode,
            free,
        },
        map: MapOptions {
            solver: cx.solver,
            events: cx.events,
            t_max,
        },
        newton: newton(t, cx)?,
        guess,
        sensitivities: sensitivities(t, cx)?,
        objective,
    })
}

/// The section's kind from `guard` or `hyperplane` (exactly one of them).
fn section_kind(t: &PeriodicTable, cx: &Context<'_, '_>) -> Result<SectionKind, Error> {
    let d = cx.dims;
    match (&t.guard, &t.hyperplane) {
        (Some(g), None) => {
            let guard = d.guards.iter().position(|x| &x.name == g).ok_or_else(|| {
                let valid: Vec<&str> = d.guards.iter().map(|g| g.name.as_str()).collect();
                cx.error(
                    &["guard"],
                    format!(
                        "guard = \"{g}\" is unknown; valid guards: {}",
                        valid.join(", ")
                    ),
                )
            })?;
            Ok(SectionKind::AfterReset { guard })
        }
        (None, Some(h)) => Ok(SectionKind::Hyperplane(hyperplane(h, cx)?)),
        (Some(_), Some(_)) => Err(cx.error(
            &[],
            "guard and hyperplane are both given: the section is either just after a guard's reset (guard) or a hyperplane (hyperplane), not both",
        )),
        (None, None) => Err(cx.error(
            &[],
            "neither guard nor hyperplane is given: name the section, e.g. guard = \"heel_strike\" or hyperplane = { normal = { theta = 1.0 }, offset = 0.0, direction = \"falling\" }",
        )),
    }
}

/// The hyperplane with its states resolved; every coefficient and the offset finite, the
/// normal not zero.
fn hyperplane(h: &HyperplaneTable, cx: &Context<'_, '_>) -> Result<Hyperplane, Error> {
    let d = cx.dims;
    let mut normal = vec![0.0; d.nx()];
    for (name, &v) in &h.normal {
        let i = cx.state(name, &["hyperplane", "normal"])?;
        if !v.is_finite() {
            return Err(cx.error(
                &["hyperplane", "normal"],
                format!("{name} = {v} is not finite"),
            ));
        }
        normal[i] = v;
    }
    if normal.iter().all(|&v| v == 0.0) {
        return Err(cx.error(
            &["hyperplane", "normal"],
            format!(
                "the normal is zero: give a nonzero coefficient for at least one state of {}",
                d.states.join(", ")
            ),
        ));
    }
    if !h.offset.is_finite() {
        return Err(cx.error(
            &["hyperplane", "offset"],
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
/// (solved from `n·x = c`), and the guess must lie on the hyperplane (to the events'
/// `zero_tol`).
fn check_hyperplane(
    h: &Hyperplane, free: &[usize], guess: &[f64], cx: &Context<'_, '_>,
) -> Result<(), Error> {
    let d = cx.dims;
    if free.len() + 1 == d.nx() && h.dependent(free).is_none() {
        let rest = (0..d.nx()).find(|i| !free.contains(i)).unwrap_or(0);
        return Err(cx.error(
            &["free"],
            format!(
                "the state left out of free, `{}`, has coefficient 0 in the hyperplane's normal: it cannot be solved from n·x = c; leave out a state with a nonzero coefficient",
                d.states[rest]
            ),
        ));
    }
    let r = h.value(guess);
    let zero_tol = cx.events.zero_tol;
    if r.abs() > zero_tol {
        // the component to correct: the dependent one, else the largest coefficient
        let k = h.dependent(free).unwrap_or_else(|| {
            (0..d.nx())
                .max_by(|&a, &b| h.normal[a].abs().total_cmp(&h.normal[b].abs()))
                .unwrap_or(0)
        });
        return Err(cx.error(
            &["guess"],
            format!(
                "n·x − c = {r:e} at the guess: it must lie on the hyperplane (to {zero_tol:e}), e.g. {} = {}",
                d.states[k],
                guess[k] - r / h.normal[k]
            ),
        ));
    }
    Ok(())
}

/// The mode the orbit starts in (default the first).
fn mode(t: &PeriodicTable, cx: &Context<'_, '_>) -> Result<usize, Error> {
    let d = cx.dims;
    match &t.mode {
        None => Ok(0),
        Some(m) => d.modes.iter().position(|x| x == m).ok_or_else(|| {
            cx.error(
                &["mode"],
                format!(
                    "mode = \"{m}\" is unknown; valid modes: {}",
                    d.modes.join(", ")
                ),
            )
        }),
    }
}

/// The free components: 1 to n − 1 distinct states (a section has at most n − 1
/// dimensions: the flow direction is not on it).
fn free(t: &PeriodicTable, cx: &Context<'_, '_>) -> Result<Vec<usize>, Error> {
    let nx = cx.dims.nx();
    let mut free = Vec::new();
    for f in &t.free {
        let i = cx.state(f, &["free"])?;
        if free.contains(&i) {
            return Err(cx.error(&["free"], format!("`{f}` is listed twice")));
        }
        free.push(i);
    }
    if free.is_empty() || free.len() >= nx {
        return Err(cx.error(
            &["free"],
            format!(
                "free must list 1 to {} states (a section has at most n − 1 dimensions)",
                nx - 1
            ),
        ));
    }
    Ok(free)
}

/// The guess: every state, finite, in the system's order.
fn guess(t: &PeriodicTable, cx: &Context<'_, '_>) -> Result<Vec<f64>, Error> {
    let d = cx.dims;
    for k in t.guess.keys() {
        cx.state(k, &["guess"])?;
    }
    d.states
        .iter()
        .map(|s| {
            let v = t.guess.get(s).copied().ok_or_else(|| {
                cx.error(
                    &["guess"],
                    format!(
                        "state `{s}` is missing; the guess gives every state ({}) on the section",
                        d.states.join(", ")
                    ),
                )
            })?;
            if v.is_finite() {
                Ok(v)
            } else {
                Err(cx.error(&["guess"], format!("{s} = {v} is not finite")))
            }
        })
        .collect()
}

/// Newton's tolerance (in (0, 1)) and iteration limit over their defaults.
fn newton(t: &PeriodicTable, cx: &Context<'_, '_>) -> Result<NewtonOptions, Error> {
    let mut newton = NewtonOptions::default();
    if let Some(tol) = t.tol {
        if !(tol > 0.0 && tol < 1.0) {
            return Err(cx.error(&["tol"], format!("tol = {tol} must be in (0, 1)")));
        }
        newton.tol = tol;
    }
    if let Some(m) = t.max_iters {
        newton.max_iters = m;
    }
    Ok(newton)
}

/// The parameters to differentiate the orbit by.
fn sensitivities(t: &PeriodicTable, cx: &Context<'_, '_>) -> Result<Vec<usize>, Error> {
    let d = cx.dims;
    t.sensitivities
        .iter()
        .map(|s| {
            d.param_index(s).ok_or_else(|| {
                cx.error(
                    &["sensitivities"],
                    format!(
                        "parameter `{s}` is unknown; valid parameters: {}",
                        d.params.join(", ")
                    ),
                )
            })
        })
        .collect()
}
