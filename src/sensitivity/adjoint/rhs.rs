//! The adjoint's backward system on one segment, for k objectives at once, evaluated on
//! the forward run's states ([`SegmentStates`]).

use super::layout::Layout;
use super::states::SegmentStates;
use crate::error::ModelError;
use crate::integrate::trajectory::Ctx;
use crate::integrate::{NewtonJacobian, OdeRhs, Segment, Stats};
use crate::model::HybridSystem;
use crate::setup::{Plain, Setup};
use std::cell::RefCell;

/// The backward system on one segment for k objectives: per column j,
/// `λ̇_j = −F_Xᵀλ_j`, `μ̇_{p,j} = −F_pᵀλ_j`, `μ̇_{c,j,a} = −φ_a(t) F_uᵀλ_j` (running costs
/// are in F through the quadrature states, so `L_x` enters via `λ_z`).
pub(super) struct AdjointRhs<'r, 's, 'a, S: HybridSystem> {
    setup: &'s Setup<'a, S>,
    states: SegmentStates<'r, 's, 'a, S>,
    ctx: Ctx,
    theta: &'r [f64],
    lay: Layout,
    /// Shared by every segment's backward system (allocated once a pass).
    scratch: &'r RefCell<AdjointScratch>,
    /// The time whose state the scratch's `x` holds (NaN: none yet on this segment). A
    /// DOPRI5 step evaluates its last two stages at the same time (c₆ = c₇ = 1), so one
    /// interpolation in six is a repeat.
    x_at: std::cell::Cell<f64>,
}

/// Buffers reused across the adjoint's right-hand-side calls.
#[derive(Default)]
pub(super) struct AdjointScratch {
    x: Vec<f64>,
    gx: Vec<f64>,
    gu: Vec<f64>,
    gp: Vec<f64>,
    vjp: crate::setup::VjpScratch,
}

impl<'r, 's, 'a, S: HybridSystem> AdjointRhs<'r, 's, 'a, S> {
    /// The backward system on segment `seg` in layout `lay`.
    pub(super) fn on_segment(
        setup: &'s Setup<'a, S>, seg: &'r Segment<f64>, plain: &'r Plain<'s, 'a, S, f64>,
        theta: &'r [f64], lay: Layout, scratch: &'r RefCell<AdjointScratch>,
    ) -> Self {
        let ctx = seg.ctx();
        {
            // sized once a segment: the right-hand side only overwrites them
            let AdjointScratch { x, gx, gu, gp, .. } = &mut *scratch.borrow_mut();
            let (n, k) = (lay.n, lay.k);
            x.resize(n, 0.0);
            gx.resize(k * setup.nx(), 0.0);
            gu.resize(k * lay.nu, 0.0);
            gp.resize(k * lay.np, 0.0);
        }
        AdjointRhs {
            setup,
            states: SegmentStates::new(seg, plain, ctx),
            ctx,
            theta,
            lay,
            scratch,
            x_at: std::cell::Cell::new(f64::NAN),
        }
    }

    /// The forward steps replayed so far to give this segment's states.
    pub(super) fn replayed(&self) -> Stats {
        self.states.replayed()
    }
}

impl<S: HybridSystem> OdeRhs<f64> for AdjointRhs<'_, '_, '_, S> {
    fn dim(&self) -> usize {
        self.lay.dim()
    }
    fn eval(&self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        let lay = self.lay;
        let (n, k) = (lay.n, lay.k);
        let (nx, np, nu) = (self.setup.nx(), lay.np, lay.nu);
        let mut guard = self.scratch.borrow_mut();
        let AdjointScratch { x, gx, gu, gp, vjp } = &mut *guard;
        if self.x_at.get() != t {
            self.states.state_at(t, x)?;
            self.x_at.set(t);
        }
        self.setup
            .vjp_multi(&self.ctx, t, x, self.theta, k, &y[..k * n], gx, gu, gp, vjp)?;
        // λ̇ = −F_Xᵀλ (the quadrature columns of F_X are zero), μ̇_p = −F_pᵀλ
        let (dlam, dmu) = dy[..k * (n + np)].split_at_mut(k * n);
        for (j, dl) in dlam.chunks_exact_mut(n).enumerate() {
            let (dx, dz) = dl.split_at_mut(nx);
            for (d, &v) in dx.iter_mut().zip(&gx[j * nx..(j + 1) * nx]) {
                *d = -v;
            }
            dz.fill(0.0);
        }
        for (d, &v) in dmu.iter_mut().zip(gp.iter()) {
            *d = -v;
        }
        if lay.n_active > 0 {
            let g = self.setup.controls.as_ref().expect("controls");
            let iv = self.setup.control_interval(&self.ctx).expect("interval");
            let act = g.active::<f64>(iv, t);
            for j in 0..k {
                for ch in 0..nu {
                    for a in 0..act.n {
                        dy[lay.mu_act(j, ch, a)] = -act.w[a] * gu[j * nu + ch];
                    }
                }
            }
        }
        Ok(())
    }
    /// All of (Λ, M): μ is a quadrature, but its integrand −F_θᵀλ also depends on x(t),
    /// u(t) and the basis weights φ(t), which λ's error test does not see (with an
    /// effort term, λ_z ≡ 1 is exact with any step while ∫φ_a·2wu dt is not). Leaving μ
    /// out made dψ/dc wrong by up to ~1e-4 relative at rtol = 1e-10 (tests/gradients.rs).
    fn error_dim(&self) -> usize {
        self.dim()
    }
    fn newton_jacobian(&self, t: f64, _y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        let mut x = vec![0.0; self.lay.n];
        self.states.state_at(t, &mut x)?;
        let j = self.setup.newton_block(&self.ctx, t, &x, self.theta)?;
        // the k columns of Λ, each with the block −F_Xᵀ, then the μ quadratures
        Ok(NewtonJacobian {
            block: j.neg_transpose(),
            copies: self.lay.k,
            rest: self.lay.k * (self.lay.np + self.lay.nu * self.lay.n_active),
        })
    }
}
