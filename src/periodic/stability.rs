//! Floquet multipliers: the eigenvalues of `DP` on the section and of the full-state
//! monodromy, their classification, and the derivative of a simple eigenvalue.
//!
//! `DP` maps every direction into the section's tangent space `T = range(DP)` (the return
//! lands on the section), so with `π` the rows of the free components and `A = π DP`
//! (full row rank when the free components chart the section), the section's tangent
//! vectors in free coordinates are `E = DP A⁺`, `A⁺ = Aᵀ (A Aᵀ)⁻¹` (so that `π E = I`),
//! and the section map's Jacobian is `DP_Σ = π DP E = A DP A⁺`. Its eigenvalues are the
//! nonzero eigenvalues of `DP`; the others are 0 (the directions the reset and the stop at
//! the guard collapse, among them the flow direction).
//!
//! On a hyperplane section with `n − 1` free components, the section is charted by the
//! hyperplane itself (the remaining component solved from `n·x = c`, tangent map `E` of
//! [`Hyperplane::chart`]), and `DP_Σ = π DP E`: the Jacobian of the return map in those
//! coordinates whatever the rank of `DP` (directions an impact's reset collapses inside
//! the period give multipliers 0 on the section; the flow's 0 is not among them).

use super::hyperplane::Hyperplane;
use super::section::Section;
use crate::error::Error;
use crate::periodic_error::PeriodicError;
use nalgebra::{Complex, DMatrix};

pub use crate::linalg::{eigenvalues, pairs, Multiplier};

/// Whether an orbit is stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stability {
    /// Every multiplier on the section has `|λ| < 1`.
    Stable,
    /// Some multiplier has `|λ| > 1` (or `= 1` to round-off).
    Unstable,
}

/// The multipliers of an orbit.
#[derive(Debug, Clone)]
pub struct Spectrum {
    /// `DP_Σ` in the free coordinates.
    pub section_jacobian: DMatrix<f64>,
    /// Its eigenvalues, by decreasing modulus.
    pub section: Vec<Complex<f64>>,
    /// The eigenvalues of the full-state `DP`, by decreasing modulus.
    pub monodromy: Vec<Complex<f64>>,
    /// `max |λ|` on the section.
    pub spectral_radius: f64,
    pub stability: Stability,
}

/// `DP_Σ = A DP A⁺` with `A = π DP` (module docs). Fails with a typed error when the free
/// components do not chart the section: `rank DP` (singular values above `1e-8 σ_max`)
/// differs from their number, or `A` is rank-deficient.
pub fn section_jacobian(
    dp: &DMatrix<f64>, free: &[usize], names: &[String],
) -> Result<DMatrix<f64>, Error> {
    let r = free.len();
    let bad = |detail: String| -> Error {
        PeriodicError::BadSection {
            free: free.iter().map(|&i| names[i].clone()).collect(),
            detail,
        }
        .into()
    };
    let sv = dp.clone().singular_values();
    let smax = sv.max();
    let rank = sv.iter().filter(|&&s| s > 1e-8 * smax).count();
    if rank != r {
        return Err(bad(format!(
            "DP has rank {rank} (singular values {:?}) but {r} components are free",
            sv.as_slice()
        )));
    }
    let a = DMatrix::from_fn(r, dp.ncols(), |i, j| dp[(free[i], j)]);
    let aat = &a * a.transpose();
    let inv = aat
        .clone()
        .try_inverse()
        .filter(|_| aat.clone().singular_values().min() > 1e-10 * smax * smax)
        .ok_or_else(|| bad("the free rows of DP are linearly dependent".into()))?;
    Ok(&a * dp * a.transpose() * inv)
}

/// `DP_Σ = π DP E` in the hyperplane's chart (module docs); `None` unless `free` lists
/// `n − 1` components and the remaining one has a nonzero coefficient.
pub fn hyperplane_jacobian(
    dp: &DMatrix<f64>, h: &Hyperplane, free: &[usize],
) -> Option<DMatrix<f64>> {
    let e = h.chart(free)?;
    let r = free.len();
    let pi_dp = DMatrix::from_fn(r, dp.ncols(), |i, j| dp[(free[i], j)]);
    Some(pi_dp * e)
}

