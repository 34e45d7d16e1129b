//! The multiple-shooting fit as the generalized Gauss–Newton method sees it
//! (docs/guide/shooting.md, "Fitting data by multiple shooting"; Bock 1987): variables
//! `w = (θ_free, s^1_1 … s^1_{K_1−1}, s^2_1 …)` — the optimized entries of θ, shared by
//! every experiment, then each experiment's interior node states — with
//!
//! ```text
//! r = (r^e_k)        the residuals of the samples in [t_k, t_{k+1}) read on segment k's run
//! c^e_{k+1} = x^e_k(t_{k+1}; s^e_k, θ) − s^e_{k+1} = 0,   k = 0 … K_e − 2
//! ```
//!
//! (`s^e_0 = x0(θ^e)`: segment 0 runs the experiment's own setup on `[t_0, t_1]`; the last
//! segment's samples include `t_end`). A segment's residuals depend on θ and its own start
//! `s_k` only, and its end state likewise, so `J` is block-diagonal in the nodes and `C`
//! block-bidiagonal, plus θ's dense columns; every block is exact, from the segment's one
//! direct pass (`sensitivity::residuals` on the system started at `s_k`, θ' = (p, s_k, c)).
//! All segments of all experiments run in parallel.

use super::super::nodes::Node;
use super::super::segment::{segment_setup, theta_with_start, Span};
use crate::cost::{Objective, Samples, Term};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::optimize::least_squares::{ConstrainedResiduals, Linearization};
use crate::sensitivity::{residuals, ResidualRun};
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use std::sync::Arc;

/// One experiment of the fit with its nodes placed.
pub(super) struct Leg<'r, 'a, S: HybridSystem> {
    pub name: String,
    pub setup: &'r Setup<'a, S>,
    /// The experiment's θ (its own fixed values; the free entries are the iterate's).
    pub theta: Vec<f64>,
    /// Node 0 is the system's start; the modes are fixed for the whole fit.
    pub nodes: Vec<Node>,
    /// Each segment's least-squares objective: the data terms restricted to its samples
    /// (the first also holds the `parameter_squared` terms, on θ itself).
    pub parts: Vec<Objective>,
    /// Where node 1's state starts in w.
    pub offset: usize,
}

impl<S: HybridSystem> Leg<'_, '_, S> {
    /// Segment k's time span `[t_k, t_{k+1}]` (the last ends at the horizon's end).
    pub fn span(&self, k: usize) -> (f64, f64) {
        let t1 = match self.nodes.get(k + 1) {
            Some(n) => n.t,
            None => self.setup.t_end,
        };
        (self.nodes[k].t, t1)
    }
}

/// The stacked problem over every experiment.
pub(super) struct ShootingFit<'r, 'a, S: HybridSystem> {
    pub legs: Vec<Leg<'r, 'a, S>>,
    /// The optimized entries of θ (their indices), the first variables of w.
    pub free: Vec<usize>,
    /// θ index → position in w (None: fixed).
    pub position: Vec<Option<usize>>,
    /// The number of variables.
    pub n: usize,
}

/// Segment k's objective: the samples of each data term of `objective` in `[lo, hi)`
/// (`[lo, hi]` for the last segment) and, for the first segment, the parameter terms.
pub(super) fn segment_objective(
    objective: &Objective, lo: f64, hi: f64, k: usize, last: bool,
) -> Objective {
    let mut terms = Vec::new();
    for t in &objective.terms {
        match t {
            Term::Data { samples, weight } => {
                let keep: Vec<usize> = (0..samples.times.len())
                    .filter(|&i| {
                        let s = samples.times[i];
                        s >= lo && (s < hi || (last && s <= hi))
                    })
                    .collect();
                if keep.is_empty() {
                    continue;
                }
                let sub = Samples {
                    source: samples.source.clone(),
                    times: keep.iter().map(|&i| samples.times[i]).collect(),
                    channels: samples.channels.clone(),
                    cells: keep.iter().map(|&i| samples.cells[i].clone()).collect(),
                };
                terms.push(Term::Data {
                    samples: Arc::new(sub),
                    weight: *weight,
                });
            }
            t if t.is_parameter_squared() && k == 0 => terms.push(t.clone()),
            _ => {}
        }
    }
    Objective::new(&objective.name, terms)
}

impl<S: HybridSystem> ShootingFit<'_, '_, S> {
    /// Experiment `e`'s θ at w.
    pub fn theta_of(&self, e: usize, w: &[f64]) -> Vec<f64> {
        let mut th = self.legs[e].theta.clone();
        for (i, &k) in self.free.iter().enumerate() {
            th[k] = w[i];
        }
        th
    }

