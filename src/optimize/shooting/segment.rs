//! One segment of multiple shooting: an ordinary hybrid run from its node's state and mode
//! over its interval, with events, jumps and direct sensitivities in θ and in the start
//! state (docs/guide/shooting.md, "The continuity constraints"). The run is that of the
//! system started at `s_k` ([`StartOnSection`]: θ' = (p, s_k, c)), so one forward pass
//! gives the segment's functionals and the end state `x_k(t_{k+1}; s_k, θ)` with
//!
//! ```text
//! ∂x_k(t_{k+1})/∂(θ, s_k) = S(t_{k+1})                  (the direct sensitivities, theory §2–3)
//! ```
//!
//! and for a periodic problem's last segment, which ends at the closing guard's first
//! firing `t_e`, the state after its reset with the return-map formula
//! `∂x⁺/∂(θ, s) = Ξ S⁻ + Ξ_θ + f⁺ τ`, `τ = −(g_x S⁻ + g_θ)/ġ` (theory §3; the state at the
//! moving event time, as `periodic::map`).

use super::nodes::Node;
use crate::cost::Objective;
use crate::error::Error;
use crate::integrate::trajectory::Ctx;
use crate::integrate::{Stats, Trajectory};
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::optimize::constrained::nlp::end_rates;
use crate::sensitivity::forward::forward_sensitivity_lean;
use crate::sensitivity::jump::Jump;
use crate::setup::Setup;
use nalgebra::DMatrix;

/// Where a segment runs: from `t0` (its node's time at the iterate's horizon) in its
/// node's mode to `t1` (a closing segment: to the first firing of `closure`, `t1` capping
/// it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span<'n> {
    pub node: &'n Node,
    pub t0: f64,
    pub t1: f64,
    pub closure: Option<usize>,
}

/// A segment's run at one iterate, with its derivatives split by what they are over.
pub(crate) struct SegmentRun {
    /// The values of the segment's parts of the functionals.
    pub values: Vec<f64>,
    /// `∂value_i/∂θ` over the problem's θ = (p, c).
    pub grad_theta: Vec<Vec<f64>>,
    /// `∂value_i/∂s` over the segment's start state.
    pub grad_start: Vec<Vec<f64>>,
    /// The state at the end (after the closing reset for a closing segment).
    pub end: Vec<f64>,
    /// `∂end/∂θ` (nx × nθ) and `∂end/∂s` (nx × nx).
    pub end_theta: DMatrix<f64>,
    pub end_start: DMatrix<f64>,
    /// The mode at the end (after the closing reset).
    pub end_mode: usize,
    /// The time it ended (the closing event's for a closing segment).
    pub t_end: f64,
    pub stats: Stats,
    /// The times of its events.
    pub events: Vec<f64>,
    /// The derivatives over its start and end times (a free final time moves both).
    pub rates: TimeRates,
}

/// A segment's derivatives over the times it runs between, `t_k` and `t_{k+1}` (its start
/// state held):
///
/// ```text
/// ∂x_k(t_{k+1})/∂t_k = −(∂x_k(t_{k+1})/∂s_k) f(t_k, s_k),  ∂x_k(t_{k+1})/∂t_{k+1} = f(t_{k+1}⁻, x_k)
/// ∂ψ_k/∂t_k = −(∂ψ_k/∂s_k) f(t_k, s_k) − L(t_k, s_k),     ∂ψ_k/∂t_{k+1} = L(t_{k+1}⁻) + Φ_y ẏ + w_T
/// ```
///
/// (a start later by dt is the same motion shifted, `∂x(t)/∂t_k = −Φ(t, t_k) f(t_k, s_k)`
/// through every event of the segment, theory §2–3; the running integrand's lost piece;
/// the end as single shooting's free final time, docs/guide/constrained-problems.md).
#[derive(Debug, Clone, Default)]
pub(crate) struct TimeRates {
    pub end_over_start: Vec<f64>,
    pub end_over_end: Vec<f64>,
    /// Per functional.
    pub value_over_start: Vec<f64>,
    pub value_over_end: Vec<f64>,
}

