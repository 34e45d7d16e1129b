//! `[simulation]`: the horizon, the integrator's options and the event options.

use super::document::{key, Document};
use super::resolver::guard_names;
use super::schema::SimulationSpec;
use crate::error::Error;
use crate::integrate::{EventOptions, SolverOptions};
use crate::model::Dims;

/// The checked horizon and options.
pub(super) fn options(
    sim: &SimulationSpec, dims: &Dims, doc: &Document<'_>,
) -> Result<(SolverOptions, EventOptions), Error> {
    let at = |k: &str| [key("simulation"), key(k)];
    let t_end = sim.t_end.value();
    if !sim.t0.is_finite() || !t_end.is_finite() || t_end <= sim.t0 {
        return Err(doc.error(
            &at("t_end"),
            format!(
                "t_end = {} must be finite and greater than t0 = {}",
                t_end, sim.t0
            ),
        ));
    }
    let mut solver = SolverOptions::default();
    for (k, v, slot) in [
        ("rtol", sim.rtol, &mut solver.rtol),
        ("atol", sim.atol, &mut solver.atol),
    ] {
        if let Some(v) = v {
            if !(v > 0.0 && v < 1.0) {
                return Err(doc.error(
                    &at(k),
                    format!("{k} = {v} is invalid: a tolerance must be in (0, 1)"),
                ));
            }
            *slot = v;
        }
    }
    if let Some(m) = sim.method {
        solver.method = m;
    }
    if let Some(l) = sim.linear_algebra {
        solver.linear_algebra = l;
    }
    if let Some(h) = sim.h_max {
        if !(h > 0.0) {
            return Err(doc.error(&at("h_max"), format!("h_max = {h} must be positive")));
        }
        solver.h_max = h;
    }
    Ok((solver, events(sim, dims, doc)?))
}

/// A free final time (`t_end = { value, optimize = true, lower, upper }`), checked:
/// finite bounds with t0 < lower ≤ value ≤ upper, and no `stop_after`.
pub(super) fn free_time(
    sim: &SimulationSpec, doc: &Document<'_>,
) -> Result<Option<crate::constraint::FreeTime>, Error> {
    let super::schema::TEndSpec::Table(t) = sim.t_end else {
        return Ok(None);
    };
    let at = [key("simulation"), key("t_end")];
    let (Some(lower), Some(upper)) = (t.lower, t.upper) else {
        if t.optimize {
            return Err(doc.error(
                &at,
                "a free t_end (optimize = true) needs `lower` and `upper`: e.g. t_end = { value = 2.5, optimize = true, lower = 1, upper = 4 }",
            ));
        }
        if t.lower.is_some() || t.upper.is_some() {
            return Err(doc.error(&at, "`lower` and `upper` of t_end need `optimize = true`"));
        }
        return Ok(None);
    };
    if !t.optimize {
        return Err(doc.error(&at, "`lower` and `upper` of t_end need `optimize = true`"));
    }
    if !(lower.is_finite()
        && upper.is_finite()
        && sim.t0 < lower
        && lower <= t.value
        && t.value <= upper)
    {
        return Err(doc.error(
            &at,
            format!(
                "t_end = {{ value = {}, lower = {lower}, upper = {upper} }}: needs t0 = {} < lower ≤ value ≤ upper, all finite",
                t.value, sim.t0
            ),
        ));
    }
    if sim.stop_after.is_some() {
        return Err(doc.error(
            &at,
            "a free t_end cannot be combined with `stop_after` (the run would end at the event, not at t_end)",
        ));
    }
    Ok(Some(crate::constraint::FreeTime {
        value: t.value,
        lower,
        upper,
    }))
}

/// The event options: the event budget, the grazing tolerance, and where to stop.
fn events(sim: &SimulationSpec, dims: &Dims, doc: &Document<'_>) -> Result<EventOptions, Error> {
    let mut events = EventOptions::default();
    if let Some(n) = sim.max_events {
        events.max_events = n;
    }
    if let Some(g) = sim.grazing_tol {
        if !(g >= 0.0) {
            return Err(doc.error(
                &[key("simulation"), key("grazing_tol")],
                format!("grazing_tol = {g} must be ≥ 0"),
            ));
        }
        events.grazing_tol = g;
    }
    if let Some(st) = &sim.stop_after {
        let path = [key("simulation"), key("stop_after")];
        let k = dims
            .guards
            .iter()
            .position(|g| g.name == st.guard)
            .ok_or_else(|| {
                doc.error(
                    &path,
                    format!(
                        "guard `{}` is unknown; valid guards: {}",
                        st.guard,
                        guard_names(dims)
                    ),
                )
            })?;
        if st.occurrence == 0 {
            return Err(doc.error(&path, "occurrence counts from 1"));
        }
        events.stop_after = Some((k, st.occurrence));
    }
    Ok(events)
}
