//! One stage's run through the real hybrid system: a plain run for the forward pass (its
//! end state, mode, firings and cost) and the run with direct sensitivities that gives its
//! linearization (docs/theory.md §11):
//!
//! ```text
//! Φ_z = ∂z_{k+1}/∂z_k = [ ∂x(τ_{k+1})/∂x_k   ∂x(τ_{k+1})/∂c_carried ]   Φ_u = [ ∂x(τ_{k+1})/∂c_new ]
//!                       [        0                   E_carried      ]         [       E_new       ]
//! ```
//!
//! The x rows are one multiple-shooting segment's run from `(τ_k, x_k)` in its mode
//! ([`segment::run`]): exact direct sensitivities (theory §2–3) whose every event applies the
//! saltation `Ξ` at the event's true time, `t_e` moving with `(x_k, c)` through
//! `τ = −(g_x S⁻ + g_θ)/ġ` — not at a step's end. The E rows pass the coefficients that
//! stage k+1 carries on. The stage cost's gradient and Gauss–Newton Hessian come from the
//! same pass ([`super::costs`]).

use super::costs::{objectives, stage_pieces, Form, Piece, Plan};
use super::layout::Layout;
use crate::control::ControlGrid;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::optimize::shooting::segment::{self, segment_setup, theta_with_start, Span};
use crate::optimize::shooting::{Node, NodeSide};
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};

/// The problem as the iLQR sees it: the setup, its stages, its cost plan and θ's bounds.
pub(crate) struct Stages<'s, 'a, S: HybridSystem> {
    pub setup: &'s Setup<'a, S>,
    pub layout: Layout,
    pub plan: Plan,
    pub grid: ControlGrid,
    /// Each θ entry's bounds (±∞ when open-ended).
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    /// Full DDP (the transitions' and costs' second derivatives by central differences of
    /// the exact first ones) rather than Gauss–Newton iLQR.
    pub second_order: bool,
    /// A periodic problem's closing guard: the last stage runs to its first firing
    /// (layout.rs, start.rs).
    pub closure: Option<usize>,
}

/// A stage's plain run: where it ends and what it costs.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// The state at its end (after the closing reset for a closing stage).
    pub x_end: Vec<f64>,
    pub mode_end: usize,
    /// The time it ended (the closing event's for a closing stage).
    pub t_end: f64,
    pub cost: f64,
    /// The events it fired.
    pub fired: usize,
    /// The pieces its cost was made of (the event terms placed by its firings).
    pub pieces: Vec<Piece>,
}

/// A stage's linearization in `(z_k, u_k)`: the transition's Jacobians and the stage
/// cost's gradient and Gauss–Newton Hessian.
#[derive(Debug, Clone)]
pub(crate) struct Linear {
    pub fz: DMatrix<f64>,
    pub fu: DMatrix<f64>,
    pub lz: DVector<f64>,
    pub lu: DVector<f64>,
    pub lzz: DMatrix<f64>,
    pub luu: DMatrix<f64>,
    pub luz: DMatrix<f64>,
    /// DDP's second-order terms: `d[i] = ∂[Φ_z Φ_u]/∂v_i` for each stage variable
    /// v = (z, u) (empty for Gauss–Newton iLQR; [`super::second`]).
    pub d: Vec<DMatrix<f64>>,
}

impl<S: HybridSystem> Stages<'_, '_, S> {
    /// The number of stages.
    pub fn n(&self) -> usize {
        self.layout.stages.len()
    }

    pub(crate) fn node(&self, k: usize, x: &[f64], mode: usize) -> Node {
        Node {
            t: self.layout.stages[k].t0,
            mode,
            state: x[..self.layout.nx].to_vec(),
            side: NodeSide::Flow,
        }
    }

    /// The closing guard if stage k is the one that runs to it.
    fn closes(&self, k: usize) -> Option<usize> {
        self.closure.filter(|_| k + 1 == self.n())
    }

