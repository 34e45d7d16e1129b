//! Every results folder and every report `hybridopt` writes or prints, in one tree: a
//! reader finds here what each command writes and in which layout, and all of it goes
//! through one atomic writer (`atomic`: [`Staging`] for a whole folder,
//! [`write_through_temp`] for one file). The reports are typed `Serialize` structs, one
//! source for the CLI and the Python package; their fields are a contract (fields are
//! added, never renamed or dropped; docs/guide/results.md lists them).
//!
//! | command | module | results folder (or what it prints) |
//! |---|---|---|
//! | `simulate` | [`simulate`] | `simulation.json`, `trajectory.csv`, `trajectory.png`/`.svg` |
//! | `gradient` | [`gradient`] | `--json`; `--out`: `gradient.json`, `sensitivity.png`/`.svg`, per objective `seed_<objective>` figure, `direct_Z_<objective>.csv`, `adjoint_mu_<objective>.csv` |
//! | `optimize` | [`optimize`] | `summary.json`, `history.csv`, `trajectory.csv`, `trajectory_initial.csv`, `convergence`/`trajectory`/`controls` figures, `loop_<x>_<y>` (`loops`), `strobe.png`/`.svg` |
//! | `periodic` | [`periodic`] | `orbit.json`, `cycle.csv`, `limit_cycle`, `multipliers`; `--continue`: `continuation.json`/`.csv`/figure; a gait optimization: `summary.json`, `history.csv`, `convergence` |
//! | `sweep`, `merge` | [`sweep`] | `sweep.json`, `sweep.csv`, `best_trajectory.csv`, `sweep` and `best_trajectory` figures |
//! | `animate` | [`animate`] | `animation.json`, `animation.gif`, `strobe.png`/`.svg` |
//! | `feedback` | [`feedback`] | `summary.json`, `gains.csv`, `gains` and `robustness` figures, `animation.gif` (open against closed loop) |
//! | `bderiv` | [`bderiv`] | the B-derivative of a JSON case (printed) |
//! | `systems` | [`systems`] | the built-in systems' interfaces (printed) |
//!
//! [`artifacts`] builds the tables and figures a run's folder holds (trajectory tables,
//! outputs, convergence, sensitivities); `run_stats` is the `"stats"` of a plain run;
//! [`summary`] declares the fields every optimization's `summary.json` has (optimize runs and
//! gaits alike).
//!
//! Every report is printed through [`to_json`]: keys in alphabetical order, as the
//! command line has always printed them.

#[cfg(feature = "plots")]
pub mod animate;
pub mod artifacts;
pub(crate) mod atomic;
pub mod bderiv;
#[cfg(feature = "plots")]
pub mod feedback;
pub mod gradient;
pub(crate) mod loops;
pub mod optimize;
pub mod periodic;
pub(crate) mod run_stats;
pub mod simulate;
pub mod summary;
pub mod sweep;
pub mod systems;

pub use crate::atomic_file::{write_atomic, write_through_temp};
pub use crate::format::format_f64;
pub use atomic::Staging;

use crate::error::Error;
use serde::Serialize;

/// A report as the pretty-printed JSON text `hybridopt … --json` prints: its keys sorted
/// (through `serde_json::Value`, whose maps are ordered by key).
pub fn to_json<T: Serialize + ?Sized>(report: &T) -> Result<String, Error> {
    let err = |e: serde_json::Error| Error::Internal(format!("report as JSON: {e}"));
    let value = serde_json::to_value(report).map_err(err)?;
    serde_json::to_string_pretty(&value).map_err(err)
}

/// A report as a JSON value (keys sorted), e.g. for a file or a Python dict.
pub fn to_value<T: Serialize + ?Sized>(report: &T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(report).map_err(|e| Error::Internal(format!("report as JSON: {e}")))
}
