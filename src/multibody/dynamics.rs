//! Equations of motion of a constrained mechanism: the index-1 formulation with Baumgarte
//! stabilization, the penalty formulation (theory.md §5; seed 000 (29)–(32)) and the
//! GGL-stabilized index-2 formulation in reduced form (theory.md §6, Hessenberg index 2).
//!
//! Each turns `M a = F − Φ_qᵀ μ`, `Φ(q) = 0` into an ODE `q̇ = q̇(q, v, p)`,
//! `v̇ = a(q, v, p)` (`q̇ = v` except for index 2) to which the sensitivity machinery of
//! theory.md §2–4 applies unchanged. All solves go through `crate::linalg`, so
//! dual-number evaluations give exact Jacobians of `q̇` and `a`.

use super::constraints::ConstraintEval;
use crate::error::ModelError;
use crate::linalg::solve;
use crate::model::Scalar;

/// Which formulation turns the constrained equations into an ODE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Formulation {
    /// Index-1 DAE with Baumgarte stabilization, seed 000 (32) (`"index1"`).
    #[default]
    Index1,
    /// Penalty formulation, seed 000 (29)–(31) (`"penalty"`).
    Penalty,
    /// Gear–Gupta–Leimkuhler stabilized index-2 form in reduced form (`"index2"`): see
    /// `ggl_velocity` and `index2_acceleration`. Uses neither ξ, ω nor α.
    Index2,
}

/// Formulation and its coefficients.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dynamics {
    pub formulation: Formulation,
    /// Baumgarte damping ratio ξ.
    pub xi: f64,
    /// Baumgarte natural frequency ω (rad/s).
    pub omega: f64,
    /// Penalty factor α (the same for every constraint row); only used by the penalty
    /// formulation.
    pub alpha: f64,
}

impl Default for Dynamics {
    /// Index-1 with ξ = 1, ω = 10 (the Baumgarte values of reference-models.md §2) and
    /// α = 1e7 (large enough that the penalty accelerations of the five-bar agree with the
    /// index-1 ones to ~1e-7 m/s² (tests/multibody.rs), small enough to keep
    /// `M + αΦ_qᵀΦ_q` well conditioned).
    fn default() -> Self {
        Dynamics {
            formulation: Formulation::Index1,
            xi: 1.0,
            omega: 10.0,
            alpha: 1e7,
        }
    }
}

impl Dynamics {
    /// The formulation with its coefficients, checked by [`Self::validate`].
    pub fn new(
        formulation: Formulation, xi: f64, omega: f64, alpha: f64,
    ) -> Result<Self, ModelError> {
        let dynamics = Dynamics {
            formulation,
            xi,
            omega,
            alpha,
        };
        dynamics.validate()?;
        Ok(dynamics)
    }

    /// Checks that ξ, ω ≥ 0 and (for the penalty formulation) α > 0, all finite.
    pub fn validate(&self) -> Result<(), ModelError> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        if !ok(self.xi) || !ok(self.omega) {
            return Err(ModelError::ParameterOutOfRange {
                system: String::new(),
                values: vec![("xi".into(), self.xi), ("omega".into(), self.omega)],
                valid: "Baumgarte coefficients must be finite and non-negative".into(),
            });
        }
        if self.formulation == Formulation::Penalty && !(ok(self.alpha) && self.alpha > 0.0) {
            return Err(ModelError::ParameterOutOfRange {
                system: String::new(),
                values: vec![("alpha".into(), self.alpha)],
                valid: "penalty factor alpha must be finite and positive".into(),
            });
        }
        Ok(())
    }

    /// The coordinate velocities and accelerations of the chosen formulation, with the
    /// multipliers and the residuals, at velocities `v`. `hessian(w)` is the mixed velocity
    /// term `(Φ_q v)_q w` of every row (only index 2 calls it, with `w = q̇`).
    pub fn accelerations<D: Scalar>(
        &self, mass: &[D], force: &[D], cons: &ConstraintEval<D>, v: &[D],
        hessian: impl FnOnce(&[D]) -> Vec<D>,
    ) -> Result<Accel<D>, ModelError> {
        let (qdot, a, mu) = match self.formulation {
            Formulation::Index1 => {
                let (a, mu) = index1_acceleration(mass, force, cons, self.xi, self.omega)?;
                (v.to_vec(), a, mu)
            }
            Formulation::Penalty => {
                let (a, mu) =
                    penalty_acceleration(mass, force, cons, self.alpha, self.xi, self.omega)?;
                (v.to_vec(), a, mu)
            }
            Formulation::Index2 => {
                let (_eta, qdot) = ggl_velocity(cons, v)?;
                let (a, mu) = index2_acceleration(mass, force, cons, &hessian(&qdot))?;
                (qdot, a, mu)
            }
        };
        Ok(Accel {
            qdot,
            a,
            mu,
            phi: cons.phi.clone(),
            phidot: cons.phidot.clone(),
        })
    }
}

