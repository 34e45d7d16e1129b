//! The B-derivative of a piecewise-differentiable flow at a simultaneous crossing of several
//! surfaces of discontinuity (a *corner*): Algorithm 2.1 of Council, Revzen and Burden,
//! *Representing and computing the B-derivative of an EC^r vector field's PC^r flow*
//! (seed 003; restated in `docs/theory.md` §7).
//!
//! # Setting
//!
//! A trajectory meets n ≥ 1 guard surfaces `h_j = 0` at the same instant, at the point ρ ∈ R^d.
//! The resets are the identity (a pure vector-field discontinuity). The data at the corner are
//!
//! - the normals `η_j = ∇h_j(ρ)`, stored as the rows of an n×d matrix, linearly independent;
//! - the limiting fields `Γ(b) = F_b(ρ)` for every sign vector `b ∈ {−1, +1}^n`, where
//!   `b_j = −1` means "before surface j" and `b_j = +1` "after surface j".
//!
//! # Sign-vector convention (masks)
//!
//! A sign vector is stored as a bit mask: **bit j is set ⇔ `b_j = +1`**. So mask 0 is
//! `(−1, …, −1)` (the field before every surface) and mask `2^n − 1` is `(+1, …, +1)`. The
//! fields of a [`Corner`] are indexed by this mask.
//!
//! # Transversality (event selection)
//!
//! [`Corner::new`] checks the event-selection condition of seed 003, Definition 2.1: every
//! field has a nonzero normal speed `η_jᵀΓ(b)` across every surface j, and for a fixed j all
//! of them have the same sign, so the trajectory crosses every surface transversally, once, in
//! the same direction whatever the order (no grazing, no sliding, no re-crossing). The
//! orientation of a normal is free: the formulas below are invariant under `η_j → −η_j`.
//!
//! # What is computed
//!
//! `B` maps a perturbation `δρ⁻` of the state just before the corner to the perturbation
//! `δρ⁺ = B(δρ⁻)` just after it. `B` is continuous and piecewise linear with up to n! pieces;
//! the active piece is the product of ordinary saltation matrices taken in the crossing order
//! of the perturbed trajectory (seed 003 (6.4)). The flow's derivative is
//! `Dφ_t(x; δx) = Dφ_{t−s}(x_s) · B(Dφ_s(x) δx)` (seed 003 (2.10)).
//!
//! The module also holds an exact event-driven oracle for piecewise-constant fields
//! (`ẋ = F(sign x)`, seed 003 §3.1, `docs/reference-models.md` §4), used to check `B` against
//! finite differences of the exact flow, and the JSON interface behind `hybridopt bderiv`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Largest number of surfaces at a corner (the corner stores 2^n fields).
pub const MAX_SURFACES: usize = 16;

/// Largest number of surfaces for which [`all_pieces`] enumerates the n! pieces.
pub const MAX_ENUMERATED_SURFACES: usize = 8;

/// Largest number of matrix entries (n! · d²) that [`all_pieces`] will allocate (1 GiB of f64).
pub const MAX_PIECE_ENTRIES: usize = 1 << 27;

/// Relative threshold of the transversality checks: a normal speed `η_jᵀΓ(b)` with
/// `|η_jᵀΓ(b)| ≤ TRANSVERSALITY_TOL · ‖η_j‖ ‖Γ(b)‖` is treated as zero (grazing).
pub const TRANSVERSALITY_TOL: f64 = 1e-12;

/// Relative threshold of the independence check on the normals: the smallest singular value of
/// the matrix of unit normals must exceed this times the largest.
pub const INDEPENDENCE_TOL: f64 = 1e-12;

// ---------------------------------------------------------------------------------------------
// Sign vectors
// ---------------------------------------------------------------------------------------------

/// The sign vector `b ∈ {−1, +1}^n` of a mask (bit j set ⇔ `b_j = +1`).
pub fn mask_to_signs(mask: usize, n: usize) -> Vec<i32> {
    (0..n)
        .map(|j| if mask & (1usize << j) != 0 { 1 } else { -1 })
        .collect()
}

/// The mask of a sign vector (bit j set ⇔ `b_j = +1`). Every entry must be −1 or +1, and there
/// may be at most [`MAX_SURFACES`] entries.
pub fn signs_to_mask(signs: &[i32]) -> Result<usize, Error> {
    if signs.len() > MAX_SURFACES {
        return Err(Error::Invalid(format!(
            "sign vector {} has {} entries; at most {MAX_SURFACES} surfaces are supported",
            format_signs(signs),
            signs.len()
        )));
    }
    let mut mask = 0usize;
    for (j, &s) in signs.iter().enumerate() {
        match s {
            -1 => {}
            1 => mask |= 1usize << j,
            other => {
                return Err(Error::Invalid(format!(
                    "sign vector {}: entry {j} is {other}; each sign must be -1 (before the \
                     surface) or 1 (after it)",
                    format_signs(signs)
                )))
            }
        }
    }
    Ok(mask)
}

