//! A cost term's value and its derivatives in t, X and θ at one point (events and the
//! horizon's end), chained through the Jacobians of what it reads there (the outputs and
//! the system's states): the seeds of the adjoint and of the direct method's functionals.

use crate::cost::Term;
use crate::error::Error;
use crate::integrate::trajectory::Ctx;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::setup::located;
use crate::setup::{ResetJac, ScalarJac, Setup};
use nalgebra::DVector;
use num_dual::Dual64;

/// Where a term is read on a trajectory: at event i, or at the final state.
pub(crate) enum At {
    Event(usize),
    Final,
}

/// The outputs' Jacobians at a trajectory's final state, computed once for all its
/// terminal terms (`None` until the first asks).
pub(crate) type FinalOutputs = Option<Vec<ScalarJac>>;

/// A term's value and gradients at the point of `traj` it is read at: an event term at
/// its event (before or after the reset, [`Quantity::is_after_event`]), a terminal term
/// at the final state, or at the terminal event that ended the run (evaluated at X⁻,
/// like event terms); `None` for a term read at no single point (running, parameter,
/// data and final-time terms). `end` keeps the outputs' Jacobians at the final state.
///
/// [`Quantity::is_after_event`]: crate::cost::Quantity::is_after_event
pub(crate) fn term_on<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, term: &Term, theta: &[f64], end: &mut FinalOutputs,
) -> Result<Option<(At, ScalarJac)>, Error> {
    if term.is_terminal() {
        if let Some(e) = traj.events.last().filter(|e| e.terminal) {
            let i = traj.events.len() - 1;
            let ctx = traj.event_ctx(i);
            let tj = term_jacobian(setup, term, &ctx, e.t, &e.before.y, theta, true)?;
            return Ok(Some((At::Event(i), tj)));
        }
        let outs = match end {
            Some(o) => o,
            None => end.insert(final_outputs(setup, traj, theta)?),
        };
        let reads = Reads {
            outputs: outs,
            states: &[],
            reset: None,
        };
        let dims = (setup.n(), setup.ntheta());
        let tj = term_jacobian_from(term, traj.t_final, reads, dims, true);
        return Ok(Some((At::Final, tj)));
    }
    let Some((guard, occ)) = term.event() else {
        return Ok(None);
    };
    let (i, ctx) = setup.find_event(traj, guard, occ)?;
    let e = &traj.events[i];
    let after = term.quantity().is_some_and(|q| q.is_after_event());
    let tj = if after && !e.terminal {
        term_jacobian_after(setup, term, &ctx, e.guard, e.t, &e.before.y, theta)?
    } else {
        term_jacobian(setup, term, &ctx, e.t, &e.before.y, theta, false)?
    };
    Ok(Some((At::Event(i), tj)))
}

/// The outputs' Jacobians at the final state, in the final mode and interval.
fn final_outputs<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
) -> Result<Vec<ScalarJac>, Error> {
    let seg = traj.segments.last().expect("a segment");
    let ctx = Ctx {
        mode: traj.mode_final,
        t_lo: seg.t_lo,
        t_hi: seg.t_hi,
    };
    setup
        .output_jacobian(&ctx, traj.t_final, &traj.y_final, theta)
        .map_err(located(setup, traj.t_final, ctx.mode))
}

/// Value and gradients (t, X, θ) of an event or terminal cost term at `(t, X)` in the
/// context `ctx`: the term's own derivatives chained through the outputs' Jacobians.
/// `as_terminal`: evaluate a terminal term (Φ) rather than an event term (E).
pub fn term_jacobian<S: HybridSystem>(
    setup: &Setup<'_, S>, term: &Term, ctx: &Ctx, t: f64, xx: &[f64], theta: &[f64],
    as_terminal: bool,
) -> Result<ScalarJac, Error> {
    let outs = setup
        .output_jacobian(ctx, t, xx, theta)
        .map_err(located(setup, t, ctx.mode))?;
    let dims = (setup.n(), setup.ntheta());
    let states = if as_terminal {
        &[][..]
    } else {
        &xx[..setup.nx()]
    };
    let reads = Reads {
        outputs: &outs,
        states,
        reset: None,
    };
    Ok(term_jacobian_from(term, t, reads, dims, as_terminal))
}

