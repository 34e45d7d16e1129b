//! `hybridopt feedback`.

use super::{load, print_report};
use anyhow::Result;
use hybridopt::output::feedback::{feedback_to_folder, FeedbackRequest};
use std::path::PathBuf;
use std::time::Instant;

/// `hybridopt feedback`.
#[derive(clap::Args)]
pub struct FeedbackArgs {
    /// The problem file (TOML) with a `[feedback]` table.
    problem: PathBuf,
    /// Output folder (default: results/feedback/<problem name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Take the nominal's parameters from this summary.json of `optimize` instead of
    /// optimizing.
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Use the file's parameter values as the nominal (no optimization).
    #[arg(long, conflicts_with = "summary")]
    no_optimize: bool,
    /// Robustness trials instead of the file's `[feedback.robustness] trials` (0: none).
    #[arg(long)]
    trials: Option<usize>,
    /// Do not draw animation.gif.
    #[arg(long)]
    no_animation: bool,
    /// Override a parameter value: NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

impl FeedbackArgs {
    pub fn run(self) -> Result<()> {
        let wall = Instant::now();
        let p = load(&self.problem, &self.params)?;
        let req = FeedbackRequest {
            out: self
                .out
                .unwrap_or_else(|| PathBuf::from("results/feedback").join(&p.name)),
            summary: self.summary,
            optimize: !self.no_optimize,
            trials: self.trials,
            animation: !self.no_animation,
        };
        let (report, dir) = feedback_to_folder(&p, &req, wall)?;
        print_report(&report, self.json, || report.text(&dir))
    }
}
