//! Sweeps and multi-start: the cost and gradient over a grid of named parameters, or
//! optimizations from seeded random points inside the bounds, in parallel on a local rayon
//! pool, deterministic (the same plan gives the same points and byte-identical files
//! whatever the number of threads), in slices (`--shard I/N`) that [`merge`] combines
//! into the files of an unsharded run.
//!
//! A point's failure (a missing event, grazing, Zeno, a failed optimization …) is recorded
//! with its kind and message and never stops the sweep; an interruption (Ctrl-C) does.

pub mod grid;
pub mod merge;
pub(crate) mod named;
mod progress;
pub(crate) mod record;
pub mod run;
pub(crate) mod shard;
pub mod starts;

pub use grid::Axis;
pub use record::{Best, EventMark, Plan, PointOutcome, PointRecord, SweepFile};
pub use run::RunOptions;
pub use shard::Shard;
pub use starts::Range;

use crate::error::Error;
use crate::optimize::OptimizeResult;
use crate::problem::Problem;
use crate::setup::Setup;
use crate::setup::{trajectory_table, Table};
use crate::systems::builtin::Builtin;

/// A finished sweep or shard: `sweep.json`'s content and, for starts, the best start's
/// final trajectory (outputs over time).
pub struct SweepResult {
    pub file: SweepFile,
    pub best_trajectory: Option<Table>,
}

/// Runs `plan` on `problem` (the slice `opts.shard` of it, if given). Grid points get the
/// first objective and its gradient by the problem's gradient method; starts run the
/// problem's optimizer.
pub fn sweep(problem: &Problem, plan: &Plan, opts: &RunOptions) -> Result<SweepResult, Error> {
    let bytes = std::fs::read(&problem.file).map_err(|source| Error::Io {
        path: problem.file.clone(),
        source,
    })?;
    let setup = problem.setup()?;
    let total = match plan {
        Plan::Grid { axes } => grid::check_axes(axes)?,
        Plan::Starts { count, .. } => starts::check_count(*count)?,
    };
    let indices = opts.shard.unwrap_or(Shard::ALL).indices(total);
    let (points, finals) = match plan {
        Plan::Grid { axes } => {
            let at = axis_indices(problem, axes)?;
            let only = setup.only_objective(0);
            let base = problem.theta_values();
            let method = problem.optimizer.gradient;
            let pts = run::par_points(&indices, opts, |i| {
                run::grid_point(&only, &base, axes, &at, method, i)
            })?;
            (pts, Vec::new())
        }
        Plan::Starts { seed, ranges, .. } => {
            check_ranges(problem, ranges)?;
            let runs = run::par_points(&indices, opts, |i| {
                run::start_point(
                    &setup,
                    &problem.theta,
                    &problem.constraints,
                    ranges,
                    *seed,
                    &problem.optimizer,
                    false,
                    i,
                )
            })?;
            runs.into_iter()
                .map(|r| {
                    let i = r.record.index;
                    (r.record, (i, r.theta_final))
                })
                .unzip()
        }
    };
    let (counts, best) = SweepFile::summarize(&points);
    let mut best_trajectory = None;
    let best = match best {
        None => None,
        Some((index, cost)) => {
            let mut b = Best {
                index,
                cost,
                events: None,
            };
            if let Some((_, Some(theta))) = finals.iter().find(|(i, _)| *i == index) {
                let traj = setup.simulate(theta)?;
                best_trajectory = Some(trajectory_table(&setup, &traj, theta)?);
                b.events = Some(
                    traj.events
                        .iter()
                        .map(|e| EventMark {
                            t: e.t,
                            guard: setup.dims.guard_name(e.guard),
                        })
                        .collect(),
                );
            }
            Some(b)
        }
    };
    let file = SweepFile {
        problem: problem.name.clone(),
        problem_digest: record::digest(&bytes),
        base_parameters: base_parameters(problem),
        plan: plan.clone(),
        gradient: problem.optimizer.gradient,
        optimizer: match plan {
            Plan::Starts { .. } => Some(
                serde_json::to_value(&problem.optimizer)
                    .map_err(|e| Error::Internal(format!("optimizer settings: {e}")))?,
            ),
            Plan::Grid { .. } => None,
        },
        plot_outputs: plot_outputs(problem),
        total_points: total,
        shard: opts.shard,
        counts,
        best,
        points,
    };
    Ok(SweepResult {
        file,
        best_trajectory,
    })
}

