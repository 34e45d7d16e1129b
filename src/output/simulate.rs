//! `hybridopt simulate`: the report (`--json`, `simulation.json`) and the results folder
//! (`trajectory.csv`, `trajectory.png`/`.svg`, `simulation.json`).

use super::run_stats::RunStats;
use crate::error::Error;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::output::artifacts::{self, trajectory_table, Table};
use crate::output::atomic::Staging;
use crate::output::optimize::summary::EventSummary;
use crate::plot::LineKind;
use crate::problem::Problem;
use crate::setup::Setup;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The objectives' values by name, or why they are undefined (an event term's occurrence
/// never happens): `{"name": value, …}` or `{"error": message}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Costs {
    Values(BTreeMap<String, f64>),
    Undefined { error: String },
}

/// `"final"`: where the run ended and every output there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalPoint {
    /// t_end, or the time of a terminal / `stop_after` event.
    pub t: f64,
    /// Each output by name at the last sample.
    pub outputs: BTreeMap<String, f64>,
}

/// `"constraints"` (multibody systems): the largest constraint residuals over the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ConstraintResiduals {
    /// max |Φ(q)|.
    pub position_max: f64,
    /// max |Φ̇|.
    pub velocity_max: f64,
}

/// `simulate --json` and `simulation.json` (a contract: add fields, never rename or drop).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimulateReport {
    /// Counters of the run.
    pub stats: RunStats,
    /// Every event: `{t, guard, mode_before, mode_after}`.
    pub events: Vec<EventSummary>,
    /// Where the run ended.
    #[serde(rename = "final")]
    pub final_point: FinalPoint,
    /// The objectives' values, or why they are undefined.
    pub costs: Costs,
    /// Multibody systems only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraints: Option<ConstraintResiduals>,
}

impl SimulateReport {
    /// The report of `traj` (a run at `theta` on `setup`), whose sampled table is `table`
    /// ([`trajectory_table`]); `objective_names` names the setup's objectives. The costs
    /// are reported, not required: a run whose cost is undefined still has a report.
    pub fn new<S: HybridSystem>(
        setup: &Setup<'_, S>, traj: &Trajectory, table: &Table, theta: &[f64],
        objective_names: &[String],
    ) -> Self {
        let costs = match setup.objective_values(traj, theta) {
            Ok(values) => Costs::Values(
                objective_names
                    .iter()
                    .cloned()
                    .zip(values.iter().copied())
                    .collect(),
            ),
            Err(e) => Costs::Undefined {
                error: e.to_string(),
            },
        };
        SimulateReport {
            stats: traj.stats.into(),
            events: EventSummary::list(setup, traj),
            final_point: FinalPoint {
                t: traj.t_final,
                outputs: final_outputs(table, &setup.dims.outputs),
            },
            costs,
            constraints: constraint_residuals(table),
        }
    }

    /// The terminal report of `hybridopt simulate` for problem `name` started at `t0`.
    pub fn text(&self, name: &str, t0: f64, dir: &Path) -> String {
        let s = &self.stats;
        let mut out = format!(
            "{name}: t = {t0} → {}: {} steps ({} rejected), {} events\n",
            self.final_point.t, s.steps, s.rejected, s.events
        );
        for e in &self.events {
            out += &format!(
                "  event t = {:.12}  guard {}  {} → {}\n",
                e.t, e.guard, e.mode_before, e.mode_after
            );
        }
        let costs = serde_json::to_string(&self.costs).unwrap_or_default();
        out += &format!("  costs: {costs}\n");
        if let Some(c) = &self.constraints {
            out += &format!(
                "  constraint residuals: |Φ| ≤ {}, |Φ̇| ≤ {}\n",
                json_number(c.position_max),
                json_number(c.velocity_max)
            );
        }
        out += &format!("  wrote {}\n", dir.display());
        out
    }
}

/// A number as JSON prints it (`null` when not finite).
fn json_number(v: f64) -> String {
    serde_json::Value::from(v).to_string()
}

/// Each output's value at the last sample of `table`.
fn final_outputs(table: &Table, names: &[String]) -> BTreeMap<String, f64> {
    let last = table.rows.nrows().saturating_sub(1);
    names
        .iter()
        .filter_map(|n| {
            let c = table.header.iter().position(|h| h == n)?;
            Some((n.clone(), *table.rows.get((last, c))?))
        })
        .collect()
}

/// The constraint residual columns of a multibody system's table, when it has them.
fn constraint_residuals(table: &Table) -> Option<ConstraintResiduals> {
    Some(ConstraintResiduals {
        position_max: table.max_abs("phi_pos_max")?,
        velocity_max: table.max_abs("phi_vel_max")?,
    })
}

/// Simulates `p` at its values and writes `trajectory.csv`, `trajectory.png`/`.svg` and
/// `simulation.json` into `out` (staged, swapped in atomically); returns the report and
/// the folder.
pub fn simulate_to_folder(p: &Problem, out: &Path) -> Result<(SimulateReport, PathBuf), Error> {
    let setup = p.setup()?;
    let theta = p.theta_values();
    let traj = setup.simulate(&theta)?;
    let table = trajectory_table(&setup, &traj, &theta)?;
    let stage = Staging::new(out)?;
    stage.write_csv("trajectory.csv", &table.header, &table.rows)?;
    let plotted: Vec<String> = p
        .plot_outputs
        .iter()
        .map(|&i| p.dims.outputs[i].clone())
        .collect();
    let fig = artifacts::outputs_figure(
        &format!("{}: simulation", p.name),
        &plotted,
        &[("trajectory", &table, LineKind::Solid)],
        artifacts::event_markers(&setup, &traj),
    );
    stage.write_figure("trajectory", &fig)?;
    let report = SimulateReport::new(&setup, &traj, &table, &theta, &p.objective_names());
    stage.write_json("simulation.json", &super::to_value(&report)?)?;
    let dir = stage.commit()?;
    Ok((report, dir))
}
