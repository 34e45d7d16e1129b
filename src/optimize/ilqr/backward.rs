//! The backward pass: the DDP recursion of the value function's expansion over the stages
//! (Tassa, Erez & Todorov 2012, eqs. 5–11; Gauss–Newton: the transitions' second
//! derivatives dropped, as iLQR does):
//!
//! ```text
//! Q_z  = ℓ_z + Φ_zᵀ V'_z           Q_u  = ℓ_u + Φ_uᵀ V'_z
//! Q_zz = ℓ_zz + Φ_zᵀ V'_zz Φ_z      Q_uu = ℓ_uu + Φ_uᵀ V'_zz Φ_u + μ I      Q_uz = ℓ_uz + Φ_uᵀ V'_zz Φ_z
//! δu = k + K δz,  k = argmin over the box of ½ kᵀQ_uu k + Q_uᵀ k,  K_f = −Q_uu,ff⁻¹ Q_uz,f  (clamped rows 0)
//! V_z  = Q_z + Kᵀ Q_uu k + Kᵀ Q_u + Q_uzᵀ k
//! V_zz = Q_zz + Kᵀ Q_uu K + Kᵀ Q_uz + Q_uzᵀ K
//! ```
//!
//! with `V_N = 0`; full DDP adds `Σ_r V'_z[r] ∂²Φ_r` to the three Hessian blocks
//! ([`super::second`]) (the terminal terms are the last stage's cost). Every event's saltation
//! `Ξ` is inside the stage's `Φ_z`, so `V'_zz ↦ Φ_zᵀ V'_zz Φ_z` carries the value function's
//! jump `Ξᵀ P Ξ` of the Riccati sweep (theory §10) at the event's true time. The expected
//! reduction of a step of length α is `α Σ kᵀQ_u + ½ α² Σ kᵀQ_uu k`. Beside it,
//! [`gradient`]: the same recursion at first order only (the discrete adjoint
//! `λ_k = ℓ_z + Φ_zᵀ λ_{k+1}`, `∇_{u_k} J = ℓ_u + Φ_uᵀ λ_{k+1}`), the exact gradient of the
//! cost that the stages' linearizations imply.

use super::boxqp::box_qp;
use super::layout::Layout;
use super::stage::Linear;
use nalgebra::{DMatrix, DVector};

/// The control law of a backward pass: `δu_k = k_k + K_k δz_k`, and the expected
/// reduction's coefficients `(Σ kᵀQ_u, ½ Σ kᵀQ_uu k)`.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    pub k: Vec<DVector<f64>>,
    pub gain: Vec<DMatrix<f64>>,
    pub dv: (f64, f64),
}

impl Policy {
    /// The predicted change of the cost for a step of length α (negative: a decrease).
    pub fn expected(&self, alpha: f64) -> f64 {
        alpha * self.dv.0 + alpha * alpha * self.dv.1
    }
}

/// The bounds on each stage's step `δu_k` (from θ's bounds around the nominal's u_k).
pub(crate) type StepBounds = Vec<(DVector<f64>, DVector<f64>)>;

/// The backward pass with regularization μ (module docs); `None` when a stage's `Q_uu`
/// is not positive definite on its free set.
pub(crate) fn backward(lin: &[Linear], bounds: &StepBounds, mu: f64) -> Option<Policy> {
    let n = lin.len();
    let last = &lin[n - 1];
    let mut vz = DVector::zeros(last.fz.nrows());
    let mut vzz = DMatrix::zeros(last.fz.nrows(), last.fz.nrows());
    let (mut ks, mut gains) = (vec![DVector::zeros(0); n], vec![DMatrix::zeros(0, 0); n]);
    let mut dv = (0.0, 0.0);
    for k in (0..n).rev() {
        let l = &lin[k];
        let qz = &l.lz + l.fz.tr_mul(&vz);
        let qu = &l.lu + l.fu.tr_mul(&vz);
        let vf = &vzz * &l.fz;
        let mut qzz = &l.lzz + l.fz.tr_mul(&vf);
        let mut quz = &l.luz + l.fu.tr_mul(&vf);
        let mut quu = &l.luu + l.fu.tr_mul(&(&vzz * &l.fu));
        if !l.d.is_empty() {
            let nz = qz.len();
            let nu = qu.len();
            let m = tensor(&l.d, &vz);
            qzz += m.view((0, 0), (nz, nz));
            quu += m.view((nz, nz), (nu, nu));
            quz += m.view((nz, 0), (nu, nz));
        }
        let nu = quu.nrows();
        let mut reg = quu.clone();
        for i in 0..nu {
            reg[(i, i)] += mu;
        }
        let step = box_qp(&reg, &qu, &bounds[k].0, &bounds[k].1)?;
        let mut gain = DMatrix::zeros(nu, qz.len());
        let gf = -(&step.h_ff_inv
            * DMatrix::from_fn(step.free.len(), qz.len(), |a, j| quz[(step.free[a], j)]));
        for (a, &i) in step.free.iter().enumerate() {
            gain.set_row(i, &gf.row(a));
        }
        let kk = step.du;
        quu = (&quu + quu.transpose()) * 0.5;
        dv.0 += kk.dot(&qu);
        dv.1 += 0.5 * kk.dot(&(&quu * &kk));
        vz = &qz + gain.tr_mul(&(&quu * &kk)) + gain.tr_mul(&qu) + quz.tr_mul(&kk);
        let v = &qzz + gain.tr_mul(&(&quu * &gain)) + gain.tr_mul(&quz) + quz.tr_mul(&gain);
        vzz = (&v + v.transpose()) * 0.5;
        ks[k] = kk;
        gains[k] = gain;
    }
    Some(Policy {
        k: ks,
        gain: gains,
        dv,
    })
}

/// `M_ij = Σ_r V'_z[r] ∂²Φ_r/∂v_i∂v_j` from `d[i] = ∂[Φ_z Φ_u]/∂v_i` (symmetrized):
/// DDP's tensor term ([`super::second`]).
fn tensor(d: &[DMatrix<f64>], vz: &DVector<f64>) -> DMatrix<f64> {
    let n = d.len();
    let m = DMatrix::from_fn(n, n, |i, j| d[i].column(j).dot(vz));
    (&m + m.transpose()) * 0.5
}

/// The gradient of the stages' cost over θ (zero off the decided coefficients) by the
/// first-order recursion (module docs).
pub(crate) fn gradient(lin: &[Linear], layout: &Layout, ntheta: usize) -> Vec<f64> {
    let mut g = vec![0.0; ntheta];
    let mut lam: DVector<f64> = DVector::zeros(lin[lin.len() - 1].fz.nrows());
    for (l, st) in lin.iter().zip(&layout.stages).rev() {
        let gu = &l.lu + l.fu.tr_mul(&lam);
        for (j, &q) in st.new.iter().enumerate() {
            g[q] += gu[j];
        }
        lam = &l.lz + l.fz.tr_mul(&lam);
    }
    g
}
