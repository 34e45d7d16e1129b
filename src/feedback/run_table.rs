//! A time-varying design along a run with events, tabulated for a controller that runs
//! inside a simulation (docs/theory.md §10, "The closed loop along a run"): per smooth
//! segment of the nominal, x_ref with its slope, u_nom and K on a grid of the segment, and
//! the segment **extended past both of its ends by its own mode's flow continued** (Kong,
//! Payne, Council & Johnson 2021): forward past its closing event (the pre-event flow
//! continued, for a late impact) and backward before its opening event (for an early
//! one), with u_nom and K held at the segment's end values.
//!
//! The controller's states are the phase τ (the nominal's time, `τ̇ = 1`) and the count k
//! of impacts so far, which picks the segment: the reference is always the one of the
//! segment the system is in, read at τ. At an impact k⁺ = k + 1 and τ⁺ = τ
//! ([`Clock::Extend`]: the nominal clock kept, so a timing error stays a tracking error
//! that the gains see, `δx ≈ ∓f δt` against the extended reference) or τ⁺ = the nominal
//! start of the next segment ([`Clock::Reset`]: the rest of the nominal shifted by the
//! timing error, which is forgotten).
//!
//! Between knots x_ref is the cubic Hermite interpolant of values and slopes, u_nom and K
//! linear (as [`super::reference::PeriodTable`]); past an extension's window (or where the
//! continued flow fails) the reference goes on to first order along its last slope.

use super::clock::Clock;
use super::gains::Lqr;
use super::knots::Knots;
use super::law::{RefPoint, Reference};
use crate::error::FeedbackError;
use crate::error::{Error, ModelError};
use crate::integrate::smooth::integrate_smooth;
use crate::integrate::{Method, NewtonJacobian, OdeRhs, SolverOptions, Stats};
use crate::model::{HybridSystem, Scalar};
use nalgebra::{DMatrix, DVector};

/// One stretch of the nominal between events tabulated with its extensions: knots in increasing time.
#[derive(Debug, Clone)]
struct Piece {
    t: Vec<f64>,
    knots: Knots,
    /// The nominal segment's start (its opening event's time).
    start: f64,
}

/// A time-varying design tabulated per segment (module docs).
#[derive(Debug, Clone)]
pub struct RunTable {
    pieces: Vec<Piece>,
    /// The nominal's start time (the phase's start).
    pub t0: f64,
    /// The nominal's final time.
    pub t_final: f64,
}

/// The mode's flow with the control held: what continues a segment past its ends.
struct HeldFlow<'a, S: HybridSystem> {
    sys: &'a S,
    mode: usize,
    u: &'a [f64],
    p: &'a [f64],
    n: usize,
}

impl<S: HybridSystem> OdeRhs<f64> for HeldFlow<'_, S> {
    fn dim(&self) -> usize {
        self.n
    }
    fn eval(&self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        self.sys.flow(self.mode, t, y, self.u, self.p, dy)
    }
    /// Never asked for: the extensions are integrated by DOPRI5.
    fn newton_jacobian(&self, _t: f64, _y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        Err(ModelError::Other(
            "the reference's extension is integrated explicitly".into(),
        ))
    }
}

/// A knot of a piece: time, state, slope, control, gain.
type KnotData = (f64, DVector<f64>, DVector<f64>, DVector<f64>, DMatrix<f64>);

impl RunTable {
    /// Tabulates `lqr`'s nominal: each segment at spacing about (t_f − t0)/(n − 1) (both
    /// ends included), extended by `window` (time) on each side that has an event.
    pub fn from_lqr<S: HybridSystem>(
        lqr: &Lqr<'_, S>, n: usize, window: f64,
    ) -> Result<Self, FeedbackError> {
        let (t0, tf) = lqr.span();
        let h = (tf - t0) / (n.max(2) - 1) as f64;
        let ranges = lqr.event_pieces();
        let ns = ranges.len();
        let mut pieces = Vec::with_capacity(ns);
        for (s, &(first, last)) in ranges.iter().enumerate() {
            let (a, b) = (lqr.segment_span(first).0, lqr.segment_span(last).1);
            let m = (((b - a) / h).ceil() as usize).max(1);
            let mut knots = Vec::with_capacity(m + 1);
            let mut seg = first;
            for i in 0..=m {
                let t = if i == m {
                    b
                } else {
                    a + (b - a) * i as f64 / m as f64
                };
                while seg < last && lqr.segment_span(seg).1 < t {
                    seg += 1;
                }
                let g = lqr.on_segment(seg, t)?;
                let f = slope(lqr, g.mode, t, g.x.as_slice(), g.u.as_slice())?;
                knots.push((t, g.x, f, g.u, g.k));
            }
            let mode = lqr.on_segment(first, a)?.mode;
            if s > 0 {
                let before = extend(lqr, mode, &knots[0], -window, h)?;
                knots.splice(0..0, before.into_iter().rev());
            }
            if s + 1 < ns {
                let end = knots.len() - 1;
                let after = extend(lqr, mode, &knots[end], window, h)?;
                knots.extend(after);
            }
            pieces.push(piece(knots, a));
        }
        Ok(RunTable {
            pieces,
            t0,
            t_final: tf,
        })
    }

