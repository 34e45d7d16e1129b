//! Time-varying LQR along a nominal hybrid run: the Riccati sweep ([`super::sweep`]) and
//! the gains `K(t) = −R⁻¹ B(t)ᵀ P(t)` for the law `u = u_nom(t) + K(t) (x − x_ref(t))`
//! (docs/theory.md §10), on a grid or as dense output.
//!
//! **Dense output.** Between the knots of the backward integration (its accepted steps) P
//! is the cubic Hermite interpolant of `(P, Ṗ)` at both ends ([`Lqr::p_at`], fourth order
//! like DOPRI5's own dense output, what the closed-loop simulation evaluates); or,
//! at the integrator's accuracy, a replay from the nearest knot ([`Lqr::p_exact`]). B(t)
//! is evaluated exactly at the nominal's state. At an event time the segment after the
//! event is used (the gains are right-continuous), except at the final time.

use super::linearize::{gain, linearization};
use super::riccati::RiccatiRhs;
use super::sweep::{sweep, Knot, Sweep};
use super::weights::Weights;
use crate::error::Error;
use crate::error::FeedbackError;
use crate::integrate::smooth::integrate_smooth;
use crate::integrate::{Stats, Trajectory};
use crate::model::HybridSystem;
use crate::sensitivity::jump::Jump;
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};

/// A time-varying LQR design along one nominal run.
pub struct Lqr<'a, S: HybridSystem> {
    /// The setup without objectives (X = x: no quadratures).
    pub(crate) setup: Setup<'a, S>,
    pub(crate) theta: Vec<f64>,
    /// The nominal run (dense output kept).
    pub nominal: Trajectory,
    pub weights: Weights,
    pub(crate) sweep: Sweep,
}

/// K at one time, with the nominal there.
#[derive(Debug, Clone)]
pub struct GainSample {
    pub t: f64,
    pub mode: usize,
    /// x_ref(t)
    pub x: DVector<f64>,
    /// u_nom(t)
    pub u: DVector<f64>,
    /// K(t), nu×nx
    pub k: DMatrix<f64>,
}

/// Time-varying LQR along the run of `setup` at `theta` (its objectives are ignored), with
/// `P(t_f) = Q_f` and the jump `P⁻ = Ξᵀ P⁺ Ξ` at every event ([`Jump::from_record`]: the
/// exact saltation, with its event-time term; a terminal event's Ξ = I − f⁻ g_x/ġ, the
/// cost then weighs the state at the event).
pub fn tvlqr<'a, S: HybridSystem>(
    setup: &Setup<'a, S>, theta: &[f64], weights: &Weights,
) -> Result<Lqr<'a, S>, FeedbackError> {
    let bare = setup.with_objectives(Vec::new());
    weights.check(bare.nx(), bare.nu())?;
    let nominal = bare.simulate(theta)?;
    let xi = |i: usize| -> Result<DMatrix<f64>, Error> {
        let e = &nominal.events[i];
        Jump::from_record(&bare, &nominal, i, theta)
            .map(|j| j.xi.to_dense())
            .map_err(|source| Error::Model {
                t: e.t,
                mode: bare.dims().mode_name(e.mode_before()),
                source,
            })
    };
    let sw = sweep(&bare, &nominal, theta, weights, weights.qf.clone(), &xi)?;
    Ok(Lqr {
        setup: bare,
        theta: theta.to_vec(),
        nominal,
        weights: weights.clone(),
        sweep: sw,
    })
}

impl<'a, S: HybridSystem> Lqr<'a, S> {
    /// Assembles a design from a sweep already made on `nominal` (the periodic design).
    pub(crate) fn from_parts(
        setup: Setup<'a, S>, theta: Vec<f64>, nominal: Trajectory, weights: Weights, sweep: Sweep,
    ) -> Self {
        Lqr {
            setup,
            theta,
            nominal,
            weights,
            sweep,
        }
    }

