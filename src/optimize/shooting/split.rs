//! The functionals of a multiple-shooting problem split over its segments
//! (docs/guide/shooting.md, "Costs and constraints over segments"): a functional
//! `ψ = ∫ L dt + Φ(x(t_f)) + Σ E(t_e, x⁻) + P(θ)` is the sum over the segments of the
//! pieces each one owns —
//!
//! - running terms (`∫ L dt`): every segment, over its own interval;
//! - terminal terms (`Φ(x(t_f))`, `t_f`): the last segment;
//! - parameter terms (`P(θ)`): the first segment (whose θ is the problem's own);
//! - event terms of the j-th firing of a guard: the segment where that firing happens,
//!   as its own local occurrence (the firings are counted along the segments in order,
//!   exactly as single shooting counts them along its one run).
//!
//! The placement of event terms is made once, at the start point, and kept for a whole
//! SQP run, as the nodes' modes are: while the gaps are open, counting anew at every
//! iterate would move a term between segments as an impact crosses a node, a jump in the
//! functional that no smooth solver survives. At convergence the firings are counted
//! again; if a term moved, the SQP runs again from there with the new placement.

use crate::cost::{Objective, Quantity};
use crate::error::Error;
use crate::model::Dims;

/// The guards fired in each segment, in order (the closing event of a periodic problem
/// included).
pub(super) type Firings = Vec<Vec<usize>>;

/// Whether any functional has an event term (then the segments' firings are needed).
pub(super) fn needs_firings(functionals: &[Objective]) -> bool {
    functionals
        .iter()
        .any(|o| o.terms.iter().any(|t| t.event().is_some()))
}

/// Where each event term went: (functional, term, segment, local occurrence).
pub(super) type Placement = Vec<(usize, usize, usize, usize)>;

/// Each segment's functionals: `out[k][i]` is the part of functional i that segment k
/// owns (possibly with no terms), and the placement of the event terms. `firings` is
/// needed when a functional has event terms. A firing that no segment reaches is
/// [`Error::MissingEvent`] over the whole horizon.
pub(super) fn split(
    functionals: &[Objective], segments: usize, firings: Option<&Firings>, dims: &Dims,
    horizon: (f64, f64),
) -> Result<(Vec<Vec<Objective>>, Placement), Error> {
    let mut placement = Vec::new();
    let last = segments - 1;
    let mut out: Vec<Vec<Objective>> = (0..segments)
        .map(|_| {
            functionals
                .iter()
                .map(|o| Objective::new(&o.name, vec![]))
                .collect()
        })
        .collect();
    for (i, o) in functionals.iter().enumerate() {
        for (ti, term) in o.terms.iter().enumerate() {
            if term.is_running() {
                for seg in out.iter_mut() {
                    seg[i].terms.push(term.clone());
                }
            } else if let Some((guard, occurrence)) = term.event() {
                let firings = firings.expect("firings are computed when event terms exist");
                let mut count = 0;
                let mut placed = false;
                for (k, fired) in firings.iter().enumerate() {
                    let here = fired.iter().filter(|&&g| guard.counts(g)).count();
                    if count + here >= occurrence {
                        out[k][i]
                            .terms
                            .push(term.with_occurrence(occurrence - count));
                        placement.push((i, ti, k, occurrence - count));
                        placed = true;
                        break;
                    }
                    count += here;
                }
                if !placed {
                    return Err(Error::MissingEvent {
                        guard: match guard {
                            crate::cost::EventGuard::Guard(g) => dims.guard_name(g),
                            crate::cost::EventGuard::Any => "any".into(),
                        },
                        occurrence,
                        fired: count,
                        t0: horizon.0,
                        t1: horizon.1,
                    });
                }
            } else if term.is_terminal() || term.quantity() == Some(&Quantity::FinalTime) {
                out[last][i].terms.push(term.clone());
            } else {
                // parameter terms: the first segment's θ is the problem's
                out[0][i].terms.push(term.clone());
            }
        }
    }
    Ok((out, placement))
}