/// Formats a sign vector as in the JSON input, e.g. `[-1, 1]`.
pub fn format_signs(signs: &[i32]) -> String {
    let parts: Vec<String> = signs.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

fn mask_str(mask: usize, n: usize) -> String {
    format_signs(&mask_to_signs(mask, n))
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/// `η_jᵀ x` for row j of `normals`.
#[inline]
fn row_dot(normals: &DMatrix<f64>, j: usize, x: &DVector<f64>) -> f64 {
    normals
        .row(j)
        .iter()
        .zip(x.iter())
        .map(|(a, b)| a * b)
        .sum()
}

#[inline]
fn row_norm(normals: &DMatrix<f64>, j: usize) -> f64 {
    normals.row(j).norm()
}

/// Whether a normal speed `c = ηᵀf` is bounded away from zero relative to `‖η‖ ‖f‖`.
#[inline]
fn is_transversal(c: f64, norm_eta: f64, norm_f: f64) -> bool {
    c.is_finite() && c.abs() > TRANSVERSALITY_TOL * norm_eta * norm_f
}

fn first_non_finite(v: &DVector<f64>) -> Option<(usize, f64)> {
    v.iter().copied().enumerate().find(|(_, x)| !x.is_finite())
}

// ---------------------------------------------------------------------------------------------
// Corner data
// ---------------------------------------------------------------------------------------------

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
    pub fn new(normals: DMatrix<f64>, fields: Vec<DVector<f64>>) -> Result<Corner, Error> {
        let n = normals.nrows();
        let d = normals.ncols();
        if n == 0 {
            return Err(Error::Invalid(
                "corner has no surfaces: give n ≥ 1 normals (the rows of an n×d matrix)".into(),
            ));
        }
        if n > MAX_SURFACES {
            return Err(Error::Invalid(format!(
                "corner has n = {n} surfaces; at most {MAX_SURFACES} are supported (a corner \
                 stores 2^n fields)"
            )));
        }
        if d == 0 {
            return Err(Error::Invalid(
                "normals have d = 0 components: the state dimension must be at least 1".into(),
            ));
        }
        if n > d {
            return Err(Error::Invalid(format!(
                "n = {n} surfaces in R^{d}: n linearly independent normals need n ≤ d"
            )));
        }
        for j in 0..n {
            for k in 0..d {
                let v = normals[(j, k)];
                if !v.is_finite() {
                    return Err(Error::Invalid(format!(
                        "normal of surface {j}, component {k}, is {v}: every number must be finite"
                    )));
                }
            }
            let nrm = row_norm(&normals, j);
            if !(nrm > 0.0 && nrm.is_finite()) {
                return Err(Error::Invalid(format!(
                    "normal of surface {j} has norm {nrm}: a normal must be a nonzero finite vector"
                )));
            }
        }
        check_independent(&normals)?;

        let expected = 1usize << n;
        if fields.len() != expected {
            return Err(Error::Invalid(format!(
                "corner with n = {n} surfaces needs 2^n = {expected} fields (one per sign \
                 vector), got {}",
                fields.len()
            )));
        }
        for (mask, f) in fields.iter().enumerate() {
            if f.len() != d {
                return Err(Error::Invalid(format!(
                    "field for sign vector {} has {} components, expected d = {d}",
                    mask_str(mask, n),
                    f.len()
                )));
            }
            if let Some((k, v)) = first_non_finite(f) {
                return Err(Error::Invalid(format!(
                    "field for sign vector {}, component {k}, is {v}: every number must be finite",
                    mask_str(mask, n)
                )));
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
                        return Err(Error::Invalid(format!(
                            "surface {j}, sign vector {}: the normal speed η_jᵀΓ(b) overflows \
                             ({c}); rescale the data",
                            mask_str(mask, n)
                        )));
                    }
                    if !is_transversal(c, norm_eta, nf) {
                        let role = if after {
                            "a field after the crossing (b_j = +1) must keep moving away from the \
                             surface, else the trajectory slides along it"
                        } else {
                            "a field from which the surface is still to be crossed (b_j = -1) \
                             must cross it transversally, else the crossing time is not \
                             differentiable (grazing)"
                        };
                        return Err(Error::Invalid(format!(
                            "the normal of surface {j} is orthogonal to the field for sign vector \
                             {} (η_jᵀΓ(b) = {c:e}, below {TRANSVERSALITY_TOL:e} · ‖η_j‖ ‖Γ(b)‖): \
                             {role}",
                            mask_str(mask, n)
                        )));
                    }
                    if (c > 0.0) != (c_ref > 0.0) {
                        let what = if after {
                            "after crossing it the trajectory would cross it back (or slide)"
                        } else {
                            "the trajectory would cross it in opposite directions depending on \
                             the crossing order"
                        };
                        return Err(Error::Invalid(format!(
                            "surface {j}: the normal speed η_jᵀΓ(b) is {c:e} for sign vector {} \
                             but {c_ref:e} for {}: {what}; every field must cross surface {j} \
                             in the same direction",
                            mask_str(mask, n),
                            mask_str(0, n)
                        )));
                    }
                }
            }
        }
        Ok(Corner { normals, fields })
    }

    /// A corner with the coordinate hyperplanes `x_j = 0` as surfaces (normals = identity,
    /// n = d), as for the piecewise-constant fields `ẋ = F(sign x)` of seed 003 §3.1.
    pub fn with_identity_normals(fields: Vec<DVector<f64>>) -> Result<Corner, Error> {
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
    pub fn field_for_signs(&self, signs: &[i32]) -> Result<&DVector<f64>, Error> {
        if signs.len() != self.n() {
            return Err(Error::Invalid(format!(
                "sign vector {} has {} entries, expected n = {}",
                format_signs(signs),
                signs.len(),
                self.n()
            )));
        }
        let mask = signs_to_mask(signs)?;
        self.checked_field(mask)
    }

    /// Cheap consistency check of the public fields (sizes only), so that a corner modified
    /// after construction yields an error rather than a panic.
    fn check_shape(&self) -> Result<(), Error> {
        let n = self.n();
        if n == 0 || n > MAX_SURFACES || self.d() == 0 || self.fields.len() != (1usize << n) {
            return Err(Error::Invalid(format!(
                "corner data are inconsistent: {} normals of length {} and {} fields (expected \
                 1 ≤ n ≤ {MAX_SURFACES}, d ≥ 1 and 2^n fields); build corners with Corner::new",
                n,
                self.d(),
                self.fields.len()
            )));
        }
        Ok(())
    }

    fn checked_field(&self, mask: usize) -> Result<&DVector<f64>, Error> {
        match self.fields.get(mask) {
            Some(f) if f.len() == self.d() => Ok(f),
            Some(f) => Err(Error::Invalid(format!(
                "field for sign vector {} has {} components, expected d = {}",
                mask_str(mask, self.n()),
                f.len(),
                self.d()
            ))),
            None => Err(Error::Invalid(format!(
                "no field for sign mask {mask}: the corner has {} fields",
                self.fields.len()
            ))),
        }
    }

    fn check_direction(&self, direction: &DVector<f64>) -> Result<(), Error> {
        if direction.len() != self.d() {
            return Err(Error::Invalid(format!(
                "direction has {} components, expected d = {}",
                direction.len(),
                self.d()
            )));
        }
        if let Some((k, v)) = first_non_finite(direction) {
            return Err(Error::Invalid(format!(
                "direction component {k} is {v}: every number must be finite"
            )));
        }
        Ok(())
    }
}

