//! The continuous adjoint (theory.md §4; seed 000 (18)–(25)): λ and μ integrated backward
//! over each smooth segment on the forward run's dense output, with the transposed jump
//! at every event. The adjoint never integrates across an event time.
//!
//! Cost: one backward pass per objective, each step needing `F_X`, `F_p` and `F_u` (one
//! dual pass per state, parameter and control channel); the control coefficients enter
//! only through the few active in the current control interval, so K coefficients add
//! O(active) work per step.

use super::jump::Jump;
use super::{located, term_jacobian};
use crate::error::{Error, ModelError};
use crate::integrate::hybrid::Ctx;
use crate::integrate::smooth::{integrate_smooth, SmoothError};
use crate::integrate::{NewtonJacobian, OdeRhs, Segment, Stats, Trajectory};
use crate::model::HybridSystem;
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};

/// The backward system on one segment: `(λ, μ_p, μ_active)`, with
/// `λ̇ = −F_Xᵀλ`, `μ̇_p = −F_pᵀλ`, `μ̇_{j,a} = −φ_a(t) F_{u_j}ᵀλ` (running costs are in F
/// through the quadrature states, so `L_x` enters via `λ_z`).
struct AdjointRhs<'r, 's, 'a, S: HybridSystem> {
    setup: &'s Setup<'a, S>,
    seg: &'r Segment<f64>,
    ctx: Ctx,
    theta: &'r [f64],
    n_active: usize,
    scratch: std::cell::RefCell<AdjointScratch>,
}

/// Buffers reused across the adjoint's right-hand-side calls.
#[derive(Default)]
struct AdjointScratch {
    x: Vec<f64>,
    lx: Vec<f64>,
    lu: Vec<f64>,
    lp: Vec<f64>,
    vjp: crate::setup::VjpScratch,
}

impl<S: HybridSystem> AdjointRhs<'_, '_, '_, S> {
    fn x_at(&self, t: f64) -> Vec<f64> {
        let mut x = vec![0.0; self.setup.n()];
        self.seg.state_at(t, &mut x);
        x
    }
}

impl<S: HybridSystem> OdeRhs<f64> for AdjointRhs<'_, '_, '_, S> {
    fn dim(&self) -> usize {
        self.setup.n() + self.setup.np() + self.setup.nu() * self.n_active
    }
    fn eval(&self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        let n = self.setup.n();
        let (nx, np, nu) = (self.setup.nx(), self.setup.np(), self.setup.nu());
        let mut guard = self.scratch.borrow_mut();
        let AdjointScratch { x, lx, lu, lp, vjp } = &mut *guard;
        x.resize(n, 0.0);
        self.seg.state_at(t, x);
        lx.resize(nx, 0.0);
        lu.resize(nu, 0.0);
        lp.resize(np, 0.0);
        self.setup
            .vjp_with(&self.ctx, t, x, self.theta, &y[..n], lx, lu, lp, vjp)?;
        // λ̇ = −F_Xᵀλ (the quadrature columns of F_X are zero)
        for i in 0..n {
            dy[i] = if i < nx { -lx[i] } else { 0.0 };
        }
        for k in 0..np {
            dy[n + k] = -lp[k];
        }
        if self.n_active > 0 {
            let g = self.setup.controls.as_ref().expect("controls");
            let iv = self.setup.control_interval(&self.ctx).expect("interval");
            let act = g.active::<f64>(iv, t);
            for ch in 0..nu {
                for a in 0..act.n {
                    dy[n + np + ch * self.n_active + a] = -act.w[a] * lu[ch];
                }
            }
        }
        Ok(())
    }
    /// All of (λ, μ): μ is a quadrature, but its integrand −F_θᵀλ also depends on x(t),
    /// u(t) and the basis weights φ(t), which λ's error test does not see (with an
    /// effort term, λ_z ≡ 1 is exact with any step while ∫φ_a·2wu dt is not). Leaving μ
    /// out made dψ/dc wrong by up to ~1e-4 relative at rtol = 1e-10 (tests/gradients.rs).
    fn error_dim(&self) -> usize {
        self.dim()
    }
    fn newton_jacobian(&self, t: f64, _y: &[f64]) -> Result<NewtonJacobian, ModelError> {
        let x = self.x_at(t);
        let j = self.setup.flow_jacobian(&self.ctx, t, &x, self.theta)?;
        Ok(NewtonJacobian {
            block: -j.fx.transpose(),
            copies: 1,
            rest: self.setup.np() + self.setup.nu() * self.n_active,
        })
    }
}

