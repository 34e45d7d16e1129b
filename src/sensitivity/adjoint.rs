//! The continuous adjoint (theory.md §4; seed 000 (18)–(25)), for every objective of a
//! vector ψ in one backward pass: `Λ = [λ_1 … λ_k]` (n×k) and `M = [μ_1 … μ_k]` (nθ×k)
//! integrated backward over each smooth segment on the forward run's dense output, with the
//! transposed jump applied to all columns at every event. The adjoint never integrates
//! across an event time.
//!
//! **Steps.** One backward pass serves every objective, so the backward step count no
//! longer multiplies with the number of objectives (the five-bar's three seed costs: 1,594
//! backward steps for all three against 4,364 for three passes; the forward run takes
//! 1,016). The step size is controlled on all of (Λ, M), with μ integrated from its
//! accumulated value so that the relative tolerance sees the gradient's own scale, and
//! each column integrated divided by its size on the segment (`column_scale`), so that
//! the absolute tolerance is relative to ‖λ_j‖ too: 1,193 backward steps on the five-bar
//! (its ∫ÿ₂ columns have ‖λ‖∞ ≈ 100), with the gradient as accurate as before. Stepping
//! on the forward mesh instead was tried and measured: 629 of its 1,016 steps failed the
//! adjoint's error test (λ needs ~1.5× the forward's steps on the five-bar at 1e-10), which
//! cost 13,672 right-hand sides against 9,604 for the adaptive pass.
//!
//! **Cost.** Each backward stage needs `Λᵀ F_X`, `Λᵀ F_u`, `Λᵀ F_p` for all k columns at
//! once ([`Setup::vjp_multi`], through the system's `flow_vjp` hook); the control
//! coefficients enter only through the few active in the current control interval, so K
//! coefficients add O(active) work per step.

use super::jump::Jump;
use super::seeds::ObjectiveSeeds;
use super::simultaneous::SimultaneousError;
use crate::error::{Error, ModelError};
use crate::integrate::hybrid::replay_window;
use crate::integrate::smooth::{integrate_smooth_from, SmoothError};
use crate::integrate::trajectory::Ctx;
use crate::integrate::{DenseStep, NewtonJacobian, OdeRhs, Segment, Stats, Trajectory};
use crate::model::HybridSystem;
use crate::setup::located;
use crate::setup::{Plain, Setup};
use nalgebra::DMatrix;
use std::cell::RefCell;

/// Where the k columns sit in the backward vector `(Λ, M_p, M_active)`.
#[derive(Debug, Clone, Copy)]
struct Layout {
    n: usize,
    np: usize,
    nu: usize,
    n_active: usize,
    k: usize,
}

impl Layout {
    fn lam(&self, j: usize) -> usize {
        j * self.n
    }
    fn mu_p(&self, j: usize) -> usize {
        self.k * self.n + j * self.np
    }
    fn mu_act(&self, j: usize, ch: usize, a: usize) -> usize {
        self.k * (self.n + self.np) + (j * self.nu + ch) * self.n_active + a
    }
    fn dim(&self) -> usize {
        self.k * (self.n + self.np + self.nu * self.n_active)
    }
}

/// x(t) on one segment for the backward pass: the kept interpolants, or the steps of a
/// compacted window replayed from its checkpoint (the last two windows cached, since the
/// backward pass walks through them in order).
struct SegmentStates<'r, 's, 'a, S: HybridSystem> {
    seg: &'r Segment<f64>,
    plain: &'r Plain<'s, 'a, S, f64>,
    ctx: Ctx,
    cache: RefCell<Vec<(usize, Vec<DenseStep<f64>>)>>,
    replay_stats: RefCell<Stats>,
    /// The dense step found last (the backward pass moves slowly through the steps).
    hint: std::cell::Cell<usize>,
}