/// Checks that the rows of `normals` are linearly independent, via the singular values of the
/// matrix of unit normals.
fn check_independent(normals: &DMatrix<f64>) -> Result<(), Error> {
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
        .ok_or_else(|| {
            Error::Invalid(
                "could not decide whether the normals are linearly independent (SVD did not \
                 converge)"
                    .into(),
            )
        })?;
    let sv = &svd.singular_values;
    let smax = sv.iter().fold(0.0f64, |a, &b| a.max(b));
    let smin = sv.iter().fold(f64::INFINITY, |a, &b| a.min(b));
    if smin.is_nan() || smin <= INDEPENDENCE_TOL * smax {
        return Err(Error::Invalid(format!(
            "the {n} normals are linearly dependent (smallest/largest singular value of the unit \
             normals = {:e}, below {INDEPENDENCE_TOL:e}): the surfaces must intersect \
             transversally, with linearly independent normals",
            smin / smax
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Saltation matrices
// ---------------------------------------------------------------------------------------------

/// Ordinary saltation matrix for crossing one surface with normal η from the field `f⁻` to the
/// field `f⁺` with the identity reset:
///
/// `M = I + (f⁺ − f⁻) ηᵀ / (ηᵀ f⁻)`
///
/// (theory.md §3 with R = id; seed 003 (2.5)). It maps `f⁻` to `f⁺` and is invariant under
/// scaling η. Errors if the sizes differ, a number is not finite, η = 0, or the crossing
/// grazes: `|ηᵀ f⁻| ≤ 1e-12 ‖η‖ ‖f⁻‖`.
pub fn saltation(
    normal: &DVector<f64>,
    f_minus: &DVector<f64>,
    f_plus: &DVector<f64>,
) -> Result<DMatrix<f64>, Error> {
    let d = normal.len();
    if d == 0 {
        return Err(Error::Invalid(
            "saltation: the normal is empty; it needs d ≥ 1 components".into(),
        ));
    }
    for (name, v) in [("f_minus", f_minus), ("f_plus", f_plus)] {
        if v.len() != d {
            return Err(Error::Invalid(format!(
                "saltation: {name} has {} components but the normal has {d}",
                v.len()
            )));
        }
    }
    for (name, v) in [("normal", normal), ("f_minus", f_minus), ("f_plus", f_plus)] {
        if let Some((k, x)) = first_non_finite(v) {
            return Err(Error::Invalid(format!(
                "saltation: {name} component {k} is {x}: every number must be finite"
            )));
        }
    }
    let norm_eta = normal.norm();
    if norm_eta.is_nan() || norm_eta <= 0.0 {
        return Err(Error::Invalid(
            "saltation: the normal is zero; it must be a nonzero vector".into(),
        ));
    }
    let den = normal.dot(f_minus);
    if !is_transversal(den, norm_eta, f_minus.norm()) {
        return Err(Error::Invalid(format!(
            "saltation: the normal is orthogonal to f_minus (ηᵀf⁻ = {den:e}, below \
             {TRANSVERSALITY_TOL:e} · ‖η‖ ‖f⁻‖): the crossing grazes the surface"
        )));
    }
    let mut m = DMatrix::identity(d, d);
    m.ger(1.0 / den, &(f_plus - f_minus), normal, 1.0);
    if m.iter().any(|x| !x.is_finite()) {
        return Err(Error::Invalid(
            "saltation: the matrix overflows; rescale the data".into(),
        ));
    }
    Ok(m)
}

/// Left-multiplies `p` by the saltation matrix of surface j crossed from the field of mask
/// `from` (bit j clear) to `from | 1<<j`: `p ← p + (f⁺ − f⁻)(η_jᵀ p)/(η_jᵀ f⁻)`, O(d²) as a
/// rank-one update (the same matrix as [`saltation`]).
fn apply_saltation_left(
    corner: &Corner,
    p: &mut DMatrix<f64>,
    j: usize,
    from: usize,
) -> Result<(), Error> {
    let fm = corner.checked_field(from)?;
    let fp = corner.checked_field(from | (1usize << j))?;
    let den = row_dot(&corner.normals, j, fm);
    if !(den.is_finite() && den != 0.0) {
        return Err(Error::Invalid(format!(
            "surface {j}: the normal speed of the field for sign vector {} is {den}; build \
             corners with Corner::new",
            mask_str(from, corner.n())
        )));
    }
    // r = pᵀ η_j, i.e. the row η_jᵀ p as a column.
    let eta = corner.normals.row(j).transpose();
    let r = p.tr_mul(&eta);
    p.ger(1.0 / den, &(fp - fm), &r, 1.0);
    Ok(())
}

/// Checks that `order` is a permutation of `0..n`.
fn check_order(order: &[usize], n: usize) -> Result<(), Error> {
    if order.len() != n {
        return Err(Error::Invalid(format!(
            "crossing order {order:?} has {} entries; it must list each of the n = {n} surfaces \
             0..{} exactly once",
            order.len(),
            n.saturating_sub(1)
        )));
    }
    let mut seen = 0usize;
    for &j in order {
        if j >= n {
            return Err(Error::Invalid(format!(
                "crossing order {order:?}: surface {j} does not exist (valid: 0..{})",
                n - 1
            )));
        }
        if seen & (1usize << j) != 0 {
            return Err(Error::Invalid(format!(
                "crossing order {order:?}: surface {j} appears twice; each surface must appear \
                 exactly once"
            )));
        }
        seen |= 1usize << j;
    }
    Ok(())
}

/// Product of saltation matrices in a given crossing order σ = (σ_1, …, σ_n) (seed 003 (6.4)):
///
/// `M_σ = M_σn ⋯ M_σ1`, with `M_σk = I + (Γ(b_k) − Γ(b_{k−1})) η_σkᵀ / (η_σkᵀ Γ(b_{k−1}))`,
///
/// where `b_0 = (−1, …, −1)` and `b_k` is `b_{k−1}` with entry σ_k flipped to +1; each factor
/// is the ordinary saltation matrix (seed 003 (2.5)) of that crossing, applied as a rank-one
/// update in O(d²). `order` holds 0-based surface indices and must be a permutation of 0..n.
pub fn saltation_for_order(corner: &Corner, order: &[usize]) -> Result<DMatrix<f64>, Error> {
    corner.check_shape()?;
    check_order(order, corner.n())?;
    let d = corner.d();
    let mut p = DMatrix::identity(d, d);
    let mut b = 0usize;
    for &j in order {
        apply_saltation_left(corner, &mut p, j, b)?;
        b |= 1usize << j;
    }
    Ok(p)
}

/// One piece of the B-derivative: a crossing order σ (0-based surface indices) and its
/// saltation product `M_σ` (seed 003 (6.4)).
pub type Piece = (Vec<usize>, DMatrix<f64>);

/// All n! crossing orders with their pieces `M_σ` (seed 003 (6.4), see
/// [`saltation_for_order`]), by enumeration, for n ≤ [`MAX_ENUMERATED_SURFACES`] = 8.
///
/// Errors if the pieces would take more than [`MAX_PIECE_ENTRIES`] numbers in all.
/// The orders come in lexicographic order. The enumeration is a depth-first search that
/// shares the products of common prefixes, so it costs about e·n! rank-one updates of O(d²).
pub fn all_pieces(corner: &Corner) -> Result<Vec<Piece>, Error> {
    corner.check_shape()?;
    let n = corner.n();
    if n > MAX_ENUMERATED_SURFACES {
        return Err(Error::Invalid(format!(
            "all_pieces: n = {n} surfaces would give {n}! pieces; enumeration is limited to \
             n ≤ {MAX_ENUMERATED_SURFACES} (use bderivative to evaluate B on a direction)"
        )));
    }
    let count: usize = (1..=n).product();
    let d = corner.d();
    let entries = count.saturating_mul(d.saturating_mul(d));
    if entries > MAX_PIECE_ENTRIES {
        return Err(Error::Invalid(format!(
            "all_pieces: {n}! pieces of size {d}×{d} would need {entries} numbers, more than \
             the limit of {MAX_PIECE_ENTRIES} (use bderivative to evaluate B on a direction)"
        )));
    }
    let mut out = Vec::with_capacity(count);
    let mut order = Vec::with_capacity(n);
    enumerate_pieces(corner, 0, &mut order, DMatrix::identity(d, d), &mut out)?;
    Ok(out)
}

fn enumerate_pieces(
    corner: &Corner,
    crossed: usize,
    order: &mut Vec<usize>,
    prefix: DMatrix<f64>,
    out: &mut Vec<Piece>,
) -> Result<(), Error> {
    let n = corner.n();
    if order.len() == n {
        out.push((order.clone(), prefix));
        return Ok(());
    }
    for j in 0..n {
        if crossed & (1usize << j) != 0 {
            continue;
        }
        let mut p = prefix.clone();
        apply_saltation_left(corner, &mut p, j, crossed)?;
        order.push(j);
        enumerate_pieces(corner, crossed | (1usize << j), order, p, out)?;
        order.pop();
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Algorithm 2.1
// ---------------------------------------------------------------------------------------------

/// The B-derivative at a corner with its active piece.
#[derive(Debug, Clone, PartialEq)]
pub struct BResult {
    /// `B(δρ⁻)`.
    pub value: DVector<f64>,
    /// 0-based surface indices in the crossing order σ of the perturbed trajectory.
    pub order: Vec<usize>,
    /// The active piece `M_σ = M_σn ⋯ M_σ1` (seed 003 (6.4)); `value = saltation · direction`.
    pub saltation: DMatrix<f64>,
}

/// Algorithm 2.1 of seed 003 (theory.md §7): the value `B(δρ⁻)` of the B-derivative at the
/// corner on the direction `δρ⁻`, with the crossing order σ of the perturbed trajectory and
/// the active piece `M_σ` ([`saltation_for_order`], seed 003 (6.4)):
///
/// ```text
/// δt ← 0;  δρ ← δρ⁻;  b ← (−1, …, −1)
/// while b ≠ (+1, …, +1):
///     τ_j ← −(η_jᵀ δρ) / (η_jᵀ Γ(b))   for every j with b_j = −1
///     j*  ← argmin τ_j                  (ties: the smallest index j)
///     δt ← δt + τ_{j*};  δρ ← δρ + τ_{j*} Γ(b);  b_{j*} ← +1
/// return δρ − δt Γ(+1, …, +1)
/// ```
///
/// The value costs O(n²d) time and O(d) extra space; the saltation product is extra
/// (n rank-one updates, O(n d²)). Ties are broken by the smallest surface index. On a tie the
/// pieces of the tied orders agree on the direction (B is continuous), so the value does not
/// depend on the tie-break; only the reported order and piece do.
pub fn bderivative(corner: &Corner, direction: &DVector<f64>) -> Result<BResult, Error> {
    let (value, order) = bderivative_value(corner, direction)?;
    let saltation = saltation_for_order(corner, &order)?;
    Ok(BResult {
        value,
        order,
        saltation,
    })
}

/// Algorithm 2.1 of seed 003 (theory.md §7), value and crossing order only, no matrix: the
/// O(n²d)-time, O(d)-space path (see [`bderivative`] for the formula and the tie-break).
pub fn bderivative_value(
    corner: &Corner,
    direction: &DVector<f64>,
) -> Result<(DVector<f64>, Vec<usize>), Error> {
    corner.check_shape()?;
    corner.check_direction(direction)?;
    let n = corner.n();
    let all_plus = (1usize << n) - 1;
    let normals = &corner.normals;
    let mut drho = direction.clone();
    let mut dt = 0.0f64;
    let mut b = 0usize;
    let mut order = Vec::with_capacity(n);
    while b != all_plus {
        let g = corner.checked_field(b)?;
        let mut best: Option<(usize, f64)> = None;
        for j in 0..n {
            if b & (1usize << j) != 0 {
                continue;
            }
            let tau = -row_dot(normals, j, &drho) / row_dot(normals, j, g);
            // Strict `<` while scanning j upwards: ties go to the smallest index.
            let better = match best {
                None => true,
                Some((_, t)) => tau < t,
            };
            if better {
                best = Some((j, tau));
            }
        }
        let Some((j, tau)) = best else {
            break; // unreachable: b ≠ all_plus leaves at least one surface
        };
        dt += tau;
        drho.axpy(tau, g, 1.0);
        b |= 1usize << j;
        order.push(j);
    }
    drho.axpy(-dt, corner.checked_field(all_plus)?, 1.0);
    if let Some((k, v)) = first_non_finite(&drho) {
        return Err(Error::Invalid(format!(
            "B-derivative component {k} is {v} (overflow or a grazing field); check the corner \
             data and rescale the direction"
        )));
    }
    Ok((drho, order))
}

// ---------------------------------------------------------------------------------------------
// Exact oracle: the flow of a piecewise-constant field ẋ = F(sign x)
// ---------------------------------------------------------------------------------------------

/// One crossing of a coordinate hyperplane by the exact piecewise-constant flow.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    /// Time of the crossing (from the start of the flow).
    pub time: f64,
    /// The coordinate j with `x_j = 0` there.
    pub coordinate: usize,
    /// Sign mask of the orthant entered (bit j set ⇔ `x_j > 0`).
    pub signs_after: usize,
}

/// Result of [`piecewise_constant_flow`].
#[derive(Debug, Clone, PartialEq)]
pub struct PiecewiseConstantFlow {
    /// `φ_T(x0)`.
    pub state: DVector<f64>,
    /// Sign mask of the final orthant (bit j set ⇔ `x_j > 0`; on a coordinate that ended on
    /// its hyperplane, the side it was heading to).
    pub signs: usize,
    /// The crossings in time order.
    pub crossings: Vec<Crossing>,
}

/// Exact flow over a time `duration` of the piecewise-constant field `ẋ = F(sign x)` on R^d
/// (seed 003 (3.1); reference-models §4), with guards `h_j(x) = x_j`.
///
/// `fields` holds `F` on the 2^d orthants, indexed by sign mask (bit j set ⇔ `x_j > 0`). The
/// flow is piecewise linear in time: in the orthant b it is `x + t F(b)`; the next crossing is
/// the smallest `t_j = −x_j / F_j(b)` over the coordinates heading to their hyperplane
/// (`x_j < 0` with `F_j(b) > 0`, or `x_j > 0` with `F_j(b) < 0`); the state is advanced
/// exactly to it, `x_j` set to 0 and `b_j` flipped. Ties between coordinates are resolved one
/// at a time (the smallest index first; the next one then crosses after a zero step).
///
/// Errors: sizes (`1 ≤ d ≤ 16`, 2^d fields of length d), non-finite data, a start on a
/// hyperplane (`x0_j = 0`), a negative duration, sliding (the field entered points back to
/// the hyperplane just crossed, `F_j(b')` of the wrong sign or zero), and more than
/// `max_events` crossings ([`Error::Zeno`]).
pub fn piecewise_constant_flow(
    fields: &[DVector<f64>],
    x0: &DVector<f64>,
    duration: f64,
    max_events: usize,
) -> Result<PiecewiseConstantFlow, Error> {
    let d = x0.len();
    if d == 0 || d > MAX_SURFACES {
        return Err(Error::Invalid(format!(
            "piecewise-constant flow: the state has d = {d} components; 1 ≤ d ≤ {MAX_SURFACES} \
             is supported"
        )));
    }
    if fields.len() != (1usize << d) {
        return Err(Error::Invalid(format!(
            "piecewise-constant flow in R^{d} needs 2^d = {} fields (one per orthant), got {}",
            1usize << d,
            fields.len()
        )));
    }
    for (mask, f) in fields.iter().enumerate() {
        if f.len() != d {
            return Err(Error::Invalid(format!(
                "field for orthant {} has {} components, expected d = {d}",
                mask_str(mask, d),
                f.len()
            )));
        }
        if let Some((k, v)) = first_non_finite(f) {
            return Err(Error::Invalid(format!(
                "field for orthant {}, component {k}, is {v}: every number must be finite",
                mask_str(mask, d)
            )));
        }
    }
    if let Some((k, v)) = first_non_finite(x0) {
        return Err(Error::Invalid(format!(
            "start point component {k} is {v}: every number must be finite"
        )));
    }
    if !(duration.is_finite() && duration >= 0.0) {
        return Err(Error::Invalid(format!(
            "flow duration is {duration}: it must be finite and ≥ 0"
        )));
    }
    let mut b = 0usize;
    for (k, &v) in x0.iter().enumerate() {
        if v == 0.0 {
            return Err(Error::Invalid(format!(
                "start point component {k} is 0: the start must not lie on a hyperplane x_j = 0"
            )));
        }
        if v > 0.0 {
            b |= 1usize << k;
        }
    }

    let mut x = x0.clone();
    let mut t = 0.0f64;
    let mut crossings = Vec::new();
    loop {
        let f = &fields[b];
        let mut next: Option<(usize, f64)> = None;
        for j in 0..d {
            let below = b & (1usize << j) == 0;
            let heading = if below { f[j] > 0.0 } else { f[j] < 0.0 };
            if !heading {
                continue;
            }
            // Round-off may leave x_j a hair on the far side: cross it after a zero step.
            let tj = (-x[j] / f[j]).max(0.0);
            if next.is_none_or(|(_, tb)| tj < tb) {
                next = Some((j, tj));
            }
        }
        match next {
            Some((j, tj)) if t + tj <= duration => {
                if crossings.len() >= max_events {
                    return Err(Error::Zeno {
                        t,
                        mode: format!("orthant {}", mask_str(b, d)),
                        guard: format!("x_{j} = 0"),
                        max_events,
                    });
                }
                let below = b & (1usize << j) == 0;
                x.axpy(tj, f, 1.0);
                x[j] = 0.0;
                t += tj;
                b ^= 1usize << j;
                let fj_new = fields[b][j];
                let moves_on = if below { fj_new > 0.0 } else { fj_new < 0.0 };
                if !moves_on {
                    return Err(Error::Invalid(format!(
                        "piecewise-constant flow: sliding at t = {t} on x_{j} = 0: the field of \
                         orthant {} has component {j} = {fj_new}, pointing back to (or along) \
                         the hyperplane just crossed",
                        mask_str(b, d)
                    )));
                }
                crossings.push(Crossing {
                    time: t,
                    coordinate: j,
                    signs_after: b,
                });
            }
            _ => {
                x.axpy(duration - t, f, 1.0);
                break;
            }
        }
    }
    Ok(PiecewiseConstantFlow {
        state: x,
        signs: b,
        crossings,
    })
}

// ---------------------------------------------------------------------------------------------
// JSON interface (`hybridopt bderiv CASE.json [--json]`)
// ---------------------------------------------------------------------------------------------

/// A corner and the directions on which to evaluate its B-derivative, as read from JSON:
///
/// ```json
/// { "normals": [[1, 0], [0, 1]],
///   "fields": [ {"signs": [-1, -1], "value": [1, 1]}, {"signs": [1, -1], "value": [0.5, 1]},
///               {"signs": [-1, 1], "value": [1, 0.75]}, {"signs": [1, 1], "value": [1, 0.5]} ],
///   "directions": [[-0.25, 0], [0, -0.25]] }
/// ```
///
/// `normals` are the rows `η_j` (n of them, each of length d); `fields` gives `Γ(b)` for each
/// of the 2^n sign vectors b (−1 = before surface j, 1 = after), in any order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    pub normals: Vec<Vec<f64>>,
    pub fields: Vec<FieldEntry>,
    pub directions: Vec<Vec<f64>>,
}

/// One limiting field `Γ(b)` of a [`CaseFile`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldEntry {
    /// b: each entry −1 (before surface j) or +1 (after it).
    pub signs: Vec<i32>,
    pub value: Vec<f64>,
}

/// Output of a case: one result per direction, in input order.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaseOutput {
    pub results: Vec<CaseResult>,
}

/// B-derivative on one direction.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaseResult {
    pub direction: Vec<f64>,
    /// `B(direction)`.
    pub value: Vec<f64>,
    /// 0-based surface indices in crossing order.
    pub order: Vec<usize>,
    /// The active piece, as row-major rows.
    pub saltation: Vec<Vec<f64>>,
}

fn check_finite_list(what: &str, v: &[f64]) -> Result<(), Error> {
    if let Some((k, x)) = v.iter().copied().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(Error::Invalid(format!(
            "{what}[{k}] is {x}: every number must be finite"
        )));
    }
    Ok(())
}

impl CaseFile {
    /// Validates the case and builds its [`Corner`] (see [`Corner::new`] for the checks on the
    /// geometry), naming the offending entry in every error.
    pub fn corner(&self) -> Result<Corner, Error> {
        let n = self.normals.len();
        if n == 0 {
            return Err(Error::Invalid(
                "normals is empty: give n ≥ 1 surface normals, each a list of d numbers".into(),
            ));
        }
        if n > MAX_SURFACES {
            return Err(Error::Invalid(format!(
                "normals has n = {n} rows; at most {MAX_SURFACES} surfaces are supported (2^n \
                 fields are required)"
            )));
        }
        let d = self.normals[0].len();
        if d == 0 {
            return Err(Error::Invalid(
                "normals[0] is empty: each normal needs d ≥ 1 components".into(),
            ));
        }
        for (j, row) in self.normals.iter().enumerate() {
            if row.len() != d {
                return Err(Error::Invalid(format!(
                    "normals[{j}] has {} components but normals[0] has {d}: every normal must \
                     have the same length d (ragged normals)",
                    row.len()
                )));
            }
            check_finite_list(&format!("normals[{j}]"), row)?;
        }
        let expected = 1usize << n;
        let mut slots: Vec<Option<DVector<f64>>> = vec![None; expected];
        let mut where_seen: HashMap<usize, usize> = HashMap::new();
        for (i, entry) in self.fields.iter().enumerate() {
            if entry.signs.len() != n {
                return Err(Error::Invalid(format!(
                    "fields[{i}].signs = {} has {} entries, expected n = {n} (one -1 or 1 per \
                     surface)",
                    format_signs(&entry.signs),
                    entry.signs.len()
                )));
            }
            if let Some((k, &s)) = entry
                .signs
                .iter()
                .enumerate()
                .find(|(_, &s)| s != -1 && s != 1)
            {
                return Err(Error::Invalid(format!(
                    "fields[{i}].signs[{k}] = {s} (in {}): each sign must be -1 (before the \
                     surface) or 1 (after it)",
                    format_signs(&entry.signs)
                )));
            }
            let mask = signs_to_mask(&entry.signs)?;
            if entry.value.len() != d {
                return Err(Error::Invalid(format!(
                    "fields[{i}].value (signs {}) has {} components, expected d = {d}",
                    format_signs(&entry.signs),
                    entry.value.len()
                )));
            }
            check_finite_list(&format!("fields[{i}].value"), &entry.value)?;
            if let Some(&first) = where_seen.get(&mask) {
                return Err(Error::Invalid(format!(
                    "fields[{first}] and fields[{i}] both have signs {}: each sign vector must \
                     appear exactly once",
                    format_signs(&entry.signs)
                )));
            }
            where_seen.insert(mask, i);
            slots[mask] = Some(DVector::from_column_slice(&entry.value));
        }
        let missing: Vec<usize> = (0..expected).filter(|&m| slots[m].is_none()).collect();
        if !missing.is_empty() {
            const SHOWN: usize = 8;
            let mut list: Vec<String> = missing
                .iter()
                .take(SHOWN)
                .map(|&m| mask_str(m, n))
                .collect();
            if missing.len() > SHOWN {
                list.push(format!("… and {} more", missing.len() - SHOWN));
            }
            return Err(Error::Invalid(format!(
                "fields: missing the field for sign vector{} {}: give exactly one field per \
                 sign vector (2^n = {expected} for n = {n} surfaces), got {}",
                if missing.len() == 1 { "" } else { "s" },
                list.join(", "),
                self.fields.len()
            )));
        }
        let fields: Vec<DVector<f64>> = slots.into_iter().flatten().collect();
        let normals = DMatrix::from_fn(n, d, |j, k| self.normals[j][k]);
        Corner::new(normals, fields)
    }

    /// Validates the directions against the state dimension d.
    pub fn direction_vectors(&self, d: usize) -> Result<Vec<DVector<f64>>, Error> {
        if self.directions.is_empty() {
            return Err(Error::Invalid(format!(
                "directions is empty: give at least one direction (a list of d = {d} numbers)"
            )));
        }
        let mut out = Vec::with_capacity(self.directions.len());
        for (i, v) in self.directions.iter().enumerate() {
            if v.len() != d {
                return Err(Error::Invalid(format!(
                    "directions[{i}] has {} components, expected d = {d}",
                    v.len()
                )));
            }
            check_finite_list(&format!("directions[{i}]"), v)?;
            out.push(DVector::from_column_slice(v));
        }
        Ok(out)
    }
}

/// Evaluates a validated case: Algorithm 2.1 and the active piece on every direction.
pub fn evaluate_case(case: &CaseFile) -> Result<CaseOutput, Error> {
    let corner = case.corner()?;
    let directions = case.direction_vectors(corner.d())?;
    let mut results = Vec::with_capacity(directions.len());
    for (i, dir) in directions.iter().enumerate() {
        let r = bderivative(&corner, dir).map_err(|e| match e {
            Error::Invalid(m) => Error::Invalid(format!("directions[{i}]: {m}")),
            other => other,
        })?;
        let saltation = (0..r.saltation.nrows())
            .map(|row| r.saltation.row(row).iter().copied().collect())
            .collect();
        results.push(CaseResult {
            direction: dir.iter().copied().collect(),
            value: r.value.iter().copied().collect(),
            order: r.order,
            saltation,
        });
    }
    Ok(CaseOutput { results })
}

/// Parses a case from JSON, validates it and evaluates it. Errors are [`Error::Invalid`] with a
/// message naming the offending entry (JSON syntax errors carry line and column).
pub fn run_case_str(json: &str) -> Result<CaseOutput, Error> {
    let case: CaseFile =
        serde_json::from_str(json).map_err(|e| Error::Invalid(format!("case JSON: {e}")))?;
    evaluate_case(&case)
}

/// Reads a case file and evaluates it. A read failure is [`Error::Io`]; a parse or validation
/// failure is [`Error::Problem`] naming the file.
pub fn run_case_file(path: &Path) -> Result<CaseOutput, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    run_case_str(&text).map_err(|e| match e {
        Error::Invalid(message) => Error::Problem {
            file: path.to_path_buf(),
            message,
        },
        other => Error::Problem {
            file: path.to_path_buf(),
            message: other.to_string(),
        },
    })
}