fn smooth_error<S: HybridSystem>(setup: &Setup<'_, S>, mode: usize, e: SmoothError) -> Error {
    let m = setup.dims.mode_name(mode);
    match e {
        SmoothError::Model { t, source } => Error::Model { t, mode: m, source },
        SmoothError::Underflow { t, h } => Error::StepSizeUnderflow {
            t,
            mode: m,
            h,
            h_min: 16.0 * f64::EPSILON * t.abs().max(1.0),
        },
        SmoothError::NonFinite { t } => Error::NonFinite {
            t,
            mode: m,
            what: "adjoint".into(),
        },
        SmoothError::TooManySteps { t } => Error::TooManySteps {
            t,
            mode: m,
            max_steps: setup.solver.max_steps,
        },
    }
}

/// dψ_i/dθ for every objective by the adjoint, from a forward run `traj` of X at θ.
pub fn adjoint_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>,
    traj: &Trajectory,
    theta: &[f64],
) -> Result<(Vec<Vec<f64>>, Stats), Error> {
    adjoint_impl(setup, traj, theta, false, &[]).map(|(g, s, _)| (g, s))
}

/// A crossing order's composed map at a simultaneous event, replacing the sequential jumps
/// of the events it covers: `S⁺ = Ξ S⁻ + Ξ_θ` from before the first to after the last.
pub struct PieceOverride<'p> {
    /// Trajectory indices of the group's events.
    pub events: &'p [usize],
    pub xi: &'p DMatrix<f64>,
    pub xi_theta: &'p DMatrix<f64>,
}

/// dψ_i/dθ by the adjoint with the given crossing orders' composed saltations in place of
/// the recorded order's jumps at simultaneous events (theory §7: the gradient of one piece
/// of a nonsmooth ψ). With no overrides this is [`adjoint_gradients`].
pub fn adjoint_piece_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>,
    traj: &Trajectory,
    theta: &[f64],
    overrides: &[PieceOverride<'_>],
) -> Result<Vec<Vec<f64>>, Error> {
    adjoint_impl(setup, traj, theta, false, overrides).map(|(g, _, _)| g)
}

/// The parameter adjoint μ_p(t) of every objective along the backward pass (the seed's
/// λ_Γ(t), which reaches dψ/dp at t0 when x0 does not depend on p), at every accepted
/// step: `(t, μ_p)` from tf down to t0.
pub type MuHistory = Vec<(f64, Vec<f64>)>;

/// Gradients together with the μ_p(t) histories of [`adjoint_gradients`].
pub fn adjoint_with_history<S: HybridSystem>(
    setup: &Setup<'_, S>,
    traj: &Trajectory,
    theta: &[f64],
) -> Result<(Vec<Vec<f64>>, Vec<MuHistory>), Error> {
    adjoint_impl(setup, traj, theta, true, &[]).map(|(g, _, h)| (g, h))
}