/// The setup of a segment over the system started at its node.
pub(crate) fn segment_setup<'w, S: HybridSystem>(
    base: &Setup<'_, S>, sys: &'w StartOnSection<'w, S>, span: Span<'_>, objectives: Vec<Objective>,
) -> Setup<'w, StartOnSection<'w, S>> {
    let mut s = Setup::new(sys, span.t0, span.t1, base.controls.clone(), objectives);
    s.solver = base.solver;
    s.events = base.events;
    s.events.stop_after = span.closure.map(|g| (g, 1));
    s.extra_breakpoints = base
        .extra_breakpoints
        .iter()
        .copied()
        .filter(|&t| t > span.t0 && t < span.t1)
        .collect();
    s
}

/// θ' = (p, s, c) of the system started at `s`.
pub(crate) fn theta_with_start(theta: &[f64], np: usize, s: &[f64]) -> Vec<f64> {
    let mut th = theta[..np].to_vec();
    th.extend_from_slice(s);
    th.extend_from_slice(&theta[np..]);
    th
}

/// Whether the run ended at the first firing of `closure`, or the error that it did not.
fn closed<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, guard: usize,
) -> Result<usize, Error> {
    match traj.events.last() {
        Some(e) if e.terminal && e.guard == guard => Ok(traj.events.len() - 1),
        _ => Err(Error::MissingEvent {
            guard: setup.dims.guard_name(guard),
            occurrence: 1,
            fired: 0,
            t0: setup.t0,
            t1: setup.t_end,
        }),
    }
}

/// The closing event of a run that must end at the first firing of `closure`, or the
/// error that it did not.
pub(crate) fn closing_event<'t, S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &'t Trajectory, closure: Option<usize>,
) -> Result<&'t crate::integrate::EventRecord<f64>, Error> {
    let g = closure.expect("a closing span");
    Ok(&traj.events[closed(setup, traj, g)?])
}

/// The guards the segment fires at `(θ, s)` (a plain run).
pub(super) fn firings<S: HybridSystem>(
    base: &Setup<'_, S>, span: Span<'_>, theta: &[f64], s: &[f64],
) -> Result<Vec<usize>, Error> {
    let sys = StartOnSection::new(base.sys(), span.node.mode).with_controls();
    let setup = segment_setup(base, &sys, span, vec![]);
    let traj = setup.simulate(&theta_with_start(theta, base.np(), s))?;
    if let Some(g) = span.closure {
        closed(&setup, &traj, g)?;
    }
    Ok(traj.events.iter().map(|e| e.guard).collect())
}

/// The segment's dense state trajectory at `(θ, s)` (for figures and tables): X = x.
pub(super) fn dense<S: HybridSystem>(
    base: &Setup<'_, S>, span: Span<'_>, theta: &[f64], s: &[f64],
) -> Result<Trajectory, Error> {
    let sys = StartOnSection::new(base.sys(), span.node.mode).with_controls();
    let setup = segment_setup(base, &sys, span, vec![]);
    setup.simulate(&theta_with_start(theta, base.np(), s))
}

