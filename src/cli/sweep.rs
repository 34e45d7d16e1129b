//! `hybridopt sweep`.

use super::starts::{run_options, StartArgs};
use super::{load, print_report, OptGradientArg};
use anyhow::Result;
use hybridopt::output::sweep::{write_sweep, SweepReport};
use hybridopt::output::Staging;
use hybridopt::problem::Problem;

use hybridopt::sweep::{self, starts, Axis, Plan, Shard};
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
    gradient: Option<OptGradientArg>,
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

impl SweepArgs {
    /// The grid's axes or the starts' count, seed and sampling box.
    fn plan(&self, p: &Problem) -> Result<Plan> {
        Ok(match self.starts {
            Some(n) => Plan::Starts {
                count: starts::check_count(n)?,
                seed: self.multi.seed(),
                ranges: starts::sampling_box(&p.theta, &self.multi.ranges)?,
            },
            None => {
                self.multi.check_unused(false)?;
                let axes = self
                    .grid
                    .iter()
                    .map(|g| Axis::parse(g, &p.theta))
                    .collect::<Result<Vec<_>, _>>()?;
                sweep::grid::check_axes(&axes)?;
                Plan::Grid { axes }
            }
        })
    }

    pub fn run(self) -> Result<()> {
        let mut p: Problem = load(&self.problem, &self.params)?;
        if let Some(g) = self.gradient {
            p.optimizer.gradient = g.into();
        }
        if let Some(n) = self.max_iters {
            p.optimizer.max_iters = n;
        }
        let plan = self.plan(&p)?;
        let shard = self.shard.as_deref().map(Shard::parse).transpose()?;
        let opts = run_options(self.multi.jobs, shard, self.quiet)?;
        let out = self.out.unwrap_or_else(|| {
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
        write_sweep(&stage, &res)?;
        let dir = stage.commit()?;
        let mut r = SweepReport::new(&res, &dir);
        r.jobs = Some(opts.jobs);
        r.wall_time_s = Some(wall);
        print_report(&r, self.json, || r.text())
    }
}