    /// Node k's state of experiment e at w (k ≥ 1).
    pub fn node_state<'w>(&self, e: usize, k: usize, w: &'w [f64]) -> &'w [f64] {
        let nx = self.legs[e].setup.nx();
        let at = self.legs[e].offset + (k - 1) * nx;
        &w[at..at + nx]
    }

    /// Segment k of experiment e at θ and its start `start`: residuals, end state and,
    /// with `jacobian`, their Jacobians over θ (segment 0) or θ' = (p, s_k, c).
    pub fn segment(
        &self, e: usize, k: usize, theta: &[f64], start: &[f64], jacobian: bool,
    ) -> Result<ResidualRun, Error> {
        let leg = &self.legs[e];
        let (t0, t1) = leg.span(k);
        let objective = leg.parts[k].clone();
        if k == 0 {
            let mut s = leg.setup.with_objectives(vec![objective]);
            s.t_end = t1;
            s.extra_breakpoints.retain(|&t| t < t1);
            return residuals(&s, theta, jacobian);
        }
        let node = &leg.nodes[k];
        let sys = StartOnSection::new(leg.setup.sys(), node.mode).with_controls();
        let span = Span {
            node,
            t0,
            t1,
            closure: None,
        };
        let s = segment_setup(leg.setup, &sys, span, vec![objective]);
        residuals(
            &s,
            &theta_with_start(theta, leg.setup.np(), start),
            jacobian,
        )
    }

    /// Every segment of every experiment at w (in parallel), in order.
    pub fn runs(&self, w: &[f64], jacobian: bool) -> Result<Vec<ResidualRun>, Error> {
        crate::interrupt::check()?;
        if w.iter().any(|v| !v.is_finite()) {
            return Err(Error::Optimizer(format!(
                "the solver proposed non-finite variables {w:?}"
            )));
        }
        let thetas: Vec<Vec<f64>> = (0..self.legs.len()).map(|e| self.theta_of(e, w)).collect();
        let tasks: Vec<(usize, usize)> = self
            .legs
            .iter()
            .enumerate()
            .flat_map(|(e, l)| (0..l.nodes.len()).map(move |k| (e, k)))
            .collect();
        tasks
            .par_iter()
            .map(|&(e, k)| {
                let start: &[f64] = match k {
                    0 => &[],
                    _ => self.node_state(e, k, w),
                };
                self.segment(e, k, &thetas[e], start, jacobian)
            })
            .collect()
    }

    /// The column in w of column `j` of segment k's Jacobian (over θ for k = 0, over
    /// θ' = (p, s_k, c) otherwise); `None` for a fixed entry of θ.
    fn column(&self, e: usize, k: usize, j: usize) -> Option<usize> {
        let leg = &self.legs[e];
        let (np, nx) = (leg.setup.np(), leg.setup.nx());
        if k == 0 || j < np {
            return self.position[j];
        }
        if j < np + nx {
            return Some(leg.offset + (k - 1) * nx + (j - np));
        }
        self.position[j - nx]
    }

    /// The number of continuity rows.
    pub fn constraints(&self) -> usize {
        self.legs
            .iter()
            .map(|l| (l.nodes.len() - 1) * l.setup.nx())
            .sum()
    }

    /// r, c and their Jacobians (module docs) from the runs at w.
    pub fn assemble(&self, w: &[f64], runs: &[ResidualRun]) -> Linearization {
        let m: usize = runs.iter().map(|r| r.r.len()).sum();
        let p = self.constraints();
        let jacobian = runs.iter().all(|r| r.jacobian.is_some());
        let mut r = DVector::zeros(m);
        let mut c = DVector::zeros(p);
        let mut jr = jacobian.then(|| DMatrix::zeros(m, self.n));
        let mut jc = jacobian.then(|| DMatrix::zeros(p, self.n));
        let (mut row, mut crow, mut at) = (0, 0, 0);
        for (e, leg) in self.legs.iter().enumerate() {
            let nx = leg.setup.nx();
            for k in 0..leg.nodes.len() {
                let run = &runs[at];
                at += 1;
                let mk = run.r.len();
                r.rows_mut(row, mk).copy_from(&run.r);
                if let (Some(jr), Some(rj)) = (jr.as_mut(), run.jacobian.as_ref()) {
                    for j in 0..rj.ncols() {
                        if let Some(col) = self.column(e, k, j) {
                            for i in 0..mk {
                                jr[(row + i, col)] += rj[(i, j)];
                            }
                        }
                    }
                }
                row += mk;
                if k + 1 == leg.nodes.len() {
                    continue;
                }
                let next = self.node_state(e, k + 1, w);
                for i in 0..nx {
                    c[crow + i] = run.x_final[i] - next[i];
                }
                if let (Some(jc), Some(xj)) = (jc.as_mut(), run.x_final_jacobian.as_ref()) {
                    for j in 0..xj.ncols() {
                        if let Some(col) = self.column(e, k, j) {
                            for i in 0..nx {
                                jc[(crow + i, col)] += xj[(i, j)];
                            }
                        }
                    }
                    for i in 0..nx {
                        jc[(crow + i, leg.offset + k * nx + i)] -= 1.0;
                    }
                }
                crow += nx;
            }
        }
        Linearization { r, c, jr, jc }
    }

    /// The rows of r and of c that each experiment owns: `(residuals, constraints)`.
    pub fn ranges(
        &self, runs: &[ResidualRun],
    ) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
        let (mut row, mut crow, mut at) = (0, 0, 0);
        self.legs
            .iter()
            .map(|leg| {
                let k = leg.nodes.len();
                let m: usize = runs[at..at + k].iter().map(|r| r.r.len()).sum();
                at += k;
                let p = (k - 1) * leg.setup.nx();
                let out = (row..row + m, crow..crow + p);
                row += m;
                crow += p;
                out
            })
            .collect()
    }
}

impl<S: HybridSystem> ConstrainedResiduals for ShootingFit<'_, '_, S> {
    type Error = Error;

    fn evaluate(&self, w: &[f64], jacobian: bool) -> Result<Linearization, Error> {
        let runs = self.runs(w, jacobian)?;
        Ok(self.assemble(w, &runs))
    }
}
