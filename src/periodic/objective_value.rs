//! A gait objective's value and gradient at a solved orbit (the objective itself, as the
//! problem file gives it, is in `objective.rs`).

use super::objective::Objective;
use super::orbit::Orbit;
use super::sensitivity::RadiusDerivative;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::periodic_error::PeriodicError;

impl Objective {
    /// Value and gradient (over the orbit's differentiated parameters) at a solved orbit
    /// with sensitivities.
    pub fn evaluate<S: HybridSystem>(
        &self, sys: &S, mode: usize, p: &[f64], orbit: &Orbit,
    ) -> Result<(f64, Vec<f64>), Error> {
        let s = orbit.sensitivities.as_ref().ok_or_else(|| {
            Error::Internal("the objective needs the orbit's sensitivities".into())
        })?;
        let t = orbit.fixed.ret.period;
        Ok(match self {
            Objective::SpectralRadius => match &s.spectral_radius {
                RadiusDerivative::Smooth { gradient } => {
                    (orbit.spectrum.spectral_radius, gradient.clone())
                }
                RadiusDerivative::Nonsmooth { message } => {
                    return Err(PeriodicError::Nonsmooth(message.clone()).into())
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
