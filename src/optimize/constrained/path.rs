//! Path constraints `lower ≤ y(t) ≤ upper` for every t of the horizon, on the continuous
//! trajectory (docs/constrained.md, "Path constraints"). The constraint is a semi-infinite
//! one; it holds iff it holds at the output's local maxima (for `upper`) and minima (for
//! `lower`) on every arc between events, its ends included. Those points are found on each
//! trajectory's dense output and imposed as rows (local reduction):
//!
//! - an interior extremum t* (ẏ(t*) = 0): `d y(t*(x), x)/dx = ∂y(t*, x)/∂x` (the envelope
//!   theorem: the term with dt*/dx vanishes), the gradient of a terminal functional on the
//!   horizon [t0, t*] — one adjoint run over that horizon;
//! - the pre-event value at an arc's end: the `event_output` functional;
//! - the horizon's end: the `terminal` functional (with dψ/dT for a free final time);
//! - the horizon's start: y(t0) from the initial state, differentiated in dual numbers.
//!
//! Only the points within a band of the bound become rows (a tenth of the output's range
//! over the run), so a far-away extremum costs nothing; the merit function still sees
//! every point's violation through the rows of the next iterate. Values just after an
//! event (an upward jump of y) are not rows: they are checked in the report's violation.

use super::nlp::Nlp;
use super::point::{PathRow, Point, RowAt};
use crate::cost::{EventGuard, Objective, Quantity, Term};
use crate::error::Error;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::sensitivity::{evaluate, Evaluation, GradientMethod};
use crate::setup::Setup;
use num_dual::Dual64;

/// Whether an extremum is a maximum or a minimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Max,
    Min,
}

/// A local extremum of the output on the trajectory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Extremum {
    pub at: RowAt,
    pub side: Side,
    pub t: f64,
    pub value: f64,
    /// For `BeforeEvent`, the index of the event.
    pub event: usize,
}

/// Samples per step for locating the extrema (besides the step ends).
const PER_STEP: usize = 3;
/// Golden-section iterations refining an extremum: the bracket shrinks by 0.618^60 ≈ 3e-13.
const REFINE: usize = 60;
/// The band, as a fraction of the output's range over the run, within which an extremum
/// becomes a row.
const BAND: f64 = 0.1;

impl<S: HybridSystem> Nlp<'_, '_, S> {
    /// The rows of the path constraint on `output` with bounds `(lower, upper)` at the point
    /// evaluated in `ev` (on `setup`, the horizon ending at the point's T).
    pub(crate) fn path_rows(
        &self, setup: &Setup<'_, S>, ev: &Evaluation, theta: &[f64], output: usize,
        (lower, upper): (f64, f64),
    ) -> Result<Vec<PathRow>, Error> {
        let dense;
        let traj = if ev.trajectory.is_dense() {
            &ev.trajectory
        } else {
            dense = setup.simulate(theta)?;
            &dense
        };
        let found = extrema(setup, traj, theta, output)?;
        let (lo, hi) = found
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |a, e| {
                (a.0.min(e.value), a.1.max(e.value))
            });
        let band = BAND * (hi - lo).max(0.0) + 1e-9;
        let chosen: Vec<Extremum> = found
            .into_iter()
            .filter(|e| match e.side {
                Side::Max => upper.is_finite() && e.value >= upper - band,
                Side::Min => lower.is_finite() && e.value <= lower + band,
            })
            .collect();
        let mut rows = Vec::new();
        // the points with functionals on the whole horizon, in one evaluation
        let mut terms = Vec::new();
        for e in &chosen {
            match e.at {
                RowAt::BeforeEvent { .. } => terms.push(Term::plain(
                    Quantity::EventOutput {
                        guard: EventGuard::Any,
                        occurrence: e.event + 1,
                        output,
                    },
                    1.0,
                )),
                RowAt::End => terms.push(Term::plain(Quantity::Terminal { output }, 1.0)),
                _ => {}
            }
        }
        let whole = if terms.is_empty() {
            None
        } else {
            let objectives = terms
                .iter()
                .map(|t| Objective::new("path", vec![t.clone()]))
                .collect();
            let s = setup.with_objectives(objectives);
            let w = evaluate(&s, theta, GradientMethod::Adjoint)?;
            let dt = match self.constraints.free_time {
                Some(_) => super::nlp::time_derivatives(&s, &w, theta)?,
                None => vec![],
            };
            Some((w, dt))
        };
        let mut next_whole = 0;
        for e in &chosen {
            let (value, grad) = match e.at {
                RowAt::Start => (e.value, start_gradient(self, setup, theta, output)?),
                RowAt::Interior { .. } => {
                    let mut s = setup.with_objectives(vec![Objective::new(
                        "path",
                        vec![Term::plain(Quantity::Terminal { output }, 1.0)],
                    )]);
                    s.t_end = e.t;
                    let w = evaluate(&s, theta, GradientMethod::Adjoint)?;
                    (e.value, self.restrict(&w.gradients[0]))
                }
                RowAt::BeforeEvent { .. } | RowAt::End => {
                    let (w, dt) = whole.as_ref().expect("evaluated above");
                    let o = next_whole;
                    next_whole += 1;
                    let mut g = self.restrict(&w.gradients[o]);
                    if let (Some(d), Some(last)) = (dt.get(o), g.last_mut()) {
                        *last = *d;
                    }
                    (w.values[o], g)
                }
                RowAt::Whole | RowAt::Continuity { .. } => unreachable!("a path point"),
            };
            rows.push(PathRow {
                at: e.at,
                value,
                grad,
            });
        }
        Ok(rows)
    }
}

