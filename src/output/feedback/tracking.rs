//! A time-varying design's closed loop in `hybridopt feedback`: the closed-loop transition
//! over the run (open against closed loop), the robustness trials against the problem's
//! targets, the `robustness` figure (the targets' outputs of the first trials over time,
//! open against closed loop) and `animation.gif` (a perturbed start, open against closed
//! loop).

use super::{figures, FeedbackReport, FeedbackRequest, TrackingSummary};
use crate::animate::AnimationOptions;
use crate::error::Error;
use crate::feedback::{
    simulate_track, track_trials, ClosedLoop, FeedbackSettings, Lqr, RunTable, Targets,
    TrackReport, TrackSpec,
};
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::output::animate::{stage_animation, Drawing, Run};
use crate::output::atomic::Staging;
use crate::problem::CostTerm;
use crate::problem::Problem;
use crate::setup::Setup;
use crate::systems::builtin::Builtin;

/// Points of the table the closed loop runs on.
const TABLE_POINTS: usize = 4801;
/// Each stretch between events is extended past its events by this fraction of the run.
pub const EXTENSION: f64 = 0.25;
/// Trials drawn in the `robustness` figure.
const DRAWN: usize = 20;

/// The problem's targets (its `terminal_squared` and `event_time_squared` costs).
pub fn targets(p: &Problem, settings: &FeedbackSettings) -> Targets {
    let terms = p.costs.iter().filter_map(|c| match &c.term {
        CostTerm::Term(t) => Some(t),
        _ => None,
    });
    let rs = &settings.robustness;
    Targets::of_terms(terms, rs.terminal_tolerance, rs.event_time_tolerance)
}

/// The closed loop along the run: transition, trials, figure and animation.
pub(super) fn tracking(
    p: &Problem, settings: &FeedbackSettings, lqr: &Lqr<'_, Builtin>, req: &FeedbackRequest,
    stage: &Staging, report: &mut FeedbackReport, limits: Option<Vec<(f64, f64)>>,
) -> Result<(), Error> {
    let setup = lqr.setup();
    let (t0, tf) = lqr.span();
    let table = RunTable::from_lqr(lqr, TABLE_POINTS, EXTENSION * (tf - t0))
        .map_err(Error::from_feedback)?;
    let closed_phi = lqr.transition().map_err(Error::from_feedback)?;
    let open_phi = lqr.open_transition().map_err(Error::from_feedback)?;
    let targets = targets(p, settings);
    let rs = &settings.robustness;
    let trials = req.trials.unwrap_or(rs.trials);
    let (_, x0, _) = lqr.nominal_at(t0).map_err(Error::from_feedback)?;
    let x0 = x0.as_slice().to_vec();
    let pv = &lqr.theta()[..setup.np()];
    let mode = lqr.nominal.segments[0].mode;
    let spec = TrackSpec {
        trials,
        size: rs.size,
        fixed: (0..x0.len()).filter(|i| !rs.states.contains(i)).collect(),
        params: rs.parameters.clone(),
        seed: rs.seed,
    };
    let (solver, events) = (setup.solver(), setup.events());
    let run = track_trials(
        &p.system,
        &table,
        settings.clock,
        limits.clone(),
        mode,
        pv,
        &x0,
        (t0, tf),
        &targets,
        &spec,
        solver,
        events,
    )?;
    report.tracking = Some(TrackingSummary::new(
        p,
        settings,
        &targets,
        &run,
        lqr,
        [&open_phi, &closed_phi],
    ));
    if trials == 0 {
        return Ok(());
    }
    let cl = ClosedLoop::new(&p.system, table, settings.clock, limits);
    let drawn = draw_runs(&cl, mode, &run, (t0, tf), solver, events)?;
    let outputs = plotted_outputs(&targets, &p.plot_outputs);
    let fig = figures::tracks(p, &run, &drawn, &outputs, &cl);
    stage.write_figure("robustness", &fig)?;
    if req.animation && p.system.geometry().is_some() {
        let trial = animated_trial(&run);
        if let Some(t) = report.tracking.as_mut() {
            t.animation_trial = Some(trial + 1);
        }
        write_animation(stage, p, &cl, mode, &run, trial, (t0, tf))?;
    }
    Ok(())
}

/// The outputs drawn: the terminal targets', else the file's `[plot] outputs`' first.
fn plotted_outputs(targets: &Targets, plot: &[usize]) -> Vec<usize> {
    let mut o: Vec<usize> = targets.terminal.iter().map(|t| t.0).collect();
    o.dedup();
    if o.is_empty() {
        o.extend(plot.first());
    }
    if o.is_empty() {
        o.push(0);
    }
    o
}

