//! A trajectory sampled into a table — `t, mode, <states>, <outputs>, <controls>` — on the
//! floor of the [`Setup`] that names its columns: the results files, the sweeps, the
//! periodic orbits' figures and the Python package read runs through it.

use super::definition::Setup;
use crate::error::{Error, ModelError};
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use ndarray::Array2;

/// Samples of a trajectory: time, mode, states, outputs and controls.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Array2<f64>,
}

/// Interior points per step in sampled tables and plots.
pub const POINTS_PER_STEP: usize = 3;

/// Tabulates a trajectory of X at θ: `t, mode, <states>, <outputs>, <controls>`. A
/// trajectory whose dense output was compacted into checkpoints (an adjoint evaluation's)
/// is simulated again with all of it kept: the same steps and events.
pub fn trajectory_table<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
) -> Result<Table, Error> {
    let dense;
    let traj = if traj.is_dense() {
        traj
    } else {
        dense = setup.simulate(theta)?;
        &dense
    };
    let d = &setup.dims;
    let nx = setup.nx();
    let mut header = vec!["t".to_string(), "mode".to_string()];
    header.extend(d.states.iter().cloned());
    header.extend(d.outputs.iter().cloned());
    header.extend(d.controls.iter().cloned());
    let samples = traj.samples(POINTS_PER_STEP);
    let ncol = header.len();
    let mut rows = Array2::zeros((samples.len(), ncol));
    let mut y = vec![0.0; d.outputs.len()];
    for (r, (t, si, x)) in samples.iter().enumerate() {
        let seg = &traj.segments[*si];
        let ctx = seg.ctx();
        let u = setup.controls_at(&ctx, *t, theta);
        setup
            .sys()
            .outputs(seg.mode, *t, &x[..nx], &u, &theta[..setup.np()], &mut y)
            .map_err(|e: ModelError| Error::Model {
                t: *t,
                mode: d.mode_name(seg.mode),
                source: e,
            })?;
        let mut c = 0;
        rows[(r, c)] = *t;
        c += 1;
        rows[(r, c)] = seg.mode as f64;
        c += 1;
        for v in &x[..nx] {
            rows[(r, c)] = *v;
            c += 1;
        }
        for v in &y {
            rows[(r, c)] = *v;
            c += 1;
        }
        for v in &u {
            rows[(r, c)] = *v;
            c += 1;
        }
    }
    Ok(Table { header, rows })
}

impl Table {
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let i = self.header.iter().position(|h| h == name)?;
        Some(self.rows.column(i).to_vec())
    }
    /// Largest |value| of a column.
    pub fn max_abs(&self, name: &str) -> Option<f64> {
        self.column(name)
            .map(|c| c.iter().fold(0.0f64, |m, v| m.max(v.abs())))
    }
}
