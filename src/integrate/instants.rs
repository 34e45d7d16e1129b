//! Reading a run at instants that were breakpoints of it (the data term's sample times,
//! cost/data.rs): the state there is a step's end, kept exactly, never an interpolant's
//! value. The state read is the **right-continuous** one: after every event at the
//! instant, i.e. the start of the last segment that begins there; at the run's end, the
//! final state.

use super::trajectory::{Ctx, Trajectory};
use crate::model::Scalar;

/// Where the state at an instant is kept on a trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instant {
    /// The start of segment `i` (the last segment that starts at the instant).
    SegmentStart(usize),
    /// The final state (the instant is the run's end and no segment starts there).
    Final,
}

/// An instant that is not on the run: after its end (a terminal event stopped it first),
/// or not a breakpoint of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OffRun {
    pub t: f64,
    pub t_final: f64,
}

/// Whether `a` and `b` are the same breakpoint (the timeline merges breakpoints closer
/// than 1e-13 relative; setup/timeline.rs).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

impl<D: Scalar> Trajectory<D> {
    /// Where the right-continuous state at each of `times` (sorted) is kept; every time
    /// must be a breakpoint of the run at or before its end.
    pub fn instants(&self, times: &[f64]) -> Result<Vec<Instant>, OffRun> {
        let t_final = self.t_final.re();
        let mut out = Vec::with_capacity(times.len());
        let mut s = 0;
        for &t in times {
            while self
                .segments
                .get(s + 1)
                .is_some_and(|n| n.t_start.re() <= t || same(n.t_start.re(), t))
            {
                s += 1;
            }
            let off = OffRun { t, t_final };
            if t > t_final && !same(t, t_final) {
                return Err(off);
            }
            let seg = self.segments.get(s).ok_or(off)?;
            let starts_here = same(seg.t_start.re(), t);
            let has_state = !seg.steps.is_empty() || !seg.windows.is_empty();
            out.push(if starts_here && has_state && !same(t, t_final) {
                Instant::SegmentStart(s)
            } else if same(t, t_final) {
                Instant::Final
            } else if starts_here && has_state {
                Instant::SegmentStart(s)
            } else {
                return Err(off);
            });
        }
        Ok(out)
    }

    /// The state kept at `at` and its context (mode and breakpoint interval).
    pub fn state_of(&self, at: Instant) -> (&[D], Ctx) {
        match at {
            Instant::SegmentStart(i) => {
                let seg = &self.segments[i];
                let y = match seg.windows.first() {
                    Some(w) => &w.y0[..],
                    None => seg.steps[0].y0(),
                };
                (y, seg.ctx())
            }
            Instant::Final => {
                let last = self.segments.last();
                let ctx = Ctx {
                    mode: self.mode_final,
                    t_lo: last.map_or(self.t0, |s| s.t_lo),
                    t_hi: last.map_or(self.t_final.re(), |s| s.t_hi),
                };
                (&self.y_final[..], ctx)
            }
        }
    }
}