impl<S: HybridSystem> SegmentStates<'_, '_, '_, S> {
    fn state_at(&self, t: f64, out: &mut [f64]) -> Result<(), ModelError> {
        let seg = self.seg;
        let in_tail = seg.steps.first().is_some_and(|s| t >= s.t0);
        if seg.windows.is_empty() || in_tail {
            let mut hint = self.hint.get();
            seg.state_at_hinted(t, out, &mut hint);
            self.hint.set(hint);
            return Ok(());
        }
        let t = t.clamp(seg.t_start, seg.t_end);
        let w = seg
            .windows
            .partition_point(|w| w.start() <= t)
            .saturating_sub(1);
        let mut cache = self.cache.borrow_mut();
        if !cache.iter().any(|(i, _)| *i == w) {
            let steps = replay_window(
                self.plain,
                self.ctx,
                &self.plain.setup.solver,
                &seg.windows[w],
                &mut self.replay_stats.borrow_mut(),
            )?;
            if cache.len() == 2 {
                cache.remove(0);
            }
            cache.push((w, steps));
        }
        let steps = &cache.iter().find(|(i, _)| *i == w).expect("cached").1;
        let idx = steps.partition_point(|s| s.t0 <= t).saturating_sub(1);
        steps[idx].eval(t, out);
        Ok(())
    }
}

/// The backward system on one segment for k objectives: per column j,
/// `λ̇_j = −F_Xᵀλ_j`, `μ̇_{p,j} = −F_pᵀλ_j`, `μ̇_{c,j,a} = −φ_a(t) F_uᵀλ_j` (running costs
/// are in F through the quadrature states, so `L_x` enters via `λ_z`).
struct AdjointRhs<'r, 's, 'a, S: HybridSystem> {
    setup: &'s Setup<'a, S>,
    states: SegmentStates<'r, 's, 'a, S>,
    ctx: Ctx,
    theta: &'r [f64],
    lay: Layout,
    /// Shared by every segment's backward system (allocated once a pass).
    scratch: &'r RefCell<AdjointScratch>,
    /// The time whose state the scratch's `x` holds (NaN: none yet on this segment). A
    /// DOPRI5 step evaluates its last two stages at the same time (c₆ = c₇ = 1), so one
    /// interpolation in six is a repeat.
    x_at: std::cell::Cell<f64>,
}

/// Buffers reused across the adjoint's right-hand-side calls.
#[derive(Default)]
struct AdjointScratch {
    x: Vec<f64>,
    gx: Vec<f64>,
    gu: Vec<f64>,
    gp: Vec<f64>,
    vjp: crate::setup::VjpScratch,
}

impl<'r, 's, 'a, S: HybridSystem> AdjointRhs<'r, 's, 'a, S> {
    /// The backward system on segment `seg` in layout `lay` (see [`Packing::new`]).
    fn on_segment(
        setup: &'s Setup<'a, S>, seg: &'r Segment<f64>, plain: &'r Plain<'s, 'a, S, f64>,
        theta: &'r [f64], lay: Layout, scratch: &'r RefCell<AdjointScratch>,
    ) -> Self {
        let ctx = seg.ctx();
        {
            // sized once a segment: the right-hand side only overwrites them
            let AdjointScratch { x, gx, gu, gp, .. } = &mut *scratch.borrow_mut();
            let (n, k) = (lay.n, lay.k);
            x.resize(n, 0.0);
            gx.resize(k * setup.nx(), 0.0);
            gu.resize(k * lay.nu, 0.0);
            gp.resize(k * lay.np, 0.0);
        }
        AdjointRhs {
            setup,
            states: SegmentStates {
                seg,
                plain,
                ctx,
                cache: RefCell::new(Vec::new()),
                replay_stats: RefCell::new(Stats::default()),
                hint: std::cell::Cell::new(seg.steps.len().saturating_sub(1)),
            },
            ctx,
            theta,
            lay,
            scratch,
            x_at: std::cell::Cell::new(f64::NAN),
        }
    }
}

