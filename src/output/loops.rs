//! x–y figures of one output against another (`[plot] loops = [["eps", "sigma"]]`): the
//! hysteresis loops of systems with memory (stress against strain, force against
//! displacement), with the initial, the optimized and — for a problem that tracks a
//! reference run — the reference curve in one figure.

use crate::cost::Term;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::output::artifacts::{trajectory_table, Table};
use crate::output::atomic::Staging;
use crate::plot::{Figure, LineKind, Panel, Series};
use crate::setup::Setup;

/// One x–y figure: `y` against `x` for each labelled run (a run without either column is
/// left out).
pub fn loop_figure(title: &str, x: &str, y: &str, runs: &[(&str, &Table, LineKind)]) -> Figure {
    let series = runs
        .iter()
        .filter_map(|(label, tab, kind)| {
            Some(Series::new(*label, tab.column(x)?, tab.column(y)?, *kind))
        })
        .collect();
    Figure {
        title: title.to_string(),
        x_label: x.to_string(),
        panels: vec![Panel {
            title: format!("{y} against {x}"),
            y_label: y.to_string(),
            series,
            log_y: false,
        }],
        markers: Vec::new(),
    }
}

/// The trajectory of the first tracking term's reference run, tabulated (none when no term
/// tracks a reference).
pub fn reference_table<S: HybridSystem>(setup: &Setup<'_, S>) -> Result<Option<Table>, Error> {
    let reference = setup
        .objectives
        .iter()
        .flat_map(|o| &o.terms)
        .find_map(|t| match t {
            Term::Track { reference, .. } => Some(reference.clone()),
            _ => None,
        });
    reference
        .map(|r| trajectory_table(setup, &r.trajectory, &r.theta))
        .transpose()
}

/// `loop_<x>_<y>.png`/`.svg` for every pair of `loops` (output indices): the given runs
/// (initial dashed, optimized solid) and the reference run (dots) if the problem tracks one.
pub fn stage_loops<S: HybridSystem>(
    name: &str, loops: &[(usize, usize)], setup: &Setup<'_, S>, runs: &[(&str, &Table, LineKind)],
    stage: &Staging,
) -> Result<(), Error> {
    if loops.is_empty() {
        return Ok(());
    }
    let reference = reference_table(setup)?;
    let mut runs = runs.to_vec();
    if let Some(t) = &reference {
        runs.push(("reference", t, LineKind::Points));
    }
    let outputs = &setup.dims.outputs;
    for &(xi, yi) in loops {
        let (x, y) = (&outputs[xi], &outputs[yi]);
        let fig = loop_figure(&format!("{name}: {y} against {x}"), x, y, &runs);
        let file = format!("loop_{x}_{y}");
        stage.write_figure(&file, &fig)?;
    }
    Ok(())
}
