//! The return map `P` and its exact Jacobians from one direct-sensitivity pass.
//!
//! The run starts on the section at `x` (θ = (p, x) for [`StartOnSection`]) and stops at
//! the `count`-th firing of the section's guard at `t_e` (a hyperplane section is a guard
//! of the system [`WithSectionGuard`] that the run integrates). With `S⁻ = ∂x(t_e⁻)/∂θ` from the
//! direct sensitivities (theory.md §2–3, the jump at every event on the way) and the jump
//! of that last event, the return map `P(θ) = R(t_e, x(t_e⁻), p)` has
//!
//! ```text
//! dP/dθ = R_x (S⁻ + f⁻ τ) + R_t τ + R_θ = Ξ S⁻ + Ξ_θ + f⁺ τ,   τ = dt_e/dθ = −(g_x S⁻ + g_θ)/ġ
//! ```
//!
//! (the saltation formula of theory §3 plus `f⁺ τ`: `P` is the state at the moving event
//! time, not at a fixed time — this is the projection onto the section that removes the
//! flow direction). Its columns for `x` are the monodromy `DP`, those for `p` are `∂P/∂p`;
//! the period is `T = t_e − t_0` with `dT/dθ = τ`. For a hyperplane section the reset is
//! the identity, `Ξ = I`, `f⁺ = f⁻`, and this is `DP = S⁻ + f⁻ τ`.

use super::section::{Section, SectionKind, StartOnSection};
use super::section_guard::WithSectionGuard;
use crate::error::Error;
use crate::integrate::{EventOptions, SolverOptions, Stats, Trajectory};
use crate::model::HybridSystem;
use crate::periodic_error::PeriodicError;
use crate::sensitivity::forward::forward_sensitivity_lean;
use crate::sensitivity::jump::Jump;
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};

/// How the return map is integrated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapOptions {
    pub solver: SolverOptions,
    pub events: EventOptions,
    /// Longest time one period may take before it is reported as no return.
    pub t_max: f64,
}

/// One event of a cycle.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CycleEvent {
    pub t: f64,
    pub guard: String,
}

/// The return map at one point with its exact first derivatives.
#[derive(Debug, Clone)]
pub struct Return {
    /// `P(x)`.
    pub x_next: DVector<f64>,
    /// `DP = ∂P/∂x` (n×n), the monodromy of the section map.
    pub monodromy: DMatrix<f64>,
    /// `∂P/∂p` (n×np).
    pub dp: DMatrix<f64>,
    /// The period `T`.
    pub period: f64,
    /// `∂T/∂x` (n).
    pub dt_dx: DVector<f64>,
    /// `∂T/∂p` (np).
    pub dt_dp: DVector<f64>,
    /// The events of the cycle (the last is the return to the section).
    pub events: Vec<CycleEvent>,
    /// The run's counters.
    pub stats: Stats,
}

type OnSection<'a, S> = StartOnSection<'a, WithSectionGuard<'a, S>>;

/// The run from the section to the `count`-th firing of the section's guard.
fn setup_for<'a, S: HybridSystem>(
    sys: &'a OnSection<'a, S>, sec: &Section, opts: &MapOptions,
) -> Setup<'a, OnSection<'a, S>> {
    let mut setup = Setup::new(sys, 0.0, opts.t_max, None, Vec::new());
    setup.solver = opts.solver;
    setup.events = opts.events;
    setup.events.stop_after = Some((sys.base.section_guard, sec.count));
    setup
}

/// Checks that the run ended at the `count`-th firing of the section's guard `k`.
fn returned<D>(
    traj: &Trajectory<D>, (k, sec): (usize, &Section), opts: &MapOptions, guard: String, x: &[f64],
) -> Result<usize, Error> {
    let fired = traj.events.iter().filter(|e| e.guard == k).count();
    match traj.events.last() {
        Some(e) if e.terminal && e.guard == k && fired == sec.count => Ok(traj.events.len() - 1),
        _ => Err(PeriodicError::NoReturn {
            guard,
            fired,
            count: sec.count,
            t_max: opts.t_max,
            state: x.to_vec(),
        }
        .into()),
    }
}

