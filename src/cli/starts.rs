//! The multi-start flags shared by `sweep --starts` and `optimize --starts`, and the
//! best of N starts of `optimize --starts`.

use anyhow::Result;
use hybridopt::optimize::OptimizeResult;
use hybridopt::output::optimize::MultiStartSummary;
use hybridopt::problem::Problem;
use hybridopt::setup::Setup;
use hybridopt::sweep::{self, run, starts, RunOptions, Shard};
use hybridopt::systems::Builtin;
use std::io::IsTerminal;

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
    pub ranges: Vec<String>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "J")]
    pub jobs: Option<usize>,
}

impl StartArgs {
    /// `--jobs`, checked to be in 1..=MAX_JOBS when given.
    pub fn jobs(&self) -> Result<Option<usize>> {
        Ok(self.jobs.map(run::check_jobs).transpose()?)
    }

    pub fn seed(&self) -> u64 {
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

    /// `optimize --starts N`: the best of N starts (its result, and the `multi_start`
    /// entry of the summary JSON).
    pub fn best_of(
        &self, p: &Problem, setup: &Setup<'_, Builtin>, count: usize, quiet: bool,
    ) -> Result<(OptimizeResult, MultiStartSummary)> {
        let ranges = starts::sampling_box(&p.theta, &self.ranges)?;
        let opts = run_options(self.jobs, None, quiet)?;
        let ms = sweep::multi_start(p, setup, count, self.seed(), &ranges, &opts)?;
        let info = MultiStartSummary::new(count, self.seed(), ranges, &ms);
        Ok((ms.best, info))
    }
}

/// The worker threads (checked, default all cores), the shard, and a progress bar on a
/// terminal unless `--quiet`.
pub fn run_options(jobs: Option<usize>, shard: Option<Shard>, quiet: bool) -> Result<RunOptions> {
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
