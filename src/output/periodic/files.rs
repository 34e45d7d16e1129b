//! The results folder of `hybridopt periodic`, written through the atomic staging of
//! [`crate::output::atomic`] (an error leaves no partial folder):
//! `orbit.json` (the [`OrbitReport`]), `cycle.csv` (one period sampled),
//! `limit_cycle.{png,svg}`, `multipliers.{png,svg}`, and for a continuation
//! `continuation.json`, `continuation.csv`, `continuation.{png,svg}`.

use super::figures;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::output::atomic::Staging;
use crate::periodic::continuation::Branch;
use crate::periodic::map::{cycle_table, return_value};
use crate::periodic::orbit::{Orbit, OrbitReport};
use crate::periodic::spec::PeriodicSpec;

use ndarray::Array2;

/// Writes the orbit's files into `stage`.
pub fn write_orbit<S: HybridSystem>(
    stage: &Staging, name: &str, sys: &S, spec: &PeriodicSpec, p: &[f64], orbit: &Orbit,
    report: &OrbitReport,
) -> Result<(), Error> {
    stage.write_json("orbit.json", report)?;
    let x = orbit.fixed.x.as_slice();
    let table = cycle_table(sys, &spec.section, &spec.map, p, x)?;
    stage.write_csv("cycle.csv", &table.header, &table.rows)?;
    let (_, _, traj) = return_value(sys, &spec.section, &spec.map, p, x)?;
    let n = x.len();
    // the system's own guards come first; a hyperplane section's guard follows them
    let dims = sys.dims();
    let impacts = dims.guards.len();
    let jumps: Vec<(Vec<f64>, Vec<f64>)> = traj
        .events
        .iter()
        .filter(|e| e.guard < impacts)
        .map(|e| {
            let plus = if e.terminal {
                orbit.fixed.ret.x_next.iter().copied().collect()
            } else {
                e.after.y[..n].to_vec()
            };
            (e.before.y[..n].to_vec(), plus)
        })
        .collect();
    let states = dims.states;
    stage.write_figure(
        "limit_cycle",
        &figures::limit_cycle(
            name,
            &table,
            &states,
            &jumps,
            spec.section.hyperplane().map(|_| x),
        ),
    )?;
    stage.write_figure("multipliers", &figures::multipliers(name, report))?;
    Ok(())
}

/// Writes a continuation's files into `stage`: the branch as JSON, one CSV row per point
/// (`param, states…, period, spectral_radius, stable, re_1, im_1, …`), and the plot.
pub fn write_branch(stage: &Staging, name: &str, b: &Branch) -> Result<(), Error> {
    stage.write_json("continuation.json", b)?;
    let nm = figures::multiplier_count(b);
    let mut header = vec![b.param.clone()];
    header.extend(b.states.iter().cloned());
    header.extend(["period", "spectral_radius", "stable"].map(String::from));
    for i in 0..nm {
        header.push(format!("re_{}", i + 1));
        header.push(format!("im_{}", i + 1));
    }
    let rows = table(
        header.len(),
        f64::NAN,
        b.points.iter().map(|p| {
            let mut row = vec![p.value];
            row.extend(&p.fixed_point);
            row.extend([
                p.period,
                p.spectral_radius,
                if p.stable { 1.0 } else { 0.0 },
            ]);
            for m in &p.multipliers {
                row.extend(m);
            }
            row
        }),
    );
    stage.write_csv("continuation.csv", &header, &rows)?;
    stage.write_figure("continuation", &figures::continuation(name, b))?;
    Ok(())
}

/// Writes a gait optimization: `summary.json` (the [`crate::periodic::optimize::GaitOptimum`]),
/// `history.csv` (one row per evaluation: the parameters, value, spectral radius,
/// period), the convergence figure (`convergence.png`/`.svg`), and the orbit's files at
/// the final parameters.
pub fn write_gait(
    stage: &Staging, p: &crate::problem::Problem, opt: &crate::periodic::optimize::GaitOptimum,
) -> Result<(), Error> {
    let name = &p.name;
    stage.write_json("summary.json", &super::summary::GaitSummary::new(p, opt))?;
    let mut header: Vec<String> = vec!["evaluation".into()];
    header.extend(opt.names.iter().cloned());
    header.extend(["value", "spectral_radius", "period"].map(String::from));
    let rows = table(
        header.len(),
        0.0,
        opt.history.iter().enumerate().map(|(r, e)| {
            let mut row = vec![r as f64];
            row.extend(&e.params);
            row.extend([e.value, e.spectral_radius, e.period]);
            row
        }),
    );
    stage.write_csv("history.csv", &header, &rows)?;
    stage.write_figure("convergence", &figures::gait_convergence(name, opt))?;
    Ok(())
}

/// The rows as a table of `ncols` columns, a short row's missing entries `fill`.
fn table(ncols: usize, fill: f64, rows: impl ExactSizeIterator<Item = Vec<f64>>) -> Array2<f64> {
    let mut out = Array2::from_elem((rows.len(), ncols), fill);
    for (r, row) in rows.enumerate() {
        for (c, v) in row.into_iter().enumerate() {
            out[(r, c)] = v;
        }
    }
    out
}
