//! Multiple shooting through events (docs/guide/shooting.md): the horizon is split at
//! nodes `t_0 < t_1 < … < t_{K−1} < t_f` into K segments; each interior node's state is a
//! variable of the constrained solver, and continuity `x_k(t_{k+1}⁻; s_k, θ) = s_{k+1}` is a
//! set of equality constraints. A segment is an ordinary hybrid run — its events, jumps
//! and exact direct sensitivities included — so no mode schedule is fixed: the impacts
//! fall inside segments wherever the iterate puts them. The steps, one file each: the
//! nodes and the initial guess (nodes.rs), the functionals split over the segments
//! (split.rs), one segment's run (segment.rs), the problem the SQP sees (nlp.rs), the
//! errors (error.rs). The SQP is the constrained solver's (`super::constrained`).
//!
//! ```
//! use hybridopt::prelude::*;
//! use hybridopt::systems::BouncingBall;
//!
//! // the ball's restitution e and throw v0 that keep it nearest y = 0.5 over [0, 2]
//! // (θ = g, e, c, y0, v0), by 4 shooting segments with the impacts free inside them
//! let cost = Objective::new("f", vec![Term::IntegralSquared { output: 0, target: 0.5, weight: 1.0 }]);
//! let setup = Setup::builder(&BouncingBall).horizon(0.0, 2.0).objective(cost)
//!     .tolerances(1e-12, 1e-12).build();
//! let theta = [
//!     ThetaEntry::fixed("g", 9.81), ThetaEntry::free("e", 0.8).with_bounds(Some(0.1), Some(0.95)),
//!     ThetaEntry::fixed("c", 0.0), ThetaEntry::fixed("y0", 1.0),
//!     ThetaEntry::free("v0", 0.5).with_bounds(Some(-5.0), Some(5.0)),
//! ];
//! let shooting = Shooting { nodes: NodeTimes::Segments(4), guess: Guess::SingleShooting, closure: None };
//! let r = optimize_shooting(&setup, &theta, &Constraints::default(), &shooting,
//!     &OptimizerSettings::default(), None)?;
//! assert!(r.converged(), "{r}");
//! assert!(r.shooting.as_ref().unwrap().max_defect < 1e-9);
//! // the segments joined are a genuine run: single shooting at the final θ has its cost
//! let single = evaluate(&setup, &r.theta_final, GradientMethod::Adjoint)?;
//! assert!((single.values[0] - r.final_cost).abs() < 1e-8 * r.final_cost);
//! # Ok::<(), hybridopt::Error>(())
//! ```

mod anchor;
pub(crate) mod error;
mod fit;
mod nlp;
mod nodes;
pub(crate) mod segment;
mod split;

pub use error::ShootingError;
pub use fit::{optimize_shooting_fit, shooting_fit_point, NodeMove};
pub use nodes::{Node, NodeSide};

use super::constrained::nlp::RowAt;
use super::constrained::nlp::{free_bounds, functionals};
use super::constrained::sqp::{self, sqp, Problem, SqpEnd};
use super::constrained::{finish, report, ConstrainedPoint, ConstrainedReport};
use super::{OptimizeResult, OptimizerSettings, ThetaEntry};
use crate::constraint::{ConstraintKind, Constraints};
use crate::error::Error;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::sensitivity::GradientMethod;
use crate::setup::Setup;
use nlp::ShootingNlp;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Where the nodes are.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeTimes {
    /// K segments of equal length (a periodic problem: of the guess's period).
    Segments(usize),
    /// The interior node times `t_1 < … < t_{K−1}`, strictly inside the horizon.
    Times(Vec<f64>),
}

/// Where the nodes' states start.
#[derive(Debug, Clone, PartialEq)]
pub enum Guess {
    /// The single-shooting run of the start θ, sampled at the node times.
    SingleShooting,
    /// A table of (t, mode, states) — a previous run's `trajectory.csv`, a measured or a
    /// hand-drawn motion — interpolated linearly at the node times.
    Table(GuessTable),
}

/// An initial-guess table ([`GuessTable::read_csv`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GuessTable {
    /// The file it came from (for messages).
    pub file: String,
    /// Times, non-decreasing (a time given twice with different rows marks an event: before,
    /// then after; with equal rows, a breakpoint).
    pub t: Vec<f64>,
    /// Each row's mode, if the table gives them (else the system's start mode).
    pub mode: Option<Vec<usize>>,
    /// Each row's states.
    pub states: Vec<Vec<f64>>,
}

