//! Periodic LQR along a periodic orbit whose period closes at an event (a gait's heel
//! strike): the Riccati sweep over one period iterated until `P(0) = P(T⁺)` repeats, with
//! the period-closing jump of the phase rule ([`Clock`]), and the closed-loop Floquet
//! multipliers from the flows of `A + BK` and the jumps (docs/theory.md §10,
//! periodic LQR).
//!
//! The iteration is the backward sweep of the finite-horizon problem repeated over periods
//! (value iteration); it converges to the stabilizing periodic solution when the orbit is
//! stabilizable and detectable through Q, at the rate of the closed-loop multipliers
//! squared per sweep (Bittanti, Colaneri & De Nicolao, "The periodic Riccati equation",
//! 1991, §5).

use super::clock::Clock;
use super::gains::Lqr;
use super::sweep::sweep;
use super::weights::Weights;
use crate::error::Error;
use crate::error::FeedbackError;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::sensitivity::jump::Jump;
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};

/// When the periodic iteration stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeriodicOptions {
    /// Converged when `‖ΔP(0)‖_max ≤ tol · ‖P(0)‖_max` over one sweep. Default 1e-11.
    pub tol: f64,
    /// The most sweeps. Default 200 (a multiplier of 0.9 needs ~120 sweeps to 1e-11).
    pub max_sweeps: usize,
}

impl Default for PeriodicOptions {
    fn default() -> Self {
        PeriodicOptions {
            tol: 1e-11,
            max_sweeps: 200,
        }
    }
}

/// A periodic LQR design: the converged sweep over one period as an [`Lqr`], and the
/// period-closing jump.
pub struct PeriodicLqr<'a, S: HybridSystem> {
    pub lqr: Lqr<'a, S>,
    pub clock: Clock,
    /// The period T.
    pub period: f64,
    /// The guard whose firing closes the period.
    pub guard: usize,
    /// The period-closing jump (`Ξ_R` or `Ξ`, [`Clock`]).
    pub closing: DMatrix<f64>,
    /// Sweeps made, and the last sweep's relative change of P(0).
    pub sweeps: usize,
    pub change: f64,
}

/// The nominal period: the run of `setup` at `theta` to the first firing of `guard`.
fn one_period<'a, S: HybridSystem>(
    setup: &Setup<'a, S>, theta: &[f64], guard: usize,
) -> Result<(Setup<'a, S>, Trajectory), FeedbackError> {
    let mut ev = setup.events();
    ev.stop_after = Some((guard, 1));
    let bare = setup
        .with_objectives(Vec::new())
        .to_builder()
        .events(ev)
        .build();
    let nominal = bare.simulate(theta)?;
    let closes = nominal
        .events
        .last()
        .is_some_and(|e| e.guard == guard && e.terminal);
    if !closes {
        return Err(FeedbackError::Nominal(format!(
            "the nominal does not reach guard '{}' by t_end = {}: no period to close",
            bare.dims().guard_name(guard),
            bare.t_end()
        )));
    }
    Ok((bare, nominal))
}

/// The jump that closes the period at the nominal's last (terminal) event, for `clock`.
fn closing_jump<S: HybridSystem>(
    setup: &Setup<'_, S>, nominal: &Trajectory, theta: &[f64], clock: Clock,
) -> Result<DMatrix<f64>, Error> {
    let last = nominal.events.len() - 1;
    let e = &nominal.events[last];
    let located = |source| Error::Model {
        t: e.t,
        mode: setup.dims().mode_name(e.mode_before()),
        source,
    };
    let n = setup.n();
    // the terminal record gives g_x, ġ and f⁻; the reset's Jacobians are evaluated here
    let j = Jump::from_record(setup, nominal, last, theta).map_err(located)?;
    let r = setup
        .reset_jacobian(e.mode_before(), e.guard, e.t, &e.before.y[..n], theta)
        .map_err(located)?;
    let ctx0 = nominal.segments[0].ctx();
    let mut f0 = vec![0.0; n];
    setup
        .rhs(&ctx0, setup.t0(), r.x_plus.as_slice(), theta, &mut f0)
        .map_err(located)?;
    Ok(clock.closing_jump(
        &r.rx.to_dense(),
        &r.rt,
        &j.guard.x,
        j.gdot,
        &j.f_minus,
        &DVector::from_vec(f0),
    ))
}

/// Periodic LQR on the orbit that `setup` runs at `theta` from its start to the first
/// firing of `guard` (the start must be the orbit's state just after that guard's reset):
/// `P(T⁻) = Ξ_cᵀ P(0) Ξ_c` with the closing jump of `clock`, the jumps of every other event
/// on the way, and the Riccati equation between them; iterated from `P(T⁺) = Q_f` until
/// P(0) repeats.
pub fn periodic_lqr<'a, S: HybridSystem>(
    setup: &Setup<'a, S>, theta: &[f64], weights: &Weights, guard: usize, clock: Clock,
    opts: PeriodicOptions,
) -> Result<PeriodicLqr<'a, S>, FeedbackError> {
    let (bare, nominal) = one_period(setup, theta, guard)?;
    weights.check(bare.nx(), bare.nu())?;
    let closing = closing_jump(&bare, &nominal, theta, clock)?;
    let last = nominal.events.len() - 1;
    let xi = |i: usize| -> Result<DMatrix<f64>, Error> {
        if i == last {
            return Ok(closing.clone());
        }
        let e = &nominal.events[i];
        Jump::from_record(&bare, &nominal, i, theta)
            .map(|j| j.xi.to_dense())
            .map_err(|source| Error::Model {
                t: e.t,
                mode: bare.dims().mode_name(e.mode_before()),
                source,
            })
    };
    let mut p0 = weights.qf.clone();
    let mut change = f64::INFINITY;
    for k in 1..=opts.max_sweeps {
        crate::interrupt::check()?;
        let sw = sweep(&bare, &nominal, theta, weights, p0.clone(), &xi)?;
        let p_new = sw.p_start().clone();
        change = (&p_new - &p0).amax() / p_new.amax().max(f64::MIN_POSITIVE);
        p0 = p_new;
        if change <= opts.tol {
            let period = nominal.t_final - bare.t0();
            return Ok(PeriodicLqr {
                lqr: Lqr::from_parts(bare, theta.to_vec(), nominal, weights.clone(), sw),
                clock,
                period,
                guard,
                closing,
                sweeps: k,
                change,
            });
        }
    }
    Err(FeedbackError::NoConvergence {
        sweeps: opts.max_sweeps,
        change,
        tol: opts.tol,
    })
}
