//! An event on a control node (theory.md §11, "an impact on a control node is a kink"): a
//! state event within `simultaneous_tol · max(1, |t|)` of a node where the controls jump
//! (a piecewise-constant basis) is a simultaneous event of a state event and a time event.
//! Its two crossing orders are the node's two sides: the saltation holds u(t_e) through
//! f⁻ and f⁺ (§3), so an event just before the node sees the left interval's controls and
//! one just after sees the right's, and ψ's gradient jumps where the event crosses the
//! node — by a multiple of τ = dt_e/dθ, the normal of the surface t_e(θ) = node.
//!
//! The run records one side (the one its event fell on); the other side's piece is the
//! same backward pass with that event's jump built in the neighbouring interval
//! ([`Jump::at`] there: f⁻, f⁺ and the reset evaluated with those controls), through the
//! adjoint's [`PieceOverride`].

use super::adjoint::{adjoint_piece_gradients, PieceOverride};
use super::jump::Jump;
use crate::error::Error;
use crate::integrate::trajectory::Ctx;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::setup::{located, Setup};

/// A state event on a node where the controls jump.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeEvent {
    /// The event's index on the trajectory.
    pub event: usize,
    /// The node's time.
    pub node: f64,
    /// The run put the event after the node (in the interval that starts there).
    pub after: bool,
    /// The breakpoint interval on the node's other side, in the event's mode before.
    other: Ctx,
}

/// The events of `traj` that sit on a control node whose two sides give different
/// controls (each alone at its segment's end: events of a simultaneous state event are
/// left to the B-derivative of §7).
pub fn events_on_nodes<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
) -> Vec<NodeEvent> {
    if setup.controls.is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, e) in traj.events.iter().enumerate() {
        let seg = &traj.segments[e.segment];
        if seg.end_events.len() != 1 || e.terminal {
            continue;
        }
        let tol = setup.events.simultaneous_tol * e.t.abs().max(1.0);
        let ctx = traj.event_ctx(i);
        let (after, node) = if (e.t - ctx.t_lo).abs() <= tol {
            (true, ctx.t_lo)
        } else if (ctx.t_hi - e.t).abs() <= tol {
            (false, ctx.t_hi)
        } else {
            continue;
        };
        let Some(other) = neighbour(traj, node, after, ctx.mode) else {
            continue;
        };
        let u_here = setup.controls_at(&ctx, node, theta);
        let u_there = setup.controls_at(&other, node, theta);
        if u_here != u_there {
            out.push(NodeEvent {
                event: i,
                node,
                after,
                other,
            });
        }
    }
    out
}

/// The breakpoint interval on the other side of `node` (before it when the event is
/// after), from the trajectory's segments, in `mode`.
fn neighbour(traj: &Trajectory, node: f64, after: bool, mode: usize) -> Option<Ctx> {
    traj.segments
        .iter()
        .find(|s| {
            if after {
                s.t_hi == node
            } else {
                s.t_lo == node
            }
        })
        .map(|s| Ctx {
            mode,
            t_lo: s.t_lo,
            t_hi: s.t_hi,
        })
}

/// dψ/dθ of every objective with the events `flipped` (indices into `on_nodes`) moved to
/// their node's other side: the adjoint with those events' jumps built in the
/// neighbouring interval. With nothing flipped it is the recorded side's gradient.
pub fn node_piece_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], on_nodes: &[NodeEvent],
    flipped: &[usize],
) -> Result<Vec<Vec<f64>>, Error> {
    let n = setup.n();
    let mut maps = Vec::with_capacity(flipped.len());
    for &j in flipped {
        let ne = &on_nodes[j];
        let e = &traj.events[ne.event];
        let jump = Jump::at(
            setup,
            &ne.other,
            e.guard,
            e.t,
            &e.before.y[..n],
            theta,
            false,
        )
        .map_err(located(setup, e.t, e.mode_before()))?;
        let seg = &traj.segments[e.segment];
        maps.push((seg, jump.xi.to_dense(), jump.xi_theta));
    }
    let overrides: Vec<PieceOverride<'_>> = maps
        .iter()
        .map(|(seg, xi, xi_theta)| PieceOverride {
            events: &seg.end_events,
            xi,
            xi_theta,
        })
        .collect();
    adjoint_piece_gradients(setup, traj, theta, &overrides)
}

/// The one-sided derivatives `Dψ_i(θ; d)` of every objective along each direction of
/// `dirs`: along d the event of `on_nodes[j]` moves by `τ_j·d` (`taus[j]` its τ), so it
/// ends after its node when `τ_j·d > 0`, before when `< 0`, where the run put it when 0;
/// the derivative is that piece's gradient times d (theory.md §11). One backward pass
/// per distinct set of events moved to their other side.
pub fn node_directional<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], on_nodes: &[NodeEvent],
    taus: &[Vec<f64>], dirs: &[Vec<f64>],
) -> Result<Vec<Vec<f64>>, Error> {
    let mut pieces: Vec<(Vec<usize>, Vec<Vec<f64>>)> = Vec::new();
    let mut out = Vec::with_capacity(dirs.len());
    for d in dirs {
        let flipped: Vec<usize> = on_nodes
            .iter()
            .zip(taus)
            .enumerate()
            .filter(|(_, (ne, tau))| {
                let move_ = tau.iter().zip(d).map(|(a, b)| a * b).sum::<f64>();
                (move_ > 0.0 && !ne.after) || (move_ < 0.0 && ne.after)
            })
            .map(|(j, _)| j)
            .collect();
        if !pieces.iter().any(|(f, _)| *f == flipped) {
            let g = node_piece_gradients(setup, traj, theta, on_nodes, &flipped)?;
            pieces.push((flipped.clone(), g));
        }
        let g = &pieces.iter().find(|(f, _)| *f == flipped).expect("kept").1;
        out.push(
            g.iter()
                .map(|gi| gi.iter().zip(d).map(|(a, b)| a * b).sum())
                .collect(),
        );
    }
    Ok(out)
}
