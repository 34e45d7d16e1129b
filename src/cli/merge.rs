//! `hybridopt merge`.

use super::print_report;
use anyhow::Result;
use hybridopt::output::sweep::{write_sweep, SweepReport};
use hybridopt::output::Staging;
use hybridopt::sweep::merge;

use std::path::PathBuf;

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

impl MergeArgs {
    pub fn run(self) -> Result<()> {
        let res = merge::merge(&self.dirs)?;
        let stage = Staging::new(&self.out)?;
        write_sweep(&stage, &res)?;
        let dir = stage.commit()?;
        let mut r = SweepReport::new(&res, &dir);
        r.shards = Some(self.dirs.len());
        print_report(&r, self.json, || r.text())
    }
}
