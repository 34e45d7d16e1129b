//! DDP's second-order terms (Mayne 1966; Tassa, Erez & Todorov 2012, eq. 5 with the
//! tensor terms kept): the Hessian of the stage cost and the derivatives of the
//! transition's Jacobian along each stage variable v = (z, u), by central differences of
//! the exact first derivatives (each a stage run with direct sensitivities, events and
//! saltations included):
//!
//! ```text
//! ∂[Φ_z Φ_u]/∂v_i ≈ ([Φ_z Φ_u](v + h_i e_i) − [Φ_z Φ_u](v − h_i e_i)) / 2h_i
//! ∇²ℓ e_i         ≈ (∇ℓ(v + h_i e_i) − ∇ℓ(v − h_i e_i)) / 2h_i,     h_i = 10⁻⁴ max(1, |v_i|)
//! ```
//!
//! The backward pass adds `Σ_r V'_z[r] ∂²Φ_r/∂v∂v` to Q's Hessian blocks. The Gauss–Newton
//! iLQR drops these: with a small effort weight the cost's curvature in most control
//! directions is exactly what it drops (the costate times the event times' and the flow's
//! curvature), and its steps overshoot (docs/theory.md §11). The differences
//! carry the error of the stage's integration divided by h (≈ 10⁻⁵ relative at rtol
//! 10⁻⁹), which slows Newton's convergence near the optimum only slightly; the gradient
//! itself stays exact, so the optimum does not move.

use super::costs::Piece;
use super::stage::Stages;
use crate::error::Error;
use crate::model::HybridSystem;
use nalgebra::DMatrix;

/// The relative step of the differences.
const STEP: f64 = 1e-4;

impl<S: HybridSystem> Stages<'_, '_, S> {
    /// The second-order terms of stage k (module docs): `(d, ∇²ℓ)`, or `None` when a
    /// perturbed run fails (the stage then keeps its Gauss–Newton terms).
    ///
    /// A variable whose first-order column (`fv`'s state rows and `lv`'s entry at v) is
    /// exactly zero — a carried parameter that does not enter the stage's flow — has zero
    /// second-order terms too, and is not differenced.
    pub(crate) fn second(
        &self, k: usize, x: &[f64], mode: usize, theta: &[f64], pieces: &[Piece],
        (fv, lv): (&DMatrix<f64>, &nalgebra::DVector<f64>),
    ) -> Result<Option<(Vec<DMatrix<f64>>, DMatrix<f64>)>, Error> {
        let st = &self.layout.stages[k];
        let nx = self.layout.nx;
        let cols: Vec<usize> = st.carried.iter().chain(&st.new).copied().collect();
        let nv = nx + cols.len();
        let mut d = Vec::with_capacity(nv);
        let mut hess = DMatrix::zeros(nv, nv);
        for i in 0..nv {
            // the state rows only: the carried entries' rows are constant (0 or 1)
            if lv[i] == 0.0 && fv.view((0, i), (nx, 1)).iter().all(|&e| e == 0.0) {
                d.push(DMatrix::zeros(fv.nrows(), nv));
                continue;
            }
            let v = if i < nx { x[i] } else { theta[cols[i - nx]] };
            let h = STEP * v.abs().max(1.0);
            let at = |s: f64| {
                let (mut xs, mut ts) = (x.to_vec(), theta.to_vec());
                if i < nx {
                    xs[i] = v + s;
                } else {
                    ts[cols[i - nx]] = v + s;
                }
                self.first_order(k, &xs, mode, &ts, pieces)
            };
            let (Ok((fp, gp, _)), Ok((fm, gm, _))) = (at(h), at(-h)) else {
                return Ok(None);
            };
            d.push((fp - fm) / (2.0 * h));
            hess.set_column(i, &((gp - gm) / (2.0 * h)));
        }
        let hess = (&hess + hess.transpose()) * 0.5;
        Ok(Some((d, hess)))
    }
}
