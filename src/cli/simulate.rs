//! `hybridopt simulate`.

use super::{load, print_report};
use anyhow::Result;
use hybridopt::output::simulate::simulate_to_folder;
use std::path::PathBuf;

/// `hybridopt simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {
    /// The problem file (TOML).
    problem: PathBuf,
    /// Output folder (default: results/simulate/<problem name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override a parameter value: NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

impl SimulateArgs {
    pub fn run(self) -> Result<()> {
        let p = load(&self.problem, &self.params)?;
        let out = self
            .out
            .unwrap_or_else(|| PathBuf::from("results/simulate").join(&p.name));
        let (report, dir) = simulate_to_folder(&p, &out)?;
        print_report(&report, self.json, || report.text(&p.name, p.t0, &dir))
    }
}
