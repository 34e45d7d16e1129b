//! The statistics of a least-squares fit at its optimum (docs/theory.md §9): the residual variance factor
//! σ̂² = ‖r‖²/(m − n), the covariance (JᵀJ)⁻¹σ̂² (and (JᵀJ)⁻¹ with σ taken as known),
//! standard errors, correlations and 95 % confidence intervals θ̂ ± t_{0.975, m−n}·SE.
//! For a constrained (multiple-shooting) fit the covariance is the null-space form
//! Z (Zᵀ JᵀJ Z)⁻¹ Zᵀ (Bock 1987), over the free variables, of which the parameters' block
//! is reported.
//!
//! Everything comes from the SVD of the column-scaled J Z (never from JᵀJ), whose
//! condition number decides identifiability: the right singular vector of the smallest
//! singular value is the parameter combination the data cannot fix.

use super::calls::shape;
use super::error::LsqError;
use super::student::{normal_quantile, student_t_quantile};
use nalgebra::{DMatrix, DVector};

/// Above this condition number of the column-scaled Jacobian the fit is reported
/// ill-conditioned (its covariance is still given): a parameter combination 10⁸ times
/// worse determined than another, in units where every column has norm 1.
pub const ILL_CONDITIONED: f64 = 1e8;
/// The confidence level of the intervals.
pub const CONFIDENCE: f64 = 0.95;

/// Whether the data determine the parameters.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Identifiability {
    /// Condition number at most [`ILL_CONDITIONED`].
    Identifiable,
    /// Condition number above [`ILL_CONDITIONED`]; `direction` (over the reported
    /// parameters, unit length) is the worst-determined combination.
    IllConditioned { condition: f64, direction: Vec<f64> },
    /// J Z is singular (its smallest singular value at round-off): the parameters move
    /// along `direction` without changing the residuals to first order. No covariance.
    NotIdentifiable { condition: f64, direction: Vec<f64> },
}

/// One parameter's estimate and uncertainty.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParameterStatistics {
    /// The variable's index in x (or w).
    pub index: usize,
    pub name: String,
    pub estimate: f64,
    /// √(Cov_ii) with Cov = (JᵀJ)⁻¹σ̂².
    pub standard_error: f64,
    /// θ̂ ± t_{0.975, m−n}·SE.
    pub ci_low: f64,
    pub ci_high: f64,
    /// √((JᵀJ)⁻¹_ii): σ taken as known (the given σ right).
    pub standard_error_known_sigma: f64,
    /// θ̂ ± z_{0.975}·SE_known.
    pub ci_low_known_sigma: f64,
    pub ci_high_known_sigma: f64,
}

/// The statistics at an optimum.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Statistics {
    /// m: the residuals.
    pub samples: usize,
    /// The free variables (held ones excluded), less the constraints: n − p.
    pub free_parameters: usize,
    /// m − (n − p).
    pub degrees_of_freedom: usize,
    /// ‖r‖².
    pub residual_sum_of_squares: f64,
    /// σ̂² = ‖r‖²/(m − n + p); ≈ 1 when the σ given were right.
    pub sigma2: f64,
    /// The indices of the variables held at a bound, excluded from the estimate.
    pub excluded: Vec<usize>,
    /// s_max/s_min of the column-scaled J (unconstrained); for a constrained fit, of the
    /// reported variables' reduced problem (see `block_condition`; ∞ when their covariance
    /// block is singular).
    pub condition: f64,
    pub identifiability: Identifiability,
    pub confidence: f64,
    /// t_{0.975, m−n}.
    pub t_quantile: f64,
    /// z_{0.975} (for the known-σ intervals).
    pub z_quantile: f64,
    /// One entry per reported parameter (standard errors NaN when not identifiable).
    pub parameters: Vec<ParameterStatistics>,
    /// (JᵀJ)⁻¹σ̂² over the reported parameters (row-major rows); empty when not identifiable.
    pub covariance: Vec<Vec<f64>>,
    /// (JᵀJ)⁻¹ (σ known).
    pub covariance_known_sigma: Vec<Vec<f64>>,
    pub correlation: Vec<Vec<f64>>,
}

