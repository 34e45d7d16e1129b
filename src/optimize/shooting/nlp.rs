//! The multiple-shooting problem as the SQP sees it (docs/guide/shooting.md): variables
//! `x = (θ_free, [T], s_1, …, s_{K−1})` — the optimized entries of θ, a free final time,
//! then every interior node's state — with the cost and the constraint functionals summed over the segments
//! ([`super::split`]), and the continuity rows
//!
//! ```text
//! c_{k+1} = x_k(t_{k+1}; s_k, θ) − s_{k+1} = 0,   k = 0 … K−2,
//! ```
//!
//! (`s_0 = x0(θ)`, the system's own start), plus for a periodic problem the closing rows
//! `x⁺_{K−1}(t_e; s_{K−1}, θ) − x0(θ) = 0` on the chosen states. Row `c_{k+1}` depends on
//! θ, `s_k`, `s_{k+1}` (and T) only, so the constraint Jacobian is block-bidiagonal in the
//! nodes plus θ's dense columns; every block comes from segment k's own direct pass, and
//! the segments run in parallel (rayon, on the caller's pool).
//!
//! The SQP keeps its Jacobian and BFGS matrix dense: at the sizes shipped (≤ ~150
//! variables) a dense QP of Clarabel and an O(n²) update cost less than one segment's run.

use super::nodes::Node;
use super::segment::{self, SegmentRun, Span};
use super::settings::Closure;
use super::split;
use crate::constraint::{ConstraintKind, Constraints};
use crate::cost::Objective;
use crate::cost::Quantity;
use crate::error::Error;
use crate::integrate::Stats;
use crate::model::HybridSystem;
use crate::optimize::constrained::nlp::{effort_hessian, Point, Row, RowAt, RowLabel};
use crate::optimize::constrained::sqp::Problem;
use crate::sensitivity::{EvalTiming, Evaluation};
use crate::setup::Setup;
use nalgebra::DMatrix;
use rayon::prelude::*;

/// An event closer to a node than this fraction of the shorter neighbouring segment is on
/// it.
pub(super) const NEAR: f64 = 0.05;
/// The problem: the base setup with one objective per functional (the cost, then each
/// constraint's functional), θ's fixed values and optimized entries, the nodes (their
/// times and modes are fixed; their states are variables) and x's bounds.
pub(crate) struct ShootingNlp<'s, 'a, S: HybridSystem> {
    pub setup: Setup<'a, S>,
    pub constraints: &'s Constraints,
    /// The functional of each constraint (its objective index in `setup`).
    pub objective_of: Vec<Option<usize>>,
    pub base: Vec<f64>,
    pub free: Vec<usize>,
    pub nodes: Vec<Node>,
    /// The horizon's end the node times are placed for (a periodic problem: the cap of
    /// its last segment). With a free final time T (the variable after θ's), node k sits
    /// at the same fraction of the horizon whatever T is: `t_k(T) = t0 + c_k (T − t0)`,
    /// `c_k = (t_k − t0)/(t_end − t0)` ([`ShootingNlp::node_time`]).
    pub t_end: f64,
    pub free_time: bool,
    pub closure: Option<Closure>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    /// The functionals as the segments' runs see them: a tracking term's reference θ
    /// widened to the started system's θ' = (p, s, c) ([`widen_references`]).
    pub functionals: Vec<Objective>,
    /// Each segment's parts of the functionals, placed at the run's start point
    /// ([`super::split`]), and where the event terms went.
    pub parts: Vec<Vec<Objective>>,
    pub placement: split::Placement,
    /// The SQP's start point.
    pub start_x: Vec<f64>,
}

/// Everything one iterate's segments give.
pub(crate) struct Runs {
    pub segments: Vec<SegmentRun>,
    pub theta: Vec<f64>,
    /// `s_k` of every node (node 0's is `x0(θ)`).
    pub starts: Vec<Vec<f64>>,
    /// `∂x0/∂θ` (nx × nθ).
    pub start_jac: DMatrix<f64>,
}

impl<S: HybridSystem> ShootingNlp<'_, '_, S> {
    pub fn nx(&self) -> usize {
        self.setup.nx()
    }

    /// The number of segments.
    pub fn k(&self) -> usize {
        self.nodes.len()
    }

