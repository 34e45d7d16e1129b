//! What a simulation returns: segments of dense output between boundaries (events and
//! breakpoints), and the event records — the tape the adjoint replays.

use super::bdf::history::BdfHistory;
use super::dense::DenseStep;
use crate::model::Scalar;

/// Where the loop is: the mode and the breakpoint interval `[t_lo, t_hi]`.
///
/// The integrator's own context: not part of the stable API (the test suite builds one
/// through [`crate::testing`] to evaluate the augmented system at chosen points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ctx {
    pub mode: usize,
    pub t_lo: f64,
    pub t_hi: f64,
}

/// A smooth piece of the trajectory in one mode, `[t_start, t_end]`, inside the breakpoint
/// interval `[t_lo, t_hi]` (control-grid nodes and other fixed times are breakpoints).
#[derive(Debug, Clone)]
pub struct Segment<D> {
    pub mode: usize,
    pub t_start: D,
    pub t_end: D,
    pub t_lo: f64,
    pub t_hi: f64,
    /// Accepted steps in time order; the last one may reach past `t_end` (an event cut it).
    pub steps: Vec<DenseStep<D>>,
    /// Indices (into the trajectory's events) of the events at this segment's end.
    pub end_events: Vec<usize>,
    /// Steps compacted into checkpoints, in time order, before the dense `steps` (empty
    /// when everything is kept; see [`crate::integrate::Checkpointing`]).
    pub windows: Vec<ReplayWindow<D>>,
}

/// A run of consecutive steps kept as a checkpoint: the state at its start and each step's
/// start time and length. Replaying the steps from `y0` reproduces their interpolants bit
/// for bit (the integrators are deterministic and the slope at the start is recomputed as
/// the first-same-as-last stage computed it).
#[derive(Debug, Clone)]
pub struct ReplayWindow<D> {
    pub y0: Vec<D>,
    pub t0: Vec<D>,
    pub h: Vec<D>,
    /// Per step: an implicit method evaluated its Jacobian at the step's start.
    pub fresh_jacobian: Vec<bool>,
    /// Where the Jacobian in force at the window's first step was evaluated, when that was
    /// before the window (`(t, y)`; an implicit method's replay evaluates it there first).
    pub jacobian_at: Option<(D, Vec<D>)>,
    /// A multistep method's history at the window's start (`None` for the one-step
    /// methods and for a window that starts its segment).
    pub history: Option<Box<BdfHistory<D>>>,
}

impl<D: Scalar> ReplayWindow<D> {
    /// Start time of the window.
    pub fn start(&self) -> D {
        self.t0[0]
    }

    /// Bytes held by the window (for the memory budget): its states, times and flags, a
    /// multistep history, and the window itself.
    pub(crate) fn bytes(&self) -> usize {
        let jac = self.jacobian_at.as_ref().map_or(0, |(_, y)| y.len() + 1);
        (self.y0.len() + self.t0.len() + self.h.len() + jac) * std::mem::size_of::<D>()
            + self.fresh_jacobian.len()
            + self.history.as_ref().map_or(0, |h| h.bytes())
            + std::mem::size_of::<Self>()
    }
}

impl<D: Scalar> Segment<D> {
    /// The context of the segment: its mode and breakpoint interval.
    pub fn ctx(&self) -> Ctx {
        Ctx {
            mode: self.mode,
            t_lo: self.t_lo,
            t_hi: self.t_hi,
        }
    }

    /// Whether all of the segment's interpolants are kept (no replay windows).
    pub fn is_dense(&self) -> bool {
        self.windows.is_empty()
    }

    /// Bytes held by the interpolants (for the memory budget).
    pub fn dense_bytes(&self) -> usize {
        self.steps.iter().map(|s| s.bytes()).sum()
    }

    /// Moves the first `count` dense steps into a replay window. `jac` is where the
    /// Jacobian in force before them was evaluated (`None` at the segment's start), and
    /// becomes the one in force after them.
    pub(crate) fn compact_front(&mut self, count: usize, jac: &mut Option<(D, Vec<D>)>) {
        let count = count.min(self.steps.len());
        if count == 0 {
            return;
        }
        let rest = self.steps.split_off(count);
        let jacobian_at = if self.steps[0].fresh_jacobian {
            None
        } else {
            jac.clone()
        };
        for s in self.steps.iter().filter(|s| s.fresh_jacobian) {
            *jac = Some((s.t0, s.y0().to_vec()));
        }
        self.windows.push(ReplayWindow {
            y0: self.steps[0].y0().to_vec(),
            t0: self.steps.iter().map(|s| s.t0).collect(),
            h: self.steps.iter().map(|s| s.h).collect(),
            fresh_jacobian: self.steps.iter().map(|s| s.fresh_jacobian).collect(),
            jacobian_at,
            // the steps are dropped below: the window takes the first one's history
            history: self.steps[0].take_history(),
        });
        self.steps = rest;
    }

