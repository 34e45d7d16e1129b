//! The objectives on a finished trajectory: their values and the events they refer to.

use super::definition::Setup;
use crate::cost::EventGuard;
use crate::integrate::trajectory::Ctx;
use crate::model::{HybridSystem, Scalar};

impl<'a, S: HybridSystem> Setup<'a, S> {
    /// The objectives' values on a finished trajectory (generic: the dual witness
    /// evaluates the same formula in dual numbers).
    pub fn objective_values<D: Scalar>(
        &self, traj: &crate::integrate::Trajectory<D>, theta: &[D],
    ) -> Result<Vec<D>, crate::error::Error> {
        let nx = self.nx();
        let ny = self.dims.outputs.len();
        let mut vals = Vec::with_capacity(self.objectives.len());
        // outputs at tf (unless a terminal event ended the run: then terminal terms are
        // evaluated at that event, x⁻, like event terms)
        let term_ev = traj.events.last().filter(|e| e.terminal);
        let (tf, yf_state, mode_f) = match term_ev {
            Some(e) => (e.t, e.before.y.clone(), e.mode_before()),
            None => (traj.t_final, traj.y_final.clone(), traj.mode_final),
        };
        let last_seg = traj.segments.last();
        let ctx_f = Ctx {
            mode: mode_f,
            t_lo: last_seg.map_or(self.t0, |s| s.t_lo),
            t_hi: last_seg.map_or(self.t_end, |s| s.t_hi),
        };
        let uf = self.controls_at(&ctx_f, tf, theta);
        let mut yf = vec![D::zero(); ny];
        self.sys
            .outputs(
                mode_f,
                tf,
                &yf_state[..nx],
                &uf,
                &theta[..self.np()],
                &mut yf,
            )
            .map_err(|e| crate::error::Error::Model {
                t: tf.re(),
                mode: self.dims.mode_name(mode_f),
                source: e,
            })?;
        for (oi, obj) in self.objectives.iter().enumerate() {
            let mut v = D::zero();
            for (z, _) in self.running_of(oi) {
                v += traj.y_final[nx + z];
            }
            for term in &obj.terms {
                v += term.parameter_value(theta);
                v += D::from(term.time_value(self.t_end));
                if term.is_terminal() {
                    v += term.terminal(&yf);
                }
                if let Some((samples, weight)) = term.data() {
                    for r in self.data_residuals(traj, theta, samples, weight)? {
                        v += r * r;
                    }
                }
                if let Some((guard, occ)) = term.event() {
                    let (idx, ctx) = self.find_event(traj, guard, occ)?;
                    let e = &traj.events[idx];
                    let u = self.controls_at(&ctx, e.t, theta);
                    let after = term.quantity().is_some_and(|q| q.is_after_event());
                    let side = if after && !e.terminal {
                        &e.after
                    } else {
                        &e.before
                    };
                    let mut y = vec![D::zero(); ny];
                    self.sys
                        .outputs(
                            side.mode,
                            e.t,
                            &side.y[..nx],
                            &u,
                            &theta[..self.np()],
                            &mut y,
                        )
                        .map_err(|er| crate::error::Error::Model {
                            t: e.t.re(),
                            mode: self.dims.mode_name(side.mode),
                            source: er,
                        })?;
                    v += term.event_value(e.t, &side.y[..nx], &y);
                }
            }
            vals.push(v);
        }
        Ok(vals)
    }

    /// The `occurrence`-th (1-based) event of `guard` (of any guard for
    /// [`EventGuard::Any`]), and the context just before it.
    pub fn find_event<D: Scalar>(
        &self, traj: &crate::integrate::Trajectory<D>, guard: EventGuard, occurrence: usize,
    ) -> Result<(usize, Ctx), crate::error::Error> {
        let mut count = 0;
        for (i, e) in traj.events.iter().enumerate() {
            if guard.counts(e.guard) {
                count += 1;
                if count == occurrence {
                    // the segment that ends at this event
                    let seg = traj
                        .segments
                        .iter()
                        .find(|s| s.end_events.contains(&i))
                        .or(traj.segments.last());
                    let ctx = Ctx {
                        mode: e.mode_before(),
                        t_lo: seg.map_or(self.t0, |s| s.t_lo),
                        t_hi: seg.map_or(self.t_end, |s| s.t_hi),
                    };
                    return Ok((i, ctx));
                }
            }
        }
        Err(crate::error::Error::MissingEvent {
            guard: match guard {
                EventGuard::Guard(k) => self.dims.guard_name(k),
                EventGuard::Any => "any".to_string(),
            },
            occurrence,
            fired: count,
            t0: self.t0,
            t1: self.t_end,
        })
    }
}
