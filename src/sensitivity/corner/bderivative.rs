//! Algorithm 2.1 of seed 003: `B(δρ⁻)` and the crossing order it selects.

use super::error::CornerError;
use super::geometry::{first_non_finite, row_dot, Corner};
use super::pieces::saltation_for_order;
use nalgebra::{DMatrix, DVector};

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
pub fn bderivative(corner: &Corner, direction: &DVector<f64>) -> Result<BResult, CornerError> {
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
    corner: &Corner, direction: &DVector<f64>,
) -> Result<(DVector<f64>, Vec<usize>), CornerError> {
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
    if let Some((component, value)) = first_non_finite(&drho) {
        return Err(CornerError::ValueOverflow { component, value });
    }
    Ok((drho, order))
}