fn adjoint_impl<S: HybridSystem>(
    setup: &Setup<'_, S>,
    traj: &Trajectory,
    theta: &[f64],
    record: bool,
    overrides: &[PieceOverride<'_>],
) -> Result<(Vec<Vec<f64>>, Stats, Vec<MuHistory>), Error> {
    let mut histories: Vec<MuHistory> = Vec::new();
    let n = setup.n();
    let nx = setup.nx();
    let np = setup.np();
    let nth = setup.ntheta();
    let mut stats = Stats::default();
    // Jumps are shared by all objectives: build them once.
    let mut jumps: Vec<Jump> = Vec::with_capacity(traj.events.len());
    for (i, e) in traj.events.iter().enumerate() {
        let ctx = super::forward::event_ctx(traj, i);
        jumps.push(
            Jump::at(setup, &ctx, e.guard, e.t, &e.y_minus, theta, e.terminal)
                .map_err(located(setup, e.t, ctx.mode))?,
        );
    }
    let terminal_event = traj
        .events
        .last()
        .filter(|e| e.terminal)
        .map(|_| traj.events.len() - 1);
    let (_, dx0) = crate::model::initial_jacobian(setup.sys, nx, &theta[..np])
        .map_err(located(setup, setup.t0, 0))?;
    let mut out = Vec::with_capacity(setup.objectives.len());
    for (oi, obj) in setup.objectives.iter().enumerate() {
        // terminal conditions λ(tf) = Φ_Xᵀ (+1 on own quadratures), μ(tf) = Φ_θᵀ
        let mut lam = DVector::zeros(n);
        let mut mu = DVector::zeros(nth);
        for (z, _) in setup.running_of(oi) {
            lam[nx + z] = 1.0;
        }
        // event-cost contributions c per event index
        let mut ecost: Vec<Option<(DVector<f64>, DVector<f64>)>> = vec![None; traj.events.len()];
        let mut add_c = |i: usize, c: (DVector<f64>, DVector<f64>)| match &mut ecost[i] {
            Some((a, b)) => {
                *a += c.0;
                *b += c.1;
            }
            slot => *slot = Some(c),
        };
        for term in &obj.terms {
            if term.is_terminal() {
                match terminal_event {
                    Some(i) => {
                        let e = &traj.events[i];
                        let ctx = super::forward::event_ctx(traj, i);
                        let tj = term_jacobian(setup, term, &ctx, e.t, &e.y_minus, theta, true)?;
                        add_c(i, jumps[i].event_cost(&tj));
                    }
                    None => {
                        let seg = traj.segments.last().expect("a segment");
                        let ctx = Ctx {
                            mode: traj.mode_final,
                            t_lo: seg.t_lo,
                            t_hi: seg.t_hi,
                        };
                        let tj = term_jacobian(
                            setup,
                            term,
                            &ctx,
                            traj.t_final,
                            &traj.y_final,
                            theta,
                            true,
                        )?;
                        lam += &tj.x;
                        mu += &tj.theta;
                    }
                }
            }
            if let Some((guard, occ)) = term.event() {
                let (i, ctx) = setup.find_event(traj, guard, occ)?;
                let e = &traj.events[i];
                let tj = term_jacobian(setup, term, &ctx, e.t, &e.y_minus, theta, false)?;
                add_c(i, jumps[i].event_cost(&tj));
            }
        }
        let mut h_carry: Option<f64> = None;
        let mut hist: MuHistory = Vec::new();
        if record {
            hist.push((traj.t_final, mu.as_slice()[..np].to_vec()));
        }
        for seg in traj.segments.iter().rev() {
            match overrides
                .iter()
                .find(|o| !o.events.is_empty() && o.events == seg.end_events.as_slice())
            {
                Some(o) => {
                    // the transpose of the piece's composed map
                    if o.events.iter().any(|&i| ecost[i].is_some()) {
                        return Err(Error::Invalid(
                            "an event cost on an event of a simultaneous group is not supported with piece overrides".into(),
                        ));
                    }
                    let l2 = o.xi.tr_mul(&lam);
                    mu += o.xi_theta.tr_mul(&lam);
                    lam = l2;
                }
                None => {
                    for &i in seg.end_events.iter().rev() {
                        let (l2, m2) = jumps[i].adjoint(&lam, &mu, ecost[i].as_ref());
                        lam = l2;
                        mu = m2;
                    }
                }
            }
            let ctx = Ctx {
                mode: seg.mode,
                t_lo: seg.t_lo,
                t_hi: seg.t_hi,
            };
            let n_active = match (&setup.controls, setup.control_interval(&ctx)) {
                (Some(g), Some(iv)) => g.active::<f64>(iv, seg.t_start).n,
                _ => 0,
            };
            let rhs = AdjointRhs {
                setup,
                seg,
                ctx,
                theta,
                n_active,
                scratch: Default::default(),
            };
            let mut y0 = lam.as_slice().to_vec();
            y0.extend(std::iter::repeat_n(0.0, np + setup.nu() * n_active));
            let mu_base: Vec<f64> = mu.as_slice()[..np].to_vec();
            let mut rec = |t: f64, y: &[f64]| {
                let m: Vec<f64> = (0..np).map(|k| mu_base[k] + y[n + k]).collect();
                hist.push((t, m));
            };
            let observer: Option<&mut dyn FnMut(f64, &[f64])> =
                if record { Some(&mut rec) } else { None };
            let (y1, h) = integrate_smooth(
                &rhs,
                seg.t_end,
                seg.t_start,
                &y0,
                &setup.solver,
                h_carry,
                &mut stats,
                observer,
            )
            .map_err(|e| smooth_error(setup, seg.mode, e))?;
            h_carry = Some(h);
            lam.copy_from_slice(&y1[..n]);
            for k in 0..np {
                mu[k] += y1[n + k];
            }
            if n_active > 0 {
                let g = setup.controls.as_ref().expect("controls");
                let iv = setup.control_interval(&ctx).expect("interval");
                let act = g.active::<f64>(iv, seg.t_start);
                for ch in 0..setup.nu() {
                    for a in 0..act.n {
                        mu[setup.control_column(ch, act.idx[a])] += y1[n + np + ch * n_active + a];
                    }
                }
            }
        }
        // dψ/dθ = λ(t0)ᵀ dX0/dθ + μ(t0)
        let mut dx0t = DMatrix::zeros(n, nth);
        dx0t.view_mut((0, 0), (nx, np)).copy_from(&dx0);
        let g = dx0t.tr_mul(&lam) + mu;
        let mut g = g.as_slice().to_vec();
        for term in &obj.terms {
            term.add_parameter_gradient(theta, &mut g);
        }
        out.push(g);
        histories.push(hist);
    }
    Ok((out, stats, histories))
}
