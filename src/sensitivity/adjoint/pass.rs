//! The backward pass over a whole trajectory (theory.md §4): the objectives' seeds at tf,
//! then, segment by segment from the last, the transposed jumps of the events at the
//! segment's end and the segment integrated back ([`Backward`]), and at t0 the gradient
//! `λ(t0)ᵀ dX0/dθ + μ(t0)`.

use super::segment::{Backward, MuHistory};
use crate::error::Error;
use crate::integrate::{Segment, Stats, Trajectory};
use crate::model::HybridSystem;
use crate::sensitivity::jump::Jump;
use crate::sensitivity::seeds::ObjectiveSeeds;
use crate::sensitivity::simultaneous::SimultaneousError;
use crate::setup::{located, Setup};
use nalgebra::DMatrix;

/// dψ_i/dθ for every objective by the adjoint, from a forward run `traj` of X at θ.
pub fn adjoint_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
) -> Result<(Vec<Vec<f64>>, Stats), Error> {
    adjoint_impl(setup, traj, theta, false, &[]).map(|(g, s, _)| (g, s))
}

/// A crossing order's composed map at a simultaneous event, replacing the sequential jumps
/// of the events it covers: `S⁺ = Ξ S⁻ + Ξ_θ` from before the first to after the last.
pub struct PieceOverride<'p> {
    /// Trajectory indices of the group's events.
    pub events: &'p [usize],
    pub xi: &'p DMatrix<f64>,
    pub xi_theta: &'p DMatrix<f64>,
}

/// dψ_i/dθ by the adjoint with the given crossing orders' composed saltations in place of
/// the recorded order's jumps at simultaneous events (theory §7: the gradient of one piece
/// of a nonsmooth ψ). With no overrides this is [`adjoint_gradients`].
pub fn adjoint_piece_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], overrides: &[PieceOverride<'_>],
) -> Result<Vec<Vec<f64>>, Error> {
    adjoint_impl(setup, traj, theta, false, overrides).map(|(g, _, _)| g)
}

/// Gradients together with the μ_p(t) histories of [`adjoint_gradients`].
pub fn adjoint_with_history<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
) -> Result<(Vec<Vec<f64>>, Vec<MuHistory>), Error> {
    adjoint_impl(setup, traj, theta, true, &[]).map(|(g, _, h)| (g, h))
}

/// Backward across the events at a segment's end, every column at once: the transposed
/// jumps of the recorded order, or the transpose of a piece's composed map.
fn across_events(
    seg: &Segment<f64>, jump: &dyn Fn(usize) -> Result<Jump, Error>, seeds: &ObjectiveSeeds,
    overrides: &[PieceOverride<'_>], lam: &mut DMatrix<f64>, mu: &mut DMatrix<f64>,
) -> Result<(), Error> {
    let over = overrides
        .iter()
        .find(|o| !o.events.is_empty() && o.events == seg.end_events.as_slice());
    if let Some(o) = over {
        if o.events.iter().any(|&i| seeds.has_event_cost(i)) {
            return Err(SimultaneousError::EventCost {
                guard: None,
                t: seg.t_end,
            }
            .into());
        }
        *mu += o.xi_theta.tr_mul(lam);
        *lam = o.xi.tr_mul(lam);
        return Ok(());
    }
    for &i in seg.end_events.iter().rev() {
        jump(i)?.adjoint_columns(lam, mu, seeds.events[i].iter().map(Option::as_ref));
    }
    Ok(())
}

/// The pass itself: the gradients, the backward steps counted, and the μ_p(t) histories
/// when `record` (empty otherwise).
fn adjoint_impl<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], record: bool,
    overrides: &[PieceOverride<'_>],
) -> Result<(Vec<Vec<f64>>, Stats, Vec<MuHistory>), Error> {
    let (nx, np) = (setup.nx(), setup.np());
    let k = setup.objectives.len();
    if !traj.is_replayable() {
        return Err(Error::Internal(
            "the adjoint needs a forward run that kept its dense output or replay windows \
             (a `Checkpointing::Discard` run keeps neither)"
                .into(),
        ));
    }
    // each event's jump is built when the backward pass crosses it (and for the seeds of
    // the events that costs name), never all kept: n × n each, they would grow the
    // memory with the event count
    let jump = |i: usize| {
        let e = &traj.events[i];
        Jump::from_record(setup, traj, i, theta).map_err(located(setup, e.t, e.mode_before()))
    };
    let seeds = ObjectiveSeeds::build(setup, traj, theta, jump)?;
    let (_, dx0) = crate::model::initial_jacobian(setup.sys(), nx, &theta[..np])
        .map_err(located(setup, setup.t0, 0))?;
    if k == 0 {
        return Ok((Vec::new(), Stats::default(), Vec::new()));
    }
    let mut lam = DMatrix::from_columns(&seeds.lambda_tf);
    let mut mu = DMatrix::from_columns(&seeds.mu_tf);
    let mut histories: Vec<MuHistory> = vec![Vec::new(); k];
    if record {
        for (j, h) in histories.iter_mut().enumerate() {
            h.push((traj.t_final, mu.column(j).as_slice()[..np].to_vec()));
        }
    }
    let mut back = Backward::new(setup, theta);
    for (si, seg) in traj.segments.iter().enumerate().rev() {
        across_events(seg, &jump, &seeds, overrides, &mut lam, &mut mu)?;
        back.over(seg, &mut lam, &mut mu, record.then_some(&mut histories))?;
        // data samples read at this segment's start: λ(t_i) = λ(t_i⁺) + c_X, μ += c_θ
        for (o, (cx, ct)) in seeds.segment_starts.get(&si).into_iter().flatten() {
            lam.column_mut(*o).axpy(1.0, cx, 1.0);
            mu.column_mut(*o).axpy(1.0, ct, 1.0);
        }
    }
    let out = initial_gradients(setup, theta, &dx0, &lam, &mu);
    Ok((out, back.stats, histories))
}

/// `dψ_j/dθ = λ_j(t0)ᵀ dX0/dθ + μ_j(t0)` plus the objectives' direct parameter terms
/// (theory.md §4, the adjoint's value at t0).
fn initial_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], dx0: &DMatrix<f64>, lam: &DMatrix<f64>, mu: &DMatrix<f64>,
) -> Vec<Vec<f64>> {
    let (nx, np) = (setup.nx(), setup.np());
    let mut out = Vec::with_capacity(setup.objectives.len());
    for (j, obj) in setup.objectives.iter().enumerate() {
        let mut g = mu.column(j).as_slice().to_vec();
        for (c, gc) in g.iter_mut().enumerate().take(np) {
            for i in 0..nx {
                *gc += dx0[(i, c)] * lam[(i, j)];
            }
        }
        for term in &obj.terms {
            term.add_parameter_gradient(theta, &mut g);
        }
        out.push(g);
    }
    out
}
