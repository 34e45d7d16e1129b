//! `[controls]`: the control grid and θ's control coefficients (all optimized).

use super::document::{key, Document};
use super::parameters::entry;
use super::schema::{ControlSpec, ParamSpec, SimulationSpec};
use crate::control::ControlGrid;
use crate::error::Error;
use crate::model::Dims;
use crate::optimize::ThetaEntry;

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
    Ok(Some(grid))
}
