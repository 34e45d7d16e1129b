//! Central finite differences of ψ: a witness with O(h²) truncation and O(ε/h) round-off
//! error, so agreement to ~1e-6–1e-8 relative is what it can show.

use crate::error::Error;
use crate::model::HybridSystem;
use crate::setup::Setup;
use rayon::prelude::*;

/// Step rule `h_j = rel · max(1, |θ_j|)`.
#[derive(Debug, Clone, Copy)]
pub struct FdOptions {
    /// Default 1e-5: near ε^(1/3) scaled for integration noise at tolerances ~1e-10.
    pub rel: f64,
}

impl Default for FdOptions {
    fn default() -> Self {
        FdOptions { rel: 1e-5 }
    }
}

/// dψ_i/dθ_j ≈ (ψ_i(θ + h e_j) − ψ_i(θ − h e_j)) / 2h, all j in parallel.
pub fn fd_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
    opt: FdOptions,
) -> Result<Vec<Vec<f64>>, Error> {
    let nth = theta.len();
    let eval = |th: &[f64]| -> Result<Vec<f64>, Error> {
        let tr = setup.simulate(th)?;
        setup.objective_values(&tr, th)
    };
    let cols: Vec<Result<Vec<f64>, Error>> = (0..nth)
        .into_par_iter()
        .map(|j| {
            let h = opt.rel * theta[j].abs().max(1.0);
            let mut tp = theta.to_vec();
            tp[j] += h;
            let mut tm = theta.to_vec();
            tm[j] -= h;
            let (vp, vm) = (eval(&tp)?, eval(&tm)?);
            Ok(vp
                .iter()
                .zip(&vm)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect())
        })
        .collect();
    let mut grads = vec![vec![0.0; nth]; setup.objectives.len()];
    for (j, c) in cols.into_iter().enumerate() {
        for (i, v) in c?.into_iter().enumerate() {
            grads[i][j] = v;
        }
    }
    Ok(grads)
}
