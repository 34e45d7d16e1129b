//! The setup's timeline: breakpoints (horizon, control nodes, tracking references' events,
//! data samples)
//! and the controls u(t) of each breakpoint interval.

use super::definition::Setup;
use crate::cost::Term;
use crate::integrate::trajectory::Ctx;
use crate::model::{HybridSystem, Scalar};

impl<'a, S: HybridSystem> Setup<'a, S> {
    /// Sorted breakpoints from t0 to t_end: control nodes, tracking references' event
    /// times, data sample times (cost/data.rs), and the extra ones.
    pub fn breakpoints(&self) -> Vec<f64> {
        let mut b = vec![self.t0, self.t_end];
        if let Some(g) = &self.controls {
            b.extend(g.nodes());
        }
        b.extend(self.extra_breakpoints.iter().copied());
        for o in &self.objectives {
            for t in &o.terms {
                if let Term::Track { reference, .. } = t {
                    b.extend(reference.trajectory.events.iter().map(|e| e.t));
                }
                if let Some((samples, _)) = t.data() {
                    b.extend(samples.times.iter().copied());
                }
            }
        }
        b.retain(|&t| t >= self.t0 && t <= self.t_end && t.is_finite());
        b.sort_by(|a, c| a.partial_cmp(c).unwrap());
        b.dedup_by(|a, c| (*a - *c).abs() <= 1e-13 * c.abs().max(1.0));
        b
    }

    /// The control interval a breakpoint interval lies in.
    pub fn control_interval(&self, ctx: &Ctx) -> Option<usize> {
        self.controls
            .as_ref()
            .map(|g| g.interval_of(0.5 * (ctx.t_lo + ctx.t_hi)))
    }

    /// Controls u(t) in the interval of `ctx`.
    pub fn controls_at<D: Scalar>(&self, ctx: &Ctx, t: D, theta: &[D]) -> Vec<D> {
        let mut u = vec![D::zero(); self.nu()];
        self.controls_into(ctx, t, theta, &mut u);
        u
    }

    /// [`Self::controls_at`] into a zeroed slice of length nu (no allocation).
    pub(super) fn controls_into<D: Scalar>(&self, ctx: &Ctx, t: D, theta: &[D], u: &mut [D]) {
        if let (Some(g), Some(i)) = (&self.controls, self.control_interval(ctx)) {
            g.values(i, t, &theta[self.np()..], u);
        }
    }

    /// Columns of θ touched by the control u_j through basis function a of `act`.
    pub fn control_column(&self, channel: usize, coef: usize) -> usize {
        let g = self.controls.as_ref().expect("controls");
        self.np() + channel * g.n_coef() + coef
    }
}
