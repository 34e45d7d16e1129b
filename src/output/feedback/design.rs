//! The design `hybridopt feedback` makes and measures: the nominal θ, then periodic LQR with
//! its multipliers (Riccati side and the closed loop's return map), the robustness runs and
//! the push drawn; or time-varying LQR along the run.

use super::files;
use super::{
    FeedbackReport, FeedbackRequest, GainsSummary, LoopSummary, NominalSummary, RiccatiSummary,
    RobustnessSummary, WeightsSummary,
};
use crate::error::Error;
use crate::feedback::{
    multipliers_without, periodic_lqr, return_floquet, robustness, tvlqr, Clock, ClosedLoop,
    FeedbackSettings, PeriodTable, PeriodicLqr, PeriodicOptions, RobustnessReport, RobustnessSpec,
    StepsOutcome,
};
use crate::output::atomic::Staging;
use crate::output::optimize::summary_thetas;
use crate::problem::Problem;
use crate::setup::Setup;
use crate::systems::builtin::Builtin;
use nalgebra::{Complex, DMatrix};

/// Points of the period table the closed loop runs on (K linear between them).
const TABLE_POINTS: usize = 2401;

/// The nominal θ: a summary's final parameters, the optimized θ, or the file's.
pub(super) fn nominal(
    p: &Problem, setup: &Setup<'_, Builtin>, req: &FeedbackRequest,
) -> Result<(Vec<f64>, NominalSummary), Error> {
    let (theta, source, converged) = if let Some(file) = &req.summary {
        let (_, last) = summary_thetas(p, &setup.theta_names(), file)?;
        (last, "summary", None)
    } else if req.optimize && !p.costs.is_empty() {
        let r = p.optimize_trajectory(setup, &p.theta, None)?;
        (r.theta_final.clone(), "optimized", Some(r.converged()))
    } else {
        (p.theta_values(), "file", None)
    };
    let traj = setup.with_objectives(Vec::new()).simulate(&theta)?;
    let parameters = setup
        .theta_names()
        .into_iter()
        .zip(theta.iter().copied())
        .collect();
    Ok((
        theta,
        NominalSummary {
            source: source.into(),
            parameters,
            optimize_converged: converged,
            t_end: traj.t_final,
            events: traj.events.len(),
        },
    ))
}

/// The design of `settings` at `theta`, its files written into `stage`.
pub(super) fn design(
    p: &Problem, setup: &Setup<'_, Builtin>, settings: &FeedbackSettings, theta: &[f64],
    nominal: NominalSummary, req: &FeedbackRequest, stage: &Staging,
) -> Result<FeedbackReport, Error> {
    let w = &settings.weights;
    let diag = |m: &DMatrix<f64>| m.diagonal().iter().copied().collect::<Vec<f64>>();
    let mut report = FeedbackReport {
        problem: p.name.clone(),
        design: "tvlqr".into(),
        nominal,
        weights: WeightsSummary {
            states: p.dims.states.clone(),
            controls: p.dims.controls.clone(),
            q: diag(&w.q),
            r: diag(&w.r),
            qf: diag(&w.qf),
        },
        clock: None,
        guard: None,
        period: None,
        riccati: RiccatiSummary {
            sweeps: None,
            change: None,
            steps: 0,
        },
        neutral_states: Vec::new(),
        open_loop: None,
        open_loop_clock: None,
        closed_loop: None,
        control_limits: control_limits(p),
        robustness: None,
        animation: None,
        gains: GainsSummary {
            file: "gains.csv".into(),
            points: settings.grid,
            max_abs: 0.0,
        },
        wall_s: 0.0,
        tracking: None,
    };
    let closing = settings.guard.or_else(|| {
        p.shooting
            .as_ref()
            .and_then(|s| s.closure.as_ref())
            .map(|c| c.guard)
    });
    let Some(guard) = closing else {
        let lqr = tvlqr(setup, theta, w).map_err(Error::from_feedback)?;
        report.riccati.steps = lqr.stats().steps;
        report.gains.max_abs = files::write_gains(stage, p, &lqr, settings.grid, &lqr.nominal)?;
        report.clock = Some(settings.clock);
        let limits = report
            .control_limits
            .as_ref()
            .map(|l| l.iter().map(|b| (b[0], b[1])).collect::<Vec<_>>());
        super::tracking::tracking(p, settings, &lqr, req, stage, &mut report, limits)?;
        return Ok(report);
    };
    let opts = PeriodicOptions::default();
    let plqr =
        periodic_lqr(setup, theta, w, guard, settings.clock, opts).map_err(Error::from_feedback)?;
    report.design = "periodic_lqr".into();
    report.clock = Some(settings.clock);
    report.guard = Some(p.dims.guard_name(guard));
    report.period = Some(plqr.period);
    report.riccati = RiccatiSummary {
        sweeps: Some(plqr.sweeps),
        change: Some(plqr.change),
        steps: plqr.lqr.stats().steps,
    };
    report.gains.max_abs =
        files::write_gains(stage, p, &plqr.lqr, settings.grid, &plqr.lqr.nominal)?;
    periodic(p, settings, &plqr, req, stage, &mut report)?;
    Ok(report)
}