    /// The number of nominal segments.
    pub fn segments(&self) -> usize {
        self.pieces.len()
    }

    /// The nominal start time of segment `s` (its opening event's time; t0 for the first).
    pub fn segment_start(&self, s: usize) -> f64 {
        self.pieces[s].start
    }
}

/// `f(mode, t, x, u)` at the nominal's parameters.
fn slope<S: HybridSystem>(
    lqr: &Lqr<'_, S>, mode: usize, t: f64, x: &[f64], u: &[f64],
) -> Result<DVector<f64>, FeedbackError> {
    let setup = lqr.setup();
    let mut f = vec![0.0; x.len()];
    setup
        .sys()
        .flow(mode, t, x, u, &lqr.theta()[..setup.np()], &mut f)
        .map_err(|source| Error::Model {
            t,
            mode: setup.dims().mode_name(mode),
            source,
        })?;
    Ok(DVector::from_vec(f))
}

/// The knots of the mode's flow continued from `from` over `window` (signed: backward
/// when negative) at spacing h, u and K held; stops early where the flow fails.
fn extend<S: HybridSystem>(
    lqr: &Lqr<'_, S>, mode: usize, from: &KnotData, window: f64, h: f64,
) -> Result<Vec<KnotData>, FeedbackError> {
    let setup = lqr.setup();
    let (t_a, x_a, _, u, k) = from;
    let rhs = HeldFlow {
        sys: setup.sys(),
        mode,
        u: u.as_slice(),
        p: &lqr.theta()[..setup.np()],
        n: x_a.len(),
    };
    let solver = SolverOptions {
        method: Method::Dopri5,
        ..setup.solver()
    };
    let steps = ((window.abs() / h).ceil() as usize).max(1);
    let dt = window / steps as f64;
    let (mut t, mut y) = (*t_a, x_a.as_slice().to_vec());
    let mut out = Vec::with_capacity(steps);
    let mut stats = Stats::default();
    for _ in 0..steps {
        let Ok((y1, _)) = integrate_smooth(&rhs, t, t + dt, &y, &solver, None, &mut stats, None)
        else {
            break;
        };
        let Ok(f) = slope(lqr, mode, t + dt, &y1, u.as_slice()) else {
            break;
        };
        (t, y) = (t + dt, y1);
        out.push((t, DVector::from_vec(y.clone()), f, u.clone(), k.clone()));
    }
    Ok(out)
}

fn piece(knots: Vec<KnotData>, start: f64) -> Piece {
    let mut p = Piece {
        t: Vec::with_capacity(knots.len()),
        knots: Knots::with_capacity(knots.len()),
        start,
    };
    for (t, x, f, u, k) in knots {
        p.t.push(t);
        p.knots.push(x, f, u, &k);
    }
    p
}

impl Piece {
    /// The reference at τ (module docs): Hermite inside the knots, first order outside.
    fn at<D: Scalar>(&self, tau: D) -> RefPoint<D> {
        let n = self.t.len();
        let tr = tau.re();
        if n == 1 || tr <= self.t[0] {
            return self.knots.beyond(0, tau - self.t[0]);
        }
        if tr >= self.t[n - 1] {
            return self.knots.beyond(n - 1, tau - self.t[n - 1]);
        }
        let i = (self.t.partition_point(|&t| t <= tr).max(1) - 1).min(n - 2);
        let h = self.t[i + 1] - self.t[i];
        self.knots.between(i, (tau - self.t[i]) / h, h)
    }
}

impl Reference for RunTable {
    /// The phase τ and the count of impacts.
    fn state_names(&self) -> Vec<String> {
        vec!["phase".into(), "impacts".into()]
    }
    /// τ = t0, no impact yet.
    fn start(&self) -> Vec<f64> {
        vec![self.t0, 0.0]
    }
    /// The reference of the segment the count picks, at τ.
    fn at<D: Scalar>(&self, c: &[D]) -> RefPoint<D> {
        let s = (c[1].re().round().max(0.0) as usize).min(self.pieces.len() - 1);
        self.pieces[s].at(c[0])
    }
    /// `k⁺ = k + 1`; `τ⁺ = τ` (extend) or the next segment's nominal start (reset).
    fn after_impact<D: Scalar>(&self, clock: Clock, c: &[D]) -> Vec<D> {
        let next = c[1].re().round().max(0.0) as usize + 1;
        let tau = match (clock, self.pieces.get(next)) {
            (Clock::Reset, Some(p)) => D::from(p.start),
            // extend, or more impacts than the nominal has: the clock runs on
            _ => c[0],
        };
        vec![tau, c[1] + D::one()]
    }
    fn without_gains(&self) -> Self {
        let mut t = self.clone();
        for p in &mut t.pieces {
            p.knots.zero_gains();
        }
        t
    }
}
