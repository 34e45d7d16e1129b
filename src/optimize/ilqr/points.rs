//! Output values at fixed instants inside a stage: the interior points of a path
//! constraint in the augmented Lagrangian (docs/theory.md §11, "Constraints"). A point
//! `(t, y)` with `τ_k < t ≤ τ_{k+1}` is a cost of stage k alone: `y(t)` depends on the
//! stage's start `z_k` and its coefficients only, and its exact derivatives over them come
//! from one more run of the stage from its node, over `[τ_k, t]` (direct sensitivities,
//! events and saltations included):
//!
//! ```text
//! ℓ = φ(y(t)),   ∇_v ℓ = φ'(y) ∇_v y(t),   ∇²_v ℓ ≈ φ''(y) ∇_v y ∇_v yᵀ   (Gauss–Newton)
//! ```
//!
//! φ the augmented term of [`super::costs::augmented`].

use super::costs::{objectives, Piece};
use super::stage::Stages;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::model::StartOnSection;
use crate::optimize::shooting::segment::{self, segment_setup, theta_with_start, Span};
use nalgebra::{DMatrix, DVector};

impl<S: HybridSystem> Stages<'_, '_, S> {
    /// The point pieces of stage k (`τ_k < t ≤ τ_{k+1}`).
    fn points_in(&self, k: usize) -> Vec<(f64, &Piece)> {
        let st = &self.layout.stages[k];
        let first = k == 0;
        self.plan
            .points
            .iter()
            .filter(|(t, _)| (*t > st.t0 || (first && *t >= st.t0)) && *t <= st.t1)
            .map(|(t, p)| (*t, p))
            .collect()
    }

    /// The cost of stage k's points from plain runs over `[τ_k, t]` from `(x, mode)`.
    pub(crate) fn point_cost(
        &self, k: usize, x: &[f64], mode: usize, theta: &[f64],
    ) -> Result<f64, Error> {
        let mut cost = 0.0;
        for (t, piece) in self.points_in(k) {
            let node = self.node(k, x, mode);
            let span = Span {
                node: &node,
                t0: node.t,
                t1: t,
                closure: None,
            };
            let sys = StartOnSection::new(self.setup.sys(), mode).with_controls();
            let th = theta_with_start(self.core(theta), self.setup.np(), &node.state);
            let s = segment_setup(
                self.setup,
                &sys,
                span,
                objectives(std::slice::from_ref(piece)),
            );
            let traj = s.simulate(&th)?;
            cost += piece.form.value(s.objective_values(&traj, &th)?[0]);
        }
        Ok(cost)
    }

    /// Adds the gradient and Gauss–Newton Hessian of stage k's points over
    /// `v = (x, θ[cols])` to `lv`, `lvv` (module docs).
    pub(crate) fn point_first_order(
        &self, k: usize, x: &[f64], mode: usize, theta: &[f64], cols: &[usize],
        lv: &mut DVector<f64>, lvv: &mut DMatrix<f64>,
    ) -> Result<(), Error> {
        let nv = lv.len();
        for (t, piece) in self.points_in(k) {
            let node = self.node(k, x, mode);
            let span = Span {
                node: &node,
                t0: node.t,
                t1: t,
                closure: None,
            };
            let objs = objectives(std::slice::from_ref(piece));
            let run = segment::run(self.setup, span, objs, theta, &node.state)?;
            let g = DVector::from_iterator(
                nv,
                run.grad_start[0]
                    .iter()
                    .copied()
                    // a point before a free final time does not move with T
                    .chain(cols.iter().map(|&q| match self.layout.time {
                        Some(t) if t == q => 0.0,
                        _ => run.grad_theta[0][q],
                    })),
            );
            let (slope, curvature) = piece.form.slope_curvature(run.values[0]);
            *lv += &g * slope;
            if curvature != 0.0 {
                *lvv += &g * g.transpose() * curvature;
            }
        }
        Ok(())
    }
}