/// A periodic problem's closing: the last segment ends at the first firing of `guard`,
/// and the state after its reset equals the start `x0(θ)` in the states listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Closure {
    pub guard: usize,
    /// Indices of the states that must return (all of them, unless the start is charted
    /// on the guard's surface and one state follows from the others).
    pub states: Vec<usize>,
}

/// A multiple-shooting problem's own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Shooting {
    pub nodes: NodeTimes,
    pub guess: Guess,
    pub closure: Option<Closure>,
}

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

/// What a multiple-shooting run adds to [`OptimizeResult`].
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

/// Minimizes the first objective of `setup` over the optimized entries of θ and the
/// interior nodes' states, subject to `constraints` and continuity at the nodes, by the
/// constrained solver's SQP (module docs). Segments run in parallel on the current rayon
/// pool (`pool.install(|| optimize_shooting(…))` chooses the threads).
///
/// Errors: what [`super::optimize_constrained`] returns, and [`ShootingError`]: node times
/// out of order, an unusable guess table, what multiple shooting does not take yet
/// (`stop_after`, a free final time with a periodic closing, `path` constraints), and a
/// converged point whose segments end in other modes than their next nodes.
pub fn optimize_shooting<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints, shooting: &Shooting,
    settings: &OptimizerSettings, progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    let (mut nlp, t_guess) = build(setup, theta, constraints, shooting)?;
    let x_initial = nlp.start_x.clone();
    let nodes_initial = nlp.nodes.clone();
    let (run, restarts) = solve(&mut nlp, settings, progress)?;
    let x_final = run.point.x.clone();
    nlp.rebase(&x_final);
    let final_runs = nlp.runs(&x_final)?;
    if run.end == SqpEnd::Converged {
        check_modes(&nlp, &final_runs)?;
    }
    let (_, starts_initial, _) = nlp.starts(&x_initial)?;
    let defect0 = run.initial.defect();
    let defect = run.point.defect();
    let closure = nlp.closure.as_ref().map(|c| {
        let last = final_runs.segments.last().expect("a segment");
        let monodromy = final_runs.segments.iter().fold(
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
                .map(|&m| (last.end[m] - final_runs.starts[0][m]).abs())
                .fold(0.0, f64::max),
        }
    });
    let report_nodes: Vec<NodeReport> = nlp
        .nodes
        .iter()
        .enumerate()
        .map(|(k, node)| NodeReport {
            t: node.t,
            t_initial: nodes_initial[k].t,
            mode: setup.dims.mode_name(node.mode),
            mode_index: node.mode,
            mode_initial: setup.dims.mode_name(nodes_initial[k].mode),
            mode_index_initial: nodes_initial[k].mode,
            side: nodes_initial[k].side.clone(),
            state_initial: starts_initial[k].clone(),
            state_final: final_runs.starts[k].clone(),
        })
        .collect();
    let t_end = final_runs.segments.last().map_or(t_guess, |s| s.t_end);
    let report = report(
        &run.point,
        &run.lambda,
        run.kkt,
        constraints,
        GradientMethod::Direct,
        |_, _| f64::NAN,
    );
    let mut result = finish(
        run,
        settings,
        start,
        ConstrainedReport {
            t_end_initial: constraints.free_time.map(|f| f.value),
            t_end_final: (nlp.closure.is_some() || nlp.free_time).then_some(t_end),
            ..report
        },
        |x| nlp.theta_of(x),
        x_initial,
    );
    result.restarts = restarts;
    // the runs as the reports draw them: the segments end to end (gaps at the nodes)
    let report_ref = ShootingReport {
        segments: nlp.k(),
        states: vec![],
        nodes: report_nodes.clone(),
        max_defect_initial: 0.0,
        max_defect: 0.0,
        t_end,
        closure: None,
        threads: 0,
    };
    let closing = nlp.closure.clone();
    for (initial, theta) in [
        (true, result.theta_initial.clone()),
        (false, result.theta_final.clone()),
    ] {
        if let Ok(runs) =
            segment_trajectories(setup, &report_ref, closing.as_ref(), &theta, initial)
        {
            let joined = stitch(runs);
            match initial {
                true => result.initial.trajectory = joined,
                false => result.last.trajectory = joined,
            }
        }
    }
    result.shooting = Some(ShootingReport {
        segments: nlp.k(),
        states: setup.dims.states.clone(),
        nodes: report_nodes,
        max_defect_initial: defect0,
        max_defect: defect,
        t_end,
        closure,
        threads: rayon::current_num_threads(),
    });
    Ok(result)
}

