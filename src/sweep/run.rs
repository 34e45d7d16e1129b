//! Running a sweep's points in parallel on a local rayon pool: grid points (cost and
//! gradient) and starts (one optimization each). A failing point is recorded with its
//! error and the sweep goes on; only an interruption (Ctrl-C) stops it.

use super::grid::{self, Axis};
use super::named::Named;
use super::record::{finite, PointError, PointOutcome, PointRecord};
use super::shard::Shard;
use super::starts::{self, Range};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::{optimize, OptimizeResult};
use crate::optimize::{OptimizerSettings, ThetaEntry};
use crate::sensitivity::{evaluate, GradientMethod};
use crate::setup::Setup;
use rayon::prelude::*;

/// How to run: worker threads, which slice, and whether to draw a progress bar on stderr.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Worker threads (≥ 1).
    pub jobs: usize,
    /// The slice to run (`None`: the whole sweep, and the file says nothing of shards).
    pub shard: Option<Shard>,
    /// Draw a progress bar (the caller decides, e.g. only when stderr is a terminal).
    pub progress: bool,
}

impl RunOptions {
    /// All cores (`std::thread::available_parallelism`), the whole sweep, no bar.
    pub fn new() -> RunOptions {
        RunOptions {
            jobs: default_jobs(),
            shard: None,
            progress: false,
        }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions::new()
    }
}

/// The number of cores (1 if unknown).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most worker threads `--jobs` accepts.
pub const MAX_JOBS: usize = 1024;

/// Checks `--jobs J` (1 ≤ J ≤ [`MAX_JOBS`]).
pub fn check_jobs(jobs: usize) -> Result<usize, Error> {
    if jobs == 0 || jobs > MAX_JOBS {
        return Err(Error::Flag {
            flag: "--jobs".into(),
            value: jobs.to_string(),
            message: format!(
                "the number of worker threads must be at least 1 and at most {MAX_JOBS} (this machine has {} cores)",
                default_jobs()
            ),
        });
    }
    Ok(jobs)
}

/// `f(i)` for every index, in parallel on a pool of `opts.jobs` threads, the results in
/// the order of `indices` (so they do not depend on the scheduling). The first error
/// stops the run and is returned.
pub fn par_points<T, F>(indices: &[usize], opts: &RunOptions, f: F) -> Result<Vec<T>, Error>
where
    T: Send,
    F: Fn(usize) -> Result<T, Error> + Sync + Send,
{
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(check_jobs(opts.jobs)?)
        .build()
        .map_err(|e| Error::Invalid(format!("cannot start {} worker threads: {e}", opts.jobs)))?;
    let bar = super::progress::Progress::new(indices.len(), opts.jobs, opts.progress);
    let out = pool.install(|| {
        indices
            .par_iter()
            .map(|&i| {
                crate::interrupt::check()?;
                let r = f(i);
                bar.inc();
                r
            })
            .collect::<Result<Vec<T>, Error>>()
    });
    bar.finish();
    out
}

/// Cost (the first objective) and gradient at grid point `i`: θ is `base` with the axes'
/// entries (`at`, in θ) set to the point's values. The gradient is reported over the axes.
pub fn grid_point<S: HybridSystem>(
    setup: &Setup<'_, S>, base: &[f64], axes: &[Axis], at: &[usize], method: GradientMethod,
    i: usize,
) -> Result<PointRecord, Error> {
    let values = grid::point(axes, i);
    let mut theta = base.to_vec();
    for (&j, &v) in at.iter().zip(&values) {
        theta[j] = v;
    }
    let named = |v: &[f64]| Named::zip(axes.iter().map(|a| a.name.as_str()), v);
    let mut rec = PointRecord::pending(i, named(&values));
    match evaluate(setup, &theta, method) {
        Ok(ev) => {
            let g: Vec<f64> = at.iter().map(|&j| ev.gradients[0][j]).collect();
            rec.cost = finite(ev.values[0]);
            rec.gradient_norm = finite(g.iter().map(|v| v * v).sum::<f64>().sqrt());
            rec.gradient = Some(named(&g));
            rec.outcome = PointOutcome::Evaluated;
            rec.events = Some(ev.trajectory.events.len());
        }
        Err(Error::Interrupted) => return Err(Error::Interrupted),
        Err(e) => rec.error = Some(PointError::from(&e)),
    }
    Ok(rec)
}

/// One start's result: its record, θ at the end, and (if asked for) the whole result.
pub struct StartRun {
    pub record: PointRecord,
    pub theta_final: Option<Vec<f64>>,
    pub result: Option<Box<OptimizeResult>>,
}

/// Optimization from start `i` ([`starts::start_point`] of `bx` and `seed`): θ's optimized
/// entries (in θ order, matching `bx`) start there, with their transforms rebuilt for the
/// new values; the constrained solver when there are `constraints`.
pub fn start_point<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &crate::constraint::Constraints,
    bx: &[Range], seed: u64, settings: &OptimizerSettings, keep: bool, i: usize,
) -> Result<StartRun, Error> {
    let x0 = starts::start_point(bx, seed, i);
    let free: Vec<usize> = (0..theta.len()).filter(|&j| theta[j].optimize).collect();
    let mut entries = theta.to_vec();
    for (&j, &v) in free.iter().zip(&x0) {
        let e = &mut entries[j];
        e.value = v;
    }
    let named = |v: &[f64]| Named::zip(free.iter().map(|&j| theta[j].name.as_str()), v);
    let mut rec = PointRecord::pending(i, named(&x0));
    let run = if constraints.is_empty() {
        optimize(setup, &entries, settings, None)
    } else {
        crate::optimize::optimize_constrained(setup, &entries, constraints, settings, None)
    };
    match run {
        Ok(r) => {
            rec.max_violation = r.constrained.as_ref().map(|c| c.max_violation);
            let fin: Vec<f64> = free.iter().map(|&j| r.theta_final[j]).collect();
            rec.final_parameters = Some(named(&fin));
            rec.initial_cost = finite(r.initial_cost);
            rec.cost = finite(r.final_cost);
            rec.gradient_norm = finite(r.final_grad_norm);
            rec.iterations = Some(r.iterations);
            rec.evaluations = Some(r.evaluations);
            rec.outcome = r.outcome.into();
            rec.events = Some(r.last.trajectory.events.len());
            Ok(StartRun {
                record: rec,
                theta_final: Some(r.theta_final.clone()),
                result: keep.then(|| Box::new(r)),
            })
        }
        Err(Error::Interrupted) => Err(Error::Interrupted),
        Err(e) => {
            rec.error = Some(PointError::from(&e));
            Ok(StartRun {
                record: rec,
                theta_final: None,
                result: None,
            })
        }
    }
}
