//! The stepping simulator: the hybrid loop as an object. Each [`Simulator::step`] takes one
//! step attempt (or passes a breakpoint) and says what happened as a [`StepOutcome`]:
//! the step was accepted, rejected (and why), ended at an event group, closed a
//! breakpoint interval, or the run is finished. [`Simulator::run`] steps to the end.
//!
//! Within a segment (one mode, one breakpoint interval) the simulator plans a step clamped
//! to the breakpoint, tries it, applies the error test, scans the guards on the accepted
//! step ([`super::guards`]), and at a crossing cuts the step at the event
//! ([`super::cut`]), checks for grazing, and applies the event group in crossing order.

use super::cut::{cut_step, StepStart};
use super::guards::{event_group, init_watches, scan_guards, GuardScan, Watch, SUBSAMPLES};
use super::store::Store;
use super::{finite, with_real_parts, Bound, Ctx, HybridRhs};
use crate::error::{Error, ModelError};
use crate::integrate::controller::{initial_step, Controller};
use crate::integrate::dense::DenseStep;
use crate::integrate::ode::Tolerances;
use crate::integrate::options::{Checkpointing, EventOptions, SolverOptions};
use crate::integrate::step::{try_step_dense_into, DenseAttempt};
use crate::integrate::trajectory::{EventRecord, EventSide, Segment, Stats, Trajectory};
use crate::integrate::BdfHistory;
use crate::integrate::Newton;
use crate::model::Scalar;

/// What one [`Simulator::step`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepOutcome {
    /// A step `[t − h, t]` was accepted; the segment goes on.
    Accepted { t: f64, h: f64 },
    /// A step of length `h` from `t` was rejected and will be retried, shorter.
    Rejected { t: f64, h: f64, reason: Rejection },
    /// The step ended at an event group at `t`: events `first..first + count` of the tape
    /// were applied (`terminal`: the last one ended the run).
    Events {
        t: f64,
        first: usize,
        count: usize,
        terminal: bool,
    },
    /// The run reached the breakpoint `t` (the end of a control interval or the horizon).
    Breakpoint { t: f64 },
    /// Nothing left to integrate.
    Finished,
}

/// Why a step was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The weighted local error exceeded 1.
    ErrorTest,
    /// The step produced non-finite values.
    NonFinite,
    /// The implicit stage equations did not converge.
    NewtonFailed,
    /// A guard masked on its surface left it on the side it crosses to (it crossed back
    /// within a sub-interval, or sticks): retried with a step below the sampling interval.
    Sticking { guard: usize },
}

/// The segment being integrated.
struct Open<D> {
    ctx: Ctx,
    seg: Segment<D>,
    /// The slope at the current point.
    f0: Vec<D>,
    /// The next step size to try.
    h: f64,
    ctrl: Controller,
    /// The last attempt was rejected for non-finite values (so that running out of step
    /// size is reported as what caused it).
    rejected_non_finite: bool,
    /// A multistep method's history (`None` at the segment's start: it restarts there).
    history: Option<Box<BdfHistory<D>>>,
}

/// The next attempt: its length (as the scalar: the last step of an interval reaches the
/// breakpoint exactly), whether it is the interval's last, and the smallest step at `t`.
struct StepPlan<D> {
    hd: D,
    last: bool,
    h_min: f64,
}

/// The end of an accepted step.
struct StepEnd<D> {
    t1: D,
    y1: Vec<D>,
    f1: Vec<D>,
    dense: DenseStep<D>,
    /// The step's length and the controller's factor for the next one.
    h_used: f64,
    fac: f64,
    /// A multistep method's history after the step.
    history: Option<Box<BdfHistory<D>>>,
}

