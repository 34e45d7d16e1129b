//! The nodes of a multiple-shooting fit (docs/guide/shooting.md, "Fitting data by multiple
//! shooting"): their states started from the data, their times kept away from events.
//!
//! - **States.** Node 0 is the system's start `x0(θ)`. Every later node is initialized in
//!   turn (sequential initialization, Bock 1987): the previous segment is run at the start
//!   θ from its own node state (or, with a guess table, the table's state is taken), and
//!   every state whose name is a measured output's is replaced by the data at the node's
//!   time (the sample there, else the linear interpolation between the measured samples
//!   around it). Then the unmeasured states are fitted to the node's own segment's samples
//!   at the start θ (a few Levenberg–Marquardt steps over those states alone, the measured
//!   ones held): carried over from the previous segment alone, an unmeasured velocity
//!   drifts from node to node on a chaotic record (measured on the vibrating table: 6 m/s
//!   off after 10 s, the fit then stalls), while the segment's own samples pin it.
//! - **Times.** With `segments = K` (even spacing), a node closer than [`MARGIN`] of a
//!   segment's length to an event of the initialization's runs is moved to the nearest
//!   sample time outside that margin of every event, and the nodes are initialized again
//!   (at most [`PASSES`] times). A node a few ms before an impact starts its segment with a
//!   velocity that leads the impact's timing by a long lever: the gap it leaves is the
//!   hardest for the solver to close, and the data interpolated there straddle the kink
//!   of the record. Node times given explicitly (`nodes = […]`) are kept.

use super::super::nodes::{initial_nodes, node_times, Node, NodeSide};
use super::super::segment::{self, segment_setup, theta_with_start, Span};
use super::super::settings::{Guess, NodeTimes, Shooting};
use super::problem::segment_objective;
use crate::cost::{Objective, Samples};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::optimize::least_squares::{levenberg_marquardt, BoxBounds, LmSettings, Residuals};
use crate::sensitivity::residuals;
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};

/// Levenberg–Marquardt steps at most for a node's unmeasured states: the segment's
/// residuals are nearly linear in them once the measured ones sit on the data.
const NODE_FIT_ITERATIONS: usize = 20;

/// A node's unmeasured states fitted to its segment's samples at the start θ (module docs).
struct NodeFit<'s, 'a, S: HybridSystem> {
    setup: &'s Setup<'a, S>,
    theta: &'s [f64],
    node: &'s Node,
    t1: f64,
    objective: Objective,
    /// The unmeasured states (their indices), the variables.
    free: Vec<usize>,
}

impl<S: HybridSystem> Residuals for NodeFit<'_, '_, S> {
    type Error = Error;

    /// The segment's residuals and their Jacobian over the unmeasured states.
    fn residuals(
        &self, x: &[f64], jacobian: bool,
    ) -> Result<(DVector<f64>, Option<DMatrix<f64>>), Error> {
        let mut s = self.node.state.clone();
        for (i, &m) in self.free.iter().enumerate() {
            s[m] = x[i];
        }
        let np = self.setup.np();
        let sys = StartOnSection::new(self.setup.sys(), self.node.mode).with_controls();
        let span = Span {
            node: self.node,
            t0: self.node.t,
            t1: self.t1,
            closure: None,
        };
        let seg = segment_setup(self.setup, &sys, span, vec![self.objective.clone()]);
        let run = residuals(&seg, &theta_with_start(self.theta, np, &s), jacobian)?;
        let j = run.jacobian.map(|j| {
            DMatrix::from_fn(j.nrows(), self.free.len(), |i, c| j[(i, np + self.free[c])])
        });
        Ok((run.r, j))
    }
}

/// `node` with its unmeasured states fitted over `[node.t, t1]` (kept as they are when
/// the segment has no sample or the fit fails to improve them).
fn fit_unmeasured<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], node: &mut Node, t1: f64, objective: Objective,
    free: Vec<usize>,
) {
    if free.is_empty() || objective.terms.is_empty() {
        return;
    }
    let x0: Vec<f64> = free.iter().map(|&m| node.state[m]).collect();
    let problem = NodeFit {
        setup,
        theta,
        node,
        t1,
        objective,
        free: free.clone(),
    };
    let settings = LmSettings {
        max_iterations: NODE_FIT_ITERATIONS,
        ..LmSettings::default()
    };
    if let Ok(fit) = levenberg_marquardt(&problem, &x0, &BoxBounds::free(x0.len()), &settings) {
        if fit.cost < fit.cost_initial {
            for (i, &m) in free.iter().enumerate() {
                node.state[m] = fit.x[i];
            }
        }
    }
}

/// How close to an event (as a fraction of the even segments' length) a node may sit:
/// 10 % (25 ms for the vibrating table's 56 segments of 0.25 s; its impacts are ≥ 0.1 s
/// apart, so a node always finds a sample time outside the margin between two impacts).
pub const MARGIN: f64 = 0.1;
/// At most this many placements (each after a new initialization).
pub const PASSES: usize = 4;

/// A node moved away from an event when the nodes were placed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NodeMove {
    pub node: usize,
    /// Its even-spacing time and the sample time it moved to.
    pub from: f64,
    pub to: f64,
    /// The event of the initialization's runs it was too close to.
    pub event: f64,
}

