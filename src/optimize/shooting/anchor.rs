//! Moving a node across an event that sits on it (docs/guide/shooting.md, "Events at
//! nodes").
//!
//! The end state of a segment `x_k(t_{k+1})` is discontinuous where an event crosses the
//! node time: the reset is applied before the node on one side and after it on the other
//! (a ball's velocity flips sign). Continuity there is a torn constraint: the SQP's line
//! search cannot step over the tear, and the iterates pile up with the event on the node.
//! Node times are not part of the problem (continuity can be asked at any instant), so
//! the node is moved over the event instead: an event of segment k−1 within `NEAR` of the
//! node's time (a fraction of the shorter neighbouring segment) moves node k to just
//! before it, sampled on segment k−1's run; an event of segment k just after the node
//! moves node k to just after it, sampled on segment k's run. Each gap stays what it was
//! (the sample is of a segment's own run), the event is now inside a segment, and the SQP
//! continues from there.

use super::nlp::{ShootingNlp, NEAR};
use super::nodes::{Node, NodeSide};
use super::segment;
use crate::error::Error;
use crate::model::HybridSystem;
use rayon::prelude::*;

/// The moved node lands this fraction of the segment beyond the event (or halfway to the
/// next event, if that is nearer).
const BEYOND: f64 = 0.1;

/// The point x with every node that has an event on it moved across (and `nlp`'s nodes
/// with it); `None` when no event is on a node. `events` are each segment's event times
/// at x as the SQP's point recorded them (the segments' plain runs are taken otherwise):
/// an event at a segment's very end fires or not by round-off, so the decision to move
/// and the move read the same list.
pub(super) fn move_nodes<S: HybridSystem>(
    nlp: &mut ShootingNlp<'_, '_, S>, x: &[f64], events: Option<&[Vec<f64>]>,
) -> Result<Option<Vec<f64>>, Error> {
    nlp.rebase(x);
    let (theta, starts, _) = nlp.starts(x)?;
    let k = nlp.k();
    let runs = (0..k)
        .into_par_iter()
        .map(|i| segment::dense(&nlp.setup, nlp.span(i), &theta, &starts[i]))
        .collect::<Result<Vec<_>, _>>()?;
    let end = runs.last().map_or(nlp.t_end, |r| r.t_final);
    let times: Vec<f64> = nlp.nodes.iter().map(|n| n.t).chain([end]).collect();
    let mut x = x.to_vec();
    let mut moved = false;
    let nx = nlp.nx();
    for node in 1..k {
        let t = times[node];
        let (left, right) = (t - times[node - 1], times[node + 1] - t);
        let near = NEAR * left.min(right);
        let of = |i: usize| -> Vec<f64> {
            match events {
                Some(ev) => ev[i].clone(),
                None => runs[i].events.iter().map(|e| e.t).collect(),
            }
        };
        let (before, after) = (of(node - 1), of(node));
        let last_before = before.last().copied().filter(|&te| t - te < near);
        let first_after = after.first().copied().filter(|&te| te - t < near);
        let (t_new, run) = match (last_before, first_after) {
            (Some(te), None) => {
                // the previous event of segment k−1, or its start
                let prev = before
                    .iter()
                    .rev()
                    .nth(1)
                    .copied()
                    .unwrap_or(times[node - 1]);
                (te - (BEYOND * left).min(0.5 * (te - prev)), &runs[node - 1])
            }
            (None, Some(te)) => {
                let next = after.get(1).copied().unwrap_or(times[node + 1]);
                (te + (BEYOND * right).min(0.5 * (next - te)), &runs[node])
            }
            _ => continue,
        };
        let seg = &run.segments[run.segment_index(t_new, false)];
        let mut y = vec![0.0; run.y_final.len()];
        seg.state_at(t_new, &mut y);
        nlp.nodes[node] = Node {
            t: t_new,
            mode: seg.mode,
            state: y[..nx].to_vec(),
            side: NodeSide::Flow,
        };
        let at = nlp.node_at(node);
        x[at..at + nx].copy_from_slice(&y[..nx]);
        moved = true;
    }
    Ok(moved.then_some(x))
}
