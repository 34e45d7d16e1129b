//! The results folder of `hybridopt periodic`, written through the atomic staging of
//! [`crate::output::atomic`] (an error leaves no partial folder):
//! `orbit.json` (the [`OrbitReport`]), `cycle.csv` (one period sampled),
//! `limit_cycle.{png,svg}`, `multipliers.{png,svg}`, and for a continuation
//! `continuation.json`, `continuation.csv`, `continuation.{png,svg}`.

use super::figures;
use crate::model::HybridSystem;
use crate::output::atomic::Staging;
use crate::periodic::continuation::Branch;
use crate::periodic::error::PeriodicError;
use crate::periodic::map::{cycle_table, return_value};
use crate::periodic::orbit::{Orbit, OrbitReport};
use crate::periodic::spec::PeriodicSpec;
use crate::plot::write_figure;
use ndarray::Array2;

/// Writes the orbit's files into `stage`.
pub fn write_orbit<S: HybridSystem>(
    stage: &Staging, name: &str, sys: &S, spec: &PeriodicSpec, p: &[f64], orbit: &Orbit,
    report: &OrbitReport,
) -> Result<(), PeriodicError> {
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
                e.y_plus[..n].to_vec()
            };
            (e.y_minus[..n].to_vec(), plus)
        })
        .collect();
    let states = dims.states;
    write_figure(
        &figures::limit_cycle(
            name,
            &table,
            &states,
            &jumps,
            spec.section.hyperplane().map(|_| x),
        ),
        &stage.path("limit_cycle.png"),
        Some(&stage.path("limit_cycle.svg")),
    )?;
    write_figure(
        &figures::multipliers(name, report),
        &stage.path("multipliers.png"),
        Some(&stage.path("multipliers.svg")),
    )?;
    Ok(())
}

/// Writes a continuation's files into `stage`: the branch as JSON, one CSV row per point
/// (`param, states…, period, spectral_radius, stable, re_1, im_1, …`), and the plot.
pub fn write_branch(stage: &Staging, name: &str, b: &Branch) -> Result<(), PeriodicError> {
    stage.write_json("continuation.json", b)?;
    let nm = figures::multiplier_count(b);
    let mut header = vec![b.param.clone()];
    header.extend(b.states.iter().cloned());
    header.extend(["period", "spectral_radius", "stable"].map(String::from));
    for i in 0..nm {
        header.push(format!("re_{}", i + 1));
        header.push(format!("im_{}", i + 1));
    }
    let mut rows = Array2::from_elem((b.points.len(), header.len()), f64::NAN);
    for (r, p) in b.points.iter().enumerate() {
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
        for (c, v) in row.into_iter().enumerate() {
            rows[(r, c)] = v;
        }
    }
    stage.write_csv("continuation.csv", &header, &rows)?;
    write_figure(
        &figures::continuation(name, b),
        &stage.path("continuation.png"),
        Some(&stage.path("continuation.svg")),
    )?;
    Ok(())
}

/// Writes a gait optimization: `summary.json` (the [`crate::periodic::optimize::GaitOptimum`]),
/// `history.csv` (one row per evaluation: the parameters, value, spectral radius,
/// period), the convergence figure (`convergence.png`/`.svg`), and the orbit's files at
/// the final parameters.
pub fn write_gait(
    stage: &Staging, name: &str, opt: &crate::periodic::optimize::GaitOptimum,
) -> Result<(), PeriodicError> {
    stage.write_json("summary.json", opt)?;
    let mut header: Vec<String> = vec!["evaluation".into()];
    header.extend(opt.names.iter().cloned());
    header.extend(["value", "spectral_radius", "period"].map(String::from));
    let mut rows = Array2::zeros((opt.history.len(), header.len()));
    for (r, e) in opt.history.iter().enumerate() {
        let mut row = vec![r as f64];
        row.extend(&e.params);
        row.extend([e.value, e.spectral_radius, e.period]);
        for (c, v) in row.into_iter().enumerate() {
            rows[(r, c)] = v;
        }
    }
    stage.write_csv("history.csv", &header, &rows)?;
    write_figure(
        &figures::gait_convergence(name, opt),
        &stage.path("convergence.png"),
        Some(&stage.path("convergence.svg")),
    )?;
    Ok(())
}
