//! The results folder of an optimization — `summary.json`, `history.csv`, the initial and
//! final trajectories, the convergence, trajectory and control figures, and the strobe
//! picture of the initial and optimized motion for a system that can be drawn — written through
//! [`Staging`], so that a failure leaves no partial folder and earlier results unchanged.

mod fit;
pub(crate) mod summary;

pub use summary::{summary_thetas, EventSummary, MultiStartSummary, OptimizeSummary};

#[cfg(feature = "plots")]
use crate::animate::StrobeOptions;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::{HistoryRow, OptimizeResult};
#[cfg(feature = "plots")]
use crate::output::animate::{file_geometry, stage_strobe, Drawing, Run};
use crate::output::artifacts::{self, trajectory_table};
use crate::output::atomic::Staging;
use crate::plot::LineKind;
use crate::problem::Problem;
use crate::setup::Setup;
use std::path::{Path, PathBuf};

/// Writes the results of `r` (a run on `setup`, built from `p`) into the folder `out`,
/// staged and swapped in atomically; returns the folder.
pub fn write_optimize_results<S: HybridSystem>(
    p: &Problem, setup: &Setup<'_, S>, r: &OptimizeResult, summary: &OptimizeSummary, out: &Path,
) -> Result<PathBuf, Error> {
    let stage = Staging::new(out)?;
    let value = summary.to_value().map_err(|e| Error::Io {
        path: stage.path("summary.json"),
        source: std::io::Error::from(e),
    })?;
    stage.write_json("summary.json", &value)?;
    let names = setup.theta_names();
    let (header, rows) = history_table(&names, &r.history);
    stage.write_csv("history.csv", &header, &rows)?;
    let (s_init, s_final) = r.setups_at_ends(setup);
    let t_init = trajectory_table(&s_init, &r.initial.trajectory, &r.theta_initial)?;
    let t_final = trajectory_table(&s_final, &r.last.trajectory, &r.theta_final)?;
    stage.write_csv("trajectory_initial.csv", &t_init.header, &t_init.rows)?;
    stage.write_csv("trajectory.csv", &t_final.header, &t_final.rows)?;
    stage.write_figure(
        "convergence",
        &artifacts::convergence_figure(&format!("{}: convergence", p.name), &r.history),
    )?;
    let runs = [
        ("initial", &t_init, LineKind::Dashed),
        ("optimized", &t_final, LineKind::Solid),
    ];
    let mut plotted: Vec<String> = p
        .plot_outputs
        .iter()
        .map(|&i| p.dims.outputs[i].clone())
        .collect();
    plotted.retain(|n| !setup.dims.controls.contains(n));
    let mut figure = artifacts::outputs_figure(
        &format!("{}: initial vs optimized", p.name),
        &plotted,
        &runs,
        artifacts::event_markers(setup, &r.last.trajectory),
    );
    path_bounds(p, &t_final, &mut figure);
    stage.write_figure("trajectory", &figure)?;
    if !setup.dims.controls.is_empty() {
        stage.write_figure(
            "controls",
            &artifacts::outputs_figure(
                &format!("{}: controls", p.name),
                &setup.dims.controls,
                &runs,
                vec![],
            ),
        )?;
    }
    crate::output::loops::stage_loops(&p.name, &p.plot_loops, setup, &runs, &stage)?;
    fit::stage_fit(&p.name, &s_final, r, (&t_init, &t_final), &stage)?;
    #[cfg(feature = "plots")]
    strobe(p, setup, r, &stage)?;
    stage.commit()
}

/// A path constraint's bounds as dashed horizontal lines on its output's panel.
fn path_bounds(p: &Problem, table: &artifacts::Table, figure: &mut crate::plot::Figure) {
    let Some(t) = table.column("t") else {
        return;
    };
    let (Some(&t0), Some(&t1)) = (t.first(), t.last()) else {
        return;
    };
    for c in &p.constraints.list {
        let crate::constraint::ConstraintKind::Path { output } = c.kind else {
            continue;
        };
        let name = &p.dims.outputs[output];
        let Some(panel) = figure.panels.iter_mut().find(|q| &q.title == name) else {
            continue;
        };
        let (lower, upper) = c.limits();
        for (side, b) in [("lower", lower), ("upper", upper)] {
            if b.is_finite() {
                panel.series.push(crate::plot::Series::new(
                    format!("{} ({side} bound)", c.name),
                    vec![t0, t1],
                    vec![b, b],
                    LineKind::Dashed,
                ));
            }
        }
    }
}

#[cfg(feature = "plots")]
/// `strobe.png`/`.svg`: the initial and the optimized motion side by side, drawn with the
/// problem file's `[plot] geometry`, else the system's own geometry; nothing for a system
/// that has neither.
fn strobe<S: HybridSystem>(
    p: &Problem, setup: &Setup<'_, S>, r: &OptimizeResult, stage: &Staging,
) -> Result<(), Error> {
    let from_file = file_geometry(p);
    let Some(drawing) = Drawing::of_problem(p, from_file.as_ref()) else {
        return Ok(());
    };
    let runs = [
        Run {
            label: "initial".into(),
            trajectory: &r.initial.trajectory,
            theta: &r.theta_initial,
        },
        Run {
            label: "optimized".into(),
            trajectory: &r.last.trajectory,
            theta: &r.theta_final,
        },
    ];
    let title = format!("{}: initial vs optimized motion", p.name);
    let opts = StrobeOptions {
        width: 560,
        ..Default::default()
    };
    stage_strobe(stage, setup, drawing, &title, &runs, &opts)
}

/// `history.csv`: `iteration, cost, grad_norm, step`, then θ by name, one row per iteration.
pub fn history_table(
    names: &[String], history: &[HistoryRow],
) -> (Vec<String>, ndarray::Array2<f64>) {
    let mut header = vec![
        "iteration".to_string(),
        "cost".into(),
        "grad_norm".into(),
        "step".into(),
    ];
    header.extend(names.iter().cloned());
    // a constrained run adds the largest violation (its grad_norm is the KKT stationarity)
    let constrained = history.iter().any(|h| h.max_violation.is_some());
    if constrained {
        header.push("max_violation".into());
    }
    // multiple shooting adds the largest continuity gap
    let shooting = history.iter().any(|h| h.defect.is_some());
    if shooting {
        header.push("defect".into());
    }
    let mut rows = ndarray::Array2::zeros((history.len(), header.len()));
    for (i, h) in history.iter().enumerate() {
        rows[(i, 0)] = h.iteration as f64;
        rows[(i, 1)] = h.cost;
        rows[(i, 2)] = h.grad_norm;
        rows[(i, 3)] = h.step;
        for (j, v) in h.theta.iter().enumerate() {
            rows[(i, 4 + j)] = *v;
        }
        if constrained {
            rows[(i, 4 + h.theta.len())] = h.max_violation.unwrap_or(f64::NAN);
        }
        if shooting {
            rows[(i, header.len() - 1)] = h.defect.unwrap_or(f64::NAN);
        }
    }
    (header, rows)
}