/// The statistics of an unconstrained fit at x: residuals r (already divided by σ), the
/// Jacobian J (m×n) and the free variables (those not held at a bound; the rest are
/// excluded, see [`Statistics::excluded`]). `names` names the n variables (empty: x0, x1, …).
pub fn statistics(
    x: &[f64], r: &[f64], j: &DMatrix<f64>, free: &[usize], names: &[String],
) -> Result<Statistics, LsqError> {
    let none = DMatrix::zeros(0, x.len());
    constrained_statistics(x, r, j, &none, free, free, names)
}

/// The statistics of a constrained fit at w (c(w) = 0 with Jacobian C, p×n): the
/// covariance of the free variables is Z (Zᵀ JᵀJ Z)⁻¹ Zᵀ σ̂² with Z a basis of the null
/// space of C on them (Bock 1987; docs/theory.md §9), σ̂² = ‖r‖²/(m − n_free + p), and the
/// entries listed in `report` (e.g. the parameters θ among the node states; each must be
/// free) are reported.
pub fn constrained_statistics(
    w: &[f64], r: &[f64], j: &DMatrix<f64>, cm: &DMatrix<f64>, free: &[usize], report: &[usize],
    names: &[String],
) -> Result<Statistics, LsqError> {
    let (m, n) = (r.len(), w.len());
    shape("the Jacobian", j.shape(), (m, n))?;
    shape("the constraint Jacobian", (cm.ncols(), 1), (n, 1))?;
    let p = cm.nrows();
    let dof_params = free.len().saturating_sub(p);
    if m <= dof_params {
        return Err(LsqError::NoDegreesOfFreedom {
            samples: m,
            parameters: dof_params,
        });
    }
    let pos: Vec<usize> = report
        .iter()
        .map(|k| free.iter().position(|f| f == k))
        .collect::<Option<_>>()
        .ok_or(LsqError::Shape {
            what: "a reported variable (not free)",
            expected: (free.len(), 1),
            got: (report.len(), 1),
        })?;
    let basis = ScaledBasis::new(j, cm, free)?;
    let rss: f64 = r.iter().map(|v| v * v).sum();
    let dof = m - dof_params;
    let sigma2 = rss / dof as f64;
    let (ident, cov, condition) = basis.covariance(&pos);
    let t = student_t_quantile(0.5 + 0.5 * CONFIDENCE, dof as f64);
    let z = normal_quantile(0.5 + 0.5 * CONFIDENCE);
    let name = |k: usize| names.get(k).cloned().unwrap_or_else(|| format!("x{k}"));
    let k = pos.len();
    let cov = cov.unwrap_or_else(|| DMatrix::from_element(k, k, f64::NAN));
    let parameters = report
        .iter()
        .enumerate()
        .map(|(a, &i)| {
            let se_known = cov[(a, a)].sqrt();
            let se = se_known * sigma2.sqrt();
            ParameterStatistics {
                index: i,
                name: name(i),
                estimate: w[i],
                standard_error: se,
                ci_low: w[i] - t * se,
                ci_high: w[i] + t * se,
                standard_error_known_sigma: se_known,
                ci_low_known_sigma: w[i] - z * se_known,
                ci_high_known_sigma: w[i] + z * se_known,
            }
        })
        .collect();
    let identifiable = !matches!(ident, Identifiability::NotIdentifiable { .. });
    let rows = |a: &DMatrix<f64>| {
        if identifiable {
            a.row_iter().map(|r| r.iter().copied().collect()).collect()
        } else {
            vec![]
        }
    };
    let corr = DMatrix::from_fn(k, k, |a, b| {
        cov[(a, b)] / (cov[(a, a)] * cov[(b, b)]).sqrt()
    });
    Ok(Statistics {
        samples: m,
        free_parameters: dof_params,
        degrees_of_freedom: dof,
        residual_sum_of_squares: rss,
        sigma2,
        excluded: (0..n).filter(|i| !free.contains(i)).collect(),
        condition,
        identifiability: ident,
        confidence: CONFIDENCE,
        t_quantile: t,
        z_quantile: z,
        parameters,
        covariance: rows(&(&cov * sigma2)),
        covariance_known_sigma: rows(&cov),
        correlation: rows(&corr),
    })
}

