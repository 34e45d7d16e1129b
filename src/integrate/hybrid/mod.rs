//! The hybrid loop: integrate a mode's flow, watch every live guard for a sign change in
//! its direction on each accepted step, locate the earliest root on the dense output, cut
//! the step there, apply the reset, and restart (no FSAL stage survives a reset).
//!
//! The loop is generic over the scalar and over what is integrated ([`HybridRhs`]): the
//! state alone (`f64` for the adjoint's forward pass, dual numbers for the witness), or
//! the state with its forward sensitivities (whose event map is the jump of theory §3).

mod cut;
mod guards;
mod simulator;
mod store;

pub use simulator::Simulator;

use super::dense::DenseStep;
use super::options::{Checkpointing, EventOptions, SolverOptions};
use super::step::{try_step_dense_into, DenseAttempt};
use super::trajectory::{Ctx, ReplayWindow, Stats, Trajectory};
use super::Newton;
use super::{NewtonJacobian, OdeRhs};
use crate::error::{Error, ModelError};
use crate::model::{Dims, Scalar};

/// The guard rate along the flow and its scale, for the grazing test.
#[derive(Debug, Clone, Copy)]
pub struct GuardRate {
    /// ġ = g_t + g_x·v
    pub rate: f64,
    /// |g_t| + ‖g_x‖‖v‖
    pub scale: f64,
}

/// What the hybrid loop integrates.
pub trait HybridRhs<D: Scalar> {
    /// Length of the integrated vector.
    fn dim(&self) -> usize;
    /// The system's names and its one guard table ([`Dims::guards`](field@Dims::guards): each guard's
    /// direction and whether it is terminal), which the loop reads.
    fn dims(&self) -> &Dims;
    /// Whether guard `k` is watched in `mode` ([`crate::HybridSystem::guard_active`]).
    fn guard_active(&self, mode: usize, k: usize) -> bool;
    fn rhs(&self, ctx: &Ctx, t: D, y: &[D], dy: &mut [D]) -> Result<(), ModelError>;
    fn newton_jacobian(&self, ctx: &Ctx, t: f64, y: &[f64]) -> Result<NewtonJacobian, ModelError>;
    fn guard(&self, ctx: &Ctx, k: usize, t: D, y: &[D]) -> D;
    /// ġ = g_t + g_x v at real values (`v` a velocity of the guarded state).
    fn guard_rate(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> GuardRate;
    /// ġ alone, without the grazing test's scale (the event time's Newton refinement);
    /// by default [`Self::guard_rate`]'s rate.
    fn guard_slope(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> f64 {
        self.guard_rate(ctx, k, t, y, v).rate
    }
    /// How many leading components of the state after an event and of the slopes f⁻ and
    /// f⁺ the event tape keeps (the state before it is kept whole): all by default; a
    /// sensitivity system's jump reads the state's alone, and the state after the event
    /// starts the next segment, so its tape need not hold its sensitivity columns there
    /// (n·nθ numbers three times an event).
    fn recorded_len(&self) -> usize {
        self.dim()
    }
    /// The event map: reset (and, for sensitivity systems, the jump). Returns the next
    /// mode and the integrated vector after the event. `terminal`: the run ends here.
    fn event(
        &self, ctx: &Ctx, k: usize, t: D, y: &[D], terminal: bool,
    ) -> Result<(usize, Vec<D>), ModelError>;
}

/// A hybrid right-hand side bound to one context: the smooth ODE of a segment.
struct Bound<'a, D, H: ?Sized> {
    h: &'a H,
    ctx: Ctx,
    _d: std::marker::PhantomData<D>,
}

impl<'a, D, H: ?Sized> Bound<'a, D, H> {
    fn new(h: &'a H, ctx: Ctx) -> Self {
        Bound {
            h,
            ctx,
            _d: std::marker::PhantomData,
        }
    }
}

impl<D: Scalar, H: HybridRhs<D> + ?Sized> OdeRhs<D> for Bound<'_, D, H> {
    fn dim(&self) -> usize {
        self.h.dim()
    }
    fn eval(&self, t: D, y: &[D], dy: &mut [D]) -> Result<(), ModelError> {
        self.h.rhs(&self.ctx, t, y, dy)
    }
    fn newton_jacobian(&self, t: f64, y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        self.h.newton_jacobian(&self.ctx, t, y)
    }
}