/// Accelerations with the constraint multipliers and residuals at the evaluation point.
#[derive(Debug, Clone)]
pub struct Accel<D> {
    /// Coordinate velocities `q̇` (n): `v`, except for index 2 (`v − Φ_qᵀη`).
    pub qdot: Vec<D>,
    /// Accelerations `a = v̇` (n).
    pub a: Vec<D>,
    /// Multipliers `μ` (m): the constraint force on the coordinates is `−Φ_qᵀ μ`.
    pub mu: Vec<D>,
    /// Position residuals `Φ` (m).
    pub phi: Vec<D>,
    /// Velocity residuals `Φ̇` (m).
    pub phidot: Vec<D>,
}

/// The stabilized right-hand side of the acceleration constraint (theory.md §5, seed 000
/// (32)) for scleronomic constraints (`Φ_t = 0`):
/// `C = −(Φ_q v)_q v − 2ξω Φ̇ − ω² Φ`.
pub fn baumgarte_rhs<D: Scalar>(cons: &ConstraintEval<D>, xi: f64, omega: f64) -> Vec<D> {
    let k1 = D::from(2.0 * xi * omega);
    let k0 = D::from(omega * omega);
    (0..cons.m)
        .map(|i| -(cons.quad[i] + k1 * cons.phidot[i] + k0 * cons.phi[i]))
        .collect()
}

/// Index-1 formulation with Baumgarte stabilization (theory.md §5; seed 000 (32)):
/// solves the saddle-point system
///
/// ```text
/// [ M    Φ_qᵀ ] [ a ]   [ F ]
/// [ Φ_q  0    ] [ μ ] = [ C ],   C = −(Φ_q v)_q v − 2ξωΦ̇ − ω²Φ
/// ```
///
/// and returns `(a, μ)`. `mass` is the row-major n×n mass matrix, `force` the generalized
/// force F (n). Fails with [`ModelError::Singular`] if the saddle-point matrix is singular
/// (Φ_q rank deficient: a singular configuration).
pub fn index1_acceleration<D: Scalar>(
    mass: &[D], force: &[D], cons: &ConstraintEval<D>, xi: f64, omega: f64,
) -> Result<(Vec<D>, Vec<D>), ModelError> {
    saddle_solve(mass, force, cons, baumgarte_rhs(cons, xi, omega))
}

/// Penalty formulation (theory.md §5; seed 000 (29)–(31)): with `P = Φ̇_q v + 2ξωΦ̇ + ω²Φ`
/// (here `Φ̇_q v = (Φ_q v)_q v` and `Φ̇_t = 0`),
///
/// ```text
/// M̄ = M + Φ_qᵀ α Φ_q,   F̄ = F − Φ_qᵀ α P,   a = M̄⁻¹ F̄,
/// μ* = α (Φ̈ + 2ξωΦ̇ + ω²Φ),   Φ̈ = Φ_q a + (Φ_q v)_q v,
/// ```
///
/// returning `(a, μ*)`. The constraints are satisfied up to O(1/α); the resulting ODE is
/// stiff (constraint frequencies ~ √(α)·|Φ_q|/√M), which suits an implicit integrator.
pub fn penalty_acceleration<D: Scalar>(
    mass: &[D], force: &[D], cons: &ConstraintEval<D>, alpha: f64, xi: f64, omega: f64,
) -> Result<(Vec<D>, Vec<D>), ModelError> {
    let (mbar, fbar) = penalty_system(mass, force, cons, alpha, xi, omega);
    let a = solve(cons.n, &mbar, &fbar, PENALTY_MATRIX)?;
    let mu = penalty_multipliers(cons, &a, alpha, xi, omega);
    Ok((a, mu))
}