/// The hybrid loop over the breakpoint intervals of `[t0, t_end]`, one step at a time.
pub struct Simulator<'a, D: Scalar, H: HybridRhs<D> + ?Sized> {
    sys: &'a H,
    breakpoints: &'a [f64],
    sopt: &'a SolverOptions,
    eopt: &'a EventOptions,
    tol: Tolerances,
    t0: f64,
    t: D,
    y: Vec<D>,
    mode: usize,
    /// Index of the next breakpoint.
    bp: usize,
    h_next: Option<f64>,
    /// The segment being integrated, boxed: it is taken out and put back at every step
    /// attempt, and a box moves as a pointer (the segment is ~250 bytes).
    open: Option<Box<Open<D>>>,
    /// Spare end-of-step buffers (y1, f1) that the stepper writes into; an accepted step
    /// swaps them with the state and slope, so a step allocates only its interpolant.
    spare: (Vec<D>, Vec<D>),
    /// The capacity a new segment's step list starts with: the last closed segment's
    /// step count + 1 (no regrowth of the list when consecutive segments are alike).
    seg_capacity: usize,
    watches: Vec<Watch>,
    saved_watches: Vec<Watch>,
    need_watch_init: bool,
    /// Where the watches were last set up (t0 or the last event): a guard that sticks to
    /// its surface stuck there.
    t_watch_init: f64,
    /// f⁺ of the last event group, in its context: the next segment's starting slope.
    pending_f0: Option<(Ctx, Vec<D>)>,
    terminated: bool,
    store: Store<D>,
    events: Vec<EventRecord<D>>,
    stats: Stats,
    group_id: usize,
    buf: Vec<f64>,
    /// The implicit methods' Jacobian and factors, carried across steps.
    newton: Newton,
}

impl<'a, D: Scalar, H: HybridRhs<D> + ?Sized> Simulator<'a, D, H> {
    /// A simulation from `(t0, y0, mode0)` over `breakpoints` (sorted, starting at t0 and
    /// ending at the horizon; at least two entries for a non-empty run). `keep` says how
    /// much dense output is kept for the backward pass.
    pub fn new(
        sys: &'a H, y0: Vec<D>, mode0: usize, breakpoints: &'a [f64], sopt: &'a SolverOptions,
        eopt: &'a EventOptions, keep: Checkpointing,
    ) -> Self {
        let t0 = breakpoints.first().copied().unwrap_or(0.0);
        let n = sys.dim();
        Simulator {
            sys,
            breakpoints,
            sopt,
            eopt,
            tol: sopt.tolerances(),
            t0,
            t: D::from(t0),
            y: y0,
            mode: mode0,
            bp: 1,
            h_next: None,
            open: None,
            spare: (vec![D::zero(); n], vec![D::zero(); n]),
            seg_capacity: 16,
            watches: Vec::new(),
            saved_watches: Vec::new(),
            need_watch_init: true,
            t_watch_init: t0,
            pending_f0: None,
            terminated: false,
            store: Store::new(keep),
            events: Vec::new(),
            stats: Stats::default(),
            group_id: 0,
            buf: vec![0.0; n],
            newton: Newton::new(),
        }
    }

    /// The work so far.
    pub fn stats(&self) -> Stats {
        Stats {
            newton: self.newton.counts(),
            ..self.stats
        }
    }
    /// Whether the run is over (horizon reached or a terminal event).
    pub fn is_finished(&self) -> bool {
        self.open.is_none() && (self.terminated || self.bp >= self.breakpoints.len())
    }

    /// Steps to the end and returns the trajectory.
    pub fn run(mut self) -> Result<Trajectory<D>, Error> {
        while self.step()? != StepOutcome::Finished {}
        Ok(self.into_trajectory())
    }

    /// The trajectory so far (an unfinished segment is closed at the current time).
    pub fn into_trajectory(mut self) -> Trajectory<D> {
        if let Some(mut open) = self.open.take() {
            open.seg.t_end = self.t;
            self.store.push(open.seg);
        }
        let stats = self.stats();
        Trajectory {
            segments: self.store.segments,
            events: self.events,
            stats,
            t0: self.t0,
            t_final: self.t,
            y_final: self.y,
            mode_final: self.mode,
        }
    }

    /// One step attempt, or the passage of a breakpoint; see [`StepOutcome`].
    pub fn step(&mut self) -> Result<StepOutcome, Error> {
        let open = match self.open.take() {
            Some(open) => open,
            None if self.is_finished() => return Ok(StepOutcome::Finished),
            None if self.event_on_breakpoint() => return Ok(self.pass_breakpoint()),
            None => self.open_segment()?,
        };
        self.attempt(open)
    }

