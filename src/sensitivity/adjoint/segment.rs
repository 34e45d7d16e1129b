//! One smooth segment of the backward pass: `(Λ, M)` at the segment's end packed into one
//! vector (each column divided by its scale), integrated back to the segment's start by
//! the smooth integrator on the backward system ([`AdjointRhs`]), and unpacked.

use super::layout::Layout;
use super::rhs::{AdjointRhs, AdjointScratch};
use crate::error::Error;
use crate::integrate::smooth::integrate_smooth_from;
use crate::integrate::{Segment, Stats};
use crate::model::HybridSystem;
use crate::setup::{Plain, Setup};
use nalgebra::DMatrix;
use std::cell::RefCell;

/// The parameter adjoint μ_p(t) of every objective along the backward pass (the seed's
/// λ_Γ(t), which reaches dψ/dp at t0 when x0 does not depend on p), at every accepted
/// step: `(t, μ_p)` from tf down to t0.
pub type MuHistory = Vec<(f64, Vec<f64>)>;

/// The segment-by-segment backward integration of one pass: what the segments share (the
/// plain model for replays, the right-hand side's buffers, the step size carried from one
/// segment to the next) and the steps counted.
pub(super) struct Backward<'s, 'a, S: HybridSystem> {
    setup: &'s Setup<'a, S>,
    theta: &'s [f64],
    plain: Plain<'s, 'a, S, f64>,
    scratch: RefCell<AdjointScratch>,
    h_carry: Option<f64>,
    /// Backward steps, right-hand sides and replayed forward steps so far.
    pub stats: Stats,
}

impl<'s, 'a, S: HybridSystem> Backward<'s, 'a, S> {
    pub fn new(setup: &'s Setup<'a, S>, theta: &'s [f64]) -> Self {
        Backward {
            setup,
            theta,
            plain: Plain::new(setup, theta.to_vec()),
            scratch: RefCell::new(AdjointScratch::default()),
            h_carry: None,
            stats: Stats::default(),
        }
    }

    /// `(Λ, M)` from segment `seg`'s end (after its events) back to its start, with every
    /// accepted step's μ_p pushed onto `histories` when given.
    pub fn over(
        &mut self, seg: &Segment<f64>, lam: &mut DMatrix<f64>, mu: &mut DMatrix<f64>,
        mut histories: Option<&mut Vec<MuHistory>>,
    ) -> Result<(), Error> {
        let setup = self.setup;
        let packing = Packing::new(setup, seg, lam);
        let y0 = packing.pack(lam, mu);
        let lay = packing.lay;
        let np = lay.np;
        let rhs = AdjointRhs::on_segment(setup, seg, &self.plain, self.theta, lay, &self.scratch);
        let record = histories.is_some();
        let mut rec = |t: f64, y: &[f64]| {
            for (j, h) in histories.iter_mut().flat_map(|h| h.iter_mut()).enumerate() {
                let m = &y[lay.mu_p(j)..lay.mu_p(j) + np];
                h.push((t, m.iter().map(|&v| v * packing.scale[j]).collect()));
            }
        };
        let observer: Option<&mut dyn FnMut(f64, &[f64])> =
            if record { Some(&mut rec) } else { None };
        let (y1, h, _) = integrate_smooth_from(
            &rhs,
            seg.t_end,
            seg.t_start,
            &y0,
            None,
            &setup.solver,
            self.h_carry,
            &mut self.stats,
            observer,
        )
        .map_err(|e| {
            e.into_error(
                setup.dims.mode_name(seg.mode),
                setup.solver.max_steps,
                "adjoint",
            )
        })?;
        self.h_carry = Some(h);
        let replayed = rhs.replayed();
        self.stats.replayed_steps += replayed.steps;
        self.stats.rhs_evals += replayed.rhs_evals;
        packing.unpack(&y1, lam, mu);
        Ok(())
    }
}