/// Fails when `x` lies strictly on the side of the section's guard from which it fires
/// (beyond `zero_tol`; for a guard that fires either way, anywhere off its surface) and is
/// not the reset's image of a point on the guard's surface ([`super::image`]): the run
/// would end at once at a spurious return. A hyperplane section's start must lie on
/// the hyperplane (`|n·x − c| ≤ zero_tol`).
fn check_start<S: HybridSystem>(
    sys: &WithSectionGuard<'_, S>, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64],
) -> Result<(), Error> {
    match miss(sys, sec, opts, p, x) {
        Some(m) => Err(m.refused(x, m.hint)),
        None => Ok(()),
    }
}

/// How a start misses the section ([`miss`]).
pub(super) struct Miss {
    /// The section's guard.
    pub guard: String,
    /// Its value at the start.
    pub value: f64,
    /// `|g|` at most this is on the section.
    pub zero_tol: f64,
    /// What is wrong and what to give instead.
    pub hint: &'static str,
    /// The same, for a miss too large to be moved onto the section (`projection.rs`).
    pub far_hint: &'static str,
}

impl Miss {
    /// The refusal of the start `x`, with `hint`.
    pub fn refused(&self, x: &[f64], hint: &'static str) -> Error {
        PeriodicError::OffSection {
            guard: self.guard.clone(),
            value: self.value,
            zero_tol: self.zero_tol,
            state: x.to_vec(),
            hint,
        }
        .into()
    }
}

/// Whether the start `x` misses the section (see [`check_start`]): `None` when it is on it.
pub(super) fn miss<S: HybridSystem>(
    sys: &WithSectionGuard<'_, S>, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64],
) -> Option<Miss> {
    let k = sys.section_guard;
    let g = sys.guard(sec.mode, k, 0.0, x, &[], p);
    let guards = sys.dims().guards;
    let info = &guards[k];
    let tol = opts.events.zero_tol;
    let (off, hint, far_hint) = match (&sec.kind, info.direction) {
        (SectionKind::Hyperplane(_), _) => (g.abs() > tol, HYPERPLANE_HINT, HYPERPLANE_FAR_HINT),
        (_, crate::model::Direction::Rising) => (g < -tol, AFTER_RESET_HINT, AFTER_RESET_FAR_HINT),
        (_, crate::model::Direction::Falling) => (g > tol, AFTER_RESET_HINT, AFTER_RESET_FAR_HINT),
        (_, crate::model::Direction::Either) => {
            (g.abs() > tol, AFTER_RESET_HINT, AFTER_RESET_FAR_HINT)
        }
    };
    // on the firing side, a start after a reset may still be the reset's image of a point
    // on the surface (a reset that maps off the surface): that is on the section. The
    // preimage is solved in floating point, so to no less than 1e-10.
    let image = || {
        matches!(sec.kind, SectionKind::AfterReset { .. })
            && super::image::is_reset_image(sys, k, sec.mode, p, x, tol.max(1e-10))
    };
    (!g.is_finite() || (off && !image())).then(|| Miss {
        guard: info.name.clone(),
        value: g,
        zero_tol: tol,
        hint,
        far_hint,
    })
}

/// The hints of an off-section start ([`Miss::hint`]), and of one too far off to be moved
/// onto the section ([`Miss::far_hint`]; the bound is `projection.rs`'s `MAX_MISS`).
macro_rules! hints {
    ($($name:ident, $far:ident: $text:literal;)*) => {
        $(
            const $name: &str = $text;
            const $far: &str = concat!(
                $text,
                "; it misses by more than 1 % of 1 + max|x|: too far from the section to be moved onto it"
            );
        )*
    };
}
hints! {
    HYPERPLANE_HINT, HYPERPLANE_FAR_HINT: "give a state on the hyperplane n·x = c";
    AFTER_RESET_HINT, AFTER_RESET_FAR_HINT: "on the side from which it fires and not the reset's image of a point on the guard's surface; give a state just after the reset (the reset's image of a state where the guard is zero)";
}

/// Which Jacobians a return-map evaluation computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// `∂/∂x` only (Newton's iterations): `n` sensitivity columns.
    State,
    /// `∂/∂x` and `∂/∂p`: `n + np` columns.
    StateAndParams,
}

