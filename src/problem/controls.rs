//! `[controls]`: the control grid and θ's control coefficients (all optimized).

use super::document::{key, Document};
use super::parameters::entry;
use super::schema::{ControlSpec, ParamSpec, SimulationSpec};
use crate::control::ControlGrid;
use crate::error::Error;
use crate::model::Dims;
use crate::optimize::ThetaEntry;
use crate::table::{interpolate, Table};
use std::path::Path;

/// The grid, if the system has controls; its coefficients are appended to `theta`.
pub(super) fn grid(
    spec: Option<&ControlSpec>, sim: &SimulationSpec, kind: &str, dims: &Dims, doc: &Document<'_>,
    theta: &mut Vec<ThetaEntry>,
) -> Result<Option<ControlGrid>, Error> {
    let Some(cs) = spec else {
        if !dims.controls.is_empty() {
            return Err(doc.problem(format!(
                "system \"{kind}\" has controls ({}) but the file has no [controls] table",
                dims.controls.join(", ")
            )));
        }
        return Ok(None);
    };
    if dims.controls.is_empty() {
        return Err(doc.error(
            &[key("controls")],
            format!("system \"{kind}\" has no controls"),
        ));
    }
    if cs.intervals == 0 || cs.intervals > 100_000 {
        return Err(doc.error(
            &[key("controls"), key("intervals")],
            format!("intervals = {} must be between 1 and 100000", cs.intervals),
        ));
    }
    for name in cs.channels.keys() {
        if !dims.controls.contains(name) {
            return Err(doc.error(
                &[key("controls"), key("channels"), key(name)],
                format!(
                    "`{name}` is not a control of \"{kind}\"; its controls are: {}",
                    dims.controls.join(", ")
                ),
            ));
        }
    }
    let grid = ControlGrid {
        basis: cs.basis,
        t0: sim.t0,
        t1: sim.t_end.latest(),
        intervals: cs.intervals,
        channels: dims.controls.len(),
    };
    for name in &dims.controls {
        let ch = cs.channels.get(name).cloned().unwrap_or_default();
        let ps = ParamSpec {
            value: ch.initial,
            optimize: true,
            lower: ch.lower,
            upper: ch.upper,
        };
        let path = [key("controls"), key("channels"), key(name)];
        for k in 0..grid.n_coef() {
            theta.push(entry(&format!("{name}[{k}]"), &ps, &path, doc)?);
        }
    }
    if let Some(file) = &cs.guess {
        let path = doc.file.parent().unwrap_or(Path::new(".")).join(file);
        let at = [key("controls"), key("guess")];
        let start = theta.len() - grid.len();
        guess(&path, &grid, dims, &mut theta[start..])
            .map_err(|m| doc.error(&at, format!("{}: {m}", path.display())))?;
    }
    Ok(Some(grid))
}

/// Starts the coefficients of each channel that the table at `path` has a column for
/// from that column: `c_k = v(t*_k)`, the column's value (linear between its rows) at the
/// coefficient's Greville abscissa ([`ControlGrid::greville`]). The table must span the
/// grid; a value on a bound starts 10⁻⁹ of the range inside it (the unconstrained
/// optimizer's transforms need an interior start); one beyond a bound is an error.
fn guess(
    path: &Path, grid: &ControlGrid, dims: &Dims, coefficients: &mut [ThetaEntry],
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let table = Table::parse(&text)?;
    // `Table::parse` guarantees a row
    let (first, last) = (table.t[0], table.t[table.len() - 1]);
    if table.len() < 2 || first > grid.t0 || last < grid.t1 {
        return Err(format!(
            "its rows span [{first}, {last}], which must cover the control grid's [{}, {}]",
            grid.t0, grid.t1
        ));
    }
    let at = grid.greville();
    let mut found = 0;
    for (j, name) in dims.controls.iter().enumerate() {
        let Some(c) = table.column(name) else {
            continue;
        };
        found += 1;
        let v = table.numbers(c, name)?;
        for (k, e) in coefficients[j * grid.n_coef()..(j + 1) * grid.n_coef()]
            .iter_mut()
            .enumerate()
        {
            e.value = inside(interpolate(&table.t, &v, at[k]), e)
                .map_err(|m| format!("column `{name}` at t = {}: {m}", at[k]))?;
        }
    }
    if found == 0 {
        return Err(format!(
            "no column named after a control channel ({})",
            dims.controls.join(", ")
        ));
    }
    Ok(())
}

/// `v` as a start for the coefficient `e`: inside its bounds, or on one moved 10⁻⁹ of
/// the range inside (a bound alone: 10⁻⁹ of max(1, |bound|)).
fn inside(v: f64, e: &ThetaEntry) -> Result<f64, String> {
    let margin = match (e.lower, e.upper) {
        (Some(l), Some(u)) => 1e-9 * (u - l),
        (Some(b), None) | (None, Some(b)) => 1e-9 * b.abs().max(1.0),
        (None, None) => 0.0,
    };
    match (e.lower, e.upper) {
        (Some(l), _) if v < l => Err(format!("{v} is below the lower bound {l}")),
        (_, Some(u)) if v > u => Err(format!("{v} is above the upper bound {u}")),
        (Some(l), _) if v < l + margin => Ok(l + margin),
        (_, Some(u)) if v > u - margin => Ok(u - margin),
        _ => Ok(v),
    }
}
