//! Impact laws as resets `v⁺ = h(q, v⁻, p)` (theory.md §5, "Impacts are resets"; seed 000
//! (38)–(40)). Positions do not jump. Every law is a sequence of linear solves through
//! `crate::linalg`, so the reset's Jacobians `R_x`, `R_p` are exact in dual numbers.
//!
//! Matrices are row-major: the mass matrix n×n, constraint Jacobians m×n, a contact
//! Jacobian k×n.

use super::dynamics::saddle_matrix;
use crate::error::ModelError;
use crate::linalg::{solve, solve_in_place};
use crate::model::Scalar;

/// Dependent velocities from the velocity constraints (theory.md §5 item 1; seed 000 (39)):
/// given the independent velocities `v_dof` (at the coordinates `dof`), solves
///
/// ```text
/// Φ_q,dep v_dep = −(Φ_q,dof v_dof + Φ_t)
/// ```
///
/// and returns the full velocity vector (n = jac.len()/m). The dependent coordinates are all
/// those not in `dof`; their number must equal the number of constraint rows m.
pub fn dependent_velocities<D: Scalar>(
    jac: &[D], m: usize, dof: &[usize], v_dof: &[D], phi_t: Option<&[D]>,
) -> Result<Vec<D>, ModelError> {
    let n = jac.len().checked_div(m).unwrap_or(dof.len());
    let dep: Vec<usize> = (0..n).filter(|i| !dof.contains(i)).collect();
    if dep.len() != m || v_dof.len() != dof.len() || dof.iter().any(|&i| i >= n) {
        return Err(ModelError::SizeMismatch {
            what: "dependent velocities".into(),
            expected: format!("exactly {m} dependent coordinates for {m} constraint rows"),
            found: format!(
                "{n} coordinates with {} independent ones ({} values)",
                dof.len(),
                v_dof.len()
            ),
        });
    }
    let mut a = vec![D::zero(); m * m];
    let mut b = vec![D::zero(); m];
    for r in 0..m {
        let row = &jac[r * n..(r + 1) * n];
        for (c, &j) in dep.iter().enumerate() {
            a[r * m + c] = row[j];
        }
        let mut s = phi_t.map_or(D::zero(), |pt| pt[r]);
        for (k, &j) in dof.iter().enumerate() {
            s += row[j] * v_dof[k];
        }
        b[r] = -s;
    }
    let vdep = solve(
        m,
        &a,
        &b,
        "dependent-coordinate constraint Jacobian Φ_q,dep",
    )?;
    let mut v = vec![D::zero(); n];
    for (k, &j) in dof.iter().enumerate() {
        v[j] = v_dof[k];
    }
    for (c, &j) in dep.iter().enumerate() {
        v[j] = vdep[c];
    }
    Ok(v)
}

/// Kinematic reversal on chosen degrees of freedom (theory.md §5 item 1; seed 000
/// (38)–(39)): `v_dof⁺ = diag(factors) v_dof⁻` (a factor −1 reverses a velocity, +1 keeps
/// it, −e is a restitution on that coordinate), then the dependent velocities from
/// `Φ_q v⁺ = 0` by [`dependent_velocities`] (scleronomic constraints, `Φ_t = 0`).
pub fn kinematic_reversal<D: Scalar>(
    jac: &[D], m: usize, v_minus: &[D], dof: &[usize], factors: &[D],
) -> Result<Vec<D>, ModelError> {
    if factors.len() != dof.len() {
        return Err(ModelError::SizeMismatch {
            what: "kinematic reversal".into(),
            expected: format!("{} factors (one per degree of freedom)", dof.len()),
            found: factors.len().to_string(),
        });
    }
    let v_dof: Vec<D> = dof
        .iter()
        .zip(factors)
        .map(|(&j, &f)| f * v_minus[j])
        .collect();
    dependent_velocities(jac, m, dof, &v_dof, None)
}