/// The first [`DRAWN`] trials simulated again, open and closed loop (`None`: it failed).
#[allow(clippy::type_complexity)]
fn draw_runs(
    cl: &ClosedLoop<'_, Builtin, RunTable>, mode: usize, run: &TrackReport, span: (f64, f64),
    solver: crate::integrate::SolverOptions, events: crate::integrate::EventOptions,
) -> Result<Vec<[Option<Trajectory>; 2]>, Error> {
    let open = cl.open_loop();
    run.starts
        .iter()
        .take(DRAWN)
        .map(|(x, pv)| {
            let o = simulate_track(&open, mode, pv, x, span, solver, events).ok();
            let c = simulate_track(cl, mode, pv, x, span, solver, events).ok();
            crate::interrupt::check()?;
            Ok([o, c])
        })
        .collect()
}

/// The first trial the open loop misses and the closed loop reaches (else the first).
fn animated_trial(run: &TrackReport) -> usize {
    (0..run.trials)
        .find(|&i| !run.runs_open[i].reached && run.runs_closed[i].reached)
        .unwrap_or(0)
}

/// `animation.gif`: trial `trial`, open loop (K = 0) beside closed loop.
fn write_animation(
    stage: &Staging, p: &Problem, cl: &ClosedLoop<'_, Builtin, RunTable>, mode: usize,
    run: &TrackReport, trial: usize, (t0, tf): (f64, f64),
) -> Result<(), Error> {
    let (x, pv) = &run.starts[trial];
    let open_cl = cl.open_loop();
    let (closed, open) = (
        StartOnSection::new(cl, mode),
        StartOnSection::new(&open_cl, mode),
    );
    let mut theta = pv.clone();
    theta.extend_from_slice(x);
    theta.extend([t0, 0.0]);
    let build = |sys| {
        Setup::builder(sys)
            .horizon(t0, tf)
            .solver(p.solver)
            .events(p.events)
            .build()
    };
    let (sc, so) = (build(&closed), build(&open));
    let (tc, to) = (sc.simulate(&theta)?, so.simulate(&theta)?);
    let runs = [
        Run {
            label: "open loop (K = 0)".into(),
            trajectory: &to,
            theta: &theta,
        },
        Run {
            label: format!("closed loop ({})", cl.clock.name()),
            trajectory: &tc,
            theta: &theta,
        },
    ];
    let title = format!(
        "{}: trial {} (the same start), open against closed loop",
        p.name,
        trial + 1
    );
    let drawing = Drawing::System(p.system.kind());
    stage_animation(
        stage,
        &sc,
        drawing,
        &title,
        &runs,
        &AnimationOptions::default(),
    )?;
    Ok(())
}

impl TrackingSummary {
    fn new(
        p: &Problem, settings: &FeedbackSettings, targets: &Targets, r: &TrackReport,
        lqr: &Lqr<'_, Builtin>, [open, closed]: [&nalgebra::DMatrix<f64>; 2],
    ) -> Self {
        let rs = &settings.robustness;
        let d = &p.dims;
        let mut names: Vec<String> = targets
            .terminal
            .iter()
            .map(|&(o, v)| format!("{}(t_end) = {v}", d.outputs[o]))
            .collect();
        names.extend(
            targets
                .event_times
                .iter()
                .map(|&(g, k, v)| format!("t({} #{k}) = {v}", d.guards[g].name)),
        );
        TrackingSummary {
            trials: r.trials,
            size: rs.size,
            states: rs.states.iter().map(|&i| d.states[i].clone()).collect(),
            parameters: rs
                .parameters
                .iter()
                .map(|&(i, w)| (d.params[i].clone(), w))
                .collect(),
            seed: rs.seed,
            targets: names,
            terminal_tolerance: targets.terminal_tol,
            event_time_tolerance: targets.event_time_tol,
            reached_open: r.reached_open,
            reached_closed: r.reached_closed,
            nominal_event_times: lqr.nominal.events.iter().map(|e| e.t).collect(),
            event_time_std_open: r.event_time_std_open.clone(),
            event_time_std_closed: r.event_time_std_closed.clone(),
            transition_norm_open: open.norm(),
            transition_norm_closed: closed.norm(),
            extension: EXTENSION,
            animation_trial: None,
        }
    }
}
