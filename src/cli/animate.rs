//! `hybridopt animate`.

use super::{load, print_report};
use anyhow::{bail, Result};
use hybridopt::output::animate::{animate_to_folder, AnimateRequest};
use std::path::PathBuf;
use std::time::Instant;

/// `hybridopt animate`.
#[derive(clap::Args)]
pub struct AnimateArgs {
    /// The problem file (TOML).
    problem: PathBuf,
    /// Output folder (default: results/animate/<problem name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Frames per second (1–100).
    #[arg(long, default_value_t = 25)]
    fps: u32,
    /// Display duration in seconds (default: real time).
    #[arg(long)]
    duration: Option<f64>,
    /// Override a parameter value: NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Draw the initial and the optimized motion side by side, with the parameters of
    /// `optimize`'s summary (see --summary).
    #[arg(long)]
    compare_initial: bool,
    /// The summary.json of `optimize` for --compare-initial (default:
    /// results/<problem name>/summary.json).
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Width of one panel in pixels (64–2000).
    #[arg(long, default_value_t = 480)]
    width: u32,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

impl AnimateArgs {
    pub fn run(self) -> Result<()> {
        let wall = Instant::now();
        let width = self.width;
        if !(64..=2000).contains(&width) {
            bail!("--width {width}: a panel must be between 64 and 2000 pixels wide");
        }
        let p = load(&self.problem, &self.params)?;
        let summary = self
            .summary
            .unwrap_or_else(|| PathBuf::from("results").join(&p.name).join("summary.json"));
        let req = AnimateRequest {
            out: self
                .out
                .unwrap_or_else(|| PathBuf::from("results/animate").join(&p.name)),
            fps: self.fps,
            duration: self.duration,
            width,
            compare_initial: self.compare_initial.then_some(summary),
        };
        let (report, dir) = animate_to_folder(&p, &req, wall)?;
        print_report(&report, self.json, || report.text(&p.name, &dir))
    }
}
