//! The hybrid loop: integrate a mode's flow, watch every live guard for a sign change in
//! its direction on each accepted step, locate the earliest root on the dense output, cut
//! the step there, apply the reset, and restart (no FSAL stage survives a reset).
//!
//! The loop is generic over the scalar and over what is integrated ([`HybridRhs`]): the
//! state alone (`f64` for the adjoint's forward pass, dual numbers for the witness), or
//! the state with its forward sensitivities (whose event map is the jump of theory §3).

use super::dense::DenseStep;
use super::options::{Checkpointing, EventOptions, SolverOptions};
use super::stepper::{initial_step, try_step, Attempt, Controller, NewtonJacobian, OdeRhs};
use super::trajectory::{EventRecord, ReplayWindow, Segment, Stats, Trajectory};
use crate::error::{Error, ModelError};
use crate::model::{Direction, Scalar};

/// Where the loop is: the mode and the breakpoint interval `[t_lo, t_hi]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ctx {
    pub mode: usize,
    pub t_lo: f64,
    pub t_hi: f64,
}

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
    fn mode_name(&self, mode: usize) -> String;
    fn guard_name(&self, k: usize) -> String;
    fn n_guards(&self) -> usize;
    fn guard_active(&self, mode: usize, k: usize) -> bool;
    fn guard_direction(&self, k: usize) -> Direction;
    fn guard_terminal(&self, k: usize) -> bool;
    fn rhs(&self, ctx: &Ctx, t: D, y: &[D], dy: &mut [D]) -> Result<(), ModelError>;
    fn newton_jacobian(&self, ctx: &Ctx, t: f64, y: &[f64]) -> Result<NewtonJacobian, ModelError>;
    fn guard(&self, ctx: &Ctx, k: usize, t: D, y: &[D]) -> D;
    /// ġ = g_t + g_x v at real values (`v` a velocity of the guarded state).
    fn guard_rate(&self, ctx: &Ctx, k: usize, t: f64, y: &[f64], v: &[f64]) -> GuardRate;
    /// The event map: reset (and, for sensitivity systems, the jump). Returns the next
    /// mode and the integrated vector after the event. `terminal`: the run ends here.
    fn event(
        &self,
        ctx: &Ctx,
        k: usize,
        t: D,
        y: &[D],
        terminal: bool,
    ) -> Result<(usize, Vec<D>), ModelError>;
}

struct Bound<'a, D, H: ?Sized> {
    h: &'a H,
    ctx: Ctx,
    _d: std::marker::PhantomData<D>,
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

