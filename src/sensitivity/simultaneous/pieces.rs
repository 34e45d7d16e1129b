//! One gradient per crossing order of every simultaneous group, and the `nonsmooth` flag.

use super::event::SimultaneousEvent;
use super::plan::{plain_groups, run_columns, GroupRule};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::setup::Setup;
use nalgebra::DMatrix;

/// Piece gradients differing by more than this (relative to the largest gradient entry of
/// the objective) make an evaluation nonsmooth.
pub const NONSMOOTH_TOL: f64 = 1e-9;

/// The gradient of ψ for one crossing order of one group.
#[derive(Debug, Clone)]
pub struct PieceGradient {
    /// The order as positions into the group's guards.
    pub order: Vec<usize>,
    /// The order as guard ids.
    pub guard_order: Vec<usize>,
    /// dψ_i/dθ with this order's composed jump at the group (and the recorded order at every
    /// other group), per objective.
    pub gradients: Vec<Vec<f64>>,
}

/// The piece gradients of one simultaneous group.
#[derive(Debug, Clone)]
pub struct GroupGradients {
    pub t: f64,
    pub guards: Vec<usize>,
    /// One per crossing order, in the order of [`SimultaneousEvent::pieces`] (the recorded
    /// order first).
    pub pieces: Vec<PieceGradient>,
    /// max over pieces and objectives of ‖g_σ − g_recorded‖∞ / max_σ ‖g_σ‖∞.
    pub max_relative_difference: f64,
    /// `max_relative_difference > NONSMOOTH_TOL`.
    pub nonsmooth: bool,
}

/// ψ with its piecewise gradients at θ.
#[derive(Debug, Clone)]
pub struct NonsmoothEvaluation {
    pub values: Vec<f64>,
    /// The gradients of the recorded orders (what the ordinary forward and adjoint methods
    /// return), per objective.
    pub gradients: Vec<Vec<f64>>,
    /// One entry per simultaneous group, in time order.
    pub groups: Vec<GroupGradients>,
    /// Whether a simultaneous group exists whose piece gradients differ (ψ has no gradient
    /// at θ, only one-sided directional derivatives).
    pub nonsmooth: bool,
    /// The largest `max_relative_difference` over the groups (0 without groups).
    pub max_relative_difference: f64,
    /// The simultaneous events at θ.
    pub events: Vec<SimultaneousEvent>,
}

/// The gradient of every piece of every simultaneous group, in one forward pass (module
/// docs), and the `nonsmooth` flag.
pub fn piece_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64],
) -> Result<NonsmoothEvaluation, Error> {
    let nth = setup.ntheta();
    let (plain, groups) = plain_groups(setup, theta)?;
    // blocks: the recorded order everywhere, then (g, σ) for every non-recorded σ
    let mut blocks: Vec<Option<(usize, Vec<usize>)>> = vec![None];
    for (g, ev) in groups.iter().enumerate() {
        for p in ev.pieces.iter().skip(1) {
            blocks.push(Some((g, p.order.clone())));
        }
    }
    let nb = blocks.len();
    let mut dirs = DMatrix::zeros(nth, nb * nth);
    for b in 0..nb {
        for i in 0..nth {
            dirs[(i, b * nth + i)] = 1.0;
        }
    }
    let mut rules = Vec::with_capacity(nb * nth);
    for blk in &blocks {
        let per_group: Vec<GroupRule> = groups
            .iter()
            .enumerate()
            .map(|(g, ev)| match blk {
                Some((bg, o)) if *bg == g => GroupRule::Order(o.clone()),
                _ => GroupRule::Order((0..ev.n()).collect()),
            })
            .collect();
        rules.extend(std::iter::repeat_n(per_group, nth));
    }
    let run = run_columns(setup, theta, dirs, &plain, groups, rules)?;
    let block_grad = |b: usize| -> Vec<Vec<f64>> {
        run.derivatives
            .iter()
            .map(|d| d[b * nth..(b + 1) * nth].to_vec())
            .collect()
    };
    let recorded = block_grad(0);
    let mut out_groups = Vec::new();
    let mut overall = 0.0f64;
    for (g, ev) in run.groups.iter().enumerate() {
        let mut pieces = vec![PieceGradient {
            order: ev.pieces[0].order.clone(),
            guard_order: ev.pieces[0].guard_order.clone(),
            gradients: recorded.clone(),
        }];
        for (b, blk) in blocks.iter().enumerate() {
            if let Some((bg, o)) = blk {
                if *bg == g {
                    let p = ev.piece(o)?;
                    pieces.push(PieceGradient {
                        order: o.clone(),
                        guard_order: p.guard_order.clone(),
                        gradients: block_grad(b),
                    });
                }
            }
        }
        let mut diff = 0.0f64;
        for oi in 0..run.values.len() {
            let scale = pieces
                .iter()
                .flat_map(|p| p.gradients[oi].iter())
                .fold(0.0f64, |a, v| a.max(v.abs()));
            if scale == 0.0 {
                continue;
            }
            for p in &pieces {
                let d = p.gradients[oi]
                    .iter()
                    .zip(&recorded[oi])
                    .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
                diff = diff.max(d / scale);
            }
        }
        overall = overall.max(diff);
        out_groups.push(GroupGradients {
            t: ev.t,
            guards: ev.guards.clone(),
            pieces,
            max_relative_difference: diff,
            nonsmooth: diff > NONSMOOTH_TOL,
        });
    }
    Ok(NonsmoothEvaluation {
        values: run.values,
        gradients: recorded,
        nonsmooth: out_groups.iter().any(|g| g.nonsmooth),
        groups: out_groups,
        max_relative_difference: overall,
        events: run.groups,
    })
}

/// The smallest common helper for callers that only need the flag: whether ψ is nonsmooth
/// at θ (a simultaneous group whose piece gradients differ).
pub fn is_nonsmooth<S: HybridSystem>(setup: &Setup<'_, S>, theta: &[f64]) -> Result<bool, Error> {
    Ok(piece_gradients(setup, theta)?.nonsmooth)
}