    /// Where stage k runs from `node`: to its end ([`Layout::end`]), or, the closing stage,
    /// to the closing event with the horizon's end as the cap.
    fn span<'n>(&self, k: usize, node: &'n Node, theta: &[f64]) -> Span<'n> {
        let closure = self.closes(k);
        Span {
            node,
            t0: node.t,
            t1: match closure {
                Some(_) => self.setup.t_end,
                None => self.layout.end(k, theta),
            },
            closure,
        }
    }

    /// Stage k's plain run from `(x, mode)` at θ; `before` counts the event terms' firings
    /// of the earlier stages and is advanced by this one's. A stage before the closing one
    /// that fires the closing guard is an error (the rollout left the layout's window).
    pub fn plain(
        &self, k: usize, x: &[f64], mode: usize, theta: &[f64], before: &mut [usize],
    ) -> Result<Step, Error> {
        // with free parameters, stage 0 starts at x0(p) whatever x is given (start.rs)
        let start;
        let x = match k == 0 && !self.layout.params.is_empty() {
            true => {
                start = self.start(theta)?;
                start.x.as_slice()
            }
            false => x,
        };
        let node = self.node(k, x, mode);
        let span = self.span(k, &node, theta);
        let sys = StartOnSection::new(self.setup.sys(), mode).with_controls();
        let th = theta_with_start(self.core(theta), self.setup.np(), &node.state);
        // the running (and terminal) pieces first: the events placed after them do not
        // move their quadrature states, so one run serves both setups
        let first = stage_pieces(&self.plan, k, self.n(), &mut before.to_vec(), &[]);
        let traj = segment_setup(self.setup, &sys, span, objectives(&first)).simulate(&th)?;
        let fired: Vec<usize> = traj.events.iter().map(|e| e.guard).collect();
        if let (None, Some(g)) = (span.closure, self.closure) {
            if fired.contains(&g) {
                return Err(Error::Optimizer(format!(
                    "the closing event fired in stage {k}, before the closing stage {}",
                    self.n() - 1
                )));
            }
        }
        let pieces = stage_pieces(&self.plan, k, self.n(), before, &fired);
        let seg = segment_setup(self.setup, &sys, span, objectives(&pieces));
        let values = seg.objective_values(&traj, &th)?;
        let (mut x_end, mut mode_end) = (traj.y_final[..self.layout.nx].to_vec(), traj.mode_final);
        let mut cost = pieces
            .iter()
            .zip(&values)
            .map(|(p, &q)| p.form.value(q))
            .sum::<f64>()
            + self.theta_terms(k, theta).0
            + self.point_cost(k, x, mode, theta)?;
        if span.closure.is_some() {
            // the run stops at the closing event before its reset: apply it
            let e = segment::closing_event(self.setup, &traj, span.closure)?;
            let (m, y) = seg
                .reset(e.before.mode, e.guard, e.t, &e.before.y, &th)
                .map_err(|err| crate::setup::located(self.setup, e.t, e.before.mode)(err))?;
            (x_end, mode_end) = (y[..self.layout.nx].to_vec(), m);
            cost += self.closing_cost(&x_end, &self.start(theta)?);
        }
        Ok(Step {
            x_end,
            mode_end,
            t_end: traj.t_final,
            cost,
            fired: fired.len(),
            pieces,
        })
    }

    /// The cost of the terms on θ that stage k decides (and, at k = 0, of those on fixed
    /// entries), and each decided one's (position in u_k, slope, curvature).
    fn theta_terms(&self, k: usize, theta: &[f64]) -> (f64, Vec<(usize, f64, f64)>) {
        let st = &self.layout.stages[k];
        let mut value = 0.0;
        let mut parts = Vec::new();
        for &(i, form) in &self.plan.on_theta {
            let decided_here = st.new.iter().position(|&q| q == i);
            let fixed = !self.layout.free.contains(&i);
            if decided_here.is_some() || (fixed && k == 0) {
                value += form.value(theta[i]);
            }
            if let Some(p) = decided_here {
                let (s, c) = form.slope_curvature(theta[i]);
                parts.push((p, s, c));
            }
        }
        (value, parts)
    }

    /// Stage k's linearization at `(x, mode)` and θ with the pieces of its plain run
    /// (module docs); with `self.second_order`, the second-order terms of DDP beside it
    /// ([`super::second`]).
    pub fn linearize(
        &self, k: usize, x: &[f64], mode: usize, theta: &[f64], pieces: &[Piece],
    ) -> Result<Linear, Error> {
        let st = &self.layout.stages[k];
        let (nz, nu) = (self.layout.nx + st.carried.len(), st.new.len());
        let (fv, lv, mut lvv) = self.first_order(k, x, mode, theta, pieces)?;
        let mut d = vec![];
        if self.second_order {
            if let Some((dd, h)) = self.second(k, x, mode, theta, pieces, (&fv, &lv))? {
                d = dd;
                lvv = h;
            }
        }
        Ok(Linear {
            fz: fv.columns(0, nz).into_owned(),
            fu: fv.columns(nz, nu).into_owned(),
            lz: lv.rows(0, nz).into_owned(),
            lu: lv.rows(nz, nu).into_owned(),
            lzz: lvv.view((0, 0), (nz, nz)).into_owned(),
            luu: lvv.view((nz, nz), (nu, nu)).into_owned(),
            luz: lvv.view((nz, 0), (nu, nz)).into_owned(),
            d,
        })
    }

    /// The stage's first-order data in v = (x, θ[carried], θ[new]): `[Φ_z Φ_u]`, the
    /// stage cost's gradient and its Gauss–Newton Hessian ([`super::costs`]).
    pub(crate) fn first_order(
        &self, k: usize, x: &[f64], mode: usize, theta: &[f64], pieces: &[Piece],
    ) -> Result<(DMatrix<f64>, DVector<f64>, DMatrix<f64>), Error> {
        let st = &self.layout.stages[k];
        let nx = self.layout.nx;
        let (nc, nu) = (st.carried.len(), st.new.len());
        let nv = nx + nc + nu;
        // with free parameters, stage 0 starts at x0(p) whatever x is given (start.rs)
        let through = k == 0 && !self.layout.params.is_empty();
        let start = match through || self.closes(k).is_some() {
            true => Some(self.start(theta)?),
            false => None,
        };
        let x = match (&start, through) {
            (Some(s), true) => s.x.as_slice(),
            _ => x,
        };
        let node = self.node(k, x, mode);
        let span = self.span(k, &node, theta);
        let core = self.core(theta);
        let run = segment::run(self.setup, span, objectives(pieces), core, &node.state)?;
        let end = match span.closure {
            Some(_) => run.t_end,
            None => self.layout.end(k, theta),
        };
        let cols: Vec<usize> = st.carried.iter().chain(&st.new).copied().collect();
        // ∂q/∂θ_q, or ∂q/∂T for a free final time (the end's rate, segment::TimeRates)
        let over = |i: usize, q: usize| match self.layout.time {
            Some(t) if t == q => run.rates.value_over_end[i],
            _ => run.grad_theta[i][q],
        };
        let mut lv = DVector::zeros(nv);
        let mut lvv = DMatrix::zeros(nv, nv);
        for (i, p) in pieces.iter().enumerate() {
            let g = DVector::from_iterator(
                nv,
                run.grad_start[i]
                    .iter()
                    .copied()
                    .chain(cols.iter().map(|&q| over(i, q))),
            );
            let (slope, curvature) = p.form.slope_curvature(run.values[i]);
            lv += &g * slope;
            if curvature != 0.0 {
                lvv += &g * g.transpose() * curvature;
            }
            if let Form::Effort { weight } = p.form {
                self.add_gram(k, end, &cols, weight, &mut lvv);
            }
        }
        self.point_first_order(k, x, mode, core, &cols, &mut lv, &mut lvv)?;
        for (p, s, c) in self.theta_terms(k, theta).1 {
            lv[nx + nc + p] += s;
            lvv[(nx + nc + p, nx + nc + p)] += c;
        }
        if let (Some(s), Some(_)) = (&start, span.closure) {
            self.closing_first_order(&run, s, &cols, &mut lv, &mut lvv);
        }
        let (fz, fu) = self.transition(k, &run);
        let mut fv = DMatrix::zeros(fz.nrows(), nv);
        fv.columns_mut(0, nx + nc).copy_from(&fz);
        fv.columns_mut(nx + nc, nu).copy_from(&fu);
        if let (Some(s), true) = (&start, through) {
            self.through_start(&s.jac, &cols, &mut fv, &mut lv, &mut lvv);
        }
        Ok((fv, lv, lvv))
    }

    /// `(Φ_z, Φ_u)` of stage k from its run (module docs).
    fn transition(&self, k: usize, run: &segment::SegmentRun) -> (DMatrix<f64>, DMatrix<f64>) {
        let st = &self.layout.stages[k];
        let nx = self.layout.nx;
        let next: &[usize] = self
            .layout
            .stages
            .get(k + 1)
            .map_or(&[], |s| s.carried.as_slice());
        let rows = nx + next.len();
        let mut fz = DMatrix::zeros(rows, nx + st.carried.len());
        let mut fu = DMatrix::zeros(rows, st.new.len());
        fz.view_mut((0, 0), (nx, nx)).copy_from(&run.end_start);
        // ∂x_end/∂θ_q, or ẋ(T⁻) for a free final time
        let column = |q: usize| match self.layout.time {
            Some(t) if t == q => DVector::from_column_slice(&run.rates.end_over_end),
            _ => run.end_theta.column(q).into_owned(),
        };
        for (j, &q) in st.carried.iter().enumerate() {
            fz.view_mut((0, nx + j), (nx, 1)).copy_from(&column(q));
        }
        for (j, &q) in st.new.iter().enumerate() {
            fu.view_mut((0, j), (nx, 1)).copy_from(&column(q));
        }
        for (r, q) in next.iter().enumerate() {
            if let Some(j) = st.carried.iter().position(|c| c == q) {
                fz[(nx + r, nx + j)] = 1.0;
            } else if let Some(j) = st.new.iter().position(|c| c == q) {
                fu[(nx + r, j)] = 1.0;
            }
        }
        (fz, fu)
    }

    /// Adds the effort's exact Hessian `2w G_k` (per channel, [`ControlGrid::gram_interval`];
    /// over `[τ_k, T]` for the last stage of a free final time, [`ControlGrid::gram_part`])
    /// over the stage's decided coefficients `cols` (at positions `nx + …` of v).
    fn add_gram(&self, k: usize, end: f64, cols: &[usize], weight: f64, lvv: &mut DMatrix<f64>) {
        let nx = self.layout.nx;
        let (np, ncoef) = (self.setup.np(), self.grid.n_coef());
        let nodes = self.grid.nodes();
        for i in self.layout.stages[k].intervals.clone() {
            let (a, b) = (nodes[i], nodes[i + 1].min(end));
            let (idx, g) = if b == nodes[i + 1] {
                self.grid.gram_interval(i)
            } else {
                self.grid.gram_part(i, a, b - a)
            };
            for j in 0..self.grid.channels {
                let pos = |a: usize| cols.iter().position(|&q| q == np + j * ncoef + a);
                for (p, &a) in idx.iter().enumerate() {
                    for (q, &b) in idx.iter().enumerate() {
                        if let (Some(pa), Some(pb)) = (pos(a), pos(b)) {
                            lvv[(nx + pa, nx + pb)] += 2.0 * weight * g[p][q];
                        }
                    }
                }
            }
        }
    }

    /// θ without a free final time's T (what the system's runs take).
    pub(crate) fn core<'t>(&self, theta: &'t [f64]) -> &'t [f64] {
        &theta[..self.layout.time.unwrap_or(theta.len())]
    }

    /// The bounds of θ's entry q (T's lower one also keeps the last stage at least 10⁻⁶ of
    /// an interval long: layout.rs).
    pub(crate) fn bounds_of(&self, q: usize) -> (f64, f64) {
        match (self.layout.time, self.layout.stages.last()) {
            (Some(t), Some(last)) if t == q => {
                let h = (self.grid.t1 - self.grid.t0) / self.grid.intervals as f64;
                (self.lower[q].max(last.t0 + 1e-6 * h), self.upper[q])
            }
            _ => (self.lower[q], self.upper[q]),
        }
    }
}
