//! Watching the guards: which are live and masked at a segment's start, the scan of an
//! accepted step for sign changes in each guard's direction, the root on the dense
//! output, and the group of crossings that happen at one instant (theory.md §1, §7).

use super::{Ctx, HybridRhs};
use crate::error::Error;
use crate::integrate::dense::DenseStep;
use crate::integrate::options::EventOptions;
use crate::model::scratch::with_scratch;
use crate::model::{Direction, Scalar};

/// Guard samples per accepted step (interior points of the interpolant plus the end).
pub const SUBSAMPLES: usize = 8;

/// One guard's watch over a segment.
#[derive(Clone)]
pub(super) struct Watch {
    pub(super) active: bool,
    pub(super) masked: bool,
    pub(super) g_prev: f64,
    /// For a masked guard: its rate ġ along the flow where it was masked (the segment
    /// start), i.e. the side it is leaving zero towards.
    pub(super) start_rate: f64,
    /// Within one scan: still sampled (live, not yet crossed or found sticky).
    pub(super) scanning: bool,
}

/// What the scan of an accepted step found.
pub(super) enum GuardScan {
    /// No guard crossed: the step stands.
    Clear,
    /// A masked guard left zero on the side it crosses to, against the flow at the
    /// segment start: it crossed back inside a sub-interval or sticks to its surface.
    Sticky(usize),
    /// Crossings `(θ, guard)`, θ ∈ (0, 1] the root's position in the step.
    Crossings(Vec<(f64, usize)>),
}

/// The watches at a segment start `(t, y)` in `ctx.mode`: live guards, and those on their
/// surface (|g| ≤ `zero_tol`) masked until they leave it.
pub(super) fn init_watches<D: Scalar, H: HybridRhs<D> + ?Sized>(
    sys: &H, ctx: &Ctx, t: D, y: &[D], zero_tol: f64,
) -> Vec<Watch> {
    (0..sys.dims().guards.len())
        .map(|k| {
            let active = sys.guard_active(ctx.mode, k);
            let g = if active {
                sys.guard(ctx, k, t, y).re()
            } else {
                0.0
            };
            Watch {
                active,
                masked: active && g.abs() <= zero_tol,
                g_prev: g,
                start_rate: 0.0,
                scanning: false,
            }
        })
        .collect()
}

/// Scans an accepted step `[t, t1]` with real interpolant `dense`: each live guard is
/// sampled at [`SUBSAMPLES`] points, so that a guard that dips through zero and back inside
/// one long step (a flight of the ball taken whole) is not missed; the first sub-interval
/// with a crossing in the guard's direction holds its root, located on the interpolant.
/// The interpolant is evaluated once per sample point for all guards (O(n + N) a sample
/// for n states and N guards, not O(n·N)). Updates the watches (the caller restores them
/// on [`GuardScan::Sticky`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_guards<D: Scalar, H: HybridRhs<D> + ?Sized>(
    sys: &H, ctx: &Ctx, watches: &mut [Watch], dense: &DenseStep<D>, t1: D, y1: &[D],
    eopt: &EventOptions, buf: &mut [f64],
) -> Result<GuardScan, Error> {
    // a dual run evaluates its guards on a constant copy of each sample, made once
    let copy_len = if D::from_real_slice(&[]).is_some() {
        0
    } else {
        y1.len()
    };
    with_scratch(copy_len, |yd: &mut [D]| {
        let (t0, h) = (dense.t0.re(), dense.h.re());
        let mut candidates: Vec<(f64, usize)> = Vec::new();
        let mut sticky: Option<usize> = None;
        let mut th_prev = 0.0;
        let mut open: usize = watches.iter().filter(|w| w.active).count();
        for w in watches.iter_mut() {
            w.scanning = w.active;
        }
        for j in 1..=SUBSAMPLES {
            if open == 0 {
                break;
            }
            let th = j as f64 / SUBSAMPLES as f64;
            let last = j == SUBSAMPLES;
            if !last {
                dense.eval_theta_re(th, buf);
                for (d, &v) in yd.iter_mut().zip(buf.iter()) {
                    *d = D::from(v);
                }
            }
            let t = t0 + th * h;
            for (k, w) in watches.iter_mut().enumerate() {
                if !w.scanning {
                    continue;
                }
                let gj = if last {
                    sys.guard(ctx, k, t1, y1).re()
                } else if let Some(y) = D::from_real_slice(buf) {
                    sys.guard(ctx, k, D::from(t), y).re()
                } else {
                    sys.guard(ctx, k, D::from(t), yd).re()
                };
                if !gj.is_finite() {
                    return Err(Error::NonFinite {
                        t,
                        mode: sys.dims().mode_name(ctx.mode),
                        what: format!("guard '{}'", sys.dims().guard_name(k)),
                    });
                }
                match watch_sample(sys.dims().guards[k].direction, w, gj, eopt.zero_tol) {
                    Sample::Go => {}
                    Sample::Sticky => {
                        sticky = Some(sticky.map_or(k, |s| s.max(k)));
                        w.scanning = false;
                        open -= 1;
                    }
                    Sample::Crossed(g_before) => {
                        // the root on the interpolant, in its own scratch: `buf` holds
                        // this sample for the guards after k
                        let root = with_scratch(buf.len(), |rb: &mut [f64]| {
                            let gfun = |x: f64| {
                                dense.eval_theta_re(x, rb);
                                guard_re(sys, ctx, k, t0 + x * h, rb)
                            };
                            locate_root(gfun, (th_prev, th), g_before, gj, t0, h)
                        });
                        candidates.push((root, k));
                        w.scanning = false;
                        open -= 1;
                    }
                }
            }
            th_prev = th;
        }
        Ok(match sticky {
            Some(k) => GuardScan::Sticky(k),
            None if candidates.is_empty() => GuardScan::Clear,
            None => GuardScan::Crossings(candidates),
        })
    })
}

