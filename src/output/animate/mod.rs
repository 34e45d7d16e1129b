//! `hybridopt animate`: `animation.gif`, `strobe.png`/`.svg` and the report
//! `animation.json` (also `--json`).

pub(crate) mod files;

pub use files::{file_geometry, stage_animation, stage_strobe, Drawing, Run};

use crate::animate::{AnimationOptions, GifInfo, StrobeOptions};
use crate::error::Error;
use crate::output::atomic::Staging;
use crate::output::optimize::summary::{summary_thetas, EventSummary};
use crate::problem::Problem;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `animation.json` and `animate --json` (a contract: add fields, never rename or drop).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnimateReport {
    /// The GIF: frames, width, height, delay_cs, speed.
    pub animation: GifInfo,
    /// Frames per second asked for.
    pub fps: u32,
    /// The events of each motion drawn (one list; two with `--compare-initial`).
    pub events: Vec<Vec<EventSummary>>,
    /// The whole command.
    pub wall_s: f64,
}

impl AnimateReport {
    /// The terminal report.
    pub fn text(&self, name: &str, dir: &Path) -> String {
        let g = &self.animation;
        format!(
            "{name}: {} frames of {}×{} at {} fps ({} s of motion per second shown), {:.2} s; wrote {}\n",
            g.frames,
            g.width,
            g.height,
            self.fps,
            g.speed,
            self.wall_s,
            dir.display()
        )
    }
}

/// What to draw: the folder, the GIF's rate, duration and panel width, and with
/// `compare_initial` the `summary.json` whose initial and optimized θ are drawn side by side.
#[derive(Debug, Clone)]
pub struct AnimateRequest {
    pub out: PathBuf,
    pub fps: u32,
    pub duration: Option<f64>,
    pub width: u32,
    pub compare_initial: Option<PathBuf>,
}

/// Draws `p`'s motion (with the problem file's `[plot.geometry]`, else the system's own)
/// into `req.out` (staged, swapped in atomically); `started` is when the command started.
pub fn animate_to_folder(
    p: &Problem, req: &AnimateRequest, started: Instant,
) -> Result<(AnimateReport, PathBuf), Error> {
    let kind = p.system.kind();
    let from_file = file_geometry(p);
    let drawing = Drawing::of_problem(p, from_file.as_ref()).ok_or_else(|| Error::NoGeometry {
        system: kind.into(),
    })?;
    let setup = p.setup()?;
    let thetas = match &req.compare_initial {
        Some(file) => {
            let (a, b) = summary_thetas(p, &setup.theta_names(), file)?;
            vec![("initial", a), ("optimized", b)]
        }
        None => vec![("", p.theta_values())],
    };
    let trajs = thetas
        .iter()
        .map(|(_, th)| setup.simulate(th))
        .collect::<Result<Vec<_>, _>>()?;
    let runs: Vec<Run<'_>> = thetas
        .iter()
        .zip(&trajs)
        .map(|((label, th), tr)| Run {
            label: label.to_string(),
            trajectory: tr,
            theta: th,
        })
        .collect();
    let stage = Staging::new(&req.out)?;
    let opts = AnimationOptions {
        fps: req.fps,
        duration: req.duration,
        width: req.width,
        ..Default::default()
    };
    let gif = stage_animation(&stage, &setup, drawing, &p.name, &runs, &opts)?;
    let strobe = StrobeOptions {
        width: req.width.max(320) + 160,
        ..Default::default()
    };
    let title = format!("{}: stroboscopic picture", p.name);
    stage_strobe(&stage, &setup, drawing, &title, &runs, &strobe)?;
    let report = AnimateReport {
        animation: gif,
        fps: req.fps,
        events: trajs
            .iter()
            .map(|t| EventSummary::list(&setup, t))
            .collect(),
        wall_s: started.elapsed().as_secs_f64(),
    };
    stage.write_json("animation.json", &super::to_value(&report)?)?;
    let dir = stage.commit()?;
    Ok((report, dir))
}