    fn model_error(&self, t: f64, mode: usize) -> impl Fn(ModelError) -> Error + '_ {
        move |e| Error::Model {
            t,
            mode: self.sys.dims().mode_name(mode),
            source: e,
        }
    }

    fn non_finite(&self, t: f64, mode: usize, what: String) -> Error {
        Error::NonFinite {
            t,
            mode: self.sys.dims().mode_name(mode),
            what,
        }
    }

    /// Whether an event landed on the next breakpoint, leaving nothing of its interval.
    fn event_on_breakpoint(&self) -> bool {
        let t = self.t.re();
        self.breakpoints[self.bp] - t <= 16.0 * f64::EPSILON * t.abs().max(1.0)
    }

    /// Moves past a breakpoint the run already stands on. The derivative part of t is
    /// kept (a dual run's event time carries dt_e/dθ, which the flow after the event must
    /// see); only the real part snaps to the breakpoint.
    fn pass_breakpoint(&mut self) -> StepOutcome {
        let tb = self.breakpoints[self.bp];
        self.t = self.t - D::from(self.t.re()) + D::from(tb);
        self.bp += 1;
        self.pending_f0 = None;
        StepOutcome::Breakpoint { t: tb }
    }

    /// Starts a segment at the current point: the guard watches (after t0 or an event),
    /// the starting slope and the first step size.
    fn open_segment(&mut self) -> Result<Box<Open<D>>, Error> {
        let (t, mode) = (self.t, self.mode);
        let ctx = Ctx {
            mode,
            t_lo: self.breakpoints[self.bp - 1],
            t_hi: self.breakpoints[self.bp],
        };
        if !finite(&self.y) {
            return Err(self.non_finite(t.re(), mode, "state".into()));
        }
        // a new breakpoint interval or mode, or a state after an event: a new Jacobian
        self.newton.invalidate();
        let fresh = self.need_watch_init;
        if fresh {
            self.t_watch_init = t.re();
            self.watches = init_watches(self.sys, &ctx, t, &self.y, self.eopt.zero_tol);
            self.need_watch_init = false;
        }
        let f0 = match self.pending_f0.take() {
            Some((c, f)) if c == ctx => f,
            _ => {
                let mut f0 = vec![D::zero(); self.sys.dim()];
                self.sys
                    .rhs(&ctx, t, &self.y, &mut f0)
                    .map_err(self.model_error(t.re(), mode))?;
                self.stats.rhs_evals += 1;
                f0
            }
        };
        if !finite(&f0) {
            return Err(self.non_finite(t.re(), mode, "right-hand side".into()));
        }
        if fresh && self.watches.iter().any(|w| w.masked) {
            let (sys, watches) = (self.sys, &mut self.watches);
            with_real_parts(&self.y, &f0, |yr, fr| {
                for (k, w) in watches.iter_mut().enumerate() {
                    if w.masked {
                        w.start_rate = sys.guard_slope(&ctx, k, t.re(), yr, fr);
                    }
                }
            });
        }
        // a multistep method restarts at order 1: its first step is chosen afresh rather
        // than inherited from the previous segment's high-order steps
        let restart = self.sopt.method.is_multistep();
        let h = match self.h_next {
            Some(h) if !restart => h,
            _ => {
                let rhs = Bound::new(self.sys, ctx);
                let (method, h_max) = (self.sopt.method, self.sopt.h_max);
                initial_step(&rhs, method, t, &self.y, &f0, &self.tol, 1.0, h_max)
                    .map_err(self.model_error(t.re(), mode))?
            }
        };
        Ok(Box::new(Open {
            ctx,
            seg: Segment {
                mode,
                t_start: t,
                t_end: t,
                t_lo: ctx.t_lo,
                t_hi: ctx.t_hi,
                steps: Vec::with_capacity(self.seg_capacity),
                end_events: Vec::new(),
                windows: Vec::new(),
            },
            f0,
            h,
            ctrl: Controller::new(self.sopt.method, self.sys.dim()),
            rejected_non_finite: false,
            history: None,
        }))
    }

    /// The next step: `h` clamped to `h_max` and to the breakpoint, which the interval's
    /// last step reaches exactly. A step below `16 ε max(1, |t|)` is an underflow.
    fn plan(&self, open: &mut Open<D>) -> Result<StepPlan<D>, Error> {
        open.h = open.h.min(self.sopt.h_max);
        let t = self.t;
        let t_hi = open.ctx.t_hi;
        let remaining = t_hi - t.re();
        let h_min = 16.0 * f64::EPSILON * t.re().abs().max(1.0);
        let last = open.h >= remaining * (1.0 - 1e-12) || remaining <= h_min;
        let hd = if last {
            D::from(t_hi) - t
        } else {
            D::from(open.h)
        };
        if !last && open.h < h_min {
            if open.rejected_non_finite {
                return Err(self.non_finite(t.re(), self.mode, every_step_non_finite()));
            }
            return Err(Error::StepSizeUnderflow {
                t: t.re(),
                mode: self.sys.dims().mode_name(self.mode),
                h: open.h,
                h_min,
            });
        }
        Ok(StepPlan { hd, last, h_min })
    }

    /// Tries one step of the open segment and acts on the result.
    fn attempt(&mut self, mut open: Box<Open<D>>) -> Result<StepOutcome, Error> {
        let plan = self.plan(&mut open)?;
        crate::interrupt::check()?;
        if self.stats.steps + self.stats.rejected >= self.sopt.max_steps {
            return Err(Error::TooManySteps {
                t: self.t.re(),
                mode: self.sys.dims().mode_name(self.mode),
                max_steps: self.sopt.max_steps,
            });
        }
        let rhs = Bound::new(self.sys, open.ctx);
        let (mut y1, mut f1) = std::mem::take(&mut self.spare);
        y1.resize(self.y.len(), D::zero());
        f1.resize(self.y.len(), D::zero());
        let attempt = try_step_dense_into(
            self.sopt.method,
            &rhs,
            self.t,
            &self.y,
            &open.f0,
            plan.hd,
            &self.tol,
            (&mut y1, &mut f1, &mut self.newton, open.history.as_deref()),
        )
        .map_err(self.model_error(self.t.re(), self.mode))?;
        let (err, dense, history) = match attempt {
            DenseAttempt::Done {
                err,
                dense,
                evals,
                history,
            } => {
                self.stats.rhs_evals += evals;
                (err, dense, history)
            }
            DenseAttempt::NewtonFailed { evals } => {
                self.stats.rhs_evals += evals;
                self.spare = (y1, f1);
                return self.reject_newton(open, &plan);
            }
        };
        if !(err <= 1.0) || !finite(&y1) {
            let non_finite = !err.is_finite() || !finite(&y1);
            let retry = history.map(|h| h.retry_factor());
            self.spare = (y1, f1);
            return self.reject_error(open, &plan, (err, retry), non_finite);
        }
        open.rejected_non_finite = false;
        self.stats.steps += 1;
        let end = StepEnd {
            t1: self.t + plan.hd,
            y1,
            f1,
            fac: match &history {
                Some(h) => h.factor(),
                None => open.ctrl.accept(err, plan.hd.re()),
            },
            h_used: plan.hd.re(),
            dense,
            history,
        };
        self.saved_watches.clone_from(&self.watches);
        let scan = scan_guards(
            self.sys,
            &open.ctx,
            &mut self.watches,
            &end.dense,
            end.t1,
            &end.y1,
            self.eopt,
            &mut self.buf,
        )?;
        match scan {
            GuardScan::Sticky(k) => self.reject_sticky(open, k, &plan, end.h_used),
            GuardScan::Clear => Ok(self.accept(open, end, plan.last)),
            GuardScan::Crossings(c) => self.end_at_events(*open, end, c),
        }
    }

    fn reject_newton(
        &mut self, mut open: Box<Open<D>>, plan: &StepPlan<D>,
    ) -> Result<StepOutcome, Error> {
        self.stats.rejected += 1;
        open.h = plan.hd.re() * 0.25;
        if open.h < plan.h_min {
            return Err(Error::NewtonFailure {
                t: self.t.re(),
                mode: self.sys.dims().mode_name(self.mode),
                h: open.h,
            });
        }
        self.open = Some(open);
        Ok(self.rejected(plan, Rejection::NewtonFailed))
    }

    /// A step that failed the error test (`retry`: a multistep method's own factor).
    fn reject_error(
        &mut self, mut open: Box<Open<D>>, plan: &StepPlan<D>, (err, retry): (f64, Option<f64>),
        non_finite: bool,
    ) -> Result<StepOutcome, Error> {
        self.stats.rejected += 1;
        open.rejected_non_finite = non_finite;
        let h = plan.hd.re();
        open.h = h * retry.unwrap_or_else(|| open.ctrl.reject(err));
        if h <= plan.h_min {
            return Err(if non_finite {
                self.non_finite(self.t.re(), self.mode, every_step_non_finite())
            } else {
                Error::StepSizeUnderflow {
                    t: self.t.re(),
                    mode: self.sys.dims().mode_name(self.mode),
                    h,
                    h_min: plan.h_min,
                }
            });
        }
        self.open = Some(open);
        let reason = if non_finite {
            Rejection::NonFinite
        } else {
            Rejection::ErrorTest
        };
        Ok(self.rejected(plan, reason))
    }

    /// A sticking guard: the watches go back to before the scan and the step is retried
    /// below the guard sampling interval, down to `10³ h_min`, where sticking is an error.
    fn reject_sticky(
        &mut self, mut open: Box<Open<D>>, guard: usize, plan: &StepPlan<D>, h_used: f64,
    ) -> Result<StepOutcome, Error> {
        std::mem::swap(&mut self.watches, &mut self.saved_watches);
        let h_stick = 1e3 * plan.h_min;
        if h_used <= h_stick {
            return Err(Error::Sticking {
                t: self.t_watch_init,
                mode: self.sys.dims().mode_name(self.mode),
                guard: self.sys.dims().guard_name(guard),
            });
        }
        self.stats.rejected += 1;
        open.h = (h_used / SUBSAMPLES as f64).max(h_stick * 0.5);
        self.open = Some(open);
        Ok(self.rejected(plan, Rejection::Sticking { guard }))
    }

    fn rejected(&self, plan: &StepPlan<D>, reason: Rejection) -> StepOutcome {
        StepOutcome::Rejected {
            t: self.t.re(),
            h: plan.hd.re(),
            reason,
        }
    }

    /// An accepted step with no crossing: keep its interpolant and move on; the last step
    /// of an interval closes the segment at the breakpoint.
    fn accept(&mut self, mut open: Box<Open<D>>, mut end: StepEnd<D>, last: bool) -> StepOutcome {
        // a multistep method's history at the step's start goes with its interpolant
        // (what a replay of the step starts from)
        end.dense.set_history(open.history.take());
        open.seg.steps.push(end.dense);
        self.newton.advance();
        self.store.after_step(&mut open.seg);
        self.t = end.t1;
        // the old state and slope become the next step's spare buffers
        self.spare = (
            std::mem::replace(&mut self.y, end.y1),
            std::mem::replace(&mut open.f0, end.f1),
        );
        open.history = end.history;
        open.h = end.h_used * end.fac;
        if last {
            self.t = D::from(open.ctx.t_hi);
            open.seg.t_end = self.t;
            self.h_next = Some(open.h.max(end.h_used));
            self.seg_capacity = open.seg.steps.len() + 1;
            self.store.push(open.seg);
            self.bp += 1;
            return StepOutcome::Breakpoint { t: self.t.re() };
        }
        self.open = Some(open);
        StepOutcome::Accepted {
            t: self.t.re(),
            h: end.h_used,
        }
    }

    /// A step with crossings: cut it at the earliest (with the crossings simultaneous with
    /// it), close the segment there, check for grazing and apply the event group.
    fn end_at_events(
        &mut self, mut open: Open<D>, end: StepEnd<D>, crossings: Vec<(f64, usize)>,
    ) -> Result<StepOutcome, Error> {
        let (t, mode) = (self.t, self.mode);
        let t0_re = end.dense.t0.re();
        let (th_star, group) =
            event_group(crossings, t0_re, end.h_used, self.eopt.simultaneous_tol);
        let rhs = Bound::new(self.sys, open.ctx);
        let start = StepStart {
            t,
            y: &self.y,
            f0: &open.f0,
        };
        let cut = cut_step(
            self.sopt.method,
            &rhs,
            &open.ctx,
            group[0],
            start,
            (th_star, end.h_used),
            &self.tol,
            end.dense,
            (&mut self.stats, &mut self.newton, open.history.as_deref()),
        )
        .map_err(|e| Error::Model {
            t: t.re(),
            mode: self.sys.dims().mode_name(mode),
            source: e,
        })?;
        let te = t + cut.he;
        let mut dense = cut.dense;
        dense.set_history(open.history.take());
        open.seg.steps.push(dense);
        open.seg.t_end = te;
        self.seg_capacity = open.seg.steps.len() + 1;
        self.spare = (end.y1, end.f1);
        self.store.push(open.seg);
        self.check_grazing(&open.ctx, &group, te.re(), &cut.y, &cut.f)?;
        let first = self.events.len();
        let (y_after, mode_after) = self.apply_event_group(&open.ctx, &group, te, cut.y, cut.f)?;
        let count = self.events.len() - first;
        if let Some(s) = self.store.segments.last_mut() {
            s.end_events = (first..self.events.len()).collect();
        }
        self.group_id += 1;
        self.t = te;
        self.y = y_after;
        self.mode = mode_after;
        self.need_watch_init = true;
        self.h_next = Some((end.h_used * end.fac).max(end.h_used * 0.1));
        Ok(StepOutcome::Events {
            t: te.re(),
            first,
            count,
            terminal: self.terminated,
        })
    }

    /// The grazing test with the flow's velocity at the event (theory.md §1): an event
    /// whose guard rate |ġ| ≤ `grazing_tol (1 + |g_t| + ‖g_x‖‖f‖)` is an error.
    fn check_grazing(
        &self, ctx: &Ctx, group: &[usize], te: f64, ye: &[D], fe: &[D],
    ) -> Result<(), Error> {
        with_real_parts(ye, fe, |yr, fr| {
            for &k in group {
                let gr = self.sys.guard_rate(ctx, k, te, yr, fr);
                let threshold = self.eopt.grazing_tol * (1.0 + gr.scale);
                if !(gr.rate.abs() > threshold) {
                    return Err(Error::Grazing {
                        t: te,
                        mode: self.sys.dims().mode_name(ctx.mode),
                        guard: self.sys.dims().guard_name(k),
                        rate: gr.rate.abs(),
                        threshold,
                    });
                }
            }
            Ok(())
        })
    }

    /// Applies the events of a group in crossing order, each in the mode the previous one
    /// left, recording each on the tape with f⁻ and f⁺ (zero after a terminal event: the
    /// state freezes). Returns the state and mode after the group.
    fn apply_event_group(
        &mut self, ctx: &Ctx, group: &[usize], te: D, ye: Vec<D>, fe: Vec<D>,
    ) -> Result<(Vec<D>, usize), Error> {
        let segment = self.store.segments.len() - 1;
        let (mut y, mut f, mut mode) = (ye, fe, ctx.mode);
        for &k in group {
            if !self.sys.guard_active(mode, k) {
                continue;
            }
            let fired = self.events.iter().filter(|e| e.guard == k).count() + 1;
            let terminal = self.sys.dims().guards[k].terminal
                || self
                    .eopt
                    .stop_after
                    .is_some_and(|(g, n)| g == k && fired >= n);
            let ectx = Ctx { mode, ..*ctx };
            let (mode_after, y_plus) = self
                .sys
                .event(&ectx, k, te, &y, terminal)
                .map_err(self.model_error(te.re(), mode))?;
            if !finite(&y_plus) {
                let what = format!("reset of guard '{}'", self.sys.dims().guard_name(k));
                return Err(self.non_finite(te.re(), mode, what));
            }
            let f_plus = self.slope_after(ctx, mode_after, te, &y_plus, terminal)?;
            // the tape's slopes and state after: their leading components that are read
            let kept = self.sys.recorded_len().min(f.len());
            self.events.push(EventRecord {
                t: te,
                guard: k,
                before: EventSide {
                    mode,
                    y: std::mem::take(&mut y),
                    f: f[..kept].to_vec(),
                },
                after: EventSide {
                    mode: mode_after,
                    y: y_plus[..kept.min(y_plus.len())].to_vec(),
                    f: f_plus[..kept].to_vec(),
                },
                segment,
                group: self.group_id,
                terminal,
            });
            self.stats.events += 1;
            (y, f, mode) = (y_plus, f_plus, mode_after);
            if self.events.len() > self.eopt.max_events {
                return Err(Error::Zeno {
                    t: te.re(),
                    mode: self.sys.dims().mode_name(mode),
                    guard: self.sys.dims().guard_name(k),
                    max_events: self.eopt.max_events,
                });
            }
            if terminal {
                self.terminated = true;
                break;
            }
        }
        if !self.terminated {
            self.pending_f0 = Some((Ctx { mode, ..*ctx }, f));
        }
        Ok((y, mode))
    }

    /// f⁺ = F_{m'}(t_e, X⁺) in the event's breakpoint interval (zero after a terminal
    /// event). It is the next segment's starting slope, so it costs no extra evaluation.
    fn slope_after(
        &mut self, ctx: &Ctx, mode_after: usize, te: D, y_plus: &[D], terminal: bool,
    ) -> Result<Vec<D>, Error> {
        let mut fp = vec![D::zero(); y_plus.len()];
        if terminal {
            return Ok(fp);
        }
        let c2 = Ctx {
            mode: mode_after,
            ..*ctx
        };
        self.sys
            .rhs(&c2, te, y_plus, &mut fp)
            .map_err(self.model_error(te.re(), mode_after))?;
        self.stats.rhs_evals += 1;
        Ok(fp)
    }
}

fn every_step_non_finite() -> String {
    "right-hand side (every step down to the minimum step)".into()
}