/// `P(x)` and its exact Jacobians (see the module docs), in `x` and `p`.
pub fn return_map<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64],
) -> Result<Return, Error> {
    return_map_with(sys, sec, opts, p, x, Columns::StateAndParams)
}

/// `P(x)` and the chosen Jacobians; with [`Columns::State`], `dp` and `dt_dp` are empty.
pub fn return_map_with<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64], columns: Columns,
) -> Result<Return, Error> {
    let aug = WithSectionGuard::new(sys, sec);
    let k = aug.section_guard;
    check_start(&aug, sec, opts, p, x)?;
    let wrapped = match columns {
        Columns::State => StartOnSection::frozen(&aug, sec.mode, p),
        Columns::StateAndParams => StartOnSection::new(&aug, sec.mode),
    };
    let setup = setup_for(&wrapped, sec, opts);
    let theta = wrapped.theta(p, x);
    // the events and the end are all the map needs: checkpoints, not the interpolants
    let r = forward_sensitivity_lean(&setup, &theta)?;
    let traj = &r.trajectory;
    let last = returned(traj, (k, sec), opts, setup.dims.guard_name(k), x)?;
    let (n, np) = (x.len(), wrapped.np);
    let e = &traj.events[last];
    let ctx = traj.event_ctx(last);
    let jump =
        Jump::at(&setup, &ctx, k, e.t, &e.before.y[..n], &theta, false).map_err(|source| {
            crate::error::Error::Model {
                t: e.t,
                mode: setup.dims.mode_name(ctx.mode),
                source,
            }
        })?;
    let s_minus = DMatrix::from_column_slice(n, np + n, &e.before.y[n..]);
    let tau = jump.tau(&s_minus);
    let full = jump.forward(&s_minus) + &jump.f_plus * tau.transpose();
    Ok(Return {
        x_next: jump.x_plus.clone(),
        monodromy: full.columns(np, n).into_owned(),
        dp: full.columns(0, np).into_owned(),
        period: e.t - setup.t0,
        dt_dx: tau.rows(np, n).into_owned(),
        dt_dp: tau.rows(0, np).into_owned(),
        events: cycle_events(traj, &setup),
        stats: traj.stats,
    })
}

fn cycle_events<D: crate::model::Scalar, S: HybridSystem>(
    traj: &Trajectory<D>, setup: &Setup<'_, S>,
) -> Vec<CycleEvent> {
    traj.events
        .iter()
        .map(|e| CycleEvent {
            t: e.t.re(),
            guard: setup.dims.guard_name(e.guard),
        })
        .collect()
}

/// `P(x)` and the period alone (a plain simulation): for line searches and finite
/// differences. Also returns the trajectory of the cycle (for plots).
pub fn return_value<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64],
) -> Result<(DVector<f64>, f64, Trajectory), Error> {
    let aug = WithSectionGuard::new(sys, sec);
    let k = aug.section_guard;
    check_start(&aug, sec, opts, p, x)?;
    let wrapped = StartOnSection::new(&aug, sec.mode);
    let setup = setup_for(&wrapped, sec, opts);
    let theta = wrapped.theta(p, x);
    let traj = setup.simulate(&theta)?;
    let last = returned(&traj, (k, sec), opts, setup.dims.guard_name(k), x)?;
    let e = &traj.events[last];
    let (_, xp) = setup
        .reset(e.mode_before(), k, e.t, &e.before.y, &theta)
        .map_err(|source| crate::error::Error::Model {
            t: e.t,
            mode: setup.dims.mode_name(e.mode_before()),
            source,
        })?;
    let period = e.t - setup.t0;
    Ok((DVector::from_vec(xp), period, traj))
}

