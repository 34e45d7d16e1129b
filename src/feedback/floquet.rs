//! The closed-loop Floquet multipliers by the periodic machinery: the return map of the
//! [`ClosedLoop`] system on the section just after the period-closing guard's reset, with
//! its exact monodromy from one direct-sensitivity pass through the closed loop
//! ([`crate::periodic`]'s `return_map`), independent of the Riccati side's
//! `Ξ_c Φ_cl(T, 0)` ([`super::PeriodicLqr::monodromy`]).

use super::closed_loop::ClosedLoop;
use crate::error::FeedbackError;
use crate::integrate::{EventOptions, SolverOptions};
use crate::linalg::eigenvalues;
use crate::model::HybridSystem;
use crate::periodic::map::{return_map_with, Columns, MapOptions};
use crate::periodic::section::Section;
use nalgebra::{Complex, DMatrix};

/// The closed loop's return map at the nominal: its monodromy (n+1 square, the phase
/// last), its period and the multipliers of the monodromy with the `neutral` states'
/// rows and columns left out (states nothing else depends on, e.g. a walker's foot
/// position, whose multiplier is 1).
#[derive(Debug, Clone)]
pub struct ReturnFloquet {
    pub monodromy: DMatrix<f64>,
    pub period: f64,
    pub multipliers: Vec<Complex<f64>>,
}

/// The monodromy of `cl`'s return map from `x` (the inner state just after the guard's
/// reset; the phase starts at 0), in mode `mode`, at parameters `p`.
pub fn return_floquet<S: HybridSystem>(
    cl: &ClosedLoop<'_, S>, guard: usize, mode: usize, p: &[f64], x: &[f64], neutral: &[usize],
    solver: SolverOptions, events: EventOptions,
) -> Result<ReturnFloquet, FeedbackError> {
    let n = x.len() + 1;
    let sec = Section::after_reset(guard, 1, mode, (0..n).collect());
    let opts = MapOptions {
        solver,
        events,
        t_max: 4.0 * cl.table.period,
    };
    let mut x0 = x.to_vec();
    x0.push(0.0);
    let r = return_map_with(cl, &sec, &opts, p, &x0, Columns::State)
        .map_err(|e| FeedbackError::Periodic(Box::new(e)))?;
    let keep: Vec<usize> = (0..n).filter(|i| !neutral.contains(i)).collect();
    let m = DMatrix::from_fn(keep.len(), keep.len(), |i, j| {
        r.monodromy[(keep[i], keep[j])]
    });
    Ok(ReturnFloquet {
        multipliers: eigenvalues(&m),
        monodromy: r.monodromy,
        period: r.period,
    })
}

/// Eigenvalues of `m` with the `neutral` rows and columns left out, largest modulus first.
pub fn multipliers_without(m: &DMatrix<f64>, neutral: &[usize]) -> Vec<Complex<f64>> {
    let keep: Vec<usize> = (0..m.nrows()).filter(|i| !neutral.contains(i)).collect();
    eigenvalues(&DMatrix::from_fn(keep.len(), keep.len(), |i, j| {
        m[(keep[i], keep[j])]
    }))
}
