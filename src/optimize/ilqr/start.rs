//! The two ends of a horizon that free system parameters p tie together (docs/theory.md
//! §11, "Free parameters and a periodic closing").
//!
//! **The start.** With p free, `x_0 = x0(p)` is no given state but a function of stage 0's
//! decision (layout.rs), so stage 0's linearization in `v = (x_0, c, p)` is taken through
//! it: with `M = I + E_x J_0 E_pᵀ` (`J_0 = ∂x0/∂p` placed in the x rows of p's columns),
//!
//! ```text
//! [Φ_z Φ_u] ← [Φ_z Φ_u] M,     ∇ℓ ← Mᵀ ∇ℓ,     ∇²ℓ ← Mᵀ ∇²ℓ M,
//! ```
//!
//! p's columns becoming `∂x_1/∂x_0 J_0 + ∂x_1/∂p` (the chain rule); the x columns stay,
//! and the DDP never uses them (`δx_0 = 0`: the start moves only through p).
//!
//! **The closing.** A periodic problem's horizon ends at the closing event; the state after
//! its reset must return to the start on the chosen states m,
//!
//! ```text
//! r_m = x⁺_m(t_e) − x0_m(p) = 0,    ∂r_m/∂v = ∂x⁺_m/∂v − J_0[m] (p's columns)
//! ```
//!
//! (`∂x⁺/∂v` the return map's derivative, `Ξ S⁻ + Ξ_θ + f⁺τ`, from the last stage's run:
//! shooting's segment.rs), each row an augmented term of the last stage's cost, as the
//! SQP's closing rows are (shooting/nlp.rs): the same rows, the same multipliers.

use super::costs::Form;
use super::stage::Stages;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::setup::located;
use nalgebra::{DMatrix, DVector};

/// The start at θ: `x0(p)`, its mode and `J_0 = ∂x0/∂θ` (nx × len θ).
pub(crate) struct Start {
    pub x: Vec<f64>,
    pub mode: usize,
    pub jac: DMatrix<f64>,
}

impl<S: HybridSystem> Stages<'_, '_, S> {
    /// The start at θ (module docs).
    pub(crate) fn start(&self, theta: &[f64]) -> Result<Start, Error> {
        let core = self.core(theta);
        let at = |e| located(self.setup, self.setup.t0, 0)(e);
        let (mode, _) = self.setup.initial(core).map_err(at)?;
        let (x, jac) = self.setup.initial_jacobian(core).map_err(at)?;
        Ok(Start { x, mode, jac })
    }

    /// Stage 0's first-order data in `v = (x_0, θ[cols])` taken through the start's
    /// dependence on p (module docs): `fv M`, `Mᵀ lv`, `Mᵀ lvv M`.
    pub(crate) fn through_start(
        &self, jac: &DMatrix<f64>, cols: &[usize], fv: &mut DMatrix<f64>, lv: &mut DVector<f64>,
        lvv: &mut DMatrix<f64>,
    ) {
        let nx = self.layout.nx;
        let nv = lv.len();
        let mut m = DMatrix::identity(nv, nv);
        for (j, &q) in cols.iter().enumerate() {
            if self.layout.params.contains(&q) {
                m.view_mut((0, nx + j), (nx, 1)).copy_from(&jac.column(q));
            }
        }
        *fv = &*fv * &m;
        *lv = m.tr_mul(lv);
        *lvv = m.tr_mul(&(&*lvv * &m));
    }

    /// The closing residuals `r_m = x⁺_m − x0_m(p)` at the state after the closing reset
    /// (module docs), with their augmented forms.
    pub(crate) fn closing_residuals(
        &self, x_plus: &[f64], start: &Start,
    ) -> Vec<(usize, f64, Form)> {
        self.plan
            .closing
            .iter()
            .map(|&(m, form)| (m, x_plus[m] - start.x[m], form))
            .collect()
    }

    /// The closing terms' cost (module docs).
    pub(crate) fn closing_cost(&self, x_plus: &[f64], start: &Start) -> f64 {
        self.closing_residuals(x_plus, start)
            .into_iter()
            .map(|(_, r, form)| form.value(r))
            .sum()
    }

    /// Adds the closing terms' gradient and Gauss–Newton Hessian over `v = (x, θ[cols])` to
    /// `lv`, `lvv`, from the last stage's run: its end after the reset and that end's
    /// derivatives over the start state and θ (module docs).
    pub(crate) fn closing_first_order(
        &self, run: &crate::optimize::shooting::segment::SegmentRun, start: &Start, cols: &[usize],
        lv: &mut DVector<f64>, lvv: &mut DMatrix<f64>,
    ) {
        let nx = self.layout.nx;
        for (m, r, form) in self.closing_residuals(&run.end, start) {
            let mut g = DVector::zeros(lv.len());
            for i in 0..nx {
                g[i] = run.end_start[(m, i)];
            }
            for (j, &q) in cols.iter().enumerate() {
                g[nx + j] = run.end_theta[(m, q)] - start.jac[(m, q)];
            }
            let (slope, curvature) = form.slope_curvature(r);
            *lv += &g * slope;
            if curvature != 0.0 {
                *lvv += &g * g.transpose() * curvature;
            }
        }
    }
}
