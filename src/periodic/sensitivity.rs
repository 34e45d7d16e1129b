//! Sensitivities of a periodic orbit to the parameters.
//!
//! - Fixed point (implicit-function theorem on `P(x*, p) = x*`):
//!   `(I − DP) dx*/dp = ∂P/∂p`.
//! - Period: `dT/dp = ∂T/∂x · dx*/dp + ∂T/∂p` (τ of the return event, [`super::map`]).
//! - Multipliers: `d(DP)/dp_j` along `(dx*/dp_j, e_j)` by the dual pass
//!   ([`super::second`]), then `dλ = wᴴ d(DP) v / (wᴴ v)` and `d|λ| = Re(λ̄ dλ)/|λ|`
//!   ([`super::stability`]) for every simple multiplier on the section.

use super::map::MapOptions;
use super::newton::FixedPoint;
use super::second::monodromy_derivative;
use super::section::Section;
use super::stability::{eigenvalue_derivative, modulus_derivative, radius_kink, Spectrum};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::periodic_error::PeriodicError;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

/// A section multiplier below this fraction of the spectral radius is a zero (a direction
/// an impact's reset collapses, on a hyperplane section charted by `n − 1` components;
/// computed ~1e-14 relative): `|λ|` has no derivative at 0, and `DP` has 0 as a multiple
/// eigenvalue there (with the flow's).
const ZERO_MULTIPLIER: f64 = 1e-9;

/// The spectral radius's derivative, or why it has none.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RadiusDerivative {
    /// `d max|λ| / dp_j` per parameter.
    Smooth { gradient: Vec<f64> },
    /// Two distinct multipliers share the largest modulus, or the leading one is not
    /// simple: no gradient exists (the message says which).
    Nonsmooth { message: String },
}

/// The orbit's sensitivities to the chosen parameters.
#[derive(Debug, Clone)]
pub struct OrbitSensitivities {
    /// Indices of the parameters differentiated.
    pub params: Vec<usize>,
    /// `dx*/dp` (n × chosen).
    pub fixed_point: DMatrix<f64>,
    /// `dT/dp`.
    pub period: Vec<f64>,
    /// `d|λ_i|/dp_j` per section multiplier i (by decreasing modulus); `None` where λ_i
    /// is not simple or is zero.
    pub moduli: Vec<Vec<Option<f64>>>,
    pub spectral_radius: RadiusDerivative,
    /// Consistency of the dual pass: `max |d(P)/dp_j − dx*/dp_j|` (the IFT predicts zero)
    /// and `max |Re DP_dual − DP|` (the same monodromy in both passes), to the integration
    /// tolerance.
    pub dual_return_gap: f64,
    pub dual_monodromy_gap: f64,
}

/// Computes [`OrbitSensitivities`] at a converged orbit (module docs).
pub fn orbit_sensitivities<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], fp: &FixedPoint, spec: &Spectrum,
    params: &[usize],
) -> Result<OrbitSensitivities, Error> {
    let n = fp.x.len();
    let m = &fp.ret.monodromy;
    let lu = (DMatrix::identity(n, n) - m).lu();
    let mut dx = DMatrix::zeros(n, params.len());
    for (c, &j) in params.iter().enumerate() {
        let col = lu.solve(&fp.ret.dp.column(j).into_owned()).ok_or_else(|| {
            PeriodicError::Nonsmooth(
                "I − DP is singular (a multiplier at 1): the orbit's sensitivities do not exist"
                    .into(),
            )
        })?;
        dx.set_column(c, &col);
    }
    let period: Vec<f64> = params
        .iter()
        .enumerate()
        .map(|(c, &j)| fp.ret.dt_dx.dot(&dx.column(c)) + fp.ret.dt_dp[j])
        .collect();
    let runs: Vec<_> = params
        .par_iter()
        .enumerate()
        .map(|(c, &j)| {
            let mut dp = vec![0.0; p.len()];
            dp[j] = 1.0;
            monodromy_derivative(
                sys,
                sec,
                opts,
                p,
                fp.x.as_slice(),
                &dp,
                dx.column(c).as_slice(),
            )
        })
        .collect();
    let mut moduli = vec![vec![None; params.len()]; spec.section.len()];
    let (mut gap_r, mut gap_m) = (0.0f64, 0.0f64);
    for (c, run) in runs.into_iter().enumerate() {
        let run = run?;
        gap_r = gap_r.max((DVector::from_vec(run.d_return) - dx.column(c)).amax());
        gap_m = gap_m.max((&run.monodromy - m).amax());
        for (i, &lambda) in spec.section.iter().enumerate() {
            moduli[i][c] = eigenvalue_derivative(m, lambda, &run.d_monodromy)
                .filter(|_| lambda.norm() > ZERO_MULTIPLIER * spec.spectral_radius)
                .map(|dl| modulus_derivative(lambda, dl));
        }
    }
    let spectral_radius = match radius_kink(&spec.section, 1e-9) {
        Some(message) => RadiusDerivative::Nonsmooth { message },
        None => match moduli
            .first()
            .map(|row| row.iter().copied().collect::<Option<Vec<f64>>>())
        {
            Some(Some(gradient)) => RadiusDerivative::Smooth { gradient },
            _ => RadiusDerivative::Nonsmooth {
                message: "the leading multiplier is not simple".into(),
            },
        },
    };
    Ok(OrbitSensitivities {
        params: params.to_vec(),
        fixed_point: dx,
        period,
        moduli,
        spectral_radius,
        dual_return_gap: gap_r,
        dual_monodromy_gap: gap_m,
    })
}