/// Locates the root of `g(θ)` in (0, 1] on the dense output (Illinois regula falsi with
/// bisection safeguard), to a time resolution of a few ulps of t.
fn locate_root<F: FnMut(f64) -> f64>(
    mut g: F,
    (a0, b0): (f64, f64),
    g0: f64,
    g1: f64,
    t0: f64,
    h: f64,
) -> f64 {
    let (mut a, mut b) = (a0, b0);
    let (mut ga, mut gb) = (g0, g1);
    let tscale = t0.abs().max((t0 + h).abs()).max(1.0);
    let mut side = 0i32;
    for _ in 0..200 {
        if ((b - a) * h).abs() <= 2.0 * f64::EPSILON * tscale {
            break;
        }
        let mut m = if (ga - gb).abs() > 0.0 {
            b - gb * (b - a) / (gb - ga)
        } else {
            0.5 * (a + b)
        };
        if !(m > a && m < b) {
            m = 0.5 * (a + b);
        }
        let gm = g(m);
        if gm == 0.0 {
            // keep the earliest zero: shrink from the right
            b = m;
            // continue bisecting towards a to find the first zero
            let mut lo = a;
            let mut hi = b;
            for _ in 0..200 {
                if ((hi - lo) * h).abs() <= 2.0 * f64::EPSILON * tscale {
                    break;
                }
                let mid = 0.5 * (lo + hi);
                let gmid = g(mid);
                if gmid == 0.0 || gmid.signum() != ga.signum() {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return hi;
        }
        if gm.signum() == ga.signum() {
            a = m;
            ga = gm;
            if side == -1 {
                gb *= 0.5;
            }
            side = -1;
        } else {
            b = m;
            gb = gm;
            if side == 1 {
                ga *= 0.5;
            }
            side = 1;
        }
    }
    b
}

/// Guard samples per accepted step (interior points of the interpolant plus the end).
pub const SUBSAMPLES: usize = 8;

#[derive(Clone)]
struct Watch {
    active: bool,
    masked: bool,
    g_prev: f64,
    /// For a masked guard: its rate ġ along the flow where it was masked (the segment
    /// start), i.e. the side it is leaving zero towards.
    start_rate: f64,
}

/// The segments of a run, kept under a [`Checkpointing`] policy.
struct Store<D> {
    segments: Vec<Segment<D>>,
    policy: Checkpointing,
    /// Whether dense steps are being compacted (from the start for `Every`, past the
    /// budget for `Budget`).
    compacting: bool,
    /// Bytes of interpolants held so far (for `Budget`).
    bytes: usize,
}

impl<D: Scalar> Store<D> {
    fn new(policy: Checkpointing) -> Self {
        Store {
            segments: Vec::new(),
            policy,
            compacting: matches!(policy, Checkpointing::Every(_)),
            bytes: 0,
        }
    }

    fn every(&self) -> usize {
        match self.policy {
            Checkpointing::Never => usize::MAX,
            Checkpointing::Every(k) => k.max(1),
            Checkpointing::Budget { every, .. } => every.max(1),
        }
    }

    /// After a dense step was added to the open segment `seg`.
    fn after_step(&mut self, seg: &mut Segment<D>) {
        if let Checkpointing::Budget { budget_bytes, .. } = self.policy {
            if !self.compacting {
                self.bytes +=
                    seg.steps.last().map_or(0, |s| 5 * s.dim() + 2) * std::mem::size_of::<D>();
                if self.bytes > budget_bytes {
                    self.compacting = true;
                    let every = self.every();
                    for s in &mut self.segments {
                        s.compact_all(every);
                    }
                }
            }
        }
        if self.compacting && seg.steps.len() >= self.every() {
            seg.compact_all(self.every());
        }
    }

    /// Closes a segment.
    fn push(&mut self, mut seg: Segment<D>) {
        if self.compacting {
            seg.compact_all(self.every());
        }
        self.segments.push(seg);
    }
}

/// Replays a window of compacted steps of a segment in the context `ctx`: the same
/// method, tolerances (they steer the implicit method's Newton iteration), start state and
/// step sizes as the forward run, so the interpolants come out bit-identical.
pub fn replay_window<H: HybridRhs<f64> + ?Sized>(
    sys: &H,
    ctx: Ctx,
    sopt: &SolverOptions,
    w: &ReplayWindow<f64>,
    stats: &mut Stats,
) -> Result<Vec<DenseStep<f64>>, ModelError> {
    let rhs = Bound {
        h: sys,
        ctx,
        _d: std::marker::PhantomData,
    };
    let tol = sopt.tolerances();
    let mut y = w.y0.clone();
    let mut f0 = vec![0.0; y.len()];
    rhs.eval(w.t0[0], &y, &mut f0)?;
    stats.rhs_evals += 1;
    let mut out = Vec::with_capacity(w.h.len());
    for (&t, &h) in w.t0.iter().zip(&w.h) {
        match try_step(sopt.method, &rhs, t, &y, &f0, h, &tol)? {
            Attempt::Done {
                y1,
                f1,
                dense,
                evals,
                ..
            } => {
                stats.rhs_evals += evals;
                stats.steps += 1;
                out.push(dense);
                y = y1;
                f0 = f1;
            }
            Attempt::NewtonFailed { .. } => {
                return Err(ModelError::Other(format!(
                    "replaying a checkpointed step at t = {t}: the implicit stages did not \
                     converge where the forward run's did"
                )))
            }
        }
    }
    Ok(out)
}

/// Integrates the hybrid system from `(t0, y0, mode0)` to the last breakpoint, keeping
/// all dense output. See [`simulate_hybrid_with`].
pub fn simulate_hybrid<D: Scalar, H: HybridRhs<D> + ?Sized>(
    sys: &H,
    y0: Vec<D>,
    mode0: usize,
    breakpoints: &[f64],
    sopt: &SolverOptions,
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
pub fn simulate_hybrid_with<D: Scalar, H: HybridRhs<D> + ?Sized>(
    sys: &H,
    y0: Vec<D>,
    mode0: usize,
    breakpoints: &[f64],
    sopt: &SolverOptions,
    eopt: &EventOptions,
    keep: Checkpointing,
) -> Result<Trajectory<D>, Error> {
    let tol = sopt.tolerances();
    let n = sys.dim();
    let t0 = breakpoints[0];
    let t_final_bp = *breakpoints.last().expect("breakpoints");
    let mut t = D::from(t0);
    let mut y = y0;
    let mut mode = mode0;
    let mut stats = Stats::default();
    let mut store: Store<D> = Store::new(keep);
    let mut events: Vec<EventRecord<D>> = Vec::new();
    let mut group_id = 0usize;
    let mut h_next: Option<f64> = None;
    let model_err = |t: f64, mode: usize, e: ModelError| Error::Model {
        t,
        mode: sys.mode_name(mode),
        source: e,
    };
    let mut bp = 1usize; // index of the next breakpoint
    let mut watches: Vec<Watch> = Vec::new();
    let mut need_watch_init = true;
    // where the watches were last set up (t0 or the last event): a guard that sticks to
    // its surface stuck there
    let mut t_watch_init = t0;
    let mut terminated = false;

    'segments: while bp < breakpoints.len() && !terminated {
        let ctx = Ctx {
            mode,
            t_lo: breakpoints[bp - 1],
            t_hi: breakpoints[bp],
        };
        let rhs = Bound {
            h: sys,
            ctx,
            _d: std::marker::PhantomData,
        };
        if breakpoints[bp] - t.re() <= 16.0 * f64::EPSILON * t.re().abs().max(1.0) {
            // an event landed on the breakpoint: nothing left of this interval. Keep the
            // derivative part of t (a dual run's event time carries dt_e/dθ, which the
            // flow after the event must see); only the real part snaps to the breakpoint.
            t = t - D::from(t.re()) + D::from(breakpoints[bp]);
            bp += 1;
            continue 'segments;
        }
        if !finite(&y) {
            return Err(Error::NonFinite {
                t: t.re(),
                mode: sys.mode_name(mode),
                what: "state".into(),
            });
        }
        let fresh_watches = need_watch_init;
        if need_watch_init {
            t_watch_init = t.re();
            watches = (0..sys.n_guards())
                .map(|k| {
                    let active = sys.guard_active(mode, k);
                    let g = if active {
                        sys.guard(&ctx, k, t, &y).re()
                    } else {
                        0.0
                    };
                    Watch {
                        active,
                        masked: active && g.abs() <= eopt.zero_tol,
                        g_prev: g,
                        start_rate: 0.0,
                    }
                })
                .collect();
            need_watch_init = false;
        }
        let mut f0 = vec![D::zero(); n];
        sys.rhs(&ctx, t, &y, &mut f0)
            .map_err(|e| model_err(t.re(), mode, e))?;
        stats.rhs_evals += 1;
        if !finite(&f0) {
            return Err(Error::NonFinite {
                t: t.re(),
                mode: sys.mode_name(mode),
                what: "right-hand side".into(),
            });
        }
        if fresh_watches && watches.iter().any(|w| w.masked) {
            let yr: Vec<f64> = y.iter().map(|v| v.re()).collect();
            let fr: Vec<f64> = f0.iter().map(|v| v.re()).collect();
            for (k, w) in watches.iter_mut().enumerate() {
                if w.masked {
                    w.start_rate = sys.guard_rate(&ctx, k, t.re(), &yr, &fr).rate;
                }
            }
        }
        let t_hi = breakpoints[bp];
        let mut h = match h_next {
            Some(h) => h,
            None => initial_step(&rhs, sopt.method, t, &y, &f0, &tol, 1.0, sopt.h_max)
                .map_err(|e| model_err(t.re(), mode, e))?,
        };
        let mut ctrl = Controller::new(sopt.method);
        let mut seg = Segment {
            mode,
            t_start: t,
            t_end: t,
            t_lo: ctx.t_lo,
            t_hi,
            steps: Vec::new(),
            end_events: Vec::new(),
            windows: Vec::new(),
        };
        // the last attempt was rejected for non-finite values (so that running out of
        // step size is reported as what caused it)
        let mut rejected_non_finite = false;
        loop {
            // choose the step, clamped to the breakpoint
            h = h.min(sopt.h_max);
            let remaining = t_hi - t.re();
            let h_min = 16.0 * f64::EPSILON * t.re().abs().max(1.0);
            let last = h >= remaining * (1.0 - 1e-12) || remaining <= h_min;
            let hd: D = if last { D::from(t_hi) - t } else { D::from(h) };
            if !last && h < h_min {
                if rejected_non_finite {
                    return Err(Error::NonFinite {
                        t: t.re(),
                        mode: sys.mode_name(mode),
                        what: "right-hand side (every step down to the minimum step)".into(),
                    });
                }
                return Err(Error::StepSizeUnderflow {
                    t: t.re(),
                    mode: sys.mode_name(mode),
                    h,
                    h_min,
                });
            }
            crate::interrupt::check()?;
            if stats.steps + stats.rejected >= sopt.max_steps {
                return Err(Error::TooManySteps {
                    t: t.re(),
                    mode: sys.mode_name(mode),
                    max_steps: sopt.max_steps,
                });
            }
            let att = try_step(sopt.method, &rhs, t, &y, &f0, hd, &tol)
                .map_err(|e| model_err(t.re(), mode, e))?;
            let (y1, f1, err, dense, evals) = match att {
                Attempt::Done {
                    y1,
                    f1,
                    err,
                    dense,
                    evals,
                } => (y1, f1, err, dense, evals),
                Attempt::NewtonFailed { evals } => {
                    stats.rhs_evals += evals;
                    stats.rejected += 1;
                    h = hd.re() * 0.25;
                    if h < h_min {
                        return Err(Error::NewtonFailure {
                            t: t.re(),
                            mode: sys.mode_name(mode),
                            h,
                        });
                    }
                    continue;
                }
            };
            stats.rhs_evals += evals;
            if !(err <= 1.0) || !finite(&y1) {
                stats.rejected += 1;
                rejected_non_finite = !err.is_finite() || !finite(&y1);
                h = hd.re() * ctrl.reject(err);
                if hd.re() <= h_min && !rejected_non_finite {
                    return Err(Error::StepSizeUnderflow {
                        t: t.re(),
                        mode: sys.mode_name(mode),
                        h: hd.re(),
                        h_min,
                    });
                }
                if hd.re() <= h_min {
                    return Err(Error::NonFinite {
                        t: t.re(),
                        mode: sys.mode_name(mode),
                        what: "right-hand side (every step down to the minimum step)".into(),
                    });
                }
                continue;
            }
            rejected_non_finite = false;
            stats.steps += 1;
            let fac = ctrl.accept(err);
            let h_used = hd.re();
            // --- event detection on the accepted step ---
            let t1 = t + hd;
            let mut candidates: Vec<(f64, usize)> = Vec::new();
            let dense_re = dense.real();
            // Each guard is sampled at SUBSAMPLES points of the step's interpolant, so that
            // a guard that dips through zero and back inside one long step (a flight of
            // the ball taken whole) is not missed; the first sub-interval with a crossing
            // in the guard's direction holds the event.
            let mut buf = vec![0.0; n];
            let saved = watches.clone();
            let mut sticky: Option<usize> = None;
            for (k, w) in watches.iter_mut().enumerate() {
                if !w.active {
                    continue;
                }
                let mut th_prev = 0.0;
                for j in 1..=SUBSAMPLES {
                    let th = j as f64 / SUBSAMPLES as f64;
                    let gj = if j == SUBSAMPLES {
                        sys.guard(&ctx, k, t1, &y1).re()
                    } else {
                        dense_re.eval_theta(th, &mut buf);
                        sys_guard_re(sys, &ctx, k, dense_re.t0 + th * h_used, &buf)
                    };
                    if !gj.is_finite() {
                        return Err(Error::NonFinite {
                            t: dense_re.t0 + th * h_used,
                            mode: sys.mode_name(mode),
                            what: format!("guard '{}'", sys.guard_name(k)),
                        });
                    }
                    if w.masked {
                        if gj.abs() > eopt.zero_tol {
                            // Leaving zero on the side the guard crosses to means it
                            // crossed again within this sub-interval (a short bounce taken
                            // whole) or sticks to the surface: retry with a smaller step.
                            // Unless the flow where the guard was masked already pointed
                            // that way: then it merely moved on through the surface (an
                            // identity reset or pure mode switch that keeps the guard
                            // watched, or a start on the surface moving off it).
                            let crossed_side = match sys.guard_direction(k) {
                                Direction::Falling => gj < 0.0,
                                Direction::Rising => gj > 0.0,
                                Direction::Either => false,
                            };
                            let wrong = crossed_side && !(w.start_rate * gj > 0.0);
                            if wrong {
                                sticky = Some(k);
                                break;
                            }
                            w.masked = false;
                            w.g_prev = gj;
                        }
                        th_prev = th;
                        continue;
                    }
                    if sys.guard_direction(k).crosses(w.g_prev, gj) {
                        let tr0 = dense_re.t0;
                        let mut b2 = vec![0.0; n];
                        let gfun = |x: f64| {
                            dense_re.eval_theta(x, &mut b2);
                            sys_guard_re(sys, &ctx, k, tr0 + x * h_used, &b2)
                        };
                        let root = locate_root(gfun, (th_prev, th), w.g_prev, gj, tr0, h_used);
                        candidates.push((root, k));
                        break;
                    }
                    w.g_prev = gj;
                    th_prev = th;
                }
            }
            if let Some(k) = sticky {
                watches = saved;
                let h_stick = 1e3 * h_min;
                if h_used <= h_stick {
                    return Err(Error::Sticking {
                        t: t_watch_init,
                        mode: sys.mode_name(mode),
                        guard: sys.guard_name(k),
                    });
                }
                stats.rejected += 1;
                h = (h_used / SUBSAMPLES as f64).max(h_stick * 0.5);
                continue;
            }
            if candidates.is_empty() {
                seg.steps.push(dense);
                store.after_step(&mut seg);
                t = t1;
                y = y1;
                f0 = f1;
                h = h_used * fac;
                if last {
                    t = D::from(t_hi);
                    seg.t_end = t;
                    store.push(seg);
                    bp += 1;
                    h_next = Some(h.max(h_used));
                    continue 'segments;
                }
                continue;
            }
            // --- the earliest crossing, and any simultaneous ones ---
            candidates.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
            let th_star = candidates[0].0;
            let t_star_re = dense_re.t0 + th_star * h_used;
            let stol = eopt.simultaneous_tol * t_star_re.abs().max(1.0);
            let group: Vec<usize> = candidates
                .iter()
                .filter(|(th, _)| (th - th_star) * h_used.abs() <= stol)
                .map(|&(_, k)| k)
                .collect();
            // Cut the step at the root: redo it with the shortened length and refine the
            // event time by Newton's method on g(t_n + h_e, Φ_{h_e}(y_n)) (the guard on a
            // true step's end, not on the interpolant), with ġ from the flow there. The
            // iteration runs in the scalar type, so for dual numbers t_e carries the
            // exact derivative of the discrete root.
            let k0 = group[0];
            let tscale = 4.0 * f64::EPSILON * t.re().abs().max(1.0);
            let mut he = D::from(th_star * h_used);
            let mut cut: Option<(Vec<D>, Vec<D>, DenseStep<D>)> = None;
            for it in 0..8 {
                if !(he.re() > 0.0 && he.re() <= h_used * (1.0 + 1e-12)) {
                    break;
                }
                let att = try_step(sopt.method, &rhs, t, &y, &f0, he, &tol)
                    .map_err(|e| model_err(t.re(), mode, e))?;
                let Attempt::Done {
                    y1: yc,
                    f1: fc,
                    dense: dc,
                    evals,
                    ..
                } = att
                else {
                    break;
                };
                stats.rhs_evals += evals;
                let g = sys.guard(&ctx, k0, t + he, &yc);
                let yr: Vec<f64> = yc.iter().map(|v| v.re()).collect();
                let fr: Vec<f64> = fc.iter().map(|v| v.re()).collect();
                let gr = sys.guard_rate(&ctx, k0, (t + he).re(), &yr, &fr);
                let dt = g / gr.rate;
                cut = Some((yc, fc, dc));
                if !dt.re().is_finite() {
                    break;
                }
                if dt.re().abs() <= tscale && it >= 1 {
                    break;
                }
                he -= dt;
            }
            let (ye, fe, dense_cut) = match cut {
                Some(c) => c,
                None => {
                    // fall back to the interpolant
                    let mut ye = vec![D::zero(); n];
                    dense.eval_theta(D::from(th_star), &mut ye);
                    let mut fe = vec![D::zero(); n];
                    sys.rhs(&ctx, t + he, &ye, &mut fe)
                        .map_err(|e| model_err(t.re(), mode, e))?;
                    he = D::from(th_star * h_used);
                    (ye, fe, dense)
                }
            };
            let te = t + he;
            seg.steps.push(dense_cut);
            seg.t_end = te;
            store.push(seg);
            // grazing test with the flow's velocity (theory.md §1)
            let yr: Vec<f64> = ye.iter().map(|v| v.re()).collect();
            let fr: Vec<f64> = fe.iter().map(|v| v.re()).collect();
            for &k in &group {
                let gr = sys.guard_rate(&ctx, k, te.re(), &yr, &fr);
                if !(gr.rate.abs() > eopt.grazing_tol * (1.0 + gr.scale)) {
                    return Err(Error::Grazing {
                        t: te.re(),
                        mode: sys.mode_name(mode),
                        guard: sys.guard_name(k),
                        rate: gr.rate.abs(),
                        threshold: eopt.grazing_tol * (1.0 + gr.scale),
                    });
                }
            }
            // apply the events of the group in crossing order
            let mut ycur = ye;
            let mut cur_mode = mode;
            for &k in &group {
                let fired = events.iter().filter(|e| e.guard == k).count() + 1;
                let terminal = sys.guard_terminal(k)
                    || eopt.stop_after.is_some_and(|(g, n)| g == k && fired >= n);
                let ectx = Ctx {
                    mode: cur_mode,
                    ..ctx
                };
                if !sys.guard_active(cur_mode, k) {
                    continue;
                }
                let (m2, y2) = sys
                    .event(&ectx, k, te, &ycur, terminal)
                    .map_err(|e| model_err(te.re(), cur_mode, e))?;
                if !finite(&y2) {
                    return Err(Error::NonFinite {
                        t: te.re(),
                        mode: sys.mode_name(cur_mode),
                        what: format!("reset of guard '{}'", sys.guard_name(k)),
                    });
                }
                events.push(EventRecord {
                    t: te,
                    guard: k,
                    mode_before: cur_mode,
                    mode_after: m2,
                    y_minus: ycur,
                    y_plus: y2.clone(),
                    group: group_id,
                    terminal,
                });
                stats.events += 1;
                ycur = y2;
                cur_mode = m2;
                if events.len() > eopt.max_events {
                    return Err(Error::Zeno {
                        t: te.re(),
                        mode: sys.mode_name(cur_mode),
                        guard: sys.guard_name(k),
                        max_events: eopt.max_events,
                    });
                }
                if terminal {
                    terminated = true;
                    break;
                }
            }
            group_id += 1;
            let first_ev = events.len()
                - events
                    .iter()
                    .rev()
                    .take_while(|e| e.group == group_id - 1)
                    .count();
            if let Some(s) = store.segments.last_mut() {
                s.end_events = (first_ev..events.len()).collect();
            }
            t = te;
            y = ycur;
            mode = cur_mode;
            need_watch_init = true;
            h_next = Some((h_used * fac).max(h_used * 0.1));
            if terminated {
                break 'segments;
            }
            continue 'segments;
        }
    }
    let _ = t_final_bp;
    Ok(Trajectory {
        segments: store.segments,
        events,
        stats,
        t0,
        t_final: t,
        y_final: y,
        mode_final: mode,
    })
}

/// The real part of a guard at real arguments (root finding is on the real trajectory).
fn sys_guard_re<D: Scalar, H: HybridRhs<D> + ?Sized>(
    sys: &H,
    ctx: &Ctx,
    k: usize,
    t: f64,
    y: &[f64],
) -> f64 {
    let yd: Vec<D> = y.iter().map(|&v| D::from(v)).collect();
    sys.guard(ctx, k, D::from(t), &yd).re()
}

/// The dense steps of a segment as a slice (for tests and reports).
pub fn steps_of<D>(seg: &Segment<D>) -> &[DenseStep<D>] {
    &seg.steps
}
