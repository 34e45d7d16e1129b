//! The corner's data — normals and limiting fields — and its checks: transversality
//! (event selection, seed 003 Definition 2.1) and independent normals.

use super::error::{CornerError, LengthOf};
use super::limits::{INDEPENDENCE_TOL, MAX_SURFACES, TRANSVERSALITY_TOL};
use super::signs::{format_signs, mask_str, mask_to_signs, signs_to_mask};
use nalgebra::{DMatrix, DVector};

/// `η_jᵀ x` for row j of `normals`.
#[inline]
pub(crate) fn row_dot(normals: &DMatrix<f64>, j: usize, x: &DVector<f64>) -> f64 {
    normals
        .row(j)
        .iter()
        .zip(x.iter())
        .map(|(a, b)| a * b)
        .sum()
}

#[inline]
pub(crate) fn row_norm(normals: &DMatrix<f64>, j: usize) -> f64 {
    normals.row(j).norm()
}

/// Whether a normal speed `c = ηᵀf` is bounded away from zero relative to `‖η‖ ‖f‖`.
#[inline]
pub(crate) fn is_transversal(c: f64, norm_eta: f64, norm_f: f64) -> bool {
    c.is_finite() && c.abs() > TRANSVERSALITY_TOL * norm_eta * norm_f
}

pub(crate) fn first_non_finite(v: &DVector<f64>) -> Option<(usize, f64)> {
    v.iter().copied().enumerate().find(|(_, x)| !x.is_finite())
}

/// Data at a corner: n surfaces in R^d meeting at one point of a trajectory.
///
/// Build it with [`Corner::new`], which validates it. The fields are public for reading; a
/// caller who modifies them afterwards bypasses the transversality validation (the functions
/// of this module still check sizes and never panic on such data, but their results are then
/// meaningless).
#[derive(Debug, Clone, PartialEq)]
pub struct Corner {
    /// n×d, row j = `η_j`, the normal of surface j at the corner.
    pub normals: DMatrix<f64>,
    /// 2^n entries indexed by sign mask: bit j set ⇔ `b_j = +1` (after surface j).
    pub fields: Vec<DVector<f64>>,
}

impl Corner {
    /// Validates and builds a corner.
    ///
    /// Checks, each with a message naming the offending item:
    /// - 1 ≤ n ≤ [`MAX_SURFACES`], d ≥ 1, n ≤ d;
    /// - every normal finite and nonzero, the normals linearly independent (the surfaces
    ///   intersect transversally; seed 003 §6 assumes `rank Dh(ρ) = n`);
    /// - exactly 2^n fields, each of length d and finite;
    /// - transversality (seed 003 Definition 2.1): for every surface j and every sign vector b,
    ///   `|η_jᵀΓ(b)| > 1e-12 ‖η_j‖ ‖Γ(b)‖`, and for a fixed j all `η_jᵀΓ(b)` have the same sign.
    ///   A field with `b_j = −1` that is (nearly) orthogonal to `η_j` would graze surface j
    ///   (division by zero in Algorithm 2.1); one with `b_j = +1` would slide along it or cross
    ///   it back.
    pub fn new(normals: DMatrix<f64>, fields: Vec<DVector<f64>>) -> Result<Corner, CornerError> {
        let n = normals.nrows();
        let d = normals.ncols();
        if n == 0 || n > MAX_SURFACES || d == 0 || n > d {
            return Err(CornerError::Size { n, d });
        }
        for j in 0..n {
            for k in 0..d {
                let value = normals[(j, k)];
                if !value.is_finite() {
                    return Err(CornerError::NonFinite {
                        item: format!("normal of surface {j}, component {k},"),
                        value,
                    });
                }
            }
            let norm = row_norm(&normals, j);
            if !(norm > 0.0 && norm.is_finite()) {
                return Err(CornerError::ZeroNormal {
                    surface: Some(j),
                    norm,
                });
            }
        }
        check_independent(&normals)?;

        if fields.len() != 1usize << n {
            return Err(CornerError::FieldCount {
                n,
                found: fields.len(),
                orthants: false,
            });
        }
        for (mask, f) in fields.iter().enumerate() {
            if f.len() != d {
                return Err(CornerError::Length {
                    item: format!("field for sign vector {}", mask_str(mask, n)),
                    found: f.len(),
                    expected: d,
                    of: LengthOf::Dimension,
                });
            }
            if let Some((k, value)) = first_non_finite(f) {
                return Err(CornerError::NonFinite {
                    item: format!(
                        "field for sign vector {}, component {k},",
                        mask_str(mask, n)
                    ),
                    value,
                });
            }
        }

        for j in 0..n {
            let norm_eta = row_norm(&normals, j);
            let bit = 1usize << j;
            // Reference direction: the all-minus field, from which every surface is crossed.
            let c_ref = row_dot(&normals, j, &fields[0]);
            // First pass over the fields from which surface j is still to be crossed, then over
            // those after it, so that grazing is reported before sliding.
            for after in [false, true] {
                for (mask, f) in fields.iter().enumerate() {
                    if (mask & bit != 0) != after {
                        continue;
                    }
                    let c = row_dot(&normals, j, f);
                    let nf = f.norm();
                    if !c.is_finite() {
                        return Err(CornerError::SpeedOverflow {
                            surface: j,
                            signs: mask_to_signs(mask, n),
                            speed: c,
                        });
                    }
                    if !is_transversal(c, norm_eta, nf) {
                        return Err(CornerError::NotTransversal {
                            surface: j,
                            signs: mask_to_signs(mask, n),
                            speed: c,
                            after,
                        });
                    }
                    if (c > 0.0) != (c_ref > 0.0) {
                        return Err(CornerError::Reversal {
                            surface: j,
                            signs: mask_to_signs(mask, n),
                            speed: c,
                            reference: c_ref,
                            after,
                        });
                    }
                }
            }
        }
        Ok(Corner { normals, fields })
    }

