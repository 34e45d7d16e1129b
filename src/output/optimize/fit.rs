//! A data fit's files (docs/guide/identification.md): `residuals.csv` (each measured
//! cell's time, output, datum, σ and residual at the start and at the end), `fit.png`
//! (the data against the initial and the fitted outputs) and `residuals.png` (the
//! residuals over time, the events of the fit marked) — of the first experiment's records.

use crate::cost::Samples;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::OptimizeResult;
use crate::output::artifacts::{event_markers, Table};
use crate::output::atomic::Staging;
use crate::plot::{Figure, LineKind, Panel, Series};
use crate::setup::Setup;
use ndarray::Array2;

/// Writes the fit's files into `stage` when the first objective has data terms.
pub(super) fn stage_fit<S: HybridSystem>(
    name: &str, setup: &Setup<'_, S>, r: &OptimizeResult, tables: (&Table, &Table), stage: &Staging,
) -> Result<(), Error> {
    let Some(obj) = setup.objectives().first() else {
        return Ok(());
    };
    let records: Vec<(&Samples, f64)> = obj.terms.iter().filter_map(|t| t.data()).collect();
    if records.is_empty() {
        return Ok(());
    }
    let mut rows: Vec<[f64; 6]> = Vec::new();
    let mut fit = Vec::new();
    let mut resid = Vec::new();
    // one run of the whole record at each end (a multiple-shooting fit's own trajectory is
    // its segments', which do not stop at every sample): a run the record cannot be read
    // on (a domain error at the start) leaves the fit's files out, not the results
    let (Ok(run0), Ok(run1)) = (
        setup.simulate(&r.theta_initial),
        setup.simulate(&r.theta_final),
    ) else {
        return Ok(());
    };
    for (samples, weight) in records {
        let (Ok(r0), Ok(r1)) = (
            setup.data_residuals(&run0, &r.theta_initial, samples, weight),
            setup.data_residuals(&run1, &r.theta_final, samples, weight),
        ) else {
            return Ok(());
        };
        let cells: Vec<_> = samples.measured().collect();
        for ((&(i, c, d), a), b) in cells.iter().zip(&r0).zip(&r1) {
            let output = samples.channels[c].output as f64;
            rows.push([samples.times[i], output, d.value, d.sigma, *a, *b]);
        }
        for (c, ch) in samples.channels.iter().enumerate() {
            let mine: Vec<usize> = (0..cells.len()).filter(|&k| cells[k].1 == c).collect();
            let t: Vec<f64> = mine.iter().map(|&k| samples.times[cells[k].0]).collect();
            let d: Vec<f64> = mine.iter().map(|&k| cells[k].2.value).collect();
            let mut series = vec![Series::new("data", t.clone(), d, LineKind::Points)];
            for (label, tab, kind) in [
                ("initial", tables.0, LineKind::Dashed),
                ("fitted", tables.1, LineKind::Solid),
            ] {
                if let (Some(tt), Some(y)) = (tab.column("t"), tab.column(&ch.name)) {
                    series.push(Series::new(label, tt, y, kind));
                }
            }
            fit.push(panel(&ch.name, series));
            let res: Vec<f64> = mine.iter().map(|&k| r1[k]).collect();
            let res_series = vec![Series::new("residual (y − d)/σ", t, res, LineKind::Points)];
            resid.push(panel(&format!("{} residual", ch.name), res_series));
        }
    }
    let header: Vec<String> = [
        "t",
        "output",
        "datum",
        "sigma",
        "residual_initial",
        "residual",
    ]
    .map(String::from)
    .to_vec();
    let table = Array2::from_shape_fn((rows.len(), 6), |(i, j)| rows[i][j]);
    stage.write_csv("residuals.csv", &header, &table)?;
    let markers = event_markers(setup, &run1);
    stage.write_figure(
        "fit",
        &figure(&format!("{name}: data and fit"), fit, vec![]),
    )?;
    stage.write_figure(
        "residuals",
        &figure(
            &format!("{name}: residuals at the fit (events marked)"),
            resid,
            markers,
        ),
    )
}

fn panel(title: &str, series: Vec<Series>) -> Panel {
    Panel {
        title: title.to_string(),
        y_label: title.to_string(),
        series,
        log_y: false,
    }
}

fn figure(title: &str, panels: Vec<Panel>, markers: Vec<crate::plot::Marker>) -> Figure {
    Figure {
        title: title.to_string(),
        x_label: "t".into(),
        panels,
        markers,
    }
}