/// `d y(t0)/dx` from the initial state in dual numbers, one pass per optimized entry
/// (T's entry 0: the start does not depend on the horizon's end).
fn start_gradient<S: HybridSystem>(
    nlp: &Nlp<'_, '_, S>, setup: &Setup<'_, S>, theta: &[f64], output: usize,
) -> Result<Vec<f64>, Error> {
    let mut grad = vec![0.0; nlp.n()];
    for (i, &k) in nlp.free.iter().enumerate() {
        let thd: Vec<Dual64> = theta
            .iter()
            .enumerate()
            .map(|(j, &v)| Dual64::new(v, if j == k { 1.0 } else { 0.0 }))
            .collect();
        grad[i] = output_at_start(setup, &thd, output)?.eps;
    }
    Ok(grad)
}

/// The output at t0 in dual numbers.
fn output_at_start<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[Dual64], output: usize,
) -> Result<Dual64, Error> {
    let t0 = setup.t0;
    let (mode, x) = setup
        .initial(theta)
        .map_err(crate::setup::located(setup, t0, 0))?;
    // the first breakpoint interval
    let t_hi = setup
        .breakpoints()
        .into_iter()
        .find(|&b| b > t0)
        .unwrap_or(setup.t_end);
    let ctx = crate::integrate::trajectory::Ctx {
        mode,
        t_lo: t0,
        t_hi,
    };
    let u = setup.controls_at(&ctx, Dual64::from(t0), theta);
    let mut y = vec![Dual64::from(0.0); setup.dims.outputs.len()];
    setup
        .sys()
        .outputs(
            mode,
            Dual64::from(t0),
            &x[..setup.nx()],
            &u,
            &theta[..setup.np()],
            &mut y,
        )
        .map_err(crate::setup::located(setup, t0, mode))?;
    Ok(y[output])
}

/// The output `output` at time t of the arc made of `segments` (a dense trajectory).
fn output_on<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, segments: &[usize], theta: &[f64], output: usize,
    t: f64, buf: &mut [f64], y: &mut [f64],
) -> Result<f64, Error> {
    let si = segments
        .iter()
        .copied()
        .find(|&i| t <= traj.segments[i].t_end)
        .unwrap_or(*segments.last().expect("an arc has a segment"));
    let seg = &traj.segments[si];
    let t = t.clamp(seg.t_start, seg.t_end);
    seg.state_at(t, buf);
    let u = setup.controls_at(&seg.ctx(), t, theta);
    setup
        .sys()
        .outputs(seg.mode, t, &buf[..setup.nx()], &u, &theta[..setup.np()], y)
        .map_err(crate::setup::located(setup, t, seg.mode))?;
    Ok(y[output])
}