    /// Drops the dense steps, keeping the segment's starting state as a window without
    /// steps (once: the first call sees the segment's first step).
    pub(crate) fn discard_steps(&mut self) {
        if self.windows.is_empty() {
            if let Some(first) = self.steps.first() {
                // one window, allocated to size (a push would reserve four)
                self.windows = vec![ReplayWindow {
                    y0: first.y0().to_vec(),
                    t0: vec![first.t0],
                    h: Vec::new(),
                    fresh_jacobian: Vec::new(),
                    jacobian_at: None,
                    history: None,
                }];
            }
        }
        self.steps.clear();
    }

    /// Moves every dense step into replay windows of at most `every` steps (`jac` as in
    /// [`Self::compact_front`]).
    pub(crate) fn compact_all(&mut self, every: usize, jac: &mut Option<(D, Vec<D>)>) {
        while !self.steps.is_empty() {
            self.compact_front(every.max(1), jac);
        }
    }

    /// The state at time t (real) from the dense output (a segment with replay windows
    /// answers only within its dense tail). `t` is clamped into the segment.
    pub fn state_at(&self, t: f64, out: &mut [D]) {
        let ts = self.t_start.re();
        let te = self.t_end.re();
        let (lo, hi) = if ts <= te { (ts, te) } else { (te, ts) };
        let t = t.clamp(lo, hi);
        let forward = ts <= te;
        // binary search for the last step with t0 <= t (in the direction of integration)
        let steps = &self.steps;
        let idx = if forward {
            steps.partition_point(|s| s.t0.re() <= t).saturating_sub(1)
        } else {
            steps.partition_point(|s| s.t0.re() >= t).saturating_sub(1)
        };
        steps[idx].eval(t, out)
    }

    /// [`Self::state_at`] of a forward segment starting the search at step `*hint` (the
    /// step found last time), which it updates: the adjoint's backward pass asks for times
    /// that move slowly through the steps, so the step is almost always the hinted one or
    /// its neighbour. The step chosen is the same as the binary search's.
    pub fn state_at_hinted(&self, t: f64, out: &mut [D], hint: &mut usize) {
        let (ts, te) = (self.t_start.re(), self.t_end.re());
        let steps = &self.steps;
        if ts > te || steps.is_empty() {
            return self.state_at(t, out);
        }
        let t = t.clamp(ts, te);
        // the last step with t0 <= t: steps[i].t0 <= t < steps[i + 1].t0 (or i = 0)
        let holds = |i: usize| {
            (i == 0 || steps[i].t0.re() <= t) && steps.get(i + 1).is_none_or(|s| s.t0.re() > t)
        };
        let h = (*hint).min(steps.len() - 1);
        let idx = if holds(h) {
            h
        } else if h > 0 && holds(h - 1) {
            h - 1
        } else {
            steps.partition_point(|s| s.t0.re() <= t).saturating_sub(1)
        };
        *hint = idx;
        steps[idx].eval(t, out)
    }
}

impl Segment<f64> {
    /// The state at a time given in any scalar (the dense output's coefficients are
    /// real; a dual time carries dy/dt · ṫ).
    pub fn state_at_generic<D: Scalar>(&self, t: D, out: &mut [D]) {
        let mut tmp = vec![0.0; out.len()];
        let tr = t.re();
        let (ts, te) = (self.t_start, self.t_end);
        let (lo, hi) = if ts <= te { (ts, te) } else { (te, ts) };
        let tc = tr.clamp(lo, hi);
        let idx = if ts <= te {
            self.steps.partition_point(|s| s.t0 <= tc).saturating_sub(1)
        } else {
            self.steps.partition_point(|s| s.t0 >= tc).saturating_sub(1)
        };
        let st = &self.steps[idx];
        st.eval(tc, &mut tmp);
        if D::NDERIV == 0 {
            for (o, v) in out.iter_mut().zip(&tmp) {
                *o = D::from(*v);
            }
            return;
        }
        let mut dydt = vec![0.0; out.len()];
        st.eval_derivative_theta((tc - st.t0) / st.h, &mut dydt);
        let dt = t - tr;
        for i in 0..out.len() {
            out[i] = dt * dydt[i] + tmp[i];
        }
    }
}

/// One side of an event: the mode, the state and the slope there.
#[derive(Debug, Clone)]
pub struct EventSide<D> {
    pub mode: usize,
    /// X⁻ = X(t_e⁻), the state on the guard; or X⁺ = R(X⁻), the state after the reset (its
    /// leading components only when the run says so, as for `f`).
    pub y: Vec<D>,
    /// f⁻ = F_m(t_e, X⁻): the slope at the end of the step cut at the event; or
    /// f⁺ = F_{m'}(t_e, X⁺) in the event's breakpoint interval, zero after a terminal
    /// event (the state freezes). f⁺ starts the next segment, so it costs nothing extra.
    /// Its leading components only when the run says so (a sensitivity run keeps X's:
    /// the hybrid loop's `HybridRhs::recorded_len`; so for X⁺).
    pub f: Vec<D>,
}