    /// The setup the nominal was run with (no objectives).
    pub fn setup(&self) -> &Setup<'a, S> {
        &self.setup
    }

    /// θ of the nominal.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// The backward integration's counters.
    pub fn stats(&self) -> Stats {
        self.sweep.stats
    }

    /// P at the nominal's start.
    pub fn p_start(&self) -> &DMatrix<f64> {
        self.sweep.p_start()
    }

    /// The nominal's time span.
    pub fn span(&self) -> (f64, f64) {
        (self.setup.t0(), self.nominal.t_final)
    }

    /// The index into the sweep's segments of the one holding t (right-continuous at an
    /// event; the last at the final time).
    fn segment_of(&self, t: f64) -> Result<usize, FeedbackError> {
        let (t0, tf) = self.span();
        let slack = 1e-12 * tf.abs().max(1.0);
        if !(t >= t0 - slack && t <= tf + slack) {
            return Err(FeedbackError::OutOfRange { t, t0, tf });
        }
        let segs = &self.sweep.segments;
        let i = segs.partition_point(|s| s.knots[0].t <= t);
        Ok(i.saturating_sub(1).min(segs.len() - 1))
    }

    /// P(t) by cubic Hermite interpolation between the knots.
    pub fn p_at(&self, t: f64) -> Result<DMatrix<f64>, FeedbackError> {
        let knots = &self.sweep.segments[self.segment_of(t)?].knots;
        Ok(hermite(knots, t))
    }

    /// P(t) at the integrator's accuracy: the Riccati equation integrated backward from the
    /// nearest knot at or after t.
    pub fn p_exact(&self, t: f64) -> Result<DMatrix<f64>, FeedbackError> {
        let rs = &self.sweep.segments[self.segment_of(t)?];
        let seg = &self.nominal.segments[rs.segment];
        let k = rs
            .knots
            .partition_point(|k| k.t < t)
            .min(rs.knots.len() - 1);
        let from = &rs.knots[k];
        let n = self.weights.nx();
        let rhs = RiccatiRhs {
            setup: &self.setup,
            seg,
            ctx: seg.ctx(),
            theta: &self.theta,
            w: &self.weights,
        };
        let mut stats = Stats::default();
        let (y, _) = integrate_smooth(
            &rhs,
            from.t,
            t,
            from.p.as_slice(),
            &self.setup.solver(),
            None,
            &mut stats,
            None,
        )
        .map_err(|_| FeedbackError::Nominal(format!("the replay of P to t = {t} failed")))?;
        Ok(DMatrix::from_column_slice(n, n, &y))
    }

    /// The nominal at t: mode, x_ref(t), u_nom(t) (right-continuous at events).
    pub fn nominal_at(&self, t: f64) -> Result<(usize, DVector<f64>, DVector<f64>), FeedbackError> {
        let rs = &self.sweep.segments[self.segment_of(t)?];
        let seg = &self.nominal.segments[rs.segment];
        let mut x = vec![0.0; self.setup.n()];
        seg.state_at(t, &mut x);
        let u = self.setup.controls_at(&seg.ctx(), t, &self.theta);
        Ok((seg.mode, DVector::from_vec(x), DVector::from_vec(u)))
    }

    /// K(t) = −R⁻¹ B(t)ᵀ P(t) with P from the dense output ([`Self::p_at`]).
    pub fn gain_at(&self, t: f64) -> Result<DMatrix<f64>, FeedbackError> {
        let p = self.p_at(t)?;
        self.gain_with(t, &p)
    }

    /// K(t) with P at the integrator's accuracy ([`Self::p_exact`]).
    pub fn gain_exact(&self, t: f64) -> Result<DMatrix<f64>, FeedbackError> {
        let p = self.p_exact(t)?;
        self.gain_with(t, &p)
    }

    fn gain_with(&self, t: f64, p: &DMatrix<f64>) -> Result<DMatrix<f64>, FeedbackError> {
        let rs = &self.sweep.segments[self.segment_of(t)?];
        let seg = &self.nominal.segments[rs.segment];
        let mut x = vec![0.0; self.setup.n()];
        seg.state_at(t, &mut x);
        let (_, b) = linearization(&self.setup, &seg.ctx(), t, &x, &self.theta).map_err(|e| {
            Error::Model {
                t,
                mode: self.setup.dims().mode_name(seg.mode),
                source: e,
            }
        })?;
        Ok(gain(self.weights.r_inv(), &b, p))
    }

    /// The design on the nominal's segment `s` at t in its span, its end included (the
    /// left limit there, before the segment's closing event): mode, x_ref, u_nom and K
    /// with P from the dense output.
    pub fn on_segment(&self, s: usize, t: f64) -> Result<GainSample, FeedbackError> {
        let rs = &self.sweep.segments[s];
        let seg = &self.nominal.segments[rs.segment];
        let mut x = vec![0.0; self.setup.n()];
        seg.state_at(t, &mut x);
        let ctx = seg.ctx();
        let u = self.setup.controls_at(&ctx, t, &self.theta);
        let (_, b) =
            linearization(&self.setup, &ctx, t, &x, &self.theta).map_err(|e| Error::Model {
                t,
                mode: self.setup.dims().mode_name(seg.mode),
                source: e,
            })?;
        let k = gain(self.weights.r_inv(), &b, &hermite(&rs.knots, t));
        x.truncate(self.setup.nx());
        Ok(GainSample {
            t,
            mode: seg.mode,
            x: DVector::from_vec(x),
            u: DVector::from_vec(u),
            k,
        })
    }

    /// The nominal's stretches between events, as ranges of its segments (a segment also
    /// ends at a breakpoint of the control grid): `(first, last)`, the last one closed by
    /// an event (or the run's end).
    pub fn event_pieces(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut first = 0;
        for (i, rs) in self.sweep.segments.iter().enumerate() {
            let last = i + 1 == self.sweep.segments.len();
            if last || !self.nominal.segments[rs.segment].end_events.is_empty() {
                out.push((first, i));
                first = i + 1;
            }
        }
        out
    }

    /// The span `[t_start, t_end]` of the nominal's segment `s`.
    pub fn segment_span(&self, s: usize) -> (f64, f64) {
        let seg = &self.nominal.segments[self.sweep.segments[s].segment];
        (seg.t_start, seg.t_end)
    }

    /// K on `n` evenly spaced times over the nominal's span (n ≥ 2), each exact
    /// ([`Self::gain_exact`]), with the nominal there.
    pub fn gains_on_grid(&self, n: usize) -> Result<Vec<GainSample>, FeedbackError> {
        let (t0, tf) = self.span();
        let n = n.max(2);
        (0..n)
            .map(|i| {
                let t = t0 + (tf - t0) * i as f64 / (n - 1) as f64;
                let (mode, x, u) = self.nominal_at(t)?;
                Ok(GainSample {
                    t,
                    mode,
                    x,
                    u,
                    k: self.gain_exact(t)?,
                })
            })
            .collect()
    }
}

/// The cubic Hermite interpolant of the knots' `(P, Ṗ)` at t (clamped to their span):
/// `P(t0 + sh) = h00 P0 + h10 h Ṗ0 + h01 P1 + h11 h Ṗ1` (de Boor, *A Practical Guide to
/// Splines*, ch. IV).
fn hermite(knots: &[Knot], t: f64) -> DMatrix<f64> {
    if knots.len() == 1 {
        return knots[0].p.clone();
    }
    let i = knots
        .partition_point(|k| k.t <= t)
        .clamp(1, knots.len() - 1);
    let (a, b) = (&knots[i - 1], &knots[i]);
    let h = b.t - a.t;
    if h <= 0.0 {
        return b.p.clone();
    }
    let s = ((t - a.t) / h).clamp(0.0, 1.0);
    let (s2, s3) = (s * s, s * s * s);
    let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
    let h10 = s3 - 2.0 * s2 + s;
    let h01 = -2.0 * s3 + 3.0 * s2;
    let h11 = s3 - s2;
    &a.p * h00 + &a.p_dot * (h10 * h) + &b.p * h01 + &b.p_dot * (h11 * h)
}