/// The scale a column `(λ_j, μ_j)` is integrated in on a segment: `max(1, rms(λ_j))`
/// (`rms(λ) = ‖λ‖₂/√n`, the integrator's own error norm) rounded up to a power of 2, so
/// that dividing by it and multiplying back is exact. The backward system is linear and
/// homogeneous in each column, so `(λ_j, μ_j)/s` solves it too; the error test then holds
/// λ_j to `atol·s + rtol·|λ_j|`: the absolute tolerance is relative to the adjoint's own
/// size (norm-wise), never tighter than `atol`. Without it the error test's floor depends
/// on the units of ψ (ψ and 100·ψ took different steps for the same relative gradient
/// accuracy): the five-bar's ∫ÿ₂ columns, with ‖λ‖∞ ≈ 100, took 1,594 backward steps
/// against the forward's 1,016; with it 1,193, the gradient closer to a 1e-12 reference
/// than before (index 2: 9.1e-8 of ‖∇ψ‖, was 9.3e-8). Scaling by ‖λ_j‖∞ instead took
/// 1,001 steps (8.8e-8 from the reference) but moved the adjoint to 1.003e-7 of the
/// central FD witness, whose own error is 1.9e-7 (tests/multibody_index2.rs bounds
/// FD vs adjoint by 1e-7).
fn column_scale(lam: &[f64]) -> f64 {
    let rms = (lam.iter().map(|v| v * v).sum::<f64>() / lam.len().max(1) as f64).sqrt();
    let m = rms.max(1.0);
    let mut s = 2f64.powi(m.log2().ceil().min(1023.0) as i32);
    if s < m {
        s *= 2.0;
    }
    if s.is_finite() {
        s
    } else {
        1.0
    }
}

/// How one segment's columns `(λ_j, μ_j)` sit in the backward vector: each divided by its
/// scale ([`column_scale`]; exact, a power of 2), μ's control part only for the
/// coefficients active on the segment. μ starts from its accumulated value, so that the
/// relative tolerance sees the gradient's own scale (integrating each segment's increment
/// from 0 held it to the absolute tolerance alone).
struct Packing {
    lay: Layout,
    np: usize,
    scale: Vec<f64>,
    /// The active control coefficients: (channel, slot, θ's column).
    act: Vec<(usize, usize, usize)>,
}

impl Packing {
    /// The layout of segment `seg` for every objective, sized for the control
    /// coefficients active there (the grid nodes are breakpoints, so the same ones all
    /// along the segment), and each column's scale from Λ at the segment's end.
    fn new<S: HybridSystem>(setup: &Setup<'_, S>, seg: &Segment<f64>, lam: &DMatrix<f64>) -> Self {
        let ctx = seg.ctx();
        let mut act = Vec::new();
        let mut n_active = 0;
        if let (Some(g), Some(iv)) = (&setup.controls, setup.control_interval(&ctx)) {
            let a = g.active::<f64>(iv, seg.t_start);
            n_active = a.n;
            for ch in 0..setup.nu() {
                for slot in 0..a.n {
                    act.push((ch, slot, setup.control_column(ch, a.idx[slot])));
                }
            }
        }
        let k = lam.ncols();
        Packing {
            lay: Layout {
                n: setup.n(),
                np: setup.np(),
                nu: setup.nu(),
                n_active,
                k,
            },
            np: setup.np(),
            scale: (0..k)
                .map(|j| column_scale(lam.column(j).as_slice()))
                .collect(),
            act,
        }
    }

    /// `(Λ, M)` → the backward vector, each column divided by its scale.
    fn pack(&self, lam: &DMatrix<f64>, mu: &DMatrix<f64>) -> Vec<f64> {
        let lay = self.lay;
        let mut y = vec![0.0; lay.dim()];
        for j in 0..lay.k {
            let inv = 1.0 / self.scale[j];
            for (v, &l) in y[lay.lam(j)..lay.lam(j) + lay.n]
                .iter_mut()
                .zip(lam.column(j).iter())
            {
                *v = l * inv;
            }
            for q in 0..self.np {
                y[lay.mu_p(j) + q] = mu[(q, j)] * inv;
            }
            for &(ch, slot, col) in &self.act {
                y[lay.mu_act(j, ch, slot)] = mu[(col, j)] * inv;
            }
        }
        y
    }

    /// The backward vector → `(Λ, M)`, each column multiplied back by its scale.
    fn unpack(&self, y: &[f64], lam: &mut DMatrix<f64>, mu: &mut DMatrix<f64>) {
        let lay = self.lay;
        for j in 0..lay.k {
            let s = self.scale[j];
            for (l, &v) in lam
                .column_mut(j)
                .iter_mut()
                .zip(&y[lay.lam(j)..lay.lam(j) + lay.n])
            {
                *l = v * s;
            }
            for q in 0..self.np {
                mu[(q, j)] = y[lay.mu_p(j) + q] * s;
            }
            for &(ch, slot, col) in &self.act {
                mu[(col, j)] = y[lay.mu_act(j, ch, slot)] * s;
            }
        }
    }
}