impl<S: HybridSystem> OdeRhs<f64> for AdjointRhs<'_, '_, '_, S> {
    fn dim(&self) -> usize {
        self.lay.dim()
    }
    fn eval(&self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        let lay = self.lay;
        let (n, k) = (lay.n, lay.k);
        let (nx, np, nu) = (self.setup.nx(), lay.np, lay.nu);
        let mut guard = self.scratch.borrow_mut();
        let AdjointScratch { x, gx, gu, gp, vjp } = &mut *guard;
        if self.x_at.get() != t {
            self.states.state_at(t, x)?;
            self.x_at.set(t);
        }
        self.setup
            .vjp_multi(&self.ctx, t, x, self.theta, k, &y[..k * n], gx, gu, gp, vjp)?;
        // λ̇ = −F_Xᵀλ (the quadrature columns of F_X are zero), μ̇_p = −F_pᵀλ
        let (dlam, dmu) = dy[..k * (n + np)].split_at_mut(k * n);
        for (j, dl) in dlam.chunks_exact_mut(n).enumerate() {
            let (dx, dz) = dl.split_at_mut(nx);
            for (d, &v) in dx.iter_mut().zip(&gx[j * nx..(j + 1) * nx]) {
                *d = -v;
            }
            dz.fill(0.0);
        }
        for (d, &v) in dmu.iter_mut().zip(gp.iter()) {
            *d = -v;
        }
        if lay.n_active > 0 {
            let g = self.setup.controls.as_ref().expect("controls");
            let iv = self.setup.control_interval(&self.ctx).expect("interval");
            let act = g.active::<f64>(iv, t);
            for j in 0..k {
                for ch in 0..nu {
                    for a in 0..act.n {
                        dy[lay.mu_act(j, ch, a)] = -act.w[a] * gu[j * nu + ch];
                    }
                }
            }
        }
        Ok(())
    }
    /// All of (Λ, M): μ is a quadrature, but its integrand −F_θᵀλ also depends on x(t),
    /// u(t) and the basis weights φ(t), which λ's error test does not see (with an
    /// effort term, λ_z ≡ 1 is exact with any step while ∫φ_a·2wu dt is not). Leaving μ
    /// out made dψ/dc wrong by up to ~1e-4 relative at rtol = 1e-10 (tests/gradients.rs).
    fn error_dim(&self) -> usize {
        self.dim()
    }
    fn newton_jacobian(&self, t: f64, _y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        let mut x = vec![0.0; self.lay.n];
        self.states.state_at(t, &mut x)?;
        let j = self.setup.newton_block(&self.ctx, t, &x, self.theta)?;
        // the k columns of Λ, each with the block −F_Xᵀ, then the μ quadratures
        Ok(NewtonJacobian {
            block: j.neg_transpose(),
            copies: self.lay.k,
            rest: self.lay.k * (self.lay.np + self.lay.nu * self.lay.n_active),
        })
    }
}

fn smooth_error<S: HybridSystem>(setup: &Setup<'_, S>, mode: usize, e: SmoothError) -> Error {
    let m = setup.dims.mode_name(mode);
    match e {
        SmoothError::Model { t, source } => Error::Model { t, mode: m, source },
        SmoothError::Underflow { t, h } => Error::StepSizeUnderflow {
            t,
            mode: m,
            h,
            h_min: 16.0 * f64::EPSILON * t.abs().max(1.0),
        },
        SmoothError::NonFinite { t } => Error::NonFinite {
            t,
            mode: m,
            what: "adjoint".into(),
        },
        SmoothError::TooManySteps { t } => Error::TooManySteps {
            t,
            mode: m,
            max_steps: setup.solver.max_steps,
        },
    }
}

/// dψ_i/dθ for every objective by the adjoint, from a forward run `traj` of X at θ.
pub fn adjoint_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
) -> Result<(Vec<Vec<f64>>, Stats), Error> {
    adjoint_impl(setup, traj, theta, false, &[]).map(|(g, s, _)| (g, s))
}

/// A crossing order's composed map at a simultaneous event, replacing the sequential jumps
/// of the events it covers: `S⁺ = Ξ S⁻ + Ξ_θ` from before the first to after the last.
pub struct PieceOverride<'p> {
    /// Trajectory indices of the group's events.
    pub events: &'p [usize],
    pub xi: &'p DMatrix<f64>,
    pub xi_theta: &'p DMatrix<f64>,
}

