//! `hybridopt periodic`.

use super::{load, print_report};
use anyhow::Result;
use hybridopt::output::periodic::periodic_to_folder;
use std::path::PathBuf;

/// `hybridopt periodic`.
#[derive(clap::Args)]
pub struct PeriodicArgs {
    /// The problem file (TOML) with a `[periodic]` table.
    problem: PathBuf,
    /// Output folder (default: results/<problem name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override a parameter value: NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Follow the orbit as parameter NAME goes from LO to HI in N points.
    #[arg(long = "continue", value_name = "NAME=LO:HI:N")]
    continuation: Option<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

impl PeriodicArgs {
    pub fn run(self) -> Result<()> {
        let p = load(&self.problem, &self.params)?;
        let out = self
            .out
            .unwrap_or_else(|| PathBuf::from("results").join(&p.name));
        let (report, dir) = periodic_to_folder(&p, self.continuation.as_deref(), &out)?;
        if let Some(g) = &report.orbit.guess_projection {
            eprintln!(
                "note: the [periodic] guess misses the section (guard '{}' = {:e}); moved onto it before Newton's method (guess_projection in orbit.json)",
                g.guard, g.miss
            );
        }
        print_report(&report, self.json, || report.text(&p.name, &dir))
    }
}