/// The most SQP runs after the first (an event term moved to another segment at
/// convergence, or a node moved across an event).
const MAX_RESTARTS: usize = 50;

/// A run continued by `again` from its end point: the first start, the counts summed, the
/// histories joined (numbered on).
fn merge_runs(first: sqp::SqpRun, mut again: sqp::SqpRun) -> sqp::SqpRun {
    let offset = first.iterations;
    let mut history = first.history;
    history.extend(again.history.drain(1..).map(|mut h| {
        h.iteration += offset;
        h
    }));
    sqp::SqpRun {
        initial: first.initial,
        iterations: first.iterations + again.iterations,
        evaluations: first.evaluations + again.evaluations,
        history,
        ..again
    }
}

/// The problem the SQP sees, and the guess's horizon end.
fn build<'s, 'a, S: HybridSystem>(
    setup: &Setup<'a, S>, theta: &[ThetaEntry], constraints: &'s Constraints, shooting: &Shooting,
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
    let (nodes, t_guess) = nodes::initial_nodes(&fsetup, &values, shooting)?;
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

/// A multiple-shooting problem built once (its nodes from the guess, its event terms
/// placed) for evaluations at many points: [`ShootingEvaluator::point`].
pub struct ShootingEvaluator<'s, 'a, S: HybridSystem> {
    nlp: ShootingNlp<'s, 'a, S>,
    names: Vec<String>,
}

impl<'s, 'a, S: HybridSystem> ShootingEvaluator<'s, 'a, S> {
    /// The problem of [`optimize_shooting`] with these arguments, at its start.
    pub fn new(
        setup: &Setup<'a, S>, theta: &[ThetaEntry], constraints: &'s Constraints,
        shooting: &Shooting,
    ) -> Result<Self, Error> {
        let (nlp, _) = build(setup, theta, constraints, shooting)?;
        Ok(ShootingEvaluator {
            nlp,
            names: setup.theta_names(),
        })
    }

    /// The variables' names: the optimized entries of θ, `t_end` if it is free, then each
    /// interior node's states as `state@k`.
    pub fn variables(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .nlp
            .free
            .iter()
            .map(|&k| self.names[k].clone())
            .collect();
        if self.nlp.free_time {
            v.push("t_end".into());
        }
        for k in 1..self.nlp.k() {
            v.extend(
                self.nlp
                    .setup
                    .dims
                    .states
                    .iter()
                    .map(|s| format!("{s}@{k}")),
            );
        }
        v
    }

    /// The cost and every row with exact gradients at `values` (default: the start).
    pub fn point(&self, values: Option<&[f64]>) -> Result<ConstrainedPoint, Error> {
        let nlp = &self.nlp;
        let x = match values {
            Some(v) if v.len() == nlp.lower.len() => v.to_vec(),
            Some(v) => {
                return Err(Error::VariableCount {
                    found: v.len(),
                    variables: self.variables(),
                })
            }
            None => Problem::x0(nlp),
        };
        let p = Problem::evaluate(nlp, &x)?;
        let dims = &nlp.setup.dims;
        Ok(ConstrainedPoint::at(
            self.variables(),
            x,
            &p,
            GradientMethod::Direct,
            |r| match r.label.at {
                RowAt::Continuity { node, state } => {
                    format!("continuity[{node}].{}", dims.states[state])
                }
                _ => nlp.constraints.list[r.label.constraint].name.clone(),
            },
        ))
    }
}

/// The cost and every row — the constraints', then the continuity rows (named
/// `continuity[k].state`, node K being a periodic problem's closing) — with exact
/// gradients over the variables (the optimized entries of θ by name, then each interior
/// node's states as `state@k`) at `values` (default: the start, θ's values and the
/// guess's nodes): what the SQP sees, for a solver of your own or a check by finite
/// differences. To evaluate many points, build a [`ShootingEvaluator`] once.
pub fn shooting_point<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints, shooting: &Shooting,
    values: Option<&[f64]>,
) -> Result<ConstrainedPoint, Error> {
    ShootingEvaluator::new(setup, theta, constraints, shooting)?.point(values)
}

