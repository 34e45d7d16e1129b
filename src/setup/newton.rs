//! The Newton Jacobian of X's flow for the implicit integrators: dense (`F_X` by one
//! directional derivative per input), or sparse on the system's declared pattern, its
//! entries by one directional derivative per colour of a column colouring (docs/theory.md
//! §8, "Sparse Jacobians").
//!
//! The sparse block is `n × n` on X = (x, z) with the system's `f_x` entries on the state
//! rows and nothing on the quadrature rows z: the running costs' `∂L/∂x` is left out of
//! the iteration matrix (simplified Newton converges with it left out: the quadratures
//! follow the state one iteration behind, and their error test is unchanged).

use super::definition::Setup;
use super::sparse_flows::SparseFlow;
use crate::error::ModelError;
use crate::integrate::trajectory::Ctx;
use crate::integrate::{JacobianBlock, SparseBlock, Structure};
use crate::model::{lane_eps, lane_seed, HybridSystem, Lanes, LANES};
use crate::sparsity::Pattern;

impl<S: HybridSystem> Setup<'_, S> {
    /// Mode `m`'s sparse structure if the system declares a pattern for it and the
    /// solver's [`crate::integrate::LinearAlgebra`] holds it sparse.
    fn sparse_flow(&self, mode: usize) -> Option<&SparseFlow> {
        let slot = self.sparse.0.get(mode)?;
        let flow = slot
            .get_or_init(|| {
                let pattern = self.sys.flow_pattern(mode)?;
                (pattern.dim() == self.nx()).then(|| self.sparse_flow_of(&pattern))
            })
            .as_ref()?;
        let nnz = flow.entries.len();
        self.solver
            .linear_algebra
            .sparse(self.nx(), nnz)
            .then_some(flow)
    }

    /// The structure of X's block for the state pattern `p` (quadrature rows empty).
    fn sparse_flow_of(&self, p: &Pattern) -> SparseFlow {
        let (n, nx) = (self.n(), self.nx());
        let mut reads: Vec<Vec<usize>> = vec![Vec::new(); n];
        for j in 0..nx {
            for &i in p.column(j) {
                reads[i].push(j);
            }
        }
        let full = Pattern::from_rows(n, &reads).expect("the pattern has nx states");
        let structure = Structure::of(&full);
        let entries = structure
            .entries()
            .filter(|&(_, i, j)| i < nx && j < nx && p.contains(i, j))
            .collect();
        SparseFlow {
            structure,
            colouring: p.colouring(),
            entries,
        }
    }

    /// The Newton Jacobian block `F_X` at real values: sparse on the mode's pattern when
    /// the system declares one and the solver's [`crate::integrate::LinearAlgebra`] holds
    /// it sparse (one [`Lanes`] pass per [`LANES`] colours), else dense
    /// ([`Self::flow_jacobian`]).
    pub fn newton_block(
        &self, ctx: &Ctx, t: f64, xx: &[f64], theta: &[f64],
    ) -> Result<JacobianBlock, ModelError> {
        let Some(flow) = self.sparse_flow(ctx.mode) else {
            return Ok(JacobianBlock::Dense(
                self.flow_jacobian(ctx, t, xx, theta)?.fx,
            ));
        };
        let (nx, np) = (self.nx(), self.np());
        let lift = |v: &[f64]| v.iter().map(|&a| Lanes::from(a)).collect::<Vec<_>>();
        let u = lift(&self.controls_at(ctx, t, theta));
        let p = lift(&theta[..np]);
        let td = Lanes::from(t);
        let mut x = lift(&xx[..nx]);
        let mut out = vec![Lanes::from(0.0); nx];
        let mut block = SparseBlock::zeros(flow.structure.clone());
        let colours = flow.colouring.count();
        for first in (0..colours).step_by(LANES) {
            // lane c − first of every state of colour c
            for (j, xj) in x.iter_mut().enumerate() {
                let c = flow.colouring.of(j);
                let lane = (first..first + LANES).contains(&c).then(|| c - first);
                *xj = lane_seed(xx[j], lane);
            }
            out.iter_mut().for_each(|o| *o = Lanes::from(0.0));
            self.sys.flow(ctx.mode, td, &x, &u, &p, &mut out)?;
            for &(k, i, j) in &flow.entries {
                let c = flow.colouring.of(j);
                if (first..first + LANES).contains(&c) {
                    block.values[k] = lane_eps(&out[i], c - first);
                }
            }
        }
        Ok(JacobianBlock::Sparse(block))
    }
}