/// The SVD of J_F S⁻¹ Z̃ (S the column norms of J_F, Z̃ a basis of the null space of
/// C_F S⁻¹; Z̃ = I without constraints): J_F S⁻¹ Z̃ = U Σ Vᵀ.
struct ScaledBasis {
    /// S⁻¹ Z̃ V (k × d): maps the SVD's coordinates to the free variables.
    map: DMatrix<f64>,
    s: DVector<f64>,
    cut: f64,
    /// Whether there are constraints (then the reported block's own condition decides).
    constrained: bool,
}

impl ScaledBasis {
    fn new(j: &DMatrix<f64>, cm: &DMatrix<f64>, free: &[usize]) -> Result<ScaledBasis, LsqError> {
        let jf = j.select_columns(free.iter());
        let k = free.len();
        let scale = DVector::from_iterator(
            k,
            jf.column_iter().map(|c| {
                let v = c.norm();
                if v > 0.0 {
                    v
                } else {
                    1.0
                }
            }),
        );
        let inv = DMatrix::from_diagonal(&scale.map(|v| 1.0 / v));
        let cf = cm.select_columns(free.iter()) * &inv;
        let z = null_space(&cf)?;
        let svd = (&jf * &inv * &z).svd(false, true);
        let v_t = svd.v_t.expect("SVD with Vᵀ");
        let s = svd.singular_values;
        let smax = s.iter().fold(0.0f64, |a, &v| a.max(v));
        let cut = smax * f64::EPSILON * jf.nrows().max(z.ncols()) as f64;
        Ok(ScaledBasis {
            map: inv * z * v_t.transpose(),
            s,
            cut,
            constrained: cm.nrows() > 0,
        })
    }

    fn condition(&self) -> f64 {
        let (lo, hi) = self
            .s
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
        if self.s.is_empty() {
            1.0
        } else {
            hi / lo
        }
    }

    /// (JᵀJ)⁻¹ over the rows `pos` of the free variables = M Σ⁻² Mᵀ (M = S⁻¹ Z̃ V), and the
    /// identifiability with the smallest singular value's direction — for a constrained fit,
    /// that of the reported block ([`block_condition`]).
    fn covariance(&self, pos: &[usize]) -> (Identifiability, Option<DMatrix<f64>>, f64) {
        let condition = self.condition();
        let rows = self.map.select_rows(pos.iter());
        let Some(imin) = self
            .s
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i)
        else {
            return (
                Identifiability::Identifiable,
                Some(DMatrix::zeros(pos.len(), pos.len())),
                condition,
            );
        };
        let mut dir: Vec<f64> = rows.column(imin).iter().copied().collect();
        let norm = dir.iter().map(|v| v * v).sum::<f64>().sqrt();
        let big = dir
            .iter()
            .copied()
            .fold(0.0f64, |a, v| if v.abs() > a.abs() { v } else { a });
        dir.iter_mut()
            .for_each(|v| *v /= norm.max(f64::MIN_POSITIVE) * big.signum());
        if self.s[imin] <= self.cut {
            return (
                Identifiability::NotIdentifiable {
                    condition,
                    direction: dir,
                },
                None,
                condition,
            );
        }
        let scaled = DMatrix::from_fn(rows.nrows(), rows.ncols(), |a, b| rows[(a, b)] / self.s[b]);
        let cov = &scaled * scaled.transpose();
        let (condition, dir) = if self.constrained {
            block_condition(&scaled)
        } else {
            (condition, dir)
        };
        let ident = if condition > ILL_CONDITIONED {
            Identifiability::IllConditioned {
                condition,
                direction: dir,
            }
        } else {
            Identifiability::Identifiable
        };
        (ident, Some(cov), condition)
    }
}

