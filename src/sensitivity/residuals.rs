//! The residual vector of a least-squares objective and its exact Jacobian, from one
//! direct (forward-sensitivity) pass (docs/theory.md, "Least squares"): the first
//! objective's data terms give `r_{i,c} = √w (y_c(t_i) − d_{i,c})/σ_{i,c}` with the rows
//!
//! ```text
//! ∂r_{i,c}/∂θ = √w/σ_{i,c} · (∂y_c/∂X · S(t_i) + ∂y_c/∂θ),
//! ```
//!
//! `S(t_i)` the direct method's sensitivity at the sample's instant (after the jumps of
//! every event before it, theory §3); a `parameter_squared` term `w (θ_k − target)²` adds
//! the residual `√w (θ_k − target)` with the row `√w e_kᵀ`. Then `ψ = ‖r‖²`, and
//! `2 Jᵀ r` is its gradient.

use super::forward::forward_sensitivity_lean;
use crate::cost::{Law, Quantity, Term};
use crate::error::Error;
use crate::integrate::Stats;
use crate::model::HybridSystem;
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};

/// A least-squares objective's residuals at θ (and their Jacobian in θ, all nθ columns).
#[derive(Debug, Clone)]
pub struct ResidualRun {
    pub r: DVector<f64>,
    /// `dr/dθ` (m × nθ); `None` when only the values were asked for.
    pub jacobian: Option<DMatrix<f64>>,
    /// The run's counters (steps, events).
    pub stats: Stats,
    /// The states at the run's end `x(t_f)` (after the events at `t_f`): multiple
    /// shooting's continuity needs them beside the residuals.
    pub x_final: Vec<f64>,
    /// `∂x(t_f)/∂θ` (nx × nθ, the state rows of the direct method's `S(t_f)`) when the
    /// Jacobian was asked for.
    pub x_final_jacobian: Option<DMatrix<f64>>,
}

/// Why an objective is not a sum of squared residuals: its first term that is not a data
/// or `parameter_squared` term.
pub fn least_squares_obstacle<S: HybridSystem>(setup: &Setup<'_, S>) -> Option<String> {
    let obj = setup.objectives().first()?;
    obj.terms
        .iter()
        .find(|t| !(t.data().is_some() || t.is_parameter_squared()))
        .map(|t| t.name())
        .or_else(|| {
            (!obj.terms.iter().any(|t| t.data().is_some())).then(|| "no data term".to_string())
        })
}

/// The first objective's residuals at θ and, with `jacobian`, their exact Jacobian from
/// one direct pass (module docs); without it, one plain simulation.
pub fn residuals<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], jacobian: bool,
) -> Result<ResidualRun, Error> {
    setup.check_theta(theta.len())?;
    let Some(obj) = setup.objectives().first() else {
        return Err(Error::Invalid(
            "a least-squares fit needs an objective".into(),
        ));
    };
    let (n, nth) = (setup.n(), setup.ntheta());
    let mut r = Vec::new();
    let mut rows: Vec<DVector<f64>> = Vec::new();
    let (stats, x_final, x_final_jacobian);
    let nx = setup.nx();
    if jacobian {
        let run = forward_sensitivity_lean(setup, theta)?;
        let traj = &run.trajectory;
        stats = traj.stats;
        let y = &traj.y_final;
        x_final = y[..nx].to_vec();
        x_final_jacobian = Some(DMatrix::from_fn(nx, nth, |i, j| y[n + j * n + i]));
        for (samples, weight) in obj.terms.iter().filter_map(|t| t.data()) {
            for (at, cells) in setup.data_rows(traj, theta, samples, weight)? {
                let (y, _) = traj.state_of(at);
                let s = DMatrix::from_column_slice(n, nth, &y[n..n * (1 + nth)]);
                for (ri, rx, rt) in cells {
                    r.push(ri);
                    rows.push(s.tr_mul(&rx) + rt);
                }
            }
        }
    } else {
        let traj = setup.simulate(theta)?;
        stats = traj.stats;
        x_final = traj.y_final[..nx].to_vec();
        x_final_jacobian = None;
        for (samples, weight) in obj.terms.iter().filter_map(|t| t.data()) {
            r.extend(setup.data_residuals(&traj, theta, samples, weight)?);
        }
    }
    for t in &obj.terms {
        if let Term::Weighed {
            quantity: Quantity::Parameter { index },
            law: Law::Squared { target, weight },
        } = *t
        {
            let sw = weight.sqrt();
            r.push(sw * (theta[index] - target));
            let mut row = DVector::zeros(nth);
            row[index] = sw;
            rows.push(row);
        }
    }
    let jacobian = jacobian.then(|| {
        let mut j = DMatrix::zeros(r.len(), nth);
        for (i, row) in rows.iter().enumerate() {
            j.row_mut(i).copy_from(&row.transpose());
        }
        j
    });
    Ok(ResidualRun {
        r: DVector::from_vec(r),
        jacobian,
        stats,
        x_final,
        x_final_jacobian,
    })
}