/// dψ_i/dθ by the adjoint with the given crossing orders' composed saltations in place of
/// the recorded order's jumps at simultaneous events (theory §7: the gradient of one piece
/// of a nonsmooth ψ). With no overrides this is [`adjoint_gradients`].
pub fn adjoint_piece_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], overrides: &[PieceOverride<'_>],
) -> Result<Vec<Vec<f64>>, Error> {
    adjoint_impl(setup, traj, theta, false, overrides).map(|(g, _, _)| g)
}

/// The parameter adjoint μ_p(t) of every objective along the backward pass (the seed's
/// λ_Γ(t), which reaches dψ/dp at t0 when x0 does not depend on p), at every accepted
/// step: `(t, μ_p)` from tf down to t0.
pub type MuHistory = Vec<(f64, Vec<f64>)>;

/// Gradients together with the μ_p(t) histories of [`adjoint_gradients`].
pub fn adjoint_with_history<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
) -> Result<(Vec<Vec<f64>>, Vec<MuHistory>), Error> {
    adjoint_impl(setup, traj, theta, true, &[]).map(|(g, _, h)| (g, h))
}

/// Backward across the events at a segment's end, every column at once: the transposed
/// jumps of the recorded order, or the transpose of a piece's composed map.
fn across_events(
    seg: &Segment<f64>, jump: &dyn Fn(usize) -> Result<Jump, Error>, seeds: &ObjectiveSeeds,
    overrides: &[PieceOverride<'_>], lam: &mut DMatrix<f64>, mu: &mut DMatrix<f64>,
) -> Result<(), Error> {
    let over = overrides
        .iter()
        .find(|o| !o.events.is_empty() && o.events == seg.end_events.as_slice());
    if let Some(o) = over {
        if o.events.iter().any(|&i| seeds.has_event_cost(i)) {
            return Err(SimultaneousError::EventCost {
                guard: None,
                t: seg.t_end,
            }
            .into());
        }
        *mu += o.xi_theta.tr_mul(lam);
        *lam = o.xi.tr_mul(lam);
        return Ok(());
    }
    for &i in seg.end_events.iter().rev() {
        jump(i)?.adjoint_columns(lam, mu, seeds.events[i].iter().map(Option::as_ref));
    }
    Ok(())
}

/// The scale a column `(λ_j, μ_j)` is integrated in on a segment: `max(1, rms(λ_j))`
/// (`rms(λ) = ‖λ‖₂/√n`, the integrator's own error norm) rounded up to a power of 2, so
/// that dividing by it and multiplying back is exact. The backward system is linear and
/// homogeneous in each column, so `(λ_j, μ_j)/s` solves it too; the error test then holds
/// λ_j to `atol·s + rtol·|λ_j|`: the absolute tolerance is relative to the adjoint's own
/// size (norm-wise), never tighter than `atol`. Without it the error test's floor depends
/// on the units of ψ (ψ and 100·ψ took different steps for the same relative gradient
/// accuracy): the five-bar's ∫ÿ₂ columns, with ‖λ‖∞ ≈ 100, took 1,594 backward steps
/// against the forward's 1,016; with it 1,193, the gradient closer to a 1e-12 reference
/// than before (index 2: 9.1e-8 of ‖∇ψ‖, was 9.3e-8). Scaling by ‖λ_j‖∞ instead took
/// 1,001 steps (8.8e-8 from the reference) but moved the adjoint to 1.003e-7 of the
/// central FD witness, whose own error is 1.9e-7 (tests/multibody_index2.rs bounds
/// FD vs adjoint by 1e-7).
fn column_scale(lam: &[f64]) -> f64 {
    let rms = (lam.iter().map(|v| v * v).sum::<f64>() / lam.len().max(1) as f64).sqrt();
    let m = rms.max(1.0);
    let mut s = 2f64.powi(m.log2().ceil().min(1023.0) as i32);
    if s < m {
        s *= 2.0;
    }
    if s.is_finite() {
        s
    } else {
        1.0
    }
}

fn adjoint_impl<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], record: bool,
    overrides: &[PieceOverride<'_>],
) -> Result<(Vec<Vec<f64>>, Stats, Vec<MuHistory>), Error> {
    let (nx, np) = (setup.nx(), setup.np());
    let k = setup.objectives.len();
    if !traj.is_replayable() {
        return Err(Error::Internal(
            "the adjoint needs a forward run that kept its dense output or replay windows \
             (a `Checkpointing::Discard` run keeps neither)"
                .into(),
        ));
    }
    let mut stats = Stats::default();
    // each event's jump is built when the backward pass crosses it (and for the seeds of
    // the events that costs name), never all kept: n × n each, they would grow the
    // memory with the event count
    let jump = |i: usize| {
        let e = &traj.events[i];
        Jump::from_record(setup, traj, i, theta).map_err(located(setup, e.t, e.mode_before()))
    };
    let seeds = ObjectiveSeeds::build(setup, traj, theta, jump)?;
    let (_, dx0) = crate::model::initial_jacobian(setup.sys(), nx, &theta[..np])
        .map_err(located(setup, setup.t0, 0))?;
    if k == 0 {
        return Ok((Vec::new(), stats, Vec::new()));
    }
    let mut lam = DMatrix::from_columns(&seeds.lambda_tf);
    let mut mu = DMatrix::from_columns(&seeds.mu_tf);
    let mut histories: Vec<MuHistory> = vec![Vec::new(); k];
    if record {
        for (j, h) in histories.iter_mut().enumerate() {
            h.push((traj.t_final, mu.column(j).as_slice()[..np].to_vec()));
        }
    }
    let mut h_carry: Option<f64> = None;
    let plain = Plain::new(setup, theta.to_vec());
    let scratch = RefCell::new(AdjointScratch::default());
    for (si, seg) in traj.segments.iter().enumerate().rev() {
        across_events(seg, &jump, &seeds, overrides, &mut lam, &mut mu)?;
        let packing = Packing::new(setup, seg, &lam);
        let lay = packing.lay;
        let rhs = AdjointRhs::on_segment(setup, seg, &plain, theta, lay, &scratch);
        let mut rec = |t: f64, y: &[f64]| {
            for (j, h) in histories.iter_mut().enumerate() {
                let m = &y[lay.mu_p(j)..lay.mu_p(j) + np];
                h.push((t, m.iter().map(|&v| v * packing.scale[j]).collect()));
            }
        };
        let observer: Option<&mut dyn FnMut(f64, &[f64])> =
            if record { Some(&mut rec) } else { None };
        let (y1, h, _) = integrate_smooth_from(
            &rhs,
            seg.t_end,
            seg.t_start,
            &packing.pack(&lam, &mu),
            None,
            &setup.solver,
            h_carry,
            &mut stats,
            observer,
        )
        .map_err(|e| smooth_error(setup, seg.mode, e))?;
        h_carry = Some(h);
        let replayed = *rhs.states.replay_stats.borrow();
        stats.replayed_steps += replayed.steps;
        stats.rhs_evals += replayed.rhs_evals;
        packing.unpack(&y1, &mut lam, &mut mu);
        // data samples read at this segment's start: λ(t_i) = λ(t_i⁺) + c_X, μ += c_θ
        for (o, (cx, ct)) in seeds.segment_starts.get(&si).into_iter().flatten() {
            lam.column_mut(*o).axpy(1.0, cx, 1.0);
            mu.column_mut(*o).axpy(1.0, ct, 1.0);
        }
    }
    let out = initial_gradients(setup, theta, &dx0, &lam, &mu);
    Ok((out, stats, histories))
}