    /// A corner with the coordinate hyperplanes `x_j = 0` as surfaces (normals = identity,
    /// n = d), as for the piecewise-constant fields `ẋ = F(sign x)` of seed 003 §3.1.
    pub fn with_identity_normals(fields: Vec<DVector<f64>>) -> Result<Corner, CornerError> {
        let d = fields.first().map_or(0, |f| f.len());
        Corner::new(DMatrix::identity(d, d), fields)
    }

    /// Number of surfaces n.
    pub fn n(&self) -> usize {
        self.normals.nrows()
    }

    /// State dimension d.
    pub fn d(&self) -> usize {
        self.normals.ncols()
    }

    /// The field `Γ(b)` for the sign vector with this mask (bit j set ⇔ `b_j = +1`).
    ///
    /// # Panics
    /// If `signs_mask ≥ 2^n` (a programming error, not an input error).
    pub fn field(&self, signs_mask: usize) -> &DVector<f64> {
        &self.fields[signs_mask]
    }

    /// The field `Γ(b)` for a sign vector given as ±1 entries.
    pub fn field_for_signs(&self, signs: &[i32]) -> Result<&DVector<f64>, CornerError> {
        if signs.len() != self.n() {
            return Err(CornerError::Length {
                item: format!("sign vector {}", format_signs(signs)),
                found: signs.len(),
                expected: self.n(),
                of: LengthOf::Surfaces,
            });
        }
        let mask = signs_to_mask(signs)?;
        self.checked_field(mask)
    }

    /// Cheap consistency check of the public fields (sizes only), so that a corner modified
    /// after construction yields an error rather than a panic.
    pub(super) fn check_shape(&self) -> Result<(), CornerError> {
        let n = self.n();
        if n == 0 || n > MAX_SURFACES || self.d() == 0 || self.fields.len() != (1usize << n) {
            return Err(CornerError::Inconsistent {
                n,
                d: self.d(),
                fields: self.fields.len(),
            });
        }
        Ok(())
    }

    pub(super) fn checked_field(&self, mask: usize) -> Result<&DVector<f64>, CornerError> {
        match self.fields.get(mask) {
            Some(f) if f.len() == self.d() => Ok(f),
            Some(f) => Err(CornerError::Length {
                item: format!("field for sign vector {}", mask_str(mask, self.n())),
                found: f.len(),
                expected: self.d(),
                of: LengthOf::Dimension,
            }),
            None => Err(CornerError::NoField {
                mask,
                fields: self.fields.len(),
            }),
        }
    }

    pub(super) fn check_direction(&self, direction: &DVector<f64>) -> Result<(), CornerError> {
        if direction.len() != self.d() {
            return Err(CornerError::Length {
                item: "direction".into(),
                found: direction.len(),
                expected: self.d(),
                of: LengthOf::Dimension,
            });
        }
        if let Some((k, value)) = first_non_finite(direction) {
            return Err(CornerError::NonFinite {
                item: format!("direction component {k}"),
                value,
            });
        }
        Ok(())
    }
}

/// Checks that the rows of `normals` are linearly independent, via the singular values of the
/// matrix of unit normals.
fn check_independent(normals: &DMatrix<f64>) -> Result<(), CornerError> {
    let n = normals.nrows();
    if n == 1 {
        return Ok(());
    }
    let mut unit = normals.clone();
    for j in 0..n {
        let nrm = row_norm(normals, j);
        unit.row_mut(j).scale_mut(1.0 / nrm);
    }
    let svd = unit
        .try_svd_unordered(false, false, f64::EPSILON, 10_000)
        .ok_or(CornerError::DependentNormals { n, ratio: None })?;
    let sv = &svd.singular_values;
    let smax = sv.iter().fold(0.0f64, |a, &b| a.max(b));
    let smin = sv.iter().fold(f64::INFINITY, |a, &b| a.min(b));
    if smin.is_nan() || smin <= INDEPENDENCE_TOL * smax {
        return Err(CornerError::DependentNormals {
            n,
            ratio: Some(smin / smax),
        });
    }
    Ok(())
}
