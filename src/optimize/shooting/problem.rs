//! The problem the SQP sees, built from a setup, θ's entries, the constraints and the
//! `[shooting]` settings: its variables (θ's optimized entries, a free final time, the
//! interior nodes' states) with their bounds, the functionals split over the segments, and
//! the typed refusals of what multiple shooting does not take yet.

use super::error::ShootingError;
use super::nlp::{self, ShootingNlp};
use super::nodes;
use super::settings::{Closure, Shooting};
use crate::constraint::{ConstraintKind, Constraints};
use crate::cost::Quantity;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::constrained::nlp::{free_bounds, functionals};
use crate::optimize::ThetaEntry;
use crate::setup::Setup;

/// The problem the SQP sees, and the guess's horizon end.
pub(super) fn build<'s, 'a, S: HybridSystem>(
    setup: &Setup<'a, S>, theta: &[ThetaEntry], constraints: &'s Constraints, shooting: &Shooting,
) -> Result<(ShootingNlp<'s, 'a, S>, f64), Error> {
    assemble(setup, theta, constraints, shooting, |fsetup, values| {
        nodes::initial_nodes(fsetup, values, shooting)
    })
}

/// [`build`] with the nodes placed by `place` (the nodes and the guess's horizon end).
pub(super) fn assemble<'s, 'a, S: HybridSystem>(
    setup: &Setup<'a, S>, theta: &[ThetaEntry], constraints: &'s Constraints, shooting: &Shooting,
    place: impl FnOnce(&Setup<'a, S>, &[f64]) -> Result<(Vec<nodes::Node>, f64), Error>,
) -> Result<(ShootingNlp<'s, 'a, S>, f64), Error> {
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    supported(setup, constraints, shooting.closure.as_ref())?;
    if let Some(ft) = constraints.free_time {
        crate::optimize::constrained::nlp::check_free_time(setup, ft)?;
    }
    let theta = setup.resolve_theta(theta)?;
    setup.check_theta(theta.len())?;
    // the functionals: the cost, then each constraint's
    let (functionals, objective_of) = functionals(setup, constraints, theta.len())?;
    let fsetup = setup.with_objectives(functionals);
    let values: Vec<f64> = theta.iter().map(|e| e.value).collect();
    if let Some(c) = &shooting.closure {
        check_closure(setup, c)?;
    }
    let (nodes, t_guess) = place(&fsetup, &values)?;
    let (free, mut lower, mut upper) = free_bounds(&theta)?;
    if let Some(ft) = constraints.free_time {
        lower.push(ft.lower);
        upper.push(ft.upper);
    }
    let nx = setup.nx();
    lower.resize(lower.len() + (nodes.len() - 1) * nx, f64::NEG_INFINITY);
    upper.resize(lower.len(), f64::INFINITY);
    let widened = nlp::widen_references(&fsetup.objectives, setup.np(), setup.nx());
    let mut nlp = ShootingNlp {
        functionals: widened,
        setup: fsetup,
        constraints,
        objective_of,
        base: values,
        free,
        nodes,
        t_end: setup.t_end,
        free_time: constraints.free_time.is_some(),
        closure: shooting.closure.clone(),
        lower,
        upper,
        parts: vec![],
        placement: vec![],
        start_x: vec![],
    };
    nlp.start_x = nlp.guess_x();
    (nlp.parts, nlp.placement) = nlp.place(&nlp.start_x)?;
    Ok((nlp, t_guess))
}

/// What multiple shooting does not take yet, as typed errors.
fn supported<S: HybridSystem>(
    setup: &Setup<'_, S>, constraints: &Constraints, closure: Option<&Closure>,
) -> Result<(), Error> {
    let no = |what, instead| Err(ShootingError::Unsupported { what, instead }.into());
    if setup.events.stop_after.is_some() {
        return no(
            "`stop_after`",
            "end the horizon at a time, or close a periodic problem at the guard ([shooting] periodic = { guard = … })",
        );
    }
    if constraints.free_time.is_some() && closure.is_some() {
        return no(
            "a free final time with a periodic closing",
            "fix t_end: a periodic problem's last segment ends at its closing event, so its period is free already",
        );
    }
    for c in &constraints.list {
        match c.kind {
            ConstraintKind::Path { .. } => {
                return no(
                    "a `path` constraint",
                    "bound the output at events or at the end (`event_output`, `terminal`), or use single shooting",
                )
            }
            ConstraintKind::Quantity(Quantity::FinalTime) if constraints.free_time.is_none() => {
                return no(
                    "a `final_time` constraint with a fixed t_end",
                    "make t_end free ([simulation] t_end = { value, optimize = true, lower, upper })",
                )
            }
            _ => {}
        }
    }
    Ok(())
}

/// A closing guard and states that exist.
fn check_closure<S: HybridSystem>(setup: &Setup<'_, S>, c: &Closure) -> Result<(), Error> {
    let bad = |m: String| Err(ShootingError::Nodes(m).into());
    if c.guard >= setup.dims.guards.len() {
        return bad(format!(
            "closing guard {}: the system has {} guards",
            c.guard,
            setup.dims.guards.len()
        ));
    }
    if c.states.is_empty() || c.states.iter().any(|&m| m >= setup.nx()) {
        return bad(format!(
            "closing states {:?}: give at least one of the system's {} states",
            c.states,
            setup.nx()
        ));
    }
    Ok(())
}