/// `dψ_j/dθ = λ_j(t0)ᵀ dX0/dθ + μ_j(t0)` plus the objectives' direct parameter terms
/// (theory.md §4, the adjoint's value at t0).
fn initial_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], dx0: &DMatrix<f64>, lam: &DMatrix<f64>, mu: &DMatrix<f64>,
) -> Vec<Vec<f64>> {
    let (nx, np) = (setup.nx(), setup.np());
    let mut out = Vec::with_capacity(setup.objectives.len());
    for (j, obj) in setup.objectives.iter().enumerate() {
        let mut g = mu.column(j).as_slice().to_vec();
        for (c, gc) in g.iter_mut().enumerate().take(np) {
            for i in 0..nx {
                *gc += dx0[(i, c)] * lam[(i, j)];
            }
        }
        for term in &obj.terms {
            term.add_parameter_gradient(theta, &mut g);
        }
        out.push(g);
    }
    out
}

/// How one segment's columns `(λ_j, μ_j)` sit in the backward vector: each divided by its
/// scale ([`column_scale`]; exact, a power of 2), μ's control part only for the
/// coefficients active on the segment. μ starts from its accumulated value, so that the
/// relative tolerance sees the gradient's own scale (integrating each segment's increment
/// from 0 held it to the absolute tolerance alone).
struct Packing {
    lay: Layout,
    np: usize,
    scale: Vec<f64>,
    /// The active control coefficients: (channel, slot, θ's column).
    act: Vec<(usize, usize, usize)>,
}

