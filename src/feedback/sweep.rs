//! The backward sweep over a nominal hybrid run: the Riccati equation integrated backward
//! over each smooth segment (`traj.segments` in reverse, as the adjoint does), and at every
//! event the jump of the value function's Hessian (docs/theory.md §10;
//! Kong, Payne, Council & Johnson 2021):
//!
//! ```text
//! P(t_e⁻) = Ξᵀ P(t_e⁺) Ξ,       Ξ = R_x − (R_x f⁻ + R_t − f⁺) g_x / ġ
//! ```
//!
//! (the exact saltation of [`Jump`](crate::sensitivity::jump::Jump), with its event-time
//! term). Simultaneous events (several at one segment end) take the one-sided saltations of
//! the recorded crossing order, composed: `P⁻ = Ξ₁ᵀ ⋯ Ξ_kᵀ P⁺ Ξ_k ⋯ Ξ₁`.
//!
//! Every accepted step is kept as a knot `(t, P, Ṗ)`: the dense output (cubic Hermite
//! between knots, or a replay from the nearest knot, [`super::gains`]).

use super::riccati::RiccatiRhs;
use super::weights::Weights;
use crate::error::Error;
use crate::error::FeedbackError;
use crate::integrate::smooth::integrate_smooth_from;
use crate::integrate::{Stats, Trajectory};
use crate::model::HybridSystem;
use crate::setup::Setup;
use nalgebra::DMatrix;

/// One point of the Riccati solution.
#[derive(Debug, Clone)]
pub struct Knot {
    pub t: f64,
    pub p: DMatrix<f64>,
    pub p_dot: DMatrix<f64>,
}

/// The Riccati solution on one segment of the nominal: knots in increasing time, the first
/// at the segment's start, the last at its end (after the jump of the events there, read
/// backward: `P(t_end⁻)`).
#[derive(Debug, Clone)]
pub struct RiccatiSegment {
    /// Index of the nominal's segment.
    pub segment: usize,
    pub knots: Vec<Knot>,
}

/// The sweep's result: one [`RiccatiSegment`] per nominal segment (in time order) and
/// the backward integration's counters.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub segments: Vec<RiccatiSegment>,
    pub stats: Stats,
}

impl Sweep {
    /// P at the start of the nominal.
    pub fn p_start(&self) -> &DMatrix<f64> {
        &self.segments[0].knots[0].p
    }
}

/// `P ← Ξᵀ P Ξ`, symmetrized.
pub(crate) fn jump_p(xi: &DMatrix<f64>, p: &DMatrix<f64>) -> DMatrix<f64> {
    symmetric(xi.tr_mul(p) * xi)
}

/// `(P + Pᵀ)/2`.
pub(crate) fn symmetric(p: DMatrix<f64>) -> DMatrix<f64> {
    (&p + p.transpose()) * 0.5
}

/// Integrates the Riccati equation backward from `P(t_f) = p_end` over the nominal `traj`
/// (simulated by `setup` at `theta`, with its dense output), applying `P ← Ξᵀ P Ξ` with
/// `xi(i)` for each event `i` at a segment's end (the recorded order, read backward).
pub(crate) fn sweep<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], w: &Weights, p_end: DMatrix<f64>,
    xi: &dyn Fn(usize) -> Result<DMatrix<f64>, Error>,
) -> Result<Sweep, FeedbackError> {
    let n = w.nx();
    let mut p = p_end;
    let mut stats = Stats::default();
    let mut out = Vec::with_capacity(traj.segments.len());
    let mut h_carry = None;
    for (si, seg) in traj.segments.iter().enumerate().rev() {
        for &i in seg.end_events.iter().rev() {
            p = jump_p(&xi(i)?, &p);
        }
        let rhs = RiccatiRhs {
            setup,
            seg,
            ctx: seg.ctx(),
            theta,
            w,
        };
        let located = |t: f64, e: crate::error::ModelError| Error::Model {
            t,
            mode: setup.dims().mode_name(seg.mode),
            source: e,
        };
        let mut knots = vec![(seg.t_end, p.as_slice().to_vec())];
        let mut keep = |t: f64, y: &[f64]| knots.push((t, y.to_vec()));
        let (y1, h, _) = integrate_smooth_from(
            &rhs,
            seg.t_end,
            seg.t_start,
            p.as_slice(),
            None,
            &setup.solver(),
            h_carry,
            &mut stats,
            Some(&mut keep),
        )
        .map_err(|e| {
            e.into_error(
                setup.dims().mode_name(seg.mode),
                setup.solver().max_steps,
                "Riccati equation",
            )
        })?;
        h_carry = Some(h);
        p = symmetric(DMatrix::from_column_slice(n, n, &y1));
        knots.reverse();
        let knots = knots
            .into_iter()
            .map(|(t, y)| {
                let pk = DMatrix::from_column_slice(n, n, &y);
                let p_dot = rhs.p_dot(t, &pk).map_err(|e| located(t, e))?;
                Ok(Knot { t, p: pk, p_dot })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        out.push(RiccatiSegment { segment: si, knots });
    }
    out.reverse();
    Ok(Sweep {
        segments: out,
        stats,
    })
}
