//! What `hybridopt sweep` and `hybridopt merge` print (`--json`): the counts, the best point
//! and the folder. The files themselves are `crate::output::sweep::files`'s.

#[cfg(feature = "plots")]
mod figure;
pub(crate) mod files;
#[cfg(feature = "plots")]
mod heatmap;

pub use files::write as write_sweep;

use crate::sweep::{named::Named, Shard, SweepResult};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `sweep --json` / `merge --json` (a contract: add fields, never rename or drop).
#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    pub problem: String,
    /// Points in this folder (this shard's, for a shard).
    pub points: usize,
    /// Points of the whole plan.
    pub total_points: usize,
    pub failed: usize,
    /// `{index, count}` for a shard, else null.
    pub shard: Option<Shard>,
    /// The lowest cost among the points that did not fail, null if none.
    pub best: Option<BestPoint>,
    /// The folder written.
    pub out: PathBuf,
    /// `sweep`: the worker threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<usize>,
    /// `sweep`: the sweep's wall time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_time_s: Option<f64>,
    /// `merge`: the shards merged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<usize>,
}

/// The best point: its index, cost, and parameters (a start's final ones).
#[derive(Debug, Clone, Serialize)]
pub struct BestPoint {
    pub index: usize,
    pub cost: f64,
    pub parameters: Named,
}

impl SweepReport {
    /// The report of `res`, written to `dir`.
    pub fn new(res: &SweepResult, dir: &Path) -> SweepReport {
        let f = &res.file;
        let best = f.best.as_ref().and_then(|b| {
            let p = f.points.iter().find(|p| p.index == b.index)?;
            Some(BestPoint {
                index: b.index,
                cost: b.cost,
                parameters: p.final_parameters.as_ref().unwrap_or(&p.parameters).clone(),
            })
        });
        SweepReport {
            problem: f.problem.clone(),
            points: f.counts.points,
            total_points: f.total_points,
            failed: f.counts.failed,
            shard: f.shard,
            best,
            out: dir.to_path_buf(),
            jobs: None,
            wall_time_s: None,
            shards: None,
        }
    }

    /// The terminal report.
    pub fn text(&self) -> String {
        let shard = match &self.shard {
            Some(s) => format!(" (shard {}/{})", s.index, s.count),
            None => String::new(),
        };
        let mut o = format!(
            "{}: {} of {} points{shard}, {} failed",
            self.problem, self.points, self.total_points, self.failed
        );
        if let (Some(w), Some(j)) = (self.wall_time_s, self.jobs) {
            o += &format!(", {w:.2} s on {j} thread(s)");
        }
        o += "\n";
        match &self.best {
            Some(b) => {
                // by name, as the JSON lists them
                let mut named: Vec<&(String, f64)> = b.parameters.0.iter().collect();
                named.sort_by(|a, b| a.0.cmp(&b.0));
                let params: Vec<String> = named
                    .iter()
                    .map(|(k, x)| format!("{k} = {}", serde_json::Value::from(*x)))
                    .collect();
                let shown = params
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                let more = if params.len() > 8 {
                    format!(", … ({} in all; see sweep.json)", params.len())
                } else {
                    String::new()
                };
                o += &format!(
                    "  best: point {} with cost {:.10e} at {shown}{more}\n",
                    b.index, b.cost
                );
            }
            None => o += "  no point succeeded\n",
        }
        o += &format!("  wrote {}\n", self.out.display());
        o
    }
}