/// The GGL velocity correction of the index-2 formulation (Gear, Gupta & Leimkuhler 1985,
/// "Automatic integration of Euler–Lagrange equations with constraints", J. Comput. Appl.
/// Math. 12–13; theory.md §6, Hessenberg index 2 in reduced form): the system
///
/// ```text
/// q̇ = v − Φ_qᵀη,   M v̇ = F − Φ_qᵀλ,   0 = Φ(q),   0 = Φ_q v
/// ```
///
/// with η eliminated by the hidden constraint of `Φ(q) = 0` along the flow,
/// `Φ_q q̇ = 0`:
///
/// ```text
/// (Φ_q Φ_qᵀ) η = Φ_q v,   q̇ = v − Φ_qᵀη
/// ```
///
/// Returns `(η, q̇)`. η vanishes on the velocity manifold `Φ_q v = 0`; off it, q̇ is the
/// projection of v onto the tangent space, so `Φ̇ = Φ_q q̇ = 0` holds identically and `Φ` is
/// invariant under the exact flow (drift comes only from the integration error). Fails with
/// [`ModelError::Singular`] if `Φ_q` is rank deficient.
pub fn ggl_velocity<D: Scalar>(
    cons: &ConstraintEval<D>, v: &[D],
) -> Result<(Vec<D>, Vec<D>), ModelError> {
    let (n, m) = (cons.n, cons.m);
    let jac = &cons.jac;
    let mut g = vec![D::zero(); m * m];
    for r in 0..m {
        for c in 0..=r {
            let mut s = D::zero();
            for i in 0..n {
                s += jac[r * n + i] * jac[c * n + i];
            }
            g[r * m + c] = s;
            g[c * m + r] = s;
        }
    }
    let eta = solve(m, &g, &cons.phidot, GRAM_MATRIX)?;
    let mut qdot = v.to_vec();
    for r in 0..m {
        for i in 0..n {
            qdot[i] -= jac[r * n + i] * eta[r];
        }
    }
    Ok((eta, qdot))
}

/// The accelerations and multipliers of the index-2 formulation ([`ggl_velocity`]): λ from
/// the hidden constraint of the velocity constraint `Φ_q(q) v = 0` along the flow,
///
/// ```text
/// d/dt (Φ_q v) = Φ_q v̇ + (Φ_q v)_q q̇ = 0
/// ```
///
/// (time derivative of `Φ_q` along `q̇`, not along v), i.e. the saddle-point system of
/// index 1 (theory.md §5, seed 000 (32)) without Baumgarte terms and with `q̇` for `v` in
/// the quadratic term:
///
/// ```text
/// [ M    Φ_qᵀ ] [ a ]   [ F            ]
/// [ Φ_q  0    ] [ λ ] = [ −(Φ_q v)_q q̇ ]
/// ```
///
/// `hess_qdot` is `(Φ_q v)_q q̇` (m). With this λ, `Φ_q v` is invariant under the exact
/// flow as well. On consistent data (`Φ = 0`, `Φ_q v = 0`) η = 0, q̇ = v and `(a, λ)` equal
/// index 1's (whose Baumgarte terms vanish there).
pub fn index2_acceleration<D: Scalar>(
    mass: &[D], force: &[D], cons: &ConstraintEval<D>, hess_qdot: &[D],
) -> Result<(Vec<D>, Vec<D>), ModelError> {
    saddle_solve(mass, force, cons, hess_qdot.iter().map(|&h| -h))
}