/// What one sample `g` of a guard means for its watch.
enum Sample {
    /// Nothing yet: scan on.
    Go,
    /// A masked guard left zero on the wrong side ([`leaves_wrong_side`]).
    Sticky,
    /// The guard crossed in its direction since the previous sample, whose value this is.
    Crossed(f64),
}

/// Reads one sample of a guard into its watch: a masked guard is unmasked once it leaves
/// its surface (or found sticky); a live one reports a crossing in its direction.
fn watch_sample(direction: Direction, w: &mut Watch, g: f64, zero_tol: f64) -> Sample {
    if w.masked {
        if g.abs() > zero_tol {
            if leaves_wrong_side(direction, w.start_rate, g) {
                return Sample::Sticky;
            }
            w.masked = false;
            w.g_prev = g;
        }
        return Sample::Go;
    }
    if direction.crosses(w.g_prev, g) {
        return Sample::Crossed(w.g_prev);
    }
    w.g_prev = g;
    Sample::Go
}

/// Whether a masked guard that left zero with value `g` did so on the side it crosses to
/// although the flow where it was masked (rate `start_rate`) did not point there. That
/// means it crossed again within the sub-interval (a short bounce taken whole) or sticks
/// to the surface. A guard that merely moved on through its surface (an identity reset or
/// a pure mode switch that keeps it watched, or a start on the surface moving off it)
/// has `start_rate · g > 0`.
fn leaves_wrong_side(direction: Direction, start_rate: f64, g: f64) -> bool {
    let crossed_side = match direction {
        Direction::Falling => g < 0.0,
        Direction::Rising => g > 0.0,
        Direction::Either => false,
    };
    crossed_side && !(start_rate * g > 0.0)
}

/// The earliest crossing and every crossing within `simultaneous_tol · max(1, |t*|)` of
/// it (a simultaneous event, theory.md §7): `(θ*, guards in crossing order)`.
pub(super) fn event_group(
    mut candidates: Vec<(f64, usize)>, t0: f64, h: f64, simultaneous_tol: f64,
) -> (f64, Vec<usize>) {
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let th_star = candidates[0].0;
    let stol = simultaneous_tol * (t0 + th_star * h).abs().max(1.0);
    let group = candidates
        .iter()
        .filter(|(th, _)| (th - th_star) * h.abs() <= stol)
        .map(|&(_, k)| k)
        .collect();
    (th_star, group)
}

/// Locates the root of `g(θ)` in (0, 1] on the dense output (Illinois regula falsi with
/// bisection safeguard), to a time resolution of a few ulps of t.
pub(super) fn locate_root<F: FnMut(f64) -> f64>(
    mut g: F, (a0, b0): (f64, f64), g0: f64, g1: f64, t0: f64, h: f64,
) -> f64 {
    let (mut a, mut b) = (a0, b0);
    let (mut ga, mut gb) = (g0, g1);
    let tscale = t0.abs().max((t0 + h).abs()).max(1.0);
    let resolved = |lo: f64, hi: f64| ((hi - lo) * h).abs() <= 2.0 * f64::EPSILON * tscale;
    let mut side = 0i32;
    for _ in 0..200 {
        if resolved(a, b) {
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
            // keep the earliest zero: bisect towards a
            let (mut lo, mut hi) = (a, m);
            for _ in 0..200 {
                if resolved(lo, hi) {
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

/// The real part of a guard at real arguments (root finding is on the real trajectory).
/// A real run evaluates it on `y` as it is; a dual run on a constant copy.
#[inline]
pub(super) fn guard_re<D: Scalar, H: HybridRhs<D> + ?Sized>(
    sys: &H, ctx: &Ctx, k: usize, t: f64, y: &[f64],
) -> f64 {
    if let Some(yd) = D::from_real_slice(y) {
        return sys.guard(ctx, k, D::from(t), yd).re();
    }
    with_scratch(y.len(), |yd: &mut [D]| {
        for (d, &v) in yd.iter_mut().zip(y) {
            *d = D::from(v);
        }
        sys.guard(ctx, k, D::from(t), yd).re()
    })
}
