//! What a multiple-shooting run reports (`summary.json`'s `shooting`): the nodes at the
//! start and at the end, the defects, a periodic problem's closing with its Floquet
//! multipliers, and the segments' runs joined end to end for the figures.

use super::nlp::Runs;
use super::nodes::{Node, NodeSide};
use super::segment;
use super::settings::Closure;
use crate::error::Error;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::setup::Setup;
use rayon::prelude::*;

/// One node in `summary.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NodeReport {
    /// The node's time at the end (a node with an event on it moves across the event:
    /// docs/guide/shooting.md, "Events at nodes").
    pub t: f64,
    /// The node's time in the guess.
    pub t_initial: f64,
    /// Its mode at the end (fixed between moves) and in the guess.
    pub mode: String,
    pub mode_index: usize,
    pub mode_initial: String,
    pub mode_index_initial: usize,
    /// Which side of an event of the guess the node took.
    pub side: NodeSide,
    pub state_initial: Vec<f64>,
    pub state_final: Vec<f64>,
}

/// What a multiple-shooting run adds to [`OptimizeResult`](crate::optimize::OptimizeResult).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ShootingReport {
    pub segments: usize,
    pub states: Vec<String>,
    /// Node 0 is the system's own start `x0(θ)`.
    pub nodes: Vec<NodeReport>,
    /// The largest continuity gap at the start and at the end.
    pub max_defect_initial: f64,
    pub max_defect: f64,
    /// The horizon's end at the final point (a periodic problem: the period's end, its
    /// closing event).
    pub t_end: f64,
    /// A periodic problem's closing guard and the states that return.
    pub closure: Option<ClosureReport>,
    /// The worker threads the segments ran on.
    pub threads: usize,
}

/// A periodic problem's closing in `summary.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClosureReport {
    pub guard: String,
    pub states: Vec<String>,
    /// `max |x⁺(t_e) − x0(θ)|` over those states at the final point.
    pub residual: f64,
    /// The Floquet multipliers of the periodic motion at the final point, `[re, im]` by
    /// decreasing modulus: the eigenvalues of the monodromy `DP = J_{K−1} ⋯ J_1 J_0`,
    /// `J_k = ∂x_k(t_{k+1})/∂s_k` from the segments' sensitivities (the last through the
    /// closing reset at the moving event time, as the return map's `DP`). A start just
    /// after the reset lies on the guard's image, so one multiplier is 0.
    pub multipliers: Vec<[f64; 2]>,
    /// The largest modulus among them.
    pub spectral_radius: f64,
}

/// A periodic problem's closing at the final point: its residual and the Floquet
/// multipliers, the eigenvalues of the monodromy `DP = J_{K−1} ⋯ J_1 J_0` of the segments'
/// state Jacobians `J_k = ∂x_k(t_{k+1})/∂s_k` (theory §9).
pub(super) fn closure_report<S: HybridSystem>(
    setup: &Setup<'_, S>, c: &Closure, runs: &Runs,
) -> ClosureReport {
    let last = runs.segments.last().expect("a segment");
    let monodromy = runs.segments.iter().fold(
        nalgebra::DMatrix::identity(setup.nx(), setup.nx()),
        |m, s| &s.end_start * m,
    );
    let ev = crate::linalg::eigenvalues(&monodromy);
    ClosureReport {
        multipliers: crate::linalg::pairs(&ev),
        spectral_radius: ev.first().map_or(0.0, |z| z.norm()),
        guard: setup.dims.guard_name(c.guard),
        states: c
            .states
            .iter()
            .map(|&m| setup.dims.states[m].clone())
            .collect(),
        residual: c
            .states
            .iter()
            .map(|&m| (last.end[m] - runs.starts[0][m]).abs())
            .fold(0.0, f64::max),
    }
}

/// Each node at the start (`initial`, with the guess's states `starts_initial`) and at the
/// end (`nodes`, with the final runs' start states).
pub(super) fn node_reports<S: HybridSystem>(
    setup: &Setup<'_, S>, initial: &[Node], nodes: &[Node], starts_initial: &[Vec<f64>],
    runs: &Runs,
) -> Vec<NodeReport> {
    nodes
        .iter()
        .enumerate()
        .map(|(k, node)| NodeReport {
            t: node.t,
            t_initial: initial[k].t,
            mode: setup.dims.mode_name(node.mode),
            mode_index: node.mode,
            mode_initial: setup.dims.mode_name(initial[k].mode),
            mode_index_initial: initial[k].mode,
            side: initial[k].side.clone(),
            state_initial: starts_initial[k].clone(),
            state_final: runs.starts[k].clone(),
        })
        .collect()
}

/// Runs one after the other as one trajectory (segments and events renumbered); where a
/// run does not start where the previous one ended, the trajectory jumps.
pub(crate) fn stitch(runs: Vec<Trajectory>) -> Trajectory {
    let mut out = Trajectory {
        segments: vec![],
        events: vec![],
        stats: Default::default(),
        t0: runs.first().map_or(0.0, |r| r.t0),
        t_final: 0.0,
        y_final: vec![],
        mode_final: 0,
    };
    for r in runs {
        let (s0, e0) = (out.segments.len(), out.events.len());
        out.segments.extend(r.segments.into_iter().map(|mut s| {
            s.end_events.iter_mut().for_each(|i| *i += e0);
            s
        }));
        out.events.extend(r.events.into_iter().map(|mut e| {
            e.segment += s0;
            e
        }));
        out.stats += r.stats;
        out.t_final = r.t_final;
        out.y_final = r.y_final;
        out.mode_final = r.mode_final;
    }
    out
}

/// The segments' dense state trajectories from the nodes' states `which` of `report` (its
/// `state_initial` or `state_final`) at θ (for figures and tables: the gaps at the nodes
/// are the defects). `setup` and `closure` as given to [`optimize_shooting`](super::optimize_shooting).
pub fn segment_trajectories<S: HybridSystem>(
    setup: &Setup<'_, S>, report: &ShootingReport, closure: Option<&Closure>, theta: &[f64],
    initial: bool,
) -> Result<Vec<Trajectory>, Error> {
    let nodes: Vec<Node> = report
        .nodes
        .iter()
        .map(|n| match initial {
            true => Node {
                t: n.t_initial,
                mode: n.mode_index_initial,
                state: n.state_initial.clone(),
                side: n.side.clone(),
            },
            false => Node {
                t: n.t,
                mode: n.mode_index,
                state: n.state_final.clone(),
                side: n.side.clone(),
            },
        })
        .collect();
    let k = nodes.len();
    // the horizon's end: the guess's, or the final point's (a free final time moved it; a
    // closing segment ends at its event, the horizon capping it)
    let t_end = match initial || closure.is_some() {
        true => setup.t_end,
        false => report.t_end,
    };
    (0..k)
        .into_par_iter()
        .map(|i| {
            let last = i + 1 == k;
            let span = segment::Span {
                node: &nodes[i],
                t0: nodes[i].t,
                t1: if last { t_end } else { nodes[i + 1].t },
                closure: closure.filter(|_| last).map(|c| c.guard),
            };
            segment::dense(setup, span, theta, &nodes[i].state)
        })
        .collect()
}