/// Solves the saddle-point system of index 1 and index 2 (seed 000 (32)),
///
/// ```text
/// [ M    Φ_qᵀ ] [ a ]   [ F ]
/// [ Φ_q  0    ] [ μ ] = [ C ]
/// ```
///
/// for `(a, μ)`, with `force` = F (n) and `c` = C (m), the constraint rows' right-hand
/// side. Fails with [`ModelError::Singular`] if the matrix is singular.
fn saddle_solve<D: Scalar>(
    mass: &[D], force: &[D], cons: &ConstraintEval<D>, c: impl IntoIterator<Item = D>,
) -> Result<(Vec<D>, Vec<D>), ModelError> {
    let (n, m) = (cons.n, cons.m);
    let mut rhs = force.to_vec();
    rhs.extend(c);
    let sol = solve(
        n + m,
        &saddle_matrix(mass, &cons.jac, n, m),
        &rhs,
        SADDLE_MATRIX,
    )?;
    Ok((sol[..n].to_vec(), sol[n..].to_vec()))
}

/// What a singular Gram matrix of the constraint Jacobian is called in errors.
pub(crate) const GRAM_MATRIX: &str = "index-2 Gram matrix Φ_q Φ_qᵀ";
/// What a singular penalty matrix is called in errors.
pub(crate) const PENALTY_MATRIX: &str = "penalty mass matrix M + Φ_qᵀαΦ_q";
/// What a singular saddle-point matrix is called in errors.
pub(crate) const SADDLE_MATRIX: &str = "index-1 saddle-point matrix [[M, Φ_qᵀ], [Φ_q, 0]]";

/// The penalty formulation's linear system `M̄ a = F̄` (seed 000 (29)–(30)):
/// `M̄ = M + Φ_qᵀ α Φ_q`, `F̄ = F − Φ_qᵀ α P`, `P = (Φ_q v)_q v + 2ξωΦ̇ + ω²Φ`
/// (row-major n×n matrix and n-vector).
pub fn penalty_system<D: Scalar>(
    mass: &[D], force: &[D], cons: &ConstraintEval<D>, alpha: f64, xi: f64, omega: f64,
) -> (Vec<D>, Vec<D>) {
    let (n, m) = (cons.n, cons.m);
    let al = D::from(alpha);
    let k1 = D::from(2.0 * xi * omega);
    let k0 = D::from(omega * omega);
    let jac = &cons.jac;
    let mut mbar = mass.to_vec();
    for r in 0..m {
        let row = &jac[r * n..(r + 1) * n];
        for i in 0..n {
            if row[i] == D::zero() {
                continue;
            }
            let ai = al * row[i];
            for j in 0..n {
                mbar[i * n + j] += ai * row[j];
            }
        }
    }
    let mut fbar = force.to_vec();
    for r in 0..m {
        let pr = al * (cons.quad[r] + k1 * cons.phidot[r] + k0 * cons.phi[r]);
        for i in 0..n {
            fbar[i] -= jac[r * n + i] * pr;
        }
    }
    (mbar, fbar)
}

/// The penalty multipliers `μ* = α (Φ̈ + 2ξωΦ̇ + ω²Φ)` with `Φ̈ = Φ_q a + (Φ_q v)_q v`
/// (seed 000 (31)).
pub fn penalty_multipliers<D: Scalar>(
    cons: &ConstraintEval<D>, a: &[D], alpha: f64, xi: f64, omega: f64,
) -> Vec<D> {
    let (n, m) = (cons.n, cons.m);
    let al = D::from(alpha);
    let k1 = D::from(2.0 * xi * omega);
    let k0 = D::from(omega * omega);
    (0..m)
        .map(|r| {
            let mut phidd = cons.quad[r];
            for i in 0..n {
                phidd += cons.jac[r * n + i] * a[i];
            }
            al * (phidd + k1 * cons.phidot[r] + k0 * cons.phi[r])
        })
        .collect()
}

/// The row-major (n+m)×(n+m) saddle-point matrix `[[M, Φ_qᵀ], [Φ_q, 0]]` (seed 000 (32),
/// (40a)).
pub fn saddle_matrix<D: Scalar>(mass: &[D], jac: &[D], n: usize, m: usize) -> Vec<D> {
    let nn = n + m;
    let mut k = vec![D::zero(); nn * nn];
    for i in 0..n {
        k[i * nn..i * nn + n].copy_from_slice(&mass[i * n..(i + 1) * n]);
    }
    for r in 0..m {
        for i in 0..n {
            let g = jac[r * n + i];
            k[(n + r) * nn + i] = g;
            k[i * nn + n + r] = g;
        }
    }
    k
}