/// The θ index of each axis.
fn axis_indices(problem: &Problem, axes: &[Axis]) -> Result<Vec<usize>, Error> {
    grid::check_axes(axes)?;
    axes.iter()
        .map(|a| {
            problem
                .theta
                .iter()
                .position(|e| e.name == a.name)
                .ok_or_else(|| Error::Flag {
                    flag: "--grid".into(),
                    value: a.name.clone(),
                    message: "not a parameter of the problem".into(),
                })
        })
        .collect()
}

/// The ranges must be the optimized entries, in θ order.
fn check_ranges(problem: &Problem, ranges: &[Range]) -> Result<(), Error> {
    let free: Vec<&str> = problem
        .theta
        .iter()
        .filter(|e| e.optimize)
        .map(|e| e.name.as_str())
        .collect();
    let given: Vec<&str> = ranges.iter().map(|r| r.name.as_str()).collect();
    if free != given {
        return Err(Error::Invalid(format!(
            "the starts' ranges cover {given:?}, but the optimized entries are {free:?}"
        )));
    }
    Ok(())
}

/// The physical parameters (not control coefficients) by name.
fn base_parameters(problem: &Problem) -> named::Named {
    let np = problem.dims.np();
    named::Named(
        problem.theta[..np]
            .iter()
            .map(|e| (e.name.clone(), e.value))
            .collect(),
    )
}

/// The problem's plotted outputs, without the controls.
fn plot_outputs(problem: &Problem) -> Vec<String> {
    problem
        .plot_outputs
        .iter()
        .map(|&i| problem.dims.outputs[i].clone())
        .filter(|n| !problem.dims.controls.contains(n))
        .collect()
}

/// The result of [`multi_start`]: the best start's optimization and every start's record.
pub struct MultiStart {
    pub best: OptimizeResult,
    pub best_index: usize,
    pub records: Vec<PointRecord>,
}

/// `optimize --starts N`: the problem's optimizer from `count` starts
/// ([`starts::start_point`] of `ranges` and `seed`), in parallel; keeps the start with the
/// lowest final cost (the lowest index on a tie). An error if every start failed (the
/// first start's error).
pub fn multi_start(
    problem: &Problem, setup: &Setup<'_, Builtin>, count: usize, seed: u64, ranges: &[Range],
    opts: &RunOptions,
) -> Result<MultiStart, Error> {
    check_ranges(problem, ranges)?;
    starts::check_count(count)?;
    let indices: Vec<usize> = (0..count).collect();
    let runs = run::par_points(&indices, opts, |i| {
        run::start_point(
            setup,
            &problem.theta,
            &problem.constraints,
            ranges,
            seed,
            &problem.optimizer,
            true,
            i,
        )
    })?;
    let records: Vec<PointRecord> = runs.iter().map(|r| r.record.clone()).collect();
    let (_, best) = SweepFile::summarize(&records);
    let Some((best_index, _)) = best else {
        let first = records.iter().find_map(|r| r.error.as_ref());
        return Err(Error::Optimizer(match first {
            Some(e) if records.iter().all(|r| r.error.is_some()) => {
                format!("all {count} starts failed; the first: {}", e.message)
            }
            _ => format!(
                "none of the {count} starts met the constraints (largest violation ≤ {:e}); their outcomes: {}",
                record::FEASIBLE,
                records
                    .iter()
                    .map(|r| r.outcome.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }));
    };
    let best = runs
        .into_iter()
        .find(|r| r.record.index == best_index)
        .and_then(|r| r.result)
        .ok_or_else(|| Error::Internal("the best start kept no result".into()))?;
    Ok(MultiStart {
        best: *best,
        best_index,
        records,
    })
}
