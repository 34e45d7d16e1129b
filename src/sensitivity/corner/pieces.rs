//! Saltation matrices and the pieces of `B`: the product of ordinary saltation matrices in
//! one crossing order (seed 003 (6.4)), and all n! of them.

use super::error::{CornerError, LengthOf};
use super::geometry::{first_non_finite, is_transversal, row_dot, Corner};
use super::limits::{MAX_ENUMERATED_SURFACES, MAX_PIECE_ENTRIES};
use super::signs::mask_to_signs;
use nalgebra::{DMatrix, DVector};

/// Ordinary saltation matrix for crossing one surface with normal η from the field `f⁻` to the
/// field `f⁺` with the identity reset:
///
/// `M = I + (f⁺ − f⁻) ηᵀ / (ηᵀ f⁻)`
///
/// (theory.md §3 with R = id; seed 003 (2.5)). It maps `f⁻` to `f⁺` and is invariant under
/// scaling η. Errors if the sizes differ, a number is not finite, η = 0, or the crossing
/// grazes: `|ηᵀ f⁻| ≤ 1e-12 ‖η‖ ‖f⁻‖`.
pub fn saltation(
    normal: &DVector<f64>, f_minus: &DVector<f64>, f_plus: &DVector<f64>,
) -> Result<DMatrix<f64>, CornerError> {
    let d = normal.len();
    for (name, v) in [("normal", normal), ("f_minus", f_minus), ("f_plus", f_plus)] {
        if v.len() != d || d == 0 {
            return Err(CornerError::Length {
                item: name.into(),
                found: v.len(),
                expected: d,
                of: LengthOf::Normal,
            });
        }
    }
    for (name, v) in [("normal", normal), ("f_minus", f_minus), ("f_plus", f_plus)] {
        if let Some((k, value)) = first_non_finite(v) {
            return Err(CornerError::NonFinite {
                item: format!("saltation: {name} component {k}"),
                value,
            });
        }
    }
    let norm_eta = normal.norm();
    if norm_eta.is_nan() || norm_eta <= 0.0 {
        return Err(CornerError::ZeroNormal {
            surface: None,
            norm: norm_eta,
        });
    }
    let den = normal.dot(f_minus);
    if !is_transversal(den, norm_eta, f_minus.norm()) {
        return Err(CornerError::SaltationGrazing { speed: den });
    }
    let mut m = DMatrix::identity(d, d);
    m.ger(1.0 / den, &(f_plus - f_minus), normal, 1.0);
    if m.iter().any(|x| !x.is_finite()) {
        return Err(CornerError::SaltationOverflow);
    }
    Ok(m)
}

/// Left-multiplies `p` by the saltation matrix of surface j crossed from the field of mask
/// `from` (bit j clear) to `from | 1<<j`: `p ← p + (f⁺ − f⁻)(η_jᵀ p)/(η_jᵀ f⁻)`, O(d²) as a
/// rank-one update (the same matrix as [`saltation`]).
fn apply_saltation_left(
    corner: &Corner, p: &mut DMatrix<f64>, j: usize, from: usize,
) -> Result<(), CornerError> {
    let fm = corner.checked_field(from)?;
    let fp = corner.checked_field(from | (1usize << j))?;
    let den = row_dot(&corner.normals, j, fm);
    if !(den.is_finite() && den != 0.0) {
        return Err(CornerError::ZeroSpeed {
            surface: j,
            signs: mask_to_signs(from, corner.n()),
            speed: den,
        });
    }
    // r = pᵀ η_j, i.e. the row η_jᵀ p as a column.
    let eta = corner.normals.row(j).transpose();
    let r = p.tr_mul(&eta);
    p.ger(1.0 / den, &(fp - fm), &r, 1.0);
    Ok(())
}

/// Checks that `order` is a permutation of `0..n`.
fn check_order(order: &[usize], n: usize) -> Result<(), CornerError> {
    let bad = |surface| CornerError::Order {
        order: order.to_vec(),
        n,
        surface,
    };
    if order.len() != n {
        return Err(bad(None));
    }
    let mut seen = 0usize;
    for &j in order {
        if j >= n || seen & (1usize << j) != 0 {
            return Err(bad(Some(j)));
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
pub fn saltation_for_order(corner: &Corner, order: &[usize]) -> Result<DMatrix<f64>, CornerError> {
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
pub fn all_pieces(corner: &Corner) -> Result<Vec<Piece>, CornerError> {
    corner.check_shape()?;
    let n = corner.n();
    let d = corner.d();
    if n > MAX_ENUMERATED_SURFACES {
        return Err(CornerError::TooManyPieces { n, d });
    }
    let count: usize = (1..=n).product();
    let entries = count.saturating_mul(d.saturating_mul(d));
    if entries > MAX_PIECE_ENTRIES {
        return Err(CornerError::TooManyPieces { n, d });
    }
    let mut out = Vec::with_capacity(count);
    let mut order = Vec::with_capacity(n);
    enumerate_pieces(corner, 0, &mut order, DMatrix::identity(d, d), &mut out)?;
    Ok(out)
}

fn enumerate_pieces(
    corner: &Corner, crossed: usize, order: &mut Vec<usize>, prefix: DMatrix<f64>,
    out: &mut Vec<Piece>,
) -> Result<(), CornerError> {
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