fn finite<D: Scalar>(v: &[D]) -> bool {
    v.iter().all(|x| x.re().is_finite())
}

/// Replays a window of compacted steps of a segment in the context `ctx`: the same
/// method, tolerances (they steer the implicit method's Newton iteration), start state and
/// step sizes as the forward run, so the interpolants come out bit-identical.
pub fn replay_window<H: HybridRhs<f64> + ?Sized>(
    sys: &H, ctx: Ctx, sopt: &SolverOptions, w: &ReplayWindow<f64>, stats: &mut Stats,
) -> Result<Vec<DenseStep<f64>>, ModelError> {
    let rhs = Bound::new(sys, ctx);
    let tol = sopt.tolerances();
    let mut y = w.y0.clone();
    let mut f0 = vec![0.0; y.len()];
    rhs.eval(w.t0[0], &y, &mut f0)?;
    stats.rhs_evals += 1;
    let mut out = Vec::with_capacity(w.h.len());
    // the step's end, written in place and swapped in (the forward run's arithmetic)
    let (mut y1, mut f1) = (vec![0.0; y.len()], vec![0.0; y.len()]);
    // the Jacobian evaluated where the forward run evaluated it (before the window, or at
    // a step's start), so the replayed steps are the forward run's
    let mut newton = Newton::new();
    if let Some((tj, yj)) = &w.jacobian_at {
        newton.evaluate_at(&rhs, *tj, yj)?;
    }
    // a multistep method's history: from the window's start, then each step's
    let mut history = w.history.clone();
    for ((&t, &h), &fresh) in w.t0.iter().zip(&w.h).zip(&w.fresh_jacobian) {
        newton.replaying(fresh);
        let step = (&mut y1[..], &mut f1[..], &mut newton, history.as_deref());
        match try_step_dense_into(sopt.method, &rhs, t, &y, &f0, h, &tol, step)? {
            DenseAttempt::Done {
                dense,
                evals,
                history: after,
                ..
            } => {
                stats.rhs_evals += evals;
                stats.steps += 1;
                out.push(dense);
                history = after;
                std::mem::swap(&mut y, &mut y1);
                std::mem::swap(&mut f0, &mut f1);
            }
            DenseAttempt::NewtonFailed { .. } => return Err(ModelError::Replay { t }),
        }
    }
    stats.newton += newton.counts();
    Ok(out)
}

/// Integrates the hybrid system from `(t0, y0, mode0)` to the last breakpoint, keeping
/// all dense output. See [`simulate_hybrid_with`].
pub fn simulate_hybrid<D: Scalar, H: HybridRhs<D> + ?Sized>(
    sys: &H, y0: Vec<D>, mode0: usize, breakpoints: &[f64], sopt: &SolverOptions,
    eopt: &EventOptions,
) -> Result<Trajectory<D>, Error> {
    simulate_hybrid_with(
        sys,
        y0,
        mode0,
        breakpoints,
        sopt,
        eopt,
        Checkpointing::Never,
    )
}

/// Integrates the hybrid system from `(t0, y0, mode0)` to the last breakpoint.
/// `breakpoints` is sorted and starts at t0; the run ends at its last entry or at a
/// terminal event. `keep` says how much dense output is kept (the rest as replay windows).
/// The loop is the [`Simulator`], stepped to the end.
pub fn simulate_hybrid_with<D: Scalar, H: HybridRhs<D> + ?Sized>(
    sys: &H, y0: Vec<D>, mode0: usize, breakpoints: &[f64], sopt: &SolverOptions,
    eopt: &EventOptions, keep: Checkpointing,
) -> Result<Trajectory<D>, Error> {
    Simulator::new(sys, y0, mode0, breakpoints, sopt, eopt, keep).run()
}

/// Runs `f` on the real parts of a state and its slope (scratch on the stack for small
/// systems: the guard-rate checks at segment starts and events allocate nothing).
pub(super) fn with_real_parts<D: Scalar, R>(
    y: &[D], f: &[D], g: impl FnOnce(&[f64], &[f64]) -> R,
) -> R {
    let n = y.len();
    crate::model::scratch::with_scratch(2 * n, |buf: &mut [f64]| {
        let (yr, fr) = buf.split_at_mut(n);
        for ((a, b), (yv, fv)) in yr.iter_mut().zip(fr.iter_mut()).zip(y.iter().zip(f)) {
            *a = yv.re();
            *b = fv.re();
        }
        g(yr, fr)
    })
}
