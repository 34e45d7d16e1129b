//! The optimization by multiple shooting: the SQP runs — from the start, then again where
//! an event term moved to another segment or an event sat on a node — and the result with
//! its shooting report.

use super::anchor;
use super::error::ShootingError;
use super::nlp::{self, ShootingNlp};
use super::problem::build;
use super::report::{closure_report, node_reports, segment_trajectories, stitch, ShootingReport};
use super::settings::{Closure, Shooting};
use crate::constraint::Constraints;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::constrained::sqp::{self, sqp, SqpEnd};
use crate::optimize::constrained::{finish, report, ConstrainedReport};
use crate::optimize::{OptimizeResult, OptimizerSettings, ThetaEntry};
use crate::sensitivity::GradientMethod;
use crate::setup::Setup;
use std::sync::Arc;
use std::time::Instant;

/// Minimizes the first objective of `setup` over the optimized entries of θ and the
/// interior nodes' states, subject to `constraints` and continuity at the nodes, by the
/// constrained solver's SQP (module docs). Segments run in parallel on the current rayon
/// pool (`pool.install(|| optimize_shooting(…))` chooses the threads).
///
/// Errors: what [`crate::optimize::optimize_constrained`] returns, and [`ShootingError`]:
/// node times out of order, an unusable guess table, what multiple shooting does not take
/// yet (`stop_after`, a free final time with a periodic closing, `path` constraints), and a
/// converged point whose segments end in other modes than their next nodes.
pub fn optimize_shooting<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints, shooting: &Shooting,
    settings: &OptimizerSettings, progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    let (mut nlp, t_guess) = build(setup, theta, constraints, shooting)?;
    let x_initial = nlp.start_x.clone();
    let nodes_initial = nlp.nodes.clone();
    let (run, restarts) = solve(&mut nlp, settings, progress)?;
    let x_final = run.point.x.clone();
    nlp.rebase(&x_final);
    let final_runs = nlp.runs(&x_final)?;
    if run.end == SqpEnd::Converged {
        check_modes(&nlp, &final_runs)?;
    }
    let (_, starts_initial, _) = nlp.starts(&x_initial)?;
    let (defect0, defect) = (run.initial.defect(), run.point.defect());
    let closure = nlp
        .closure
        .as_ref()
        .map(|c| closure_report(setup, c, &final_runs));
    let nodes = node_reports(
        setup,
        &nodes_initial,
        &nlp.nodes,
        &starts_initial,
        &final_runs,
    );
    let t_end = final_runs.segments.last().map_or(t_guess, |s| s.t_end);
    let report = report(
        &run.point,
        &run.lambda,
        run.kkt,
        constraints,
        GradientMethod::Direct,
        |_, _| f64::NAN,
    );
    let mut result = finish(
        run,
        settings,
        start,
        ConstrainedReport {
            t_end_initial: constraints.free_time.map(|f| f.value),
            t_end_final: (nlp.closure.is_some() || nlp.free_time).then_some(t_end),
            ..report
        },
        |x| nlp.theta_of(x),
        x_initial,
    );
    result.restarts = restarts;
    let mut shooting_report = ShootingReport {
        segments: nlp.k(),
        states: vec![],
        nodes,
        max_defect_initial: 0.0,
        max_defect: 0.0,
        t_end,
        closure: None,
        threads: 0,
    };
    join_segments(setup, &shooting_report, nlp.closure.as_ref(), &mut result);
    shooting_report.states = setup.dims.states.clone();
    shooting_report.max_defect_initial = defect0;
    shooting_report.max_defect = defect;
    shooting_report.closure = closure;
    shooting_report.threads = rayon::current_num_threads();
    result.shooting = Some(shooting_report);
    Ok(result)
}

/// The start's and the final point's runs as the reports draw them: the segments end to
/// end (gaps at the nodes); a run that fails keeps the result's own trajectory.
pub(super) fn join_segments<S: HybridSystem>(
    setup: &Setup<'_, S>, report: &ShootingReport, closing: Option<&Closure>,
    result: &mut OptimizeResult,
) {
    for (initial, theta) in [
        (true, result.theta_initial.clone()),
        (false, result.theta_final.clone()),
    ] {
        if let Ok(runs) = segment_trajectories(setup, report, closing, &theta, initial) {
            let joined = stitch(runs);
            match initial {
                true => result.initial.trajectory = joined,
                false => result.last.trajectory = joined,
            }
        }
    }
}

