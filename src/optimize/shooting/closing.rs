//! A periodic problem as one segment, from the system's start to the closing event, for
//! another solver than the SQP (the DDP's augmented Lagrangian, ilqr/augmented.rs): its
//! cost and rows — the constraints', then the closing rows `x⁺(t_e)[m] − x0(θ)[m]` —
//! exactly as the SQP sees them, over θ's optimized entries alone, and the shooting report
//! of a point (the closing's residual and Floquet multipliers, theory §9).

use super::nlp::ShootingNlp;
use super::nodes;
use super::problem::assemble;
use super::report::{closure_report, node_reports, ShootingReport};
use super::settings::{Closure, Guess, NodeTimes, Shooting};
use super::solve::join_segments;
use crate::constraint::Constraints;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::{OptimizeResult, ThetaEntry};
use crate::setup::Setup;

/// The one-segment problem closing at `closure` (module docs); the errors of
/// [`optimize_shooting`](super::optimize_shooting)'s problem.
pub(crate) fn closing_problem<'s, 'a, S: HybridSystem>(
    setup: &Setup<'a, S>, theta: &[ThetaEntry], constraints: &'s Constraints, closure: &Closure,
) -> Result<ShootingNlp<'s, 'a, S>, Error> {
    let shooting = Shooting {
        nodes: NodeTimes::Times(vec![]),
        guess: Guess::SingleShooting,
        closure: Some(closure.clone()),
    };
    let (nlp, _) = assemble(setup, theta, constraints, &shooting, |fsetup, values| {
        nodes::one_segment(fsetup, values, closure)
    })?;
    Ok(nlp)
}

/// The shooting report of a result found on the one-segment problem `nlp` (its variables
/// `x_initial` at the start, `x_final` at the end), with the trajectories drawn to the
/// closing event; `result`'s constrained report gains the period `t_end_final`.
pub(crate) fn closing_result<S: HybridSystem>(
    setup: &Setup<'_, S>, nlp: &ShootingNlp<'_, '_, S>, closure: &Closure, x_initial: &[f64],
    x_final: &[f64], result: &mut OptimizeResult,
) -> Result<(), Error> {
    let initial_runs = nlp.runs(x_initial)?;
    let final_runs = nlp.runs(x_final)?;
    let t_end = final_runs.segments[0].t_end;
    let mut report = ShootingReport {
        segments: 1,
        states: setup.dims.states.clone(),
        nodes: node_reports(
            setup,
            &nlp.nodes,
            &nlp.nodes,
            &initial_runs.starts,
            &final_runs,
        ),
        max_defect_initial: 0.0,
        max_defect: 0.0,
        t_end,
        closure: None,
        threads: rayon::current_num_threads(),
    };
    join_segments(setup, &report, Some(closure), result);
    report.closure = Some(closure_report(setup, closure, &final_runs));
    if let Some(c) = result.constrained.as_mut() {
        c.t_end_final = Some(t_end);
    }
    result.shooting = Some(report);
    Ok(())
}