impl<D: Clone> EventSide<D> {
    /// The side with its state and slope cut to their first `n` entries.
    pub fn cut(&self, n: usize) -> Self {
        EventSide {
            mode: self.mode,
            y: self.y[..n].to_vec(),
            f: self.f[..n].to_vec(),
        }
    }
}

/// One event: the instant, which guard, and the mode, state and slope on both sides. Its
/// modes by the files' and Python's words: [`EventRecord::mode_before`],
/// [`EventRecord::mode_after`].
#[derive(Debug, Clone)]
pub struct EventRecord<D> {
    /// The event time t_e.
    pub t: D,
    /// The guard that fired (index into the system's guard table).
    pub guard: usize,
    /// Before the event (mode m, X⁻, f⁻) and after the reset (m', X⁺, f⁺).
    pub before: EventSide<D>,
    pub after: EventSide<D>,
    /// Index of the segment that ends at this event.
    pub segment: usize,
    /// Events with the same group id happened at one instant (a simultaneous event).
    pub group: usize,
    /// The event ended the simulation.
    pub terminal: bool,
}

impl<D> EventRecord<D> {
    /// The mode before the event (m): `mode_before` in files, Python and every event list
    /// by name.
    pub fn mode_before(&self) -> usize {
        self.before.mode
    }

    /// The mode after the reset (m'): `mode_after` in files and Python.
    pub fn mode_after(&self) -> usize {
        self.after.mode
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    pub steps: usize,
    pub rejected: usize,
    pub rhs_evals: usize,
    pub events: usize,
    /// Steps recomputed from checkpoints by the adjoint's backward pass (not in `steps`).
    pub replayed_steps: usize,
    /// The implicit methods' Jacobian evaluations, factorizations and Newton iterations
    /// (zero for DOPRI5, and then left out of JSON).
    #[serde(skip_serializing_if = "crate::integrate::NewtonCounts::is_zero")]
    pub newton: crate::integrate::NewtonCounts,
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.steps += o.steps;
        self.rejected += o.rejected;
        self.rhs_evals += o.rhs_evals;
        self.events += o.events;
        self.replayed_steps += o.replayed_steps;
        self.newton += o.newton;
    }
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Trajectory<D = f64> {
    pub segments: Vec<Segment<D>>,
    pub events: Vec<EventRecord<D>>,
    pub stats: Stats,
    pub t0: f64,
    pub t_final: D,
    pub y_final: Vec<D>,
    pub mode_final: usize,
}

impl<D: Scalar> Trajectory<D> {
    /// The context (mode, breakpoint interval) just before event `i`: the mode the event
    /// left, in the interval of the segment it ended (recorded on the tape).
    pub fn event_ctx(&self, i: usize) -> Ctx {
        let e = &self.events[i];
        let seg = &self.segments[e.segment];
        Ctx {
            mode: e.mode_before(),
            t_lo: seg.t_lo,
            t_hi: seg.t_hi,
        }
    }

    /// Whether every segment keeps all of its interpolants (sampling and tables need it;
    /// the adjoint replays compacted windows itself).
    pub fn is_dense(&self) -> bool {
        self.segments.iter().all(Segment::is_dense)
    }

    /// Whether the adjoint can run on it: every segment keeps its interpolants or replay
    /// windows with their steps (not a [`crate::integrate::Checkpointing::Discard`] run's
    /// starting states alone).
    pub fn is_replayable(&self) -> bool {
        self.segments
            .iter()
            .all(|s| s.windows.iter().all(|w| !w.h.is_empty()))
    }

    /// Index of the segment containing t; at a boundary, `prefer_left` picks the segment
    /// that ends there.
    pub fn segment_index(&self, t: f64, prefer_left: bool) -> usize {
        let n = self.segments.len();
        for (i, s) in self.segments.iter().enumerate() {
            let (a, b) = (s.t_start.re(), s.t_end.re());
            if (t < b || (t == b && prefer_left) || i + 1 == n) && (t >= a || i == 0) {
                return i;
            }
        }
        n - 1
    }

    /// Samples every step end (and segment starts), with `per_step` extra interior points
    /// per step: `(time, segment index, state)`. Event instants appear twice (before and
    /// after), from the two segments that meet there.
    pub fn samples(&self, per_step: usize) -> Vec<(f64, usize, Vec<D>)> {
        let mut out = Vec::new();
        for (si, seg) in self.segments.iter().enumerate() {
            let dim = self.y_final.len();
            let te = seg.t_end.re();
            let ts = seg.t_start.re();
            let mut buf = vec![D::zero(); dim];
            seg.state_at(ts, &mut buf);
            out.push((ts, si, buf.clone()));
            for st in &seg.steps {
                let t0 = st.t0.re();
                let t1 = st.t1().re().min(te);
                for j in 1..=per_step + 1 {
                    let t = t0 + (t1 - t0) * j as f64 / (per_step + 1) as f64;
                    if t <= ts || t > te {
                        continue;
                    }
                    st.eval(t, &mut buf);
                    out.push((t, si, buf.clone()));
                }
            }
        }
        out
    }
}
