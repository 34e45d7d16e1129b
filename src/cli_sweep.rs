//! The `sweep` and `merge` subcommands, and the multi-start of `optimize --starts`.

use anyhow::Result;
use hybridopt::output::summary::MultiStartSummary;
use hybridopt::output::sweep::SweepReport;
use hybridopt::problem::Problem;
use hybridopt::report::Staging;
use hybridopt::sweep::{self, merge, output, run, starts, Axis, Plan, RunOptions, Shard};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// `hybridopt sweep`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("plan").required(true).args(["grid", "starts"])))]
pub struct SweepArgs {
    /// The problem file (TOML).
    problem: PathBuf,
    /// A grid axis NAME=LO:HI:N (N evenly spaced values, ends included; repeatable, the
    /// last axis varies fastest): cost and gradient at every point.
    #[arg(long, value_name = "NAME=LO:HI:N", conflicts_with = "starts")]
    grid: Vec<String>,
    /// Multi-start: N optimizations from seeded uniform random points inside the bounds
    /// of the optimized parameters.
    #[arg(long, value_name = "N")]
    starts: Option<usize>,
    #[command(flatten)]
    multi: StartArgs,
    /// Run the I-th of N deterministic slices (point i is in slice i mod N + 1); combine
    /// the slices' folders with `hybridopt merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Output folder (default: results/sweep/<problem name>, or
    /// results/sweep/<problem name>-shard-I-of-N).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override a parameter value: NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Gradient method of the grid points and of the starts' optimizer (default: from the
    /// file, else adjoint).
    #[arg(long, value_enum)]
    gradient: Option<crate::OptGradientArg>,
    /// The starts' iteration limit (default: from the file, else 100).
    #[arg(long)]
    max_iters: Option<u64>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Print a summary JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// The multi-start flags shared by `sweep --starts` and `optimize --starts`.
#[derive(clap::Args)]
pub struct StartArgs {
    /// Seed of the start points (SplitMix64; the same seed gives the same points;
    /// default 0).
    #[arg(long)]
    seed: Option<u64>,
    /// The sampling interval NAME=LO:HI of an optimized parameter (repeatable; needed for
    /// one without both bounds; within its bounds).
    #[arg(long = "range", value_name = "NAME=LO:HI")]
    ranges: Vec<String>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
}

impl StartArgs {
    /// `--jobs`, checked to be in 1..=MAX_JOBS when given.
    pub fn jobs(&self) -> Result<Option<usize>> {
        Ok(self.jobs.map(run::check_jobs).transpose()?)
    }

    fn seed(&self) -> u64 {
        self.seed.unwrap_or(0)
    }

    /// Without `--starts`, `--seed` and `--range` (and, for `optimize`, `--jobs`) have
    /// nothing to act on: an error rather than a silently ignored flag.
    pub fn check_unused(&self, jobs_too: bool) -> Result<()> {
        let flag = if let Some(s) = self.seed {
            Some(("--seed", s.to_string()))
        } else if let Some(r) = self.ranges.first() {
            Some(("--range", r.clone()))
        } else if jobs_too && self.jobs.is_some() {
            Some(("--jobs", self.jobs.unwrap_or(0).to_string()))
        } else {
            None
        };
        if let Some((flag, value)) = flag {
            return Err(hybridopt::Error::Flag {
                flag: flag.into(),
                value,
                message: "applies to multi-start only: add --starts N".into(),
            }
            .into());
        }
        Ok(())
    }
}

/// `hybridopt merge`.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// The shards' output folders (every shard 1/N … N/N once, any order).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// The merged folder (the same files as an unsharded run).
    #[arg(long)]
    out: PathBuf,
    /// Print a summary JSON object on stdout.
    #[arg(long)]
    json: bool,
}

fn run_options(jobs: Option<usize>, shard: Option<Shard>, quiet: bool) -> Result<RunOptions> {
    let jobs = match jobs {
        Some(j) => run::check_jobs(j)?,
        None => run::default_jobs(),
    };
    Ok(RunOptions {
        jobs,
        shard,
        progress: !quiet && std::io::stderr().is_terminal(),
    })
}

fn print_report(r: &SweepReport, as_json: bool) -> Result<()> {
    if as_json {
        println!("{}", hybridopt::output::to_json(r)?);
    } else {
        print!("{}", r.text());
    }
    Ok(())
}

pub fn cmd_sweep(a: SweepArgs) -> Result<()> {
    let mut p: Problem = crate::load(&a.problem, &a.params)?;
    if let Some(g) = a.gradient {
        p.optimizer.gradient = gradient_method(g);
    }
    if let Some(n) = a.max_iters {
        p.optimizer.max_iters = n;
    }
    let plan = match a.starts {
        Some(n) => Plan::Starts {
            count: starts::check_count(n)?,
            seed: a.multi.seed(),
            ranges: starts::sampling_box(&p.theta, &a.multi.ranges)?,
        },
        None => {
            a.multi.check_unused(false)?;
            let axes = a
                .grid
                .iter()
                .map(|g| Axis::parse(g, &p.theta))
                .collect::<Result<Vec<_>, _>>()?;
            sweep::grid::check_axes(&axes)?;
            Plan::Grid { axes }
        }
    };
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let opts = run_options(a.multi.jobs, shard, a.quiet)?;
    let out = a.out.unwrap_or_else(|| {
        let name = match shard {
            Some(s) => format!("{}-shard-{}-of-{}", p.name, s.index, s.count),
            None => p.name.clone(),
        };
        PathBuf::from("results/sweep").join(name)
    });
    // the folder is staged before the work, so an unusable --out fails at once
    let stage = Staging::new(&out)?;
    let t = Instant::now();
    let res = sweep::sweep(&p, &plan, &opts)?;
    let wall = t.elapsed().as_secs_f64();
    output::write(&stage, &res)?;
    let dir = stage.commit()?;
    let mut r = SweepReport::new(&res, &dir);
    r.jobs = Some(opts.jobs);
    r.wall_time_s = Some(wall);
    print_report(&r, a.json)
}

pub fn cmd_merge(a: MergeArgs) -> Result<()> {
    let res = merge::merge(&a.dirs)?;
    let stage = Staging::new(&a.out)?;
    output::write(&stage, &res)?;
    let dir = stage.commit()?;
    let mut r = SweepReport::new(&res, &dir);
    r.shards = Some(a.dirs.len());
    print_report(&r, a.json)
}

/// `optimize --starts N`: the best of N starts (its result, and the `multi_start` entry
/// of the summary JSON).
pub fn best_of_starts(
    p: &Problem, setup: &hybridopt::setup::Setup<'_, hybridopt::systems::builtin::Builtin>,
    count: usize, s: &StartArgs, quiet: bool,
) -> Result<(hybridopt::optimize::OptimizeResult, MultiStartSummary)> {
    let ranges = starts::sampling_box(&p.theta, &s.ranges)?;
    let opts = run_options(s.jobs, None, quiet)?;
    let ms = sweep::multi_start(p, setup, count, s.seed(), &ranges, &opts)?;
    let info = MultiStartSummary::new(count, s.seed(), ranges, &ms);
    Ok((ms.best, info))
}

fn gradient_method(g: crate::OptGradientArg) -> hybridopt::sensitivity::GradientMethod {
    use hybridopt::sensitivity::GradientMethod;
    match g {
        crate::OptGradientArg::Adjoint => GradientMethod::Adjoint,
        crate::OptGradientArg::Direct => GradientMethod::Direct,
        crate::OptGradientArg::Fd => GradientMethod::Fd,
    }
}