/// Shortest round-trip form of a number, with −0 shown as 0.
fn fmt_num(x: f64) -> String {
    format!("{}", x + 0.0)
}

fn fmt_vec(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|&x| fmt_num(x)).collect();
    format!("({})", parts.join(", "))
}

/// A human-readable report of a case's output (for `hybridopt bderiv` without `--json`):
/// per direction, the crossing order, the value `B(direction)` and the active piece.
pub fn format_case_output(out: &CaseOutput) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "B-derivative at a simultaneous crossing (Algorithm 2.1, Council–Revzen–Burden): {} \
         direction{}",
        out.results.len(),
        if out.results.len() == 1 { "" } else { "s" }
    );
    for (i, r) in out.results.iter().enumerate() {
        let order: Vec<String> = r.order.iter().map(|j| j.to_string()).collect();
        let _ = writeln!(s);
        let _ = writeln!(s, "direction {i}:  {}", fmt_vec(&r.direction));
        let _ = writeln!(
            s,
            "  crossing order (0-based surfaces):  {}",
            order.join(" → ")
        );
        let _ = writeln!(s, "  B(direction):  {}", fmt_vec(&r.value));
        let _ = writeln!(s, "  active piece M_σ (product of saltation matrices):");
        let cells: Vec<Vec<String>> = r
            .saltation
            .iter()
            .map(|row| row.iter().map(|&x| fmt_num(x)).collect())
            .collect();
        let width = cells
            .iter()
            .flat_map(|row| row.iter().map(|c| c.chars().count()))
            .max()
            .unwrap_or(1);
        for row in &cells {
            let padded: Vec<String> = row.iter().map(|c| format!("{c:>width$}")).collect();
            let _ = writeln!(s, "    [ {} ]", padded.join("  "));
        }
    }
    s
}