/// A basis of directions at `x` on the section: `n − 1` orthonormal directions tangent
/// to the section guard's surface (`g_x d = 0`), then the flow `f(x)`. `P` is constant
/// along the flow (`DP f = 0`: moving along the orbit does not change where it returns),
/// and a perturbation off the guard's surface against its crossing direction would fire
/// the section's guard at once; so finite differences run along the tangent directions
/// only.
pub fn section_basis<S: HybridSystem>(
    sys: &S, sec: &Section, p: &[f64], x: &[f64],
) -> Result<(DMatrix<f64>, DVector<f64>), Error> {
    let n = x.len();
    let model = |source| crate::error::Error::Model {
        t: 0.0,
        mode: sys.dims().modes.get(sec.mode).cloned().unwrap_or_default(),
        source,
    };
    let aug = WithSectionGuard::new(sys, sec);
    let gx = crate::model::guard_jacobian(&aug, sec.mode, aug.section_guard, 0.0, x, &[], p)
        .map_err(model)?
        .x
        .row(0)
        .transpose();
    let f = crate::model::flow_jacobian(sys, n, sec.mode, 0.0, x, &[], p)
        .map_err(model)?
        .value;
    // Gram–Schmidt on (g_x, e_1, …, e_n): the vectors after the first span g_x's complement
    let mut basis: Vec<DVector<f64>> = vec![gx.normalize()];
    for j in 0..n {
        let mut v = DVector::zeros(n);
        v[j] = 1.0;
        for b in &basis {
            v -= b * b.dot(&v);
        }
        if v.norm() > 1e-6 && basis.len() < n {
            basis.push(v.normalize());
        }
    }
    let tangent = DMatrix::from_columns(&basis[1..]);
    Ok((tangent, f))
}

/// A central finite-difference stencil.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stencil {
    /// `(F(h) − F(−h)) / 2h`, error `O(h²)`: 2 runs per direction.
    Second,
    /// `(8(F(h) − F(−h)) − (F(2h) − F(−2h))) / 12h`, error `O(h⁴)`: 4 runs per direction
    /// (the walker's `P` has large third derivatives: the second-order stencil's error
    /// measured `1.5e5 h²`).
    Fourth,
}

impl Stencil {
    /// `(weight, multiple of h)` pairs of the derivative stencil.
    pub fn weights(self) -> &'static [(f64, f64)] {
        match self {
            Stencil::Second => &[(0.5, 1.0), (-0.5, -1.0)],
            Stencil::Fourth => &[
                (8.0 / 12.0, 1.0),
                (-8.0 / 12.0, -1.0),
                (-1.0 / 12.0, 2.0),
                (1.0 / 12.0, -2.0),
            ],
        }
    }
}

/// Central finite differences of `P` (a witness, and the Jacobian of the FD-Newton
/// baseline): `DP d_j ≈ Σ w_i P(x + c_i h d_j) / h` (the [`Stencil`]) along the tangent
/// directions `d_j` of [`section_basis`], and `DP f = 0` along the flow; assembled as
/// `DP ≈ [DP d_1 … DP d_{n−1}, 0] [d_1 … d_{n−1}, f]⁻¹`. `h` is scaled by `1 + ‖x‖∞`.
pub fn fd_monodromy<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64], h: f64, stencil: Stencil,
) -> Result<DMatrix<f64>, Error> {
    let n = x.len();
    let (tangent, f) = section_basis(sys, sec, p, x)?;
    let h = h * (1.0 + DVector::from_column_slice(x).amax());
    let mut images = DMatrix::zeros(n, n);
    for j in 0..n - 1 {
        let d = tangent.column(j);
        let mut col = DVector::zeros(n);
        for &(w, c) in stencil.weights() {
            let xs: Vec<f64> = x.iter().zip(d.iter()).map(|(a, b)| a + c * h * b).collect();
            let (v, _, _) = return_value(sys, sec, opts, p, &xs)?;
            col += v * (w / h);
        }
        images.set_column(j, &col);
    }
    let mut dirs = tangent.clone().insert_column(n - 1, 0.0);
    dirs.set_column(n - 1, &f);
    let inv = dirs.try_inverse().ok_or_else(|| {
        PeriodicError::Invalid("the flow is tangent to the section's guard at the start".into())
    })?;
    Ok(images * inv)
}

/// The states and outputs of one cycle from `x` sampled on the dense output (for CSV
/// files and phase plots): `t, mode, states…, outputs…`.
pub fn cycle_table<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64],
) -> Result<crate::setup::Table, Error> {
    let aug = WithSectionGuard::new(sys, sec);
    let wrapped = StartOnSection::new(&aug, sec.mode);
    let setup = setup_for(&wrapped, sec, opts);
    let theta = wrapped.theta(p, x);
    let traj = setup.simulate(&theta)?;
    crate::setup::trajectory_table(&setup, &traj, &theta)
}