/// The segment's run with its derivatives (module docs).
pub(crate) fn run<S: HybridSystem>(
    base: &Setup<'_, S>, span: Span<'_>, objectives: Vec<Objective>, theta: &[f64], s: &[f64],
) -> Result<SegmentRun, Error> {
    let sys = StartOnSection::new(base.sys(), span.node.mode).with_controls();
    let setup = segment_setup(base, &sys, span, objectives);
    let (np, nx, n) = (base.np(), base.nx(), setup.n());
    let th = theta_with_start(theta, np, s);
    let nth = th.len();
    let r = forward_sensitivity_lean(&setup, &th)?;
    let traj = &r.trajectory;
    // the end state and ∂end/∂θ' (rows 0..nx of X and of S)
    let (end, jac, end_mode, t_end) = match span.closure {
        None => {
            let y = &traj.y_final;
            let jac = DMatrix::from_fn(nx, nth, |i, j| y[n + j * n + i]);
            (y[..nx].to_vec(), jac, traj.mode_final, traj.t_final)
        }
        Some(g) => {
            let last = closed(&setup, traj, g)?;
            let e = &traj.events[last];
            let ctx = traj.event_ctx(last);
            let jump =
                Jump::at(&setup, &ctx, g, e.t, &e.before.y[..n], &th, false).map_err(|source| {
                    Error::Model {
                        t: e.t,
                        mode: setup.dims.mode_name(ctx.mode),
                        source,
                    }
                })?;
            let s_minus = DMatrix::from_column_slice(n, nth, &e.before.y[n..]);
            let tau = jump.tau(&s_minus);
            let full = jump.forward(&s_minus) + &jump.f_plus * tau.transpose();
            (
                jump.x_plus.as_slice()[..nx].to_vec(),
                full.rows(0, nx).into_owned(),
                jump.mode_after,
                e.t,
            )
        }
    };
    // θ' = (p, s, c) → θ = (p, c) and s
    let theta_cols = |j: usize| if j < np { j } else { j + nx };
    let ntheta = nth - nx;
    let split = |g: &Vec<f64>| -> (Vec<f64>, Vec<f64>) {
        (
            (0..ntheta).map(|j| g[theta_cols(j)]).collect(),
            g[np..np + nx].to_vec(),
        )
    };
    let (grad_theta, grad_start): (Vec<Vec<f64>>, Vec<Vec<f64>>) =
        r.gradients.iter().map(split).unzip();
    let end_start = jac.columns(np, nx).into_owned();
    let rates = match span.closure {
        // a closing segment ends at its event, whatever the horizon
        Some(_) => TimeRates::default(),
        None => time_rates(&setup, traj, &th, s, &grad_start, &end_start)?,
    };
    Ok(SegmentRun {
        values: r.values.clone(),
        grad_theta,
        grad_start,
        end,
        end_theta: DMatrix::from_fn(nx, ntheta, |i, j| jac[(i, theta_cols(j))]),
        end_start,
        end_mode,
        t_end,
        stats: traj.stats,
        events: traj.events.iter().map(|e| e.t).collect(),
        rates,
    })
}

/// The segment's [`TimeRates`] from its run: the slopes at its start `(t_k, s_k)` and its
/// end, and the functionals' rates at the end ([`end_rates`]).
fn time_rates<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], s: &[f64], grad_start: &[Vec<f64>],
    end_start: &DMatrix<f64>,
) -> Result<TimeRates, Error> {
    let nx = s.len();
    let first = traj.segments.first().expect("a run has a segment");
    let ctx = Ctx {
        mode: first.mode,
        t_lo: first.t_lo,
        t_hi: first.t_hi,
    };
    let mut y0 = s.to_vec();
    y0.resize(setup.n(), 0.0);
    let mut f0 = vec![0.0; setup.n()];
    setup
        .rhs(&ctx, traj.t0, &y0, theta, &mut f0)
        .map_err(|e| crate::setup::located(setup, traj.t0, ctx.mode)(e))?;
    let (slope, value_over_end) = end_rates(setup, traj, theta)?;
    let fs = nalgebra::DVector::from_column_slice(&f0[..nx]);
    let value_over_start = setup
        .objectives
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let through: f64 = grad_start[i]
                .iter()
                .zip(&f0[..nx])
                .map(|(g, f)| g * f)
                .sum();
            let lost: f64 = setup.running_of(i).iter().map(|&(z, _)| f0[nx + z]).sum();
            -through - lost
        })
        .collect();
    Ok(TimeRates {
        end_over_start: (-(end_start * fs)).as_slice().to_vec(),
        end_over_end: slope[..nx].to_vec(),
        value_over_start,
        value_over_end,
    })
}
