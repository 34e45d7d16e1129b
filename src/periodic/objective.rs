//! Objectives on periodic orbits (for `hybridopt optimize` on a `[periodic]` problem),
//! each with its exact gradient from the orbit's sensitivities ([`super::sensitivity`]):
//!
//! - `spectral_radius`: `ρ = max |λ|` on the section, `dρ/dp = d|λ₁|/dp`; where two
//!   distinct multipliers share the largest modulus (or the leading one is not simple) no
//!   gradient exists, and the evaluation fails with [`PeriodicError::Nonsmooth`] naming
//!   them (never a silently wrong gradient);
//! - `period`: `T`, `dT/dp`;
//! - `speed`: `v = L/T` with `L` an output of the system at the fixed point (the step
//!   length), `dv/dp = (dL/dp)/T − L (dT/dp)/T²`, `dL/dp = h_x dx*/dp + h_p`;
//! - `target`: `(x*_i − c)²`, gradient `2 (x*_i − c) dx*_i/dp`.

use super::error::PeriodicError;
use super::orbit::Orbit;
use super::sensitivity::RadiusDerivative;
use crate::model::{Dims, HybridSystem};
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

impl Objective {
    /// Value and gradient (over the orbit's differentiated parameters) at a solved orbit
    /// with sensitivities.
    pub fn evaluate<S: HybridSystem>(
        &self, sys: &S, mode: usize, p: &[f64], orbit: &Orbit,
    ) -> Result<(f64, Vec<f64>), PeriodicError> {
        let s = orbit.sensitivities.as_ref().ok_or_else(|| {
            PeriodicError::from(crate::error::Error::Internal(
                "the objective needs the orbit's sensitivities".into(),
            ))
        })?;
        let t = orbit.fixed.ret.period;
        Ok(match self {
            Objective::SpectralRadius => match &s.spectral_radius {
                RadiusDerivative::Smooth { gradient } => {
                    (orbit.spectrum.spectral_radius, gradient.clone())
                }
                RadiusDerivative::Nonsmooth { message } => {
                    return Err(PeriodicError::Nonsmooth(message.clone()))
                }
            },
            Objective::Period => (t, s.period.clone()),
            Objective::Speed { output } => {
                let x = orbit.fixed.x.as_slice();
                let ny = sys.dims().outputs.len();
                let j = crate::model::outputs_jacobian(sys, ny, mode, 0.0, x, &[], p).map_err(
                    |source| crate::error::Error::Model {
                        t: 0.0,
                        mode: format!("#{mode}"),
                        source,
                    },
                )?;
                let l = j.value[*output];
                let grad = s
                    .params
                    .iter()
                    .enumerate()
                    .map(|(c, &pj)| {
                        let dl = j.x.row(*output).dot(&s.fixed_point.column(c).transpose())
                            + j.p[(*output, pj)];
                        dl / t - l * s.period[c] / (t * t)
                    })
                    .collect();
                (l / t, grad)
            }
            Objective::Target { state, value } => {
                let d = orbit.fixed.x[*state] - value;
                (
                    d * d,
                    (0..s.params.len())
                        .map(|c| 2.0 * d * s.fixed_point[(*state, c)])
                        .collect(),
                )
            }
        })
    }
}