/// The condition of the reported variables' reduced problem and its worst-determined
/// direction, from a square root F of their covariance block (F Fᵀ = (JᵀJ)⁻¹ over them):
/// with D = diag(‖F_a‖)⁻¹ (rows to unit norm, i.e. the covariance to unit diagonal, the
/// correlation matrix), cond = σ_max(DF)/σ_min(DF) and the direction D⁻¹u₁ (u₁ the left
/// singular vector of σ_max: the combination of largest variance), of unit norm with its
/// largest entry positive. For a multiple-shooting fit this is the condition of the parameters'
/// Jacobian as single shooting would have it (the node states eliminated by the continuity
/// constraints; Bock 1987), not that of the whole projected J Z, whose well-measured node
/// states hide the parameters' correlation (the 14 s vibrating table: 1.2 for J Z against
/// correlation −1.0000 between e and A). Working on F, not F Fᵀ, resolves conditions up to
/// ~1/ε instead of 1/√ε.
fn block_condition(f: &DMatrix<f64>) -> (f64, Vec<f64>) {
    let norms: Vec<f64> = f
        .row_iter()
        .map(|r| r.norm().max(f64::MIN_POSITIVE))
        .collect();
    let df = DMatrix::from_fn(f.nrows(), f.ncols(), |a, b| f[(a, b)] / norms[a]);
    let svd = df.svd(true, false);
    let u = svd.u.expect("SVD with U");
    let s = &svd.singular_values;
    let Some(imax) = (0..s.len()).max_by(|&a, &b| s[a].total_cmp(&s[b])) else {
        return (1.0, vec![]);
    };
    let lo = s.iter().fold(f64::INFINITY, |a, &v| a.min(v));
    let rank_short = f.nrows() > s.len();
    let condition = if rank_short || lo <= 0.0 {
        f64::INFINITY
    } else {
        s[imax] / lo
    };
    let mut dir: Vec<f64> = (0..f.nrows()).map(|a| u[(a, imax)] * norms[a]).collect();
    let norm = dir.iter().map(|v| v * v).sum::<f64>().sqrt();
    let big = dir
        .iter()
        .copied()
        .fold(0.0f64, |a, v| if v.abs() > a.abs() { v } else { a });
    dir.iter_mut()
        .for_each(|v| *v /= norm.max(f64::MIN_POSITIVE) * big.signum());
    (condition, dir)
}

/// An orthonormal basis of the null space of C (p×k, full row rank): the last k − p columns
/// of Q in Cᵀ = Q R; the identity when p = 0.
fn null_space(c: &DMatrix<f64>) -> Result<DMatrix<f64>, LsqError> {
    let (p, k) = c.shape();
    if p == 0 {
        return Ok(DMatrix::identity(k, k));
    }
    if p > k {
        return Err(LsqError::DependentConstraints { pivot: 0.0 });
    }
    let qr = c.transpose().qr();
    let r = qr.r();
    let (lo, hi) = (0..p).fold((f64::INFINITY, 0.0f64), |(a, b), i| {
        (a.min(r[(i, i)].abs()), b.max(r[(i, i)].abs()))
    });
    if !(lo > 1e-12 * hi) {
        return Err(LsqError::DependentConstraints {
            pivot: lo / hi.max(f64::MIN_POSITIVE),
        });
    }
    let mut qt = DMatrix::<f64>::identity(k, k);
    qr.q_tr_mul(&mut qt);
    Ok(qt.transpose().columns(p, k - p).into_owned())
}

impl super::outcome::LmResult {
    /// The statistics at the result's point over its free variables (those not held at a
    /// bound), from the residuals and Jacobian it kept; an error if it kept no Jacobian
    /// (a start that failed, or a Jacobian that failed at the last accepted point).
    pub fn statistics(&self, names: &[String]) -> Result<Statistics, LsqError> {
        let j = self.jacobian.as_ref().ok_or(LsqError::Shape {
            what: "the Jacobian at the final point",
            expected: (self.residuals.len(), self.x.len()),
            got: (0, 0),
        })?;
        statistics(&self.x, &self.residuals, j, &self.free(), names)
    }
}

impl super::outcome::GgnResult {
    /// The statistics at the result's point over its free variables, with the entries in
    /// `report` (e.g. θ's among the node states) reported; an error if it kept no
    /// Jacobians.
    pub fn statistics(&self, report: &[usize], names: &[String]) -> Result<Statistics, LsqError> {
        let missing = || LsqError::Shape {
            what: "the Jacobians at the final point",
            expected: (self.residuals.len(), self.w.len()),
            got: (0, 0),
        };
        let j = self.jacobian.as_ref().ok_or_else(missing)?;
        let c = self.constraint_jacobian.as_ref().ok_or_else(missing)?;
        constrained_statistics(&self.w, &self.residuals, j, c, &self.free(), report, names)
    }
}