impl Packing {
    /// The layout of segment `seg` for every objective, sized for the control
    /// coefficients active there (the grid nodes are breakpoints, so the same ones all
    /// along the segment), and each column's scale from Λ at the segment's end.
    fn new<S: HybridSystem>(setup: &Setup<'_, S>, seg: &Segment<f64>, lam: &DMatrix<f64>) -> Self {
        let ctx = seg.ctx();
        let mut act = Vec::new();
        let mut n_active = 0;
        if let (Some(g), Some(iv)) = (&setup.controls, setup.control_interval(&ctx)) {
            let a = g.active::<f64>(iv, seg.t_start);
            n_active = a.n;
            for ch in 0..setup.nu() {
                for slot in 0..a.n {
                    act.push((ch, slot, setup.control_column(ch, a.idx[slot])));
                }
            }
        }
        let k = lam.ncols();
        Packing {
            lay: Layout {
                n: setup.n(),
                np: setup.np(),
                nu: setup.nu(),
                n_active,
                k,
            },
            np: setup.np(),
            scale: (0..k)
                .map(|j| column_scale(lam.column(j).as_slice()))
                .collect(),
            act,
        }
    }

    /// `(Λ, M)` → the backward vector, each column divided by its scale.
    fn pack(&self, lam: &DMatrix<f64>, mu: &DMatrix<f64>) -> Vec<f64> {
        let lay = self.lay;
        let mut y = vec![0.0; lay.dim()];
        for j in 0..lay.k {
            let inv = 1.0 / self.scale[j];
            for (v, &l) in y[lay.lam(j)..lay.lam(j) + lay.n]
                .iter_mut()
                .zip(lam.column(j).iter())
            {
                *v = l * inv;
            }
            for q in 0..self.np {
                y[lay.mu_p(j) + q] = mu[(q, j)] * inv;
            }
            for &(ch, slot, col) in &self.act {
                y[lay.mu_act(j, ch, slot)] = mu[(col, j)] * inv;
            }
        }
        y
    }

    /// The backward vector → `(Λ, M)`, each column multiplied back by its scale.
    fn unpack(&self, y: &[f64], lam: &mut DMatrix<f64>, mu: &mut DMatrix<f64>) {
        let lay = self.lay;
        for j in 0..lay.k {
            let s = self.scale[j];
            for (l, &v) in lam
                .column_mut(j)
                .iter_mut()
                .zip(&y[lay.lam(j)..lay.lam(j) + lay.n])
            {
                *l = v * s;
            }
            for q in 0..self.np {
                mu[(q, j)] = y[lay.mu_p(j) + q] * s;
            }
            for &(ch, slot, col) in &self.act {
                mu[(col, j)] = y[lay.mu_act(j, ch, slot)] * s;
            }
        }
    }
}
