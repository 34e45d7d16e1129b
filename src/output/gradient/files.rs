//! The `--out` folder of `hybridopt gradient`: `sensitivity.png`/`.svg` (the forward
//! sensitivities of the plotted outputs), and per objective the seed-style figure
//! `seed_<objective>.png`/`.svg` (direct Z(t), adjoint μ(t), central FD at t0 and tf)
//! with `direct_Z_<objective>.csv` and `adjoint_mu_<objective>.csv`; and `gradient.json`.

use super::run::GradientRun;
use super::GradientReport;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::output::artifacts;
use crate::output::atomic::Staging;

use crate::sensitivity::adjoint::adjoint_with_history;
use crate::sensitivity::fd::fd_gradients;
use crate::sensitivity::forward::forward_sensitivity;
use crate::sensitivity::GradientMethod;
use crate::setup::Setup;
use std::path::{Path, PathBuf};

/// Writes the folder `dir` (staged, swapped in atomically) for `run` at θ; `plot_outputs`
/// are the outputs of the sensitivity figure, `objective_names` the setup's objectives.
pub fn write_gradient_folder<S: HybridSystem>(
    setup: &Setup<'_, S>, run: &GradientRun, theta: &[f64], plot_outputs: &[usize],
    objective_names: &[String], report: &GradientReport, dir: &Path,
) -> Result<PathBuf, Error> {
    let computed;
    let fw = match &run.forward {
        Some(fw) => fw,
        None => {
            computed = forward_sensitivity(setup, theta)?;
            &computed
        }
    };
    let stage = Staging::new(dir)?;
    let params: Vec<usize> = (0..setup.np()).collect();
    let fig = artifacts::sensitivity_figure(setup, fw, theta, plot_outputs, &params)?;
    stage.write_figure("sensitivity", &fig)?;
    let replayable;
    let traj = if run.trajectory.is_replayable() {
        &run.trajectory
    } else {
        replayable = setup.simulate_compact(theta)?;
        &replayable
    };
    let (_, hist) = adjoint_with_history(setup, traj, theta)?;
    let fd = match run.runs.iter().find(|r| r.method == GradientMethod::Fd) {
        Some(r) => r.evaluation.gradients.clone(),
        None => fd_gradients(setup, theta, Default::default())?,
    };
    for (i, name) in objective_names.iter().enumerate() {
        let (fig, z, m) = artifacts::seed_figure(setup, fw, i, &hist[i], &fd[i]);
        stage.write_figure(&format!("seed_{name}"), &fig)?;
        stage.write_csv(&format!("direct_Z_{name}.csv"), &z.header, &z.rows)?;
        stage.write_csv(&format!("adjoint_mu_{name}.csv"), &m.header, &m.rows)?;
    }
    stage.write_json("gradient.json", &crate::output::to_value(report)?)?;
    stage.commit()
}
