//! One-sided directional derivatives `Dψ(θ; δθ)` through the B-derivative at every group.

use super::error::SimultaneousError;
use super::event::SimultaneousEvent;
use super::plan::{plain_groups, run_columns, GroupRule};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::setup::Setup;
use nalgebra::DMatrix;

/// The one-sided directional derivative of every objective.
#[derive(Debug, Clone)]
pub struct DirectionalDerivative {
    /// The direction δθ.
    pub direction: Vec<f64>,
    /// ψ_i(θ).
    pub values: Vec<f64>,
    /// `Dψ_i(θ; δθ) = lim_{ε→0+} (ψ_i(θ + εδθ) − ψ_i(θ))/ε`.
    pub derivatives: Vec<f64>,
    /// For each simultaneous group (in time order), the crossing order of the perturbed
    /// trajectory as guard ids.
    pub orders: Vec<Vec<usize>>,
    /// The simultaneous events of the trajectory at θ.
    pub groups: Vec<SimultaneousEvent>,
}

/// `Dψ(θ; δθ)` by forward mode through the B-derivative at every simultaneous event (module
/// docs). Without simultaneous events it is `∇ψ·δθ`.
pub fn directional_derivative<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], dir: &[f64],
) -> Result<DirectionalDerivative, Error> {
    let mut v = directional_derivatives(setup, theta, &[dir.to_vec()])?;
    Ok(v.remove(0))
}

/// [`directional_derivative`] for several directions in one pass (one column each).
pub fn directional_derivatives<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], dirs: &[Vec<f64>],
) -> Result<Vec<DirectionalDerivative>, Error> {
    let nth = setup.ntheta();
    if dirs.is_empty() {
        return Err(SimultaneousError::NoDirection.into());
    }
    for (i, d) in dirs.iter().enumerate() {
        if d.len() != nth {
            return Err(SimultaneousError::DirectionLength {
                index: Some(i),
                found: d.len(),
                ntheta: nth,
            }
            .into());
        }
    }
    let k = dirs.len();
    let dm = DMatrix::from_fn(nth, k, |r, c| dirs[c][r]);
    let (plain, groups) = plain_groups(setup, theta)?;
    let rules = vec![vec![GroupRule::BDerivative; groups.len()]; k];
    let run = run_columns(setup, theta, dm, &plain, groups, rules)?;
    Ok((0..k)
        .map(|c| DirectionalDerivative {
            direction: dirs[c].clone(),
            values: run.values.clone(),
            derivatives: run.derivatives.iter().map(|d| d[c]).collect(),
            orders: run
                .orders
                .iter()
                .zip(&run.groups)
                .map(|(o, g)| o[c].iter().map(|&p| g.guards[p]).collect())
                .collect(),
            groups: run.groups.clone(),
        })
        .collect())
}
