//! The dual-number witness: the whole simulation (integrator, event location, resets) in
//! dual numbers with one parameter direction seeded per run. It yields the exact
//! derivative of the discretised solution (the step sequence is that of the `f64` run;
//! event times carry their derivative through one Newton correction on the interpolant),
//! a derivative independent of the sensitivity equations and the jump formula.
//! DOPRI5, Radau5 and the BDF (whose simplified Newton iterates the dual parts with the
//! real matrix, and judges their convergence as well as the values'); not SDIRK3.

use crate::error::Error;
use crate::integrate::{Method, Stats};
use crate::model::HybridSystem;
use crate::setup::Setup;
use num_dual::Dual64;
use rayon::prelude::*;

/// Gradients and event-time derivatives from the dual witness.
pub struct DualResult {
    /// dψ_i/dθ per objective.
    pub gradients: Vec<Vec<f64>>,
    /// dt_e/dθ per event (rows: events, columns: θ).
    pub event_tau: Vec<Vec<f64>>,
    /// The summed counters of the nθ dual runs.
    pub stats: Stats,
}

/// Runs one dual simulation per component of θ (in parallel).
pub fn dual_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64],
) -> Result<DualResult, Error> {
    if setup.solver.method == Method::Sdirk3 {
        return Err(Error::Unsupported {
            what: "the dual witness runs DOPRI5, Radau5 and the BDF only".into(),
            instead: "method = \"dopri5\", \"radau5\" or \"bdf\"".into(),
        });
    }
    let nth = theta.len();
    type Column = Result<(Vec<f64>, Vec<f64>, Stats), Error>;
    let cols: Vec<Column> = (0..nth)
        .into_par_iter()
        .map(|j| {
            let th: Vec<Dual64> = theta
                .iter()
                .enumerate()
                .map(|(i, &v)| Dual64::new(v, if i == j { 1.0 } else { 0.0 }))
                .collect();
            let traj = setup.simulate_generic(th.clone())?;
            let vals = setup.objective_values(&traj, &th)?;
            Ok((
                vals.iter().map(|v| v.eps).collect(),
                traj.events.iter().map(|e| e.t.eps).collect(),
                traj.stats,
            ))
        })
        .collect();
    let mut grads = vec![vec![0.0; nth]; setup.objectives.len()];
    let mut taus: Vec<Vec<f64>> = Vec::new();
    let mut stats = Stats::default();
    for (j, c) in cols.into_iter().enumerate() {
        let (g, tau, st) = c?;
        stats += st;
        for (i, v) in g.into_iter().enumerate() {
            grads[i][j] = v;
        }
        if taus.is_empty() {
            taus = vec![vec![0.0; nth]; tau.len()];
        }
        for (e, v) in tau.into_iter().enumerate() {
            if e < taus.len() {
                taus[e][j] = v;
            }
        }
    }
    Ok(DualResult {
        gradients: grads,
        event_tau: taus,
        stats,
    })
}