/// Runs one after the other as one trajectory (segments and events renumbered); where a
/// run does not start where the previous one ended, the trajectory jumps.
pub(super) fn stitch(runs: Vec<Trajectory>) -> Trajectory {
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

/// The SQP runs of one optimization: from the start (no event on a node), then again from
/// where a run ended while an event term moved to another segment at convergence or an
/// event sat on a node (the node moved across it), within the iteration budget. Returns
/// the merged run and what each restart did.
fn solve<S: HybridSystem>(
    nlp: &mut ShootingNlp<'_, '_, S>, settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<(sqp::SqpRun, Vec<String>), Error> {
    let x_initial = nlp.start_x.clone();
    // no event on a node at the start
    if let Some(x) = anchor::move_nodes(nlp, &x_initial, None)? {
        nlp.start_x = x;
        (nlp.parts, nlp.placement) = nlp.place(&nlp.start_x)?;
    }
    let mut run = sqp(
        &*nlp,
        settings.max_iters,
        settings.tol_kkt,
        settings.globalization,
        progress.clone(),
    )?;
    let mut restarts = Vec::new();
    for _ in 0..MAX_RESTARTS {
        let budget = settings.max_iters.saturating_sub(run.iterations);
        if budget == 0 {
            break;
        }
        // converged with an event term in another segment than placed: again from there;
        // ended short of convergence with an event on a node: the node moved across it
        let next = if run.end == SqpEnd::Converged {
            let (parts, placement) = nlp.place(&run.point.x)?;
            (placement != nlp.placement).then(|| {
                (nlp.parts, nlp.placement) = (parts, placement);
                restarts.push(format!(
                    "iteration {}: an event term moved to another segment; continued with the new placement",
                    run.iterations
                ));
                run.point.x.clone()
            })
        } else {
            nlp.rebase(&run.point.x);
            let before: Vec<f64> = nlp.nodes.iter().map(|n| n.t).collect();
            let events = run.point.segment_events.clone();
            let moved = anchor::move_nodes(nlp, &run.point.x, Some(&events))?;
            if let Some(x) = &moved {
                let after: Vec<String> = nlp
                    .nodes
                    .iter()
                    .zip(&before)
                    .filter(|(n, t)| n.t != **t)
                    .map(|(n, t)| format!("{t} → {}", n.t))
                    .collect();
                restarts.push(format!(
                    "iteration {}: an event on a node; node time(s) moved across it: {}",
                    run.iterations,
                    after.join(", ")
                ));
                (nlp.parts, nlp.placement) = nlp.place(x)?;
            }
            moved
        };
        let Some(x) = next else { break };
        nlp.start_x = x;
        let again = sqp(
            &*nlp,
            budget,
            settings.tol_kkt,
            settings.globalization,
            progress.clone(),
        )?;
        run = merge_runs(run, again);
    }
    Ok((run, restarts))
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
            ConstraintKind::FinalTime if constraints.free_time.is_none() => {
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

/// At the converged point, each segment ends in its next node's mode (a periodic
/// problem's last one, after the closing reset, in node 0's).
fn check_modes<S: HybridSystem>(
    nlp: &ShootingNlp<'_, '_, S>, runs: &nlp::Runs,
) -> Result<(), Error> {
    let k = nlp.k();
    for (i, seg) in runs.segments.iter().enumerate() {
        let next = if i + 1 < k {
            i + 1
        } else if nlp.closure.is_some() {
            0
        } else {
            continue;
        };
        let node = &nlp.nodes[next];
        if seg.end_mode != node.mode {
            let name = |m| nlp.setup.dims.mode_name(m);
            return Err(ShootingError::ModeMismatch {
                node: next,
                t: if next == 0 { seg.t_end } else { node.t },
                expected: name(node.mode),
                found: name(seg.end_mode),
            }
            .into());
        }
    }
    Ok(())
}

/// The segments' dense state trajectories from the nodes' states `which` of `report` (its
/// `state_initial` or `state_final`) at θ (for figures and tables: the gaps at the nodes
/// are the defects). `setup` and `closure` as given to [`optimize_shooting`].
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