/// A periodic design's multipliers, robustness runs, figures and animation.
fn periodic(
    p: &Problem, settings: &FeedbackSettings, plqr: &PeriodicLqr<'_, Builtin>,
    req: &FeedbackRequest, stage: &Staging, report: &mut FeedbackReport,
) -> Result<(), Error> {
    let setup = plqr.lqr.setup();
    let np = setup.np();
    let pv = &plqr.lqr.theta()[..np];
    let open_m = plqr.open_loop_monodromy().map_err(Error::from_feedback)?;
    let closed_m = plqr.monodromy().map_err(Error::from_feedback)?;
    let neutral = neutral_states(&open_m, &settings.weights.q);
    report.neutral_states = neutral.iter().map(|&i| p.dims.states[i].clone()).collect();
    let table = PeriodTable::from_lqr(&plqr.lqr, TABLE_POINTS).map_err(Error::from_feedback)?;
    let limits = report
        .control_limits
        .as_ref()
        .map(|l| l.iter().map(|b| (b[0], b[1])).collect::<Vec<_>>());
    let cl = ClosedLoop::new(&p.system, table.clone(), settings.clock, limits.clone());
    let (_, x0, _) = plqr
        .lqr
        .nominal_at(setup.t0())
        .map_err(Error::from_feedback)?;
    let x0 = x0.as_slice().to_vec();
    let mode = plqr.lqr.nominal.segments[0].mode;
    let (solver, events) = (setup.solver(), setup.events());
    // the linear design's witness: the closed loop without the clamp (the nominal torque
    // may sit on a limit, where the clamp has a kink)
    let linear = ClosedLoop::new(&p.system, table.clone(), settings.clock, None);
    let rf = return_floquet(&linear, plqr.guard, mode, pv, &x0, &neutral, solver, events)
        .map_err(Error::from_feedback)?;
    // the gait's own: the nominal torque replayed from each impact (the phase reset), as
    // the shooting closure reports it
    let own = ClosedLoop::new(&p.system, table.without_gains(), Clock::Reset, None);
    let of = return_floquet(&own, plqr.guard, mode, pv, &x0, &neutral, solver, events)
        .map_err(Error::from_feedback)?;
    report.open_loop = Some(loop_summary(&of.multipliers, Some(radius(&of.multipliers))));
    report.open_loop_clock = Some(loop_summary(&multipliers_without(&open_m, &neutral), None));
    report.closed_loop = Some(loop_summary(
        &multipliers_without(&closed_m, &neutral),
        Some(radius(&rf.multipliers)),
    ));
    let rs = &settings.robustness;
    let trials = req.trials.unwrap_or(rs.trials);
    if trials == 0 {
        return Ok(());
    }
    let spec = RobustnessSpec {
        trials,
        size: rs.size,
        fixed: (0..x0.len()).filter(|i| !rs.states.contains(i)).collect(),
        steps: rs.steps,
        seed: rs.seed,
        periods_per_step: 2.0,
    };
    let rob = robustness(
        &p.system,
        &table,
        settings.clock,
        limits,
        mode,
        pv,
        &x0,
        plqr.guard,
        &spec,
        solver,
        events,
    )?;
    let keep: Vec<usize> = (0..x0.len()).filter(|i| !neutral.contains(i)).collect();
    report.robustness = Some(robustness_summary(p, &rob, &spec, rs, plqr.period));
    files::write_robustness_figure(stage, &p.name, &rob, &x0, &keep)?;
    if req.animation {
        let push = files::Push {
            cl: &cl,
            mode,
            p: pv,
            x0: &x0,
            guard: plqr.guard,
            spec: &spec,
        };
        report.animation = Some(files::write_animation(stage, p, &push, &rob)?);
    }
    Ok(())
}

/// The robustness runs' summary.
fn robustness_summary(
    p: &Problem, r: &RobustnessReport, spec: &RobustnessSpec,
    rs: &crate::feedback::RobustnessSettings, period: f64,
) -> RobustnessSummary {
    let spreads: Vec<f64> = r
        .runs_closed
        .iter()
        .filter_map(|o| match o {
            StepsOutcome::Walked(s) => Some(
                s.iter()
                    .enumerate()
                    .map(|(k, st)| (st.t - (k + 1) as f64 * period).abs())
                    .fold(0.0, f64::max),
            ),
            StepsOutcome::Fell { .. } => None,
        })
        .collect();
    RobustnessSummary {
        trials: r.trials,
        size: r.size,
        states: rs
            .states
            .iter()
            .map(|&i| p.dims.states[i].clone())
            .collect(),
        seed: spec.seed,
        steps: r.steps,
        walked_open: r.walked_open,
        walked_closed: r.walked_closed,
        impact_time_std_open: r.impact_time_std_open,
        impact_time_std_closed: r.impact_time_std_closed,
        impact_time_spread_closed: spreads.iter().sum::<f64>() / spreads.len() as f64,
    }
}

/// Per control channel, the bounds of its coefficients in θ (the file's `[controls]`
/// limits), if every channel has both.
fn control_limits(p: &Problem) -> Option<Vec<[f64; 2]>> {
    let grid = p.controls.as_ref()?;
    let np = p.dims.np();
    (0..grid.channels)
        .map(|c| {
            let e = &p.theta[np + c * grid.n_coef()];
            Some([e.lower?, e.upper?])
        })
        .collect()
}

/// States nothing depends on: the monodromy's column is the unit vector (to 1e-9) and
/// the state has no weight (a walker's foot position; multiplier 1).
fn neutral_states(m: &DMatrix<f64>, q: &DMatrix<f64>) -> Vec<usize> {
    (0..m.ncols())
        .filter(|&j| {
            q[(j, j)] == 0.0
                && (0..m.nrows()).all(|i| {
                    let e = if i == j { 1.0 } else { 0.0 };
                    (m[(i, j)] - e).abs() <= 1e-9
                })
        })
        .collect()
}

fn radius(m: &[Complex<f64>]) -> f64 {
    m.iter().map(|c| c.norm()).fold(0.0, f64::max)
}

fn loop_summary(m: &[Complex<f64>], return_map: Option<f64>) -> LoopSummary {
    LoopSummary {
        multipliers: m.iter().map(|c| [c.re, c.im]).collect(),
        spectral_radius: radius(m),
        return_map_spectral_radius: return_map,
    }
}