/// The most SQP runs after the first (an event term moved to another segment at
/// convergence, or a node moved across an event).
const MAX_RESTARTS: usize = 50;

/// A run continued by `again` from its end point: the first start, the counts summed, the
/// histories joined (numbered on).
fn merge_runs(first: sqp::SqpRun, mut again: sqp::SqpRun) -> sqp::SqpRun {
    let offset = first.iterations;
    let mut history = first.history;
    history.extend(again.history.drain(1..).map(|mut h| {
        h.iteration += offset;
        h
    }));
    sqp::SqpRun {
        initial: first.initial,
        iterations: first.iterations + again.iterations,
        evaluations: first.evaluations + again.evaluations,
        history,
        returned: again.returned.map(|i| i + offset),
        ..again
    }
}

/// The SQP runs of one optimization: from the start (no event on a node), then again from
/// where a run ended while an event term moved to another segment at convergence or an
/// event sat on a node (the node moved across it), within the iteration budget. Returns
/// the merged run and what each restart did.
fn solve<S: HybridSystem>(
    nlp: &mut ShootingNlp<'_, '_, S>, settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<(sqp::SqpRun, Vec<String>), Error> {
    let x_initial = nlp.start_x.clone();
    // no event on a node at the start
    if let Some(x) = anchor::move_nodes(nlp, &x_initial, None)? {
        nlp.start_x = x;
        (nlp.parts, nlp.placement) = nlp.place(&nlp.start_x)?;
    }
    let mut run = sqp(
        &*nlp,
        settings.max_iters,
        settings.tol_kkt,
        settings.globalization,
        progress.clone(),
    )?;
    let mut restarts = Vec::new();
    for _ in 0..MAX_RESTARTS {
        let budget = settings.max_iters.saturating_sub(run.iterations);
        if budget == 0 {
            break;
        }
        // converged with an event term in another segment than placed: again from there;
        // ended short of convergence with an event on a node: the node moved across it
        let next = if run.end == SqpEnd::Converged {
            let (parts, placement) = nlp.place(&run.point.x)?;
            (placement != nlp.placement).then(|| {
                (nlp.parts, nlp.placement) = (parts, placement);
                restarts.push(format!(
                    "iteration {}: an event term moved to another segment; continued with the new placement",
                    run.iterations
                ));
                run.point.x.clone()
            })
        } else {
            nlp.rebase(&run.point.x);
            let before: Vec<f64> = nlp.nodes.iter().map(|n| n.t).collect();
            let events = run.point.segment_events.clone();
            let moved = anchor::move_nodes(nlp, &run.point.x, Some(&events))?;
            if let Some(x) = &moved {
                let after: Vec<String> = nlp
                    .nodes
                    .iter()
                    .zip(&before)
                    .filter(|(n, t)| n.t != **t)
                    .map(|(n, t)| format!("{t} → {}", n.t))
                    .collect();
                restarts.push(format!(
                    "iteration {}: an event on a node; node time(s) moved across it: {}",
                    run.iterations,
                    after.join(", ")
                ));
                (nlp.parts, nlp.placement) = nlp.place(x)?;
            }
            moved
        };
        let Some(x) = next else { break };
        nlp.start_x = x;
        let again = sqp(
            &*nlp,
            budget,
            settings.tol_kkt,
            settings.globalization,
            progress.clone(),
        )?;
        run = merge_runs(run, again);
    }
    Ok((run, restarts))
}

/// At the converged point, each segment ends in its next node's mode (a periodic
/// problem's last one, after the closing reset, in node 0's).
fn check_modes<S: HybridSystem>(
    nlp: &ShootingNlp<'_, '_, S>, runs: &nlp::Runs,
) -> Result<(), Error> {
    let k = nlp.k();
    for (i, seg) in runs.segments.iter().enumerate() {
        let next = if i + 1 < k {
            i + 1
        } else if nlp.closure.is_some() {
            0
        } else {
            continue;
        };
        let node = &nlp.nodes[next];
        if seg.end_mode != node.mode {
            let name = |m| nlp.setup.dims.mode_name(m);
            return Err(ShootingError::ModeMismatch {
                node: next,
                t: if next == 0 { seg.t_end } else { node.t },
                expected: name(node.mode),
                found: name(seg.end_mode),
            }
            .into());
        }
    }
    Ok(())
}
