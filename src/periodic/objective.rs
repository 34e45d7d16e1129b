//! Objectives on periodic orbits (for `hybridopt optimize` on a `[periodic]` problem),
//! each with its exact gradient from the orbit's sensitivities ([`super::sensitivity`]):
//!
//! - `spectral_radius`: `ρ = max |λ|` on the section, `dρ/dp = d|λ₁|/dp`; where two
//!   distinct multipliers share the largest modulus (or the leading one is not simple) no
//!   gradient exists, and the evaluation fails with [`super::PeriodicError::Nonsmooth`] naming
//!   them (never a silently wrong gradient);
//! - `period`: `T`, `dT/dp`;
//! - `speed`: `v = L/T` with `L` an output of the system at the fixed point (the step
//!   length), `dv/dp = (dL/dp)/T − L (dT/dp)/T²`, `dL/dp = h_x dx*/dp + h_p`;
//! - `target`: `(x*_i − c)²`, gradient `2 (x*_i − c) dx*_i/dp`.

use crate::model::Dims;
use serde::Deserialize;

/// An objective as written in `[periodic] objective = { kind = … }`.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ObjectiveSpec {
    SpectralRadius,
    Period,
    /// `output`: the name of the step-length output (e.g. `step_length`).
    Speed {
        output: String,
    },
    Target {
        state: String,
        value: f64,
    },
}

/// An objective with its names resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Objective {
    SpectralRadius,
    Period,
    Speed { output: usize },
    Target { state: usize, value: f64 },
}

impl ObjectiveSpec {
    /// Resolves the names; the error says what would be valid.
    pub fn resolve(&self, dims: &Dims) -> Result<Objective, String> {
        Ok(match self {
            ObjectiveSpec::SpectralRadius => Objective::SpectralRadius,
            ObjectiveSpec::Period => Objective::Period,
            ObjectiveSpec::Speed { output } => Objective::Speed {
                output: dims.output_index(output).ok_or_else(|| {
                    format!(
                        "objective: output `{output}` is unknown; valid outputs: {}",
                        dims.outputs.join(", ")
                    )
                })?,
            },
            ObjectiveSpec::Target { state, value } => Objective::Target {
                state: dims.states.iter().position(|s| s == state).ok_or_else(|| {
                    format!(
                        "objective: state `{state}` is unknown; valid states: {}",
                        dims.states.join(", ")
                    )
                })?,
                value: *value,
            },
        })
    }
}