    /// Where segment k runs at the horizon the nodes are placed for.
    pub fn span(&self, k: usize) -> Span<'_> {
        self.span_at(k, self.t_end)
    }

    /// Where segment k runs when the horizon ends at `t_end`.
    pub fn span_at(&self, k: usize, t_end: f64) -> Span<'_> {
        let last = k + 1 == self.k();
        Span {
            node: &self.nodes[k],
            t0: self.node_time(k, t_end),
            t1: if last {
                t_end
            } else {
                self.node_time(k + 1, t_end)
            },
            closure: self.closure.as_ref().filter(|_| last).map(|c| c.guard),
        }
    }

    /// `∂t_k/∂T = c_k`: node k's fraction of the horizon (1 for the horizon's end, k = K).
    pub fn fraction(&self, k: usize) -> f64 {
        let t0 = self.setup.t0;
        match self.nodes.get(k) {
            Some(node) => (node.t - t0) / (self.t_end - t0),
            None => 1.0,
        }
    }

    /// Node k's time when the horizon ends at `t_end` (module docs of the struct's field).
    pub fn node_time(&self, k: usize, t_end: f64) -> f64 {
        if !self.free_time || t_end == self.t_end {
            return self.nodes[k].t;
        }
        self.setup.t0 + self.fraction(k) * (t_end - self.setup.t0)
    }

    /// The first node with an event of an adjacent segment on it (`events`: each segment's
    /// event times with the horizon ending at `t_end`), as a reason to stop the SQP.
    pub fn event_on_node(&self, t_end: f64, events: &[Vec<f64>]) -> Option<String> {
        let k = self.k();
        let end = self.span_at(k - 1, t_end).t1;
        let at = |node: usize| self.node_time(node, t_end);
        for node in 1..k {
            let t = at(node);
            let left = t - at(node - 1);
            let right = if node + 1 < k { at(node + 1) } else { end } - t;
            let near = NEAR * left.min(right);
            let before = events[node - 1].last().is_some_and(|&te| t - te < near);
            let after = events[node].first().is_some_and(|&te| te - t < near);
            if before != after {
                return Some(format!("an event on node {node} (t = {t})"));
            }
        }
        None
    }

    /// A free final time T moves every node but the first (`∂t_k/∂T = c_k`): column `it` of
    /// the functionals' gradients from each segment's time rates ([`segment::TimeRates`]).
    fn add_time_column(&self, segments: &[SegmentRun], it: usize, grads: &mut [Vec<f64>]) {
        for (k, seg) in segments.iter().enumerate() {
            let (a, b) = (self.fraction(k), self.fraction(k + 1));
            for (i, g) in grads.iter_mut().enumerate() {
                g[it] += a * seg.rates.value_over_start[i] + b * seg.rates.value_over_end[i];
            }
        }
    }

    /// The horizon's end at x: the free final time, or the fixed one.
    pub fn horizon(&self, x: &[f64]) -> f64 {
        match self.free_time {
            true => x[self.free.len()],
            false => self.t_end,
        }
    }

    /// The nodes placed for the horizon of x (their fractions unchanged): after this, the
    /// node times are the ones x's segments run between.
    pub fn rebase(&mut self, x: &[f64]) {
        let t_end = self.horizon(x);
        let times: Vec<f64> = (0..self.k()).map(|k| self.node_time(k, t_end)).collect();
        for (node, t) in self.nodes.iter_mut().zip(times) {
            node.t = t;
        }
        self.t_end = t_end;
    }

    /// The position in x of node k's state (k ≥ 1): after θ's optimized entries and a free
    /// final time.
    pub fn node_at(&self, k: usize) -> usize {
        self.free.len() + usize::from(self.free_time) + (k - 1) * self.nx()
    }

    /// θ of x.
    /// The guess's point: θ's values and the nodes' states.
    pub fn guess_x(&self) -> Vec<f64> {
        let mut x: Vec<f64> = self.free.iter().map(|&k| self.base[k]).collect();
        if self.free_time {
            x.push(self.t_end);
        }
        for node in &self.nodes[1..] {
            x.extend_from_slice(&node.state);
        }
        x
    }

    pub fn theta_of(&self, x: &[f64]) -> Vec<f64> {
        let mut th = self.base.clone();
        for (i, &k) in self.free.iter().enumerate() {
            th[k] = x[i];
        }
        th
    }

    /// `x0(θ)` and `∂x0/∂θ` (one dual evaluation of the start per parameter).
    fn start(&self, theta: &[f64]) -> Result<(Vec<f64>, DMatrix<f64>), Error> {
        self.setup
            .initial_jacobian(theta)
            .map_err(|source| Error::Model {
                t: self.setup.t0,
                mode: self.setup.dims.mode_name(self.nodes[0].mode),
                source,
            })
    }

    /// θ, the nodes' states `s_k` (node 0's is `x0(θ)`) and `∂x0/∂θ` at x.
    pub fn starts(&self, x: &[f64]) -> Result<(Vec<f64>, Vec<Vec<f64>>, DMatrix<f64>), Error> {
        if x.iter().any(|v| !v.is_finite()) {
            return Err(Error::Optimizer(format!(
                "the solver proposed non-finite variables {x:?}"
            )));
        }
        let theta = self.theta_of(x);
        let (x0, start_jac) = self.start(&theta)?;
        let nx = self.nx();
        let mut starts = vec![x0];
        for k in 1..self.k() {
            let at = self.node_at(k);
            starts.push(x[at..at + nx].to_vec());
        }
        Ok((theta, starts, start_jac))
    }

    /// The segments' parts of the functionals with the event terms placed by the firings
    /// at x ([`super::split`]).
    pub fn place(&self, x: &[f64]) -> Result<(Vec<Vec<Objective>>, split::Placement), Error> {
        let functionals = &self.functionals;
        let t_end = self.horizon(x);
        let firings = if split::needs_firings(functionals) {
            let (theta, starts, _) = self.starts(x)?;
            Some(
                (0..self.k())
                    .into_par_iter()
                    .map(|k| {
                        let span = self.span_at(k, t_end);
                        segment::firings(&self.setup, span, &theta, &starts[k])
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            )
        } else {
            None
        };
        split::split(
            functionals,
            self.k(),
            firings.as_ref(),
            &self.setup.dims,
            (self.setup.t0, t_end),
        )
    }

    /// The segments' runs at x (in parallel).
    pub fn runs(&self, x: &[f64]) -> Result<Runs, Error> {
        crate::interrupt::check()?;
        let (theta, starts, start_jac) = self.starts(x)?;
        let t_end = self.horizon(x);
        let parts = self.parts.clone();
        let segments = parts
            .into_par_iter()
            .enumerate()
            .map(|(k, objectives): (usize, Vec<Objective>)| {
                let span = self.span_at(k, t_end);
                segment::run(&self.setup, span, objectives, &theta, &starts[k])
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Runs {
            segments,
            theta,
            starts,
            start_jac,
        })
    }

    /// The point of x from its runs: f, ∇f, the constraint rows and the continuity rows.
    pub fn point(&self, x: &[f64], runs: Runs) -> Result<Point, Error> {
        let nf = self.free.len();
        let sums = self.sums(&runs);
        let Runs {
            segments,
            theta,
            starts,
            start_jac,
        } = runs;
        let Sums {
            values,
            mut grads,
            grads_theta,
        } = sums;
        let at_t = self.free_time.then_some(nf);
        if let Some(it) = at_t {
            self.add_time_column(&segments, it, &mut grads);
        }
        let f = values[0];
        if !f.is_finite() || grads[0].iter().any(|v| !v.is_finite()) {
            return Err(Error::Optimizer(format!(
                "non-finite cost or gradient at θ = {theta:?}"
            )));
        }
        let mut rows = self.constraint_rows(x, &values, &grads, at_t);
        self.continuity_rows(&segments, &starts, &start_jac, at_t, &mut rows);
        let trajectory = self.end_of_run(&segments);
        let (stats, t_end) = (trajectory.stats, trajectory.t_final);
        Ok(Point {
            x: x.to_vec(),
            theta,
            t_end,
            f,
            g: grads[0].clone(),
            rows,
            evaluation: Evaluation {
                values,
                gradients: grads_theta,
                trajectory,
                stats,
                tau: None,
                timing: EvalTiming::default(),
                witnesses: vec![],
                fd: None,
            },
            segment_events: segments.iter().map(|s| s.events.clone()).collect(),
        })
        .inspect(|p| {
            let nt = usize::from(self.free_time);
            debug_assert_eq!(p.x.len(), nf + nt + (self.k() - 1) * self.nx())
        })
    }

    /// `∂/∂x` of a quantity of segment `k` with derivatives `dtheta` over θ and `dstart`
    /// over its start state: `∂q/∂θ_free + (k = 0: ∂q/∂s₀ · ∂x0/∂θ)` in θ's free slots,
    /// and `∂q/∂s_k` in node k's slots (node 0's start is `x0(θ)`, chained through it).
    fn over_x(
        &self, k: usize, start_jac: &DMatrix<f64>, dtheta: &dyn Fn(usize) -> f64,
        dstart: &dyn Fn(usize) -> f64,
    ) -> Vec<f64> {
        let nx = self.nx();
        let mut g = vec![0.0; self.lower.len()];
        for (i, &j) in self.free.iter().enumerate() {
            g[i] = dtheta(j);
            if k == 0 {
                g[i] += (0..nx).map(|m| dstart(m) * start_jac[(m, j)]).sum::<f64>();
            }
        }
        if k > 0 {
            let at = self.node_at(k);
            for m in 0..nx {
                g[at + m] = dstart(m);
            }
        }
        g
    }

    /// Every functional summed over the segments, with its gradient over x and over θ.
    fn sums(&self, runs: &Runs) -> Sums {
        let (n, nx) = (self.lower.len(), self.nx());
        let start_jac = &runs.start_jac;
        let nfun = self.setup.objectives.len();
        let mut values = vec![0.0; nfun];
        let mut grads = vec![vec![0.0; n]; nfun];
        let mut grads_theta = vec![vec![0.0; runs.theta.len()]; nfun];
        for (k, seg) in runs.segments.iter().enumerate() {
            for i in 0..nfun {
                values[i] += seg.values[i];
                let g = self.over_x(k, start_jac, &|j| seg.grad_theta[i][j], &|m| {
                    seg.grad_start[i][m]
                });
                for (a, b) in grads[i].iter_mut().zip(&g) {
                    *a += b;
                }
                for (j, a) in grads_theta[i].iter_mut().enumerate() {
                    *a += seg.grad_theta[i][j];
                    if k == 0 {
                        *a += (0..nx)
                            .map(|m| seg.grad_start[i][m] * start_jac[(m, j)])
                            .sum::<f64>();
                    }
                }
            }
        }
        Sums {
            values,
            grads,
            grads_theta,
        }
    }

    /// The rows of the problem's constraints: each constraint's functional (or the final
    /// time itself) with its gradient over x.
    fn constraint_rows(
        &self, x: &[f64], values: &[f64], grads: &[Vec<f64>], at_t: Option<usize>,
    ) -> Vec<Row> {
        let n = self.lower.len();
        let mut rows = Vec::new();
        for (ci, c) in self.constraints.list.iter().enumerate() {
            let (lower, upper) = c.limits();
            let (value, grad) = match (c.kind, self.objective_of[ci], at_t) {
                (ConstraintKind::Quantity(Quantity::FinalTime), _, Some(it)) => {
                    let mut g = vec![0.0; n];
                    g[it] = 1.0;
                    (x[it], g)
                }
                (
                    ConstraintKind::Path { .. } | ConstraintKind::Quantity(Quantity::FinalTime),
                    _,
                    _,
                )
                | (_, None, _) => {
                    unreachable!("rejected when the problem was built")
                }
                (_, Some(o), _) => (values[o], grads[o].clone()),
            };
            rows.push(Row::whole(ci, value, grad, (lower, upper)));
        }
        rows
    }

    /// The continuity rows `x_k(τ_{k+1}) − s_{k+1} = 0` of the interior nodes and, for a
    /// periodic problem, the closing rows `x_K(t_f)[m] − x0(θ)[m] = 0` (theory §9).
    fn continuity_rows(
        &self, segments: &[SegmentRun], starts: &[Vec<f64>], start_jac: &DMatrix<f64>,
        at_t: Option<usize>, rows: &mut Vec<Row>,
    ) {
        let (nx, last) = (self.nx(), self.k() - 1);
        let continuity = self.constraints.list.len();
        let mut equal = |node: usize, state: usize, value: f64, grad: Vec<f64>| {
            rows.push(Row {
                label: RowLabel {
                    constraint: continuity,
                    at: RowAt::Continuity { node, state },
                },
                value,
                grad,
                lower: 0.0,
                upper: 0.0,
            })
        };
        for (k, seg) in segments.iter().enumerate().take(last) {
            for m in 0..nx {
                let mut g = self.over_x(k, start_jac, &|j| seg.end_theta[(m, j)], &|i| {
                    seg.end_start[(m, i)]
                });
                g[self.node_at(k + 1) + m] -= 1.0;
                if let Some(it) = at_t {
                    g[it] += self.fraction(k) * seg.rates.end_over_start[m]
                        + self.fraction(k + 1) * seg.rates.end_over_end[m];
                }
                equal(k + 1, m, seg.end[m] - starts[k + 1][m], g);
            }
        }
        if let Some(c) = &self.closure {
            let seg = &segments[last];
            for &m in &c.states {
                let mut g = self.over_x(last, start_jac, &|j| seg.end_theta[(m, j)], &|i| {
                    seg.end_start[(m, i)]
                });
                for (i, &j) in self.free.iter().enumerate() {
                    g[i] -= start_jac[(m, j)];
                }
                equal(self.k(), m, seg.end[m] - starts[0][m], g);
            }
        }
    }

    /// The run's end as a trajectory without samples: the summed step statistics, the
    /// final time, state and mode of the last segment.
    fn end_of_run(&self, segments: &[SegmentRun]) -> crate::integrate::Trajectory {
        let last = &segments[self.k() - 1];
        let mut stats = Stats::default();
        for s in segments {
            stats += s.stats;
        }
        crate::integrate::Trajectory {
            segments: vec![],
            events: vec![],
            stats,
            t0: self.setup.t0,
            t_final: last.t_end,
            y_final: last.end.clone(),
            mode_final: last.end_mode,
        }
    }
}

/// The functionals summed over the segments: values, gradients over x and over θ.
struct Sums {
    values: Vec<f64>,
    grads: Vec<Vec<f64>>,
    grads_theta: Vec<Vec<f64>>,
}

/// The functionals with each tracking term's reference θ = (p, c) widened to
/// θ' = (p, 0, c) of the system started at a node (the reference run's outputs read p
/// alone; the start slots are never read).
pub(super) fn widen_references(functionals: &[Objective], np: usize, nx: usize) -> Vec<Objective> {
    use crate::cost::{Reference, Term};
    use std::sync::Arc;
    let mut widened: Vec<(*const Reference, Arc<Reference>)> = Vec::new();
    functionals
        .iter()
        .map(|o| {
            let terms = o
                .terms
                .iter()
                .map(|t| match t {
                    Term::Track {
                        output,
                        weight,
                        reference,
                    } => {
                        let key = Arc::as_ptr(reference);
                        let wide = match widened.iter().find(|(k, _)| *k == key) {
                            Some((_, w)) => w.clone(),
                            None => {
                                let mut theta = reference.theta[..np].to_vec();
                                theta.extend(std::iter::repeat_n(0.0, nx));
                                theta.extend_from_slice(&reference.theta[np..]);
                                let w = Arc::new(Reference {
                                    trajectory: reference.trajectory.clone(),
                                    theta,
                                });
                                widened.push((key, w.clone()));
                                w
                            }
                        };
                        Term::Track {
                            output: *output,
                            weight: *weight,
                            reference: wide,
                        }
                    }
                    other => other.clone(),
                })
                .collect();
            Objective::new(&o.name, terms)
        })
        .collect()
}

impl<S: HybridSystem> Problem for ShootingNlp<'_, '_, S> {
    fn bounds(&self) -> (&[f64], &[f64]) {
        (&self.lower, &self.upper)
    }
    fn x0(&self) -> Vec<f64> {
        self.start_x.clone()
    }
    fn evaluate(&self, x: &[f64]) -> Result<Point, Error> {
        let runs = self.runs(x)?;
        self.point(x, runs)
    }
    fn halt(&self, p: &Point) -> Option<String> {
        self.event_on_node(p.t_end, &p.segment_events)
    }

    fn known_hessian(&self) -> Option<DMatrix<f64>> {
        let nf = self.free.len();
        effort_hessian(&self.setup, self.lower.len(), |k| {
            self.free.iter().position(|&f| f == k).filter(|&i| i < nf)
        })
    }
}