/// Inelastic impact with a change of constraint set (theory.md §5 item 2; seed 000 (40a)):
///
/// ```text
/// [ M     Φ⁺_qᵀ ] [ v⁺ ]   [ M v⁻  ]
/// [ Φ⁺_q  0     ] [ δμ ] = [ −Φ⁺_t ]
/// ```
///
/// `jac_plus` is the m×n Jacobian of the constraint set after the impact; `phi_t` its time
/// derivative (`None` = scleronomic). Returns `(v⁺, δμ)`; the impulse on the coordinates is
/// `−Φ⁺_qᵀ δμ`. For `Φ⁺_t = 0`, `v⁺` is the M-orthogonal projection of `v⁻` onto
/// `ker Φ⁺_q`, so the kinetic energy cannot increase.
pub fn inelastic_impact<D: Scalar>(
    mass: &[D], jac_plus: &[D], m: usize, v_minus: &[D], phi_t: Option<&[D]>,
) -> Result<(Vec<D>, Vec<D>), ModelError> {
    let n = v_minus.len();
    let mut rhs = vec![D::zero(); n + m];
    for i in 0..n {
        let mut s = D::zero();
        for j in 0..n {
            s += mass[i * n + j] * v_minus[j];
        }
        rhs[i] = s;
    }
    if let Some(pt) = phi_t {
        for r in 0..m {
            rhs[n + r] = -pt[r];
        }
    }
    let sol = solve(
        n + m,
        &saddle_matrix(mass, jac_plus, n, m),
        &rhs,
        "impact saddle-point matrix [[M, Φ⁺_qᵀ], [Φ⁺_q, 0]]",
    )?;
    Ok((sol[..n].to_vec(), sol[n..].to_vec()))
}

/// Newton restitution on k contacts with normal Jacobian J (k×n) and restitution
/// coefficient e (theory.md §5 item 3; not in the seeds):
///
/// ```text
/// v⁺ = v⁻ − (1 + e) W Jᵀ (J W Jᵀ)⁻¹ J v⁻
/// ```
///
/// with `W = M⁻¹` without constraints, and with constraints `Φ_q` (m×n, `constraint_jac =
/// Some((Φ_q, m))`) the constrained inverse inertia `W`, the upper-left n×n block of
/// `[[M, Φ_qᵀ], [Φ_q, 0]]⁻¹` (so `W Jᵀ` solves that saddle system with right-hand side
/// `[Jᵀ; 0]`). Then `J v⁺ = −e J v⁻` and, if `Φ_q v⁻ = 0`, also `Φ_q v⁺ = 0`.
pub fn newton_restitution<D: Scalar>(
    mass: &[D], contact_jac: &[D], k: usize, e: D, v_minus: &[D],
    constraint_jac: Option<(&[D], usize)>,
) -> Result<Vec<D>, ModelError> {
    let n = v_minus.len();
    // W Jᵀ: n×k (row-major), from a multi-right-hand-side solve.
    let wjt = match constraint_jac {
        Some((phi_q, m)) => {
            let nn = n + m;
            let mut a = saddle_matrix(mass, phi_q, n, m);
            let mut b = vec![D::zero(); nn * k];
            for i in 0..n {
                for c in 0..k {
                    b[i * k + c] = contact_jac[c * n + i];
                }
            }
            solve_in_place(
                nn,
                &mut a,
                &mut b,
                k,
                "constrained inverse inertia [[M, Φ_qᵀ], [Φ_q, 0]]",
            )?;
            b.truncate(n * k);
            b
        }
        None => {
            let mut a = mass.to_vec();
            let mut b = vec![D::zero(); n * k];
            for i in 0..n {
                for c in 0..k {
                    b[i * k + c] = contact_jac[c * n + i];
                }
            }
            solve_in_place(n, &mut a, &mut b, k, "mass matrix M")?;
            b
        }
    };
    // G = J W Jᵀ (k×k), rhs = (1 + e) J v⁻.
    let mut g = vec![D::zero(); k * k];
    let mut rhs = vec![D::zero(); k];
    let one_e = D::one() + e;
    for r in 0..k {
        let jr = &contact_jac[r * n..(r + 1) * n];
        for c in 0..k {
            let mut s = D::zero();
            for i in 0..n {
                s += jr[i] * wjt[i * k + c];
            }
            g[r * k + c] = s;
        }
        let mut s = D::zero();
        for i in 0..n {
            s += jr[i] * v_minus[i];
        }
        rhs[r] = one_e * s;
    }
    let lam = solve(k, &g, &rhs, "contact inverse inertia J W Jᵀ")?;
    Ok((0..n)
        .map(|i| {
            let mut s = v_minus[i];
            for c in 0..k {
                s -= wjt[i * k + c] * lam[c];
            }
            s
        })
        .collect())
}