/// Value and gradients (t, X⁻, θ) of an event term read after the reset of guard `k` at
/// `(t, X⁻)`: with `X⁺ = R(t, X⁻, θ)` and the outputs `y = h(t, X⁺, θ)` in the mode the
/// reset enters, the outputs' Jacobians chained through the reset's (theory.md §4,
/// "Event costs after the reset"):
/// `y_t = h_t + h_X R_t`, `y_X⁻ = h_X R_X`, `y_θ = h_θ + h_X R_θ`; the term is then a
/// function of `(t_e, X⁻, θ)` like every event term, so [`Jump::event_cost`]'s adjoint
/// and forward seeds hold for it unchanged.
///
/// [`Jump::event_cost`]: super::jump::Jump::event_cost
fn term_jacobian_after<S: HybridSystem>(
    setup: &Setup<'_, S>, term: &Term, ctx: &Ctx, k: usize, t: f64, x_minus: &[f64], theta: &[f64],
) -> Result<ScalarJac, Error> {
    let r = setup
        .reset_jacobian(ctx.mode, k, t, x_minus, theta)
        .map_err(located(setup, t, ctx.mode))?;
    let after = Ctx {
        mode: r.mode_after,
        ..*ctx
    };
    let outs: Vec<ScalarJac> = setup
        .output_jacobian(&after, t, r.x_plus.as_slice(), theta)
        .map_err(located(setup, t, after.mode))?
        .into_iter()
        .map(|h| ScalarJac {
            value: h.value,
            t: h.t + h.x.dot(&r.rt),
            x: r.rx.tr_mul_vec(&h.x),
            theta: &h.theta + r.rtheta.tr_mul(&h.x),
        })
        .collect();
    let dims = (setup.n(), setup.ntheta());
    let reads = Reads {
        outputs: &outs,
        states: &r.x_plus.as_slice()[..setup.nx()],
        reset: Some(&r),
    };
    Ok(term_jacobian_from(term, t, reads, dims, false))
}

/// What a term reads at its point: the outputs with their Jacobians in (t, X, θ), and the
/// system's states `x`, whose Jacobians are the identity's rows (`x` read where it is)
/// or the reset's (`x⁺ = R(t, X⁻, θ)` read after it: `(R_t, R_X, R_θ)` row by row).
struct Reads<'a> {
    pub outputs: &'a [ScalarJac],
    pub states: &'a [f64],
    pub reset: Option<&'a ResetJac>,
}

/// [`term_jacobian`] from what the term reads at `(t, X)` ([`Reads`], the outputs'
/// Jacobians computed once for every term at the same point), `(n, nθ)` the sizes of X
/// and θ: with the reads `r_k(t, X, θ)` (the outputs `y = h(t, X, θ)`, then the states)
/// and the term `T(t, r)`, `T_t = ∂T/∂t + Σ_k ∂T/∂r_k r_{k,t}`, `T_X = Σ_k ∂T/∂r_k r_{k,X}`,
/// `T_θ` likewise (the chain rule; theory.md §4).
fn term_jacobian_from(
    term: &Term, t: f64, reads: Reads<'_>, (n, nth): (usize, usize), as_terminal: bool,
) -> ScalarJac {
    let (outs, x) = (reads.outputs, reads.states);
    let (ny, nx) = (outs.len(), x.len());
    let f = |td: Dual64, xd: &[Dual64], yd: &[Dual64]| -> Dual64 {
        if as_terminal {
            term.terminal(yd)
        } else {
            term.event_value(td, xd, yd)
        }
    };
    // the reads as duals, read k (outputs first, then states) seeded
    let lift = |seed: Option<usize>| -> (Vec<Dual64>, Vec<Dual64>) {
        let at = |k: usize, v: f64| Dual64::new(v, if seed == Some(k) { 1.0 } else { 0.0 });
        let y = (0..ny).map(|i| at(i, outs[i].value)).collect();
        let xd = (0..nx).map(|i| at(ny + i, x[i])).collect();
        (xd, y)
    };
    let (x0, y0) = lift(None);
    let v0 = f(Dual64::new(t, 1.0), &x0, &y0);
    let mut jac = ScalarJac {
        value: v0.re,
        t: v0.eps,
        x: DVector::zeros(n),
        theta: DVector::zeros(nth),
    };
    for (k, o) in outs.iter().enumerate() {
        let (xd, yd) = lift(Some(k));
        let dk = f(Dual64::from(t), &xd, &yd).eps;
        if dk != 0.0 {
            jac.t += dk * o.t;
            jac.x += &o.x * dk;
            jac.theta += &o.theta * dk;
        }
    }
    for i in 0..nx {
        let (xd, yd) = lift(Some(ny + i));
        let dk = f(Dual64::from(t), &xd, &yd).eps;
        if dk == 0.0 {
            continue;
        }
        match reads.reset {
            None => jac.x[i] += dk,
            Some(r) => {
                jac.t += dk * r.rt[i];
                r.rx.add_row(i, dk, &mut jac.x);
                jac.theta += r.rtheta.row(i).transpose() * dk;
            }
        }
    }
    jac
}