/// `DP_Σ` of the section `sec`: in the hyperplane's chart for a hyperplane section with
/// `n − 1` free components, else `A DP A⁺` ([`section_jacobian`]).
pub fn section_jacobian_on(
    dp: &DMatrix<f64>, sec: &Section, names: &[String],
) -> Result<DMatrix<f64>, Error> {
    match sec
        .hyperplane()
        .and_then(|h| hyperplane_jacobian(dp, h, &sec.free))
    {
        Some(j) => Ok(j),
        None => section_jacobian(dp, &sec.free, names),
    }
}

/// Multipliers and classification of an orbit on the section `sec` from its `DP`
/// (`section_jacobian_on`).
pub fn spectrum_on(dp: &DMatrix<f64>, sec: &Section, names: &[String]) -> Result<Spectrum, Error> {
    Ok(classify(section_jacobian_on(dp, sec, names)?, dp))
}

/// Multipliers and classification of an orbit from its `DP` with `DP_Σ = A DP A⁺`
/// (module docs).
pub fn spectrum(dp: &DMatrix<f64>, free: &[usize], names: &[String]) -> Result<Spectrum, Error> {
    Ok(classify(section_jacobian(dp, free, names)?, dp))
}

fn classify(section_jacobian: DMatrix<f64>, dp: &DMatrix<f64>) -> Spectrum {
    let section = eigenvalues(&section_jacobian);
    let spectral_radius = section.first().map_or(0.0, |l| l.norm());
    Spectrum {
        monodromy: eigenvalues(dp),
        section,
        spectral_radius,
        stability: if spectral_radius < 1.0 {
            Stability::Stable
        } else {
            Stability::Unstable
        },
        section_jacobian,
    }
}

/// A unit null vector of a complex square matrix (the right singular vector of its
/// smallest singular value).
fn null_vector(a: &DMatrix<Complex<f64>>) -> nalgebra::DVector<Complex<f64>> {
    let svd = a.clone().svd(false, true);
    let vt = svd.v_t.expect("requested");
    let k = svd.singular_values.imin();
    vt.row(k).adjoint()
}

/// The derivative of a simple eigenvalue `λ` of `M` along `dM`:
/// `dλ = wᴴ dM v / (wᴴ v)` with `M v = λ v`, `wᴴ M = λ wᴴ` (Kato, *Perturbation Theory
/// for Linear Operators*, II §2; Magnus, Econometric Theory 1985). Returns `None` when
/// `λ` is not simple to the measured accuracy (`|wᴴ v|` below `1e-8`: a derivative does
/// not exist there).
pub fn eigenvalue_derivative(
    m: &DMatrix<f64>, lambda: Complex<f64>, dm: &DMatrix<f64>,
) -> Option<Complex<f64>> {
    let n = m.nrows();
    let shifted = DMatrix::from_fn(n, n, |i, j| {
        Complex::new(m[(i, j)], 0.0)
            - if i == j {
                lambda
            } else {
                Complex::new(0.0, 0.0)
            }
    });
    let v = null_vector(&shifted);
    let w = null_vector(&shifted.adjoint());
    let dmc = dm.map(|x| Complex::new(x, 0.0));
    let den = w.dotc(&v);
    if den.norm() < 1e-8 {
        return None;
    }
    Some(w.dotc(&(dmc * v)) / den)
}

/// `d|λ| = Re(λ̄ dλ) / |λ|`.
pub fn modulus_derivative(lambda: Complex<f64>, dlambda: Complex<f64>) -> f64 {
    (lambda.conj() * dlambda).re / lambda.norm()
}

/// Whether the spectral radius is differentiable at this spectrum: the leading modulus
/// belongs to one real eigenvalue or to one complex-conjugate pair (equal moduli by
/// symmetry). Two distinct eigenvalues sharing the largest modulus (within `rel`) are a
/// kink (like a simultaneous event): the message names them.
pub fn radius_kink(section: &[Complex<f64>], rel: f64) -> Option<String> {
    if section.len() < 2 {
        return None;
    }
    let top = section[0];
    let r = top.norm();
    for other in &section[1..] {
        let conj_pair = top.im != 0.0 && (other - top.conj()).norm() <= 1e-9 * r.max(1e-300);
        if conj_pair {
            continue;
        }
        if (other.norm() - r).abs() <= rel * r {
            return Some(format!(
                "the spectral radius {r} is the modulus of two distinct multipliers {top} and {other}: it has no gradient there"
            ));
        }
    }
    None
}