/// The value of the measured output named `name` at `t` in any of `records`: the sample
/// at `t`, else the linear interpolation between the nearest measured samples around it.
fn measured(records: &[&Samples], name: &str, t: f64) -> Option<f64> {
    for rec in records {
        let Some(c) = rec.channels.iter().position(|ch| ch.name == name) else {
            continue;
        };
        let pts: Vec<(f64, f64)> = rec
            .times
            .iter()
            .zip(&rec.cells)
            .filter_map(|(&ti, row)| row[c].map(|d| (ti, d.value)))
            .collect();
        let after = pts.partition_point(|&(ti, _)| ti < t);
        if let Some(&(ti, v)) = pts.get(after) {
            if ti == t {
                return Some(v);
            }
            if after > 0 {
                let (ta, va) = pts[after - 1];
                return Some(va + (v - va) * (t - ta) / (ti - ta));
            }
        }
    }
    None
}

/// The nodes at `times` (module docs, "States") and the events of the runs between them.
fn initialize<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], times: &[f64], shooting: &Shooting, objective: &Objective,
) -> Result<(Vec<Node>, Vec<f64>), Error> {
    let records: Vec<&Samples> = objective
        .terms
        .iter()
        .filter_map(|t| t.data())
        .map(|d| d.0)
        .collect();
    let nx = setup.nx();
    let table = match &shooting.guess {
        Guess::Table(_) => {
            let at = Shooting {
                nodes: NodeTimes::Times(times.to_vec()),
                guess: shooting.guess.clone(),
                closure: None,
            };
            Some(initial_nodes(setup, theta, &at)?.0)
        }
        Guess::SingleShooting => None,
    };
    let (mode0, x0) = setup.initial(theta).map_err(|source| Error::Model {
        t: setup.t0,
        mode: String::new(),
        source,
    })?;
    let mut nodes = vec![Node {
        t: setup.t0,
        mode: mode0,
        state: x0[..nx].to_vec(),
        side: NodeSide::Flow,
    }];
    let mut events = Vec::new();
    for (i, &t) in times
        .iter()
        .chain(std::iter::once(&setup.t_end))
        .enumerate()
    {
        let prev = nodes.last().expect("node 0");
        let span = Span {
            node: prev,
            t0: prev.t,
            t1: t,
            closure: None,
        };
        let traj = segment::dense(setup, span, theta, &prev.state)?;
        events.extend(traj.events.iter().map(|e| e.t));
        if i == times.len() {
            break;
        }
        let mut node = match &table {
            Some(nodes) => nodes[i + 1].clone(),
            None => Node {
                t,
                mode: traj.mode_final,
                state: traj.y_final[..nx].to_vec(),
                side: NodeSide::Flow,
            },
        };
        let mut free = Vec::new();
        for (m, name) in setup.dims.states.iter().enumerate() {
            match measured(&records, name, t) {
                Some(v) => node.state[m] = v,
                None => free.push(m),
            }
        }
        let last = i + 1 == times.len();
        let t1 = times.get(i + 1).copied().unwrap_or(setup.t_end);
        let part = segment_objective(objective, t, t1, i + 1, last);
        fit_unmeasured(setup, theta, &mut node, t1, part, free);
        nodes.push(node);
    }
    Ok((nodes, events))
}

/// The sample time nearest `t` in `(lo, hi)` at least `margin` from every event.
fn clear_time(
    records: &[&Samples], events: &[f64], t: f64, (lo, hi): (f64, f64), margin: f64,
) -> Option<f64> {
    records
        .iter()
        .flat_map(|r| r.times.iter().copied())
        .filter(|&s| s > lo && s < hi && events.iter().all(|&e| (e - s).abs() >= margin))
        .min_by(|a, b| (a - t).abs().total_cmp(&(b - t).abs()))
}

/// The nodes of one experiment (module docs) and the moves made.
pub(super) fn place<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], shooting: &Shooting, objective: &Objective,
) -> Result<(Vec<Node>, Vec<NodeMove>), Error> {
    let records: Vec<&Samples> = objective
        .terms
        .iter()
        .filter_map(|t| t.data())
        .map(|d| d.0)
        .collect();
    let mut times = node_times(&shooting.nodes, setup.t0, setup.t_end)?;
    let margin = match shooting.nodes {
        NodeTimes::Segments(k) => MARGIN * (setup.t_end - setup.t0) / k as f64,
        NodeTimes::Times(_) => 0.0,
    };
    let mut moves = Vec::new();
    for pass in 0.. {
        let (nodes, events) = initialize(setup, theta, &times, shooting, objective)?;
        if margin == 0.0 || pass == PASSES {
            return Ok((nodes, moves));
        }
        let mut moved = false;
        for i in 0..times.len() {
            let t = times[i];
            let Some(&event) = events.iter().find(|&&e| (e - t).abs() < margin) else {
                continue;
            };
            let lo = if i == 0 { setup.t0 } else { times[i - 1] } + margin;
            let hi = times.get(i + 1).copied().unwrap_or(setup.t_end) - margin;
            if let Some(to) = clear_time(&records, &events, t, (lo, hi), margin) {
                times[i] = to;
                moves.push(NodeMove {
                    node: i + 1,
                    from: t,
                    to,
                    event,
                });
                moved = true;
            }
        }
        if !moved {
            return Ok((nodes, moves));
        }
    }
    unreachable!("the loop returns")
}
