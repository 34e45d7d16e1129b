//! The typed reports of the command line, one source for the CLI and the Python package:
//! each JSON object `hybridopt` prints or writes is a `Serialize` struct here, and its
//! fields are a contract (fields are added, never renamed or dropped; docs/guide/results.md
//! lists them).
//!
//! - [`simulate`]: `simulate --json` and `simulation.json`;
//! - [`gradient`]: `gradient --json` and `gradient.json` ([`gradient_run`] computes it,
//!   [`gradient_files`] writes the `--out` folder, [`gradient_text`] the terminal report);
//! - [`summary`]: `summary.json` of `optimize` (and its `--json`);
//! - [`periodic`]: `periodic --json`; [`animate`]: `animation.json`; [`sweep`]: what
//!   `sweep` and `merge` print;
//! - [`systems`]: `hybridopt systems`, the built-in systems' interfaces.
//!
//! Every report is printed through [`to_json`]: keys in alphabetical order, as the
//! command line has always printed them.

#[cfg(feature = "plots")]
pub mod animate;
pub mod bderiv;
pub mod gradient;
pub mod gradient_files;
pub mod gradient_run;
pub mod gradient_text;
pub mod periodic;
pub mod run_stats;
pub mod simulate;
pub mod summary;
pub mod sweep;
pub mod systems;

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
