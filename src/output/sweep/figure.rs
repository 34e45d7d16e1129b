//! A sweep's figures: cost against the parameter for one grid axis (optimum marked), a
//! heatmap with the optimum marked for two, and for starts the final costs sorted plus
//! the best start's trajectory. A grid of three or more axes gets no figure.

use super::heatmap;
use crate::error::Error;
use crate::output::artifacts::outputs_figure;
use crate::output::atomic::Staging;
use crate::plot::{Figure, LineKind, Marker, Panel, Series};
use crate::sweep::record::{Plan, PointOutcome, SweepFile};
use crate::sweep::SweepResult;

/// Writes the figures of `res` into `stage` (`sweep.png`/`.svg`, and for starts
/// `best_trajectory.png`/`.svg`).
pub fn write(stage: &Staging, res: &SweepResult) -> Result<(), Error> {
    let file = &res.file;
    match &file.plan {
        Plan::Grid { axes } if axes.len() == 1 => {
            stage.write_figure("sweep", &cost_curve(file, &axes[0].name))
        }
        Plan::Grid { axes } if axes.len() == 2 => {
            let n = axes[0].n * axes[1].n;
            let mut cells = vec![heatmap::Cell::Missing; n];
            for p in &file.points {
                if let Some(c) = cells.get_mut(p.index) {
                    *c = match (p.outcome, p.cost) {
                        (PointOutcome::Failed, _) | (_, None) => heatmap::Cell::Failed,
                        (_, Some(v)) => heatmap::Cell::Cost(v),
                    };
                }
            }
            let best = file.best.as_ref().and_then(|b| {
                let p = file.points.iter().find(|p| p.index == b.index)?;
                Some((
                    p.parameters.get(&axes[0].name)?,
                    p.parameters.get(&axes[1].name)?,
                    b.cost,
                ))
            });
            heatmap::write(
                &format!(
                    "{}: cost over {} × {}",
                    file.problem, axes[0].name, axes[1].name
                ),
                &axes[0],
                &axes[1],
                &cells,
                best,
                &stage.path("sweep.png"),
                &stage.path("sweep.svg"),
            )
        }
        Plan::Grid { .. } => Ok(()),
        Plan::Starts { .. } => {
            stage.write_figure("sweep", &sorted_costs(file))?;
            let (Some(table), Some(best)) = (&res.best_trajectory, &file.best) else {
                return Ok(());
            };
            let markers = best
                .events
                .iter()
                .flatten()
                .map(|e| Marker::new(e.t, Some(e.guard.clone())))
                .collect();
            let fig = outputs_figure(
                &format!(
                    "{}: best start (#{}, cost {:.6e})",
                    file.problem, best.index, best.cost
                ),
                &file.plot_outputs,
                &[("best start", table, LineKind::Solid)],
                markers,
            );
            stage.write_figure("best_trajectory", &fig)
        }
    }
}

/// Whether every value is positive (then a log axis shows them all).
fn all_positive(v: &[f64]) -> bool {
    v.iter().filter(|x| x.is_finite()).all(|&x| x > 0.0)
}

/// One axis: cost and gradient norm against the parameter, the optimum marked.
fn cost_curve(file: &SweepFile, name: &str) -> Figure {
    let mut pts: Vec<(f64, f64, f64)> = file
        .points
        .iter()
        .filter_map(|p| {
            let x = p.parameters.get(name)?;
            Some((
                x,
                p.cost.unwrap_or(f64::NAN),
                p.gradient_norm.unwrap_or(f64::NAN),
            ))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let x: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let cost: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let grad: Vec<f64> = pts.iter().map(|p| p.2).collect();
    let markers = file
        .best
        .as_ref()
        .and_then(|b| {
            let p = file.points.iter().find(|p| p.index == b.index)?;
            Some(vec![Marker::new(
                p.parameters.get(name)?,
                Some(format!("min {:.4e}", b.cost)),
            )])
        })
        .unwrap_or_default();
    Figure {
        title: format!("{}: cost over {name}", file.problem),
        x_label: name.to_string(),
        panels: vec![
            Panel {
                title: "cost ψ".into(),
                y_label: "ψ".into(),
                series: vec![
                    Series::new("ψ", x.clone(), cost.clone(), LineKind::Solid),
                    Series::new("grid points", x.clone(), cost.clone(), LineKind::Points),
                ],
                log_y: all_positive(&cost),
            },
            Panel {
                title: format!("|∂ψ/∂{name}|"),
                y_label: "|gradient|".into(),
                series: vec![Series::new("|∂ψ/∂θ|", x, grad, LineKind::Solid)],
                log_y: true,
            },
        ],
        markers,
    }
}

/// Starts: final (and initial) costs, sorted by final cost.
fn sorted_costs(file: &SweepFile) -> Figure {
    let mut pts: Vec<(f64, f64)> = file
        .points
        .iter()
        .filter(|p| p.outcome != PointOutcome::Failed)
        .filter_map(|p| Some((p.cost?, p.initial_cost.unwrap_or(f64::NAN))))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let rank: Vec<f64> = (1..=pts.len()).map(|k| k as f64).collect();
    let fin: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let ini: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let failed = file.counts.failed;
    Figure {
        title: format!(
            "{}: {} starts, final costs sorted{}",
            file.problem,
            file.points.len(),
            if failed > 0 {
                format!(" ({failed} failed, not shown)")
            } else {
                String::new()
            }
        ),
        x_label: "start, ranked by final cost".into(),
        panels: vec![Panel {
            title: "cost".into(),
            y_label: "ψ".into(),
            series: vec![
                Series::new("final", rank.clone(), fin.clone(), LineKind::Points),
                Series::new("initial", rank, ini.clone(), LineKind::Points),
            ],
            log_y: all_positive(&fin) && all_positive(&ini),
        }],
        markers: vec![],
    }
}