/// Every local extremum of `output` on a dense trajectory: interior ones refined by golden
/// section on the interpolant, and the arcs' ends (the start, the pre-event values, the end)
/// where the output is extremal on its arc.
pub(crate) fn extrema<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], output: usize,
) -> Result<Vec<Extremum>, Error> {
    let mut buf = vec![0.0; traj.y_final.len()];
    let mut y = vec![0.0; setup.dims.outputs.len()];
    let mut found = Vec::new();
    for (arc, (segments, event)) in arcs(traj).into_iter().enumerate() {
        // samples of the output along the arc (step ends and PER_STEP interior points)
        let mut ts: Vec<f64> = Vec::new();
        for &si in &segments {
            let seg = &traj.segments[si];
            if ts.last() != Some(&seg.t_start) {
                ts.push(seg.t_start);
            }
            for st in &seg.steps {
                let (a, b) = (st.t0, st.t1().min(seg.t_end));
                for j in 1..=PER_STEP + 1 {
                    let t = a + (b - a) * j as f64 / (PER_STEP + 1) as f64;
                    if t > *ts.last().expect("pushed") && t <= seg.t_end {
                        ts.push(t);
                    }
                }
            }
        }
        let mut ys = Vec::with_capacity(ts.len());
        for &t in &ts {
            ys.push(output_on(
                setup, traj, &segments, theta, output, t, &mut buf, &mut y,
            )?);
        }
        let n = ts.len();
        if n < 2 {
            continue;
        }
        let mut at_end = |at: RowAt, side: Side, i: usize| {
            found.push(Extremum {
                at,
                side,
                t: ts[i],
                value: ys[i],
                event: event.unwrap_or(0),
            })
        };
        // the arc's ends
        let start_at = if arc == 0 { Some(RowAt::Start) } else { None };
        let end_at = match event {
            Some(_) => RowAt::BeforeEvent { arc },
            None => RowAt::End,
        };
        if let Some(at) = start_at {
            if ys[0] >= ys[1] {
                at_end(at, Side::Max, 0);
            }
            if ys[0] <= ys[1] {
                at_end(at, Side::Min, 0);
            }
        }
        if ys[n - 1] >= ys[n - 2] {
            at_end(end_at, Side::Max, n - 1);
        }
        if ys[n - 1] <= ys[n - 2] {
            at_end(end_at, Side::Min, n - 1);
        }
        // interior extrema
        let mut k = 0;
        for i in 1..n - 1 {
            let side = if ys[i] > ys[i - 1] && ys[i] >= ys[i + 1] {
                Side::Max
            } else if ys[i] < ys[i - 1] && ys[i] <= ys[i + 1] {
                Side::Min
            } else {
                continue;
            };
            let sign = if side == Side::Max { 1.0 } else { -1.0 };
            let mut eval = |t: f64| -> Result<f64, Error> {
                Ok(sign * output_on(setup, traj, &segments, theta, output, t, &mut buf, &mut y)?)
            };
            let (t, v) = golden_max(&mut eval, ts[i - 1], ts[i + 1], ts[i], sign * ys[i])?;
            found.push(Extremum {
                at: RowAt::Interior { arc, k },
                side,
                t,
                value: sign * v,
                event: 0,
            });
            k += 1;
        }
    }
    Ok(found)
}

/// The arcs of a trajectory: runs of segments between events, each with the index of the
/// event that ends it (`None` for the last arc, which ends at the horizon's end).
fn arcs(traj: &Trajectory) -> Vec<(Vec<usize>, Option<usize>)> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for (i, seg) in traj.segments.iter().enumerate() {
        cur.push(i);
        if let Some(&e) = seg.end_events.first() {
            if !traj.events[e].terminal {
                out.push((std::mem::take(&mut cur), Some(e)));
            }
        }
    }
    if !cur.is_empty() {
        out.push((cur, None));
    }
    out
}

/// The maximum of a unimodal `f` on `[a, b]` by golden section, starting from the best
/// sample `(t, v)` (returned if the search finds nothing higher).
fn golden_max(
    f: &mut impl FnMut(f64) -> Result<f64, Error>, mut a: f64, mut b: f64, t: f64, v: f64,
) -> Result<(f64, f64), Error> {
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let (mut best_t, mut best_v) = (t, v);
    let mut c = b - r * (b - a);
    let mut d = a + r * (b - a);
    let (mut fc, mut fd) = (f(c)?, f(d)?);
    for _ in 0..REFINE {
        if fc >= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - r * (b - a);
            fc = f(c)?;
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + r * (b - a);
            fd = f(d)?;
        }
        if b - a <= 1e-14 * b.abs().max(1.0) {
            break;
        }
    }
    for (tt, vv) in [(c, fc), (d, fd)] {
        if vv > best_v {
            best_t = tt;
            best_v = vv;
        }
    }
    Ok((best_t, best_v))
}

/// The extreme of `output` over the final point's run on the side that binds most (the
/// maximum against `upper`, the minimum against `lower`): every refined extremum and the
/// dense samples (8 a step, the values just after events included), for the report.
pub(crate) fn extreme<S: HybridSystem>(
    nlp: &Nlp<'_, '_, S>, p: &Point, output: usize, (lower, upper): (f64, f64),
) -> f64 {
    let setup = nlp.setup_at(p.t_end);
    let dense;
    let traj = if p.evaluation.trajectory.is_dense() {
        &p.evaluation.trajectory
    } else {
        match setup.simulate(&p.theta) {
            Ok(t) => {
                dense = t;
                &dense
            }
            Err(_) => return f64::NAN,
        }
    };
    let mut values: Vec<f64> = extrema(&setup, traj, &p.theta, output)
        .map(|v| v.iter().map(|e| e.value).collect())
        .unwrap_or_default();
    let mut y = vec![0.0; setup.dims.outputs.len()];
    for (t, si, x) in traj.samples(8) {
        let seg = &traj.segments[si];
        let u = setup.controls_at(&seg.ctx(), t, &p.theta);
        let ok = setup
            .sys()
            .outputs(
                seg.mode,
                t,
                &x[..setup.nx()],
                &u,
                &p.theta[..setup.np()],
                &mut y,
            )
            .is_ok();
        if ok {
            values.push(y[output]);
        }
    }
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    if upper.is_finite() && (!lower.is_finite() || hi - upper >= lower - lo) {
        hi
    } else {
        lo
    }
}
