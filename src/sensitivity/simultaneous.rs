//! Sensitivities through *simultaneous* events: a trajectory meets n ≥ 2 guard surfaces at
//! one instant (a corner; theory.md §7, seed 003). The hybrid loop records such a group as
//! n events sharing one `group` id, applied in one crossing order; the sequential jumps of
//! [`super::forward`] and [`super::adjoint`] then give the derivative of *that* piece only.
//! The flow is piecewise differentiable there: the derivative depends on the order in which a
//! perturbed trajectory crosses the surfaces. This module exposes what exists instead of a
//! gradient:
//!
//! - [`SimultaneousEvent`]: the data of one group, with every crossing order's composed
//!   jump ([`OrderPiece`]: `S⁺ = Ξ S⁻ + Ξ_θ`, the product of the ordinary jumps of theory §3
//!   built by [`Jump::at`] with the intermediate modes) and, for identity resets, the
//!   B-derivative map ([`SimultaneousEvent::directional`], Algorithm 2.1 via
//!   [`super::bderivative`]).
//! - [`directional_derivative`]: the one-sided directional derivative `Dψ(θ; δθ)` by forward
//!   mode through the B-derivative at every group.
//! - [`piece_gradients`]: one gradient per crossing order of every group, and the
//!   `nonsmooth` flag.
//!
//! # The corner in an augmented state space
//!
//! The guards may depend on θ and t, which Algorithm 2.1 (stated for `ẋ = F(x)` with normals
//! in state space) does not cover directly. The corner is therefore built in the augmented
//! space `ρ̃ = (X, θ, t)` of dimension `n_X + nθ + 1`, where θ is a constant state and t a
//! state of unit speed:
//!
//! - normals `η̃_j = (G_X, G_θ, G_t)` of guard j (evaluated in the group's mode before);
//! - fields `Γ̃(b) = (F_{mode(b)}(t, X), 0, 1)`, where `mode(b)` is the mode reached by
//!   crossing exactly the surfaces with `b_j = +1`;
//! - the perturbation before the corner is taken at fixed time: `δρ̃⁻ = (S⁻δθ, δθ, 0)`.
//!
//! Algorithm 2.1 then computes the crossing-time offsets `τ_j = −(G_X δX + G_θ δθ)/(G_X F + G_t)`
//! of the general formula (theory §3), and returns `δρ̃⁺ = (S⁺δθ, δθ, 0)` (the θ and t
//! components are reproduced exactly). For n = 1 this is the ordinary jump with R = id:
//! `S⁺δθ = Ξ S⁻δθ + Ξ_θ δθ`. The X-block of a piece of the augmented corner equals the
//! [`OrderPiece`] built from [`Jump::at`] (tests/simultaneous.rs checks both).
//!
//! # Requirements and fallbacks
//!
//! - Every guard of the group is watched in every intermediate mode (else some crossing order
//!   is impossible and an error names it).
//! - The guard functions of the group do not depend on the mode among the intermediate modes
//!   (their normals are taken in the mode before).
//! - For identity resets, the mode reached must not depend on the crossing order (an error
//!   otherwise). For a group with a non-identity reset there is no B-derivative of this form
//!   (after a state jump the other surfaces are no longer met at the same point):
//!   [`SimultaneousEvent::directional`] falls back to the piece of the order the simulation
//!   applied (`corner` is `None`, `identity_resets` is false).
//! - A group containing a terminal event is not supported (an error).
//! - An event cost term (event time or output at an event) on an event of a simultaneous
//!   group is not supported by [`directional_derivative`] and [`piece_gradients`] (an error);
//!   running and terminal terms are.
//!
//! # How the directional derivatives and piece gradients are computed
//!
//! Both run one forward-sensitivity pass with a chosen set of columns, through the same hybrid
//! loop as a plain simulation: column c carries `S δθ_c`, integrated as
//! `ṡ = F_X s + F_θ δθ_c`, with the ordinary jump at every single event. At the first event of
//! a simultaneous group the whole group's map is applied to each column at once — the
//! B-derivative (directional derivatives) or a fixed order's composed jump (piece gradients)
//! — and the group's later events leave the columns unchanged. A plain simulation first finds
//! the groups; the sensitivity pass checks that it meets the same event sequence (a group as a
//! set: the order the loop applies within a group is decided by round-off in the crossing
//! times and may differ between runs), and reports an error naming the event otherwise.
//!
//! All piece gradients come from one pass (nθ columns per crossing order of each group), so
//! that they share one step sequence: their differences are then exactly the propagated
//! differences of the composed jumps, and the `nonsmooth` test (relative difference above
//! [`NONSMOOTH_TOL`]) is not blurred by integration error. For group g, the piece of order σ
//! uses σ at g and the recorded order (the one the plain simulation applied) at every other
//! group; the piece of the recorded order is the gradient the ordinary forward and adjoint
//! methods return whenever their runs apply the group in the same order (always when the
//! guards cross at bitwise the same time, as in the symmetric biped drop).
//!
//! Forward mode (rather than the adjoint with the pieces' transposed jumps) was chosen because
//! it handles any number of groups in one pass, needs no change to the adjoint, and costs
//! little at the sizes where piecewise gradients are wanted.

use super::bderivative::{bderivative_value, Corner};
use super::columns::{column_flow_rhs, ColumnFlow};
use super::jump::Jump;
use super::located;
use super::seeds::ObjectiveSeeds;
use crate::error::{Error, ModelError};
use crate::integrate::hybrid::{simulate_hybrid, Ctx, GuardRate, HybridRhs};
use crate::integrate::{NewtonJacobian, Trajectory};
use crate::model::{Direction, HybridSystem};
#[allow(unused_imports)]
use crate::setup::{guard_meta, guards_on_leading_state, ResetJac, Setup};
use nalgebra::{DMatrix, DVector};
use std::cell::{Cell, RefCell};

/// Largest group for which the n! crossing orders are enumerated (720 pieces).
pub const MAX_GROUP_SIZE: usize = 6;

/// Piece gradients differing by more than this (relative to the largest gradient entry of
/// the objective) make an evaluation nonsmooth.
pub const NONSMOOTH_TOL: f64 = 1e-9;

/// A reset counts as the identity when `x⁺`, `R_X − I`, `R_θ` and `R_t` are zero to this
/// (relative to `1 + ‖X‖∞` for `x⁺ − X`).
const IDENTITY_TOL: f64 = 1e-13;

/// The sensitivity pass accepts an event at this relative distance in time from the plain
/// run's (the two runs take different steps).
const PLAN_TIME_TOL: f64 = 1e-6;

/// One crossing order of a simultaneous event and its composed jump.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderPiece {
    /// The order as positions into [`SimultaneousEvent::guards`] (0-based).
    pub order: Vec<usize>,
    /// The same order as guard ids.
    pub guard_order: Vec<usize>,
    /// Mode after each crossing of the order.
    pub modes: Vec<usize>,
    /// `Ξ = Ξ_n ⋯ Ξ_1` (n_X × n_X): the product of the ordinary saltation matrices (theory §3,
    /// [`Jump::at`] with the intermediate modes) in this order.
    pub saltation: DMatrix<f64>,
    /// The matching parameter part (n_X × nθ): `Ξ_θ,k ← Ξ_k Ξ_θ,k−1 + Ξ_θ(step k)`, so that
    /// `S⁺ = Ξ S⁻ + Ξ_θ`.
    pub saltation_theta: DMatrix<f64>,
}

impl OrderPiece {
    /// `Ξ s + Ξ_θ δθ` for one column.
    pub fn apply(&self, s_minus_col: &DVector<f64>, theta_dir: &DVector<f64>) -> DVector<f64> {
        &self.saltation * s_minus_col + &self.saltation_theta * theta_dir
    }
}

/// One simultaneous event: n guards crossed at one instant.
#[derive(Debug, Clone)]
pub struct SimultaneousEvent {
    pub t: f64,
    /// The guards in the order the simulation applied them.
    pub guards: Vec<usize>,
    pub mode_before: usize,
    /// The mode after the whole group.
    pub mode_after: usize,
    /// Group id in the trajectory (`None` when built directly with [`SimultaneousEvent::new`]).
    pub group: Option<usize>,
    /// Indices of the group's events in the trajectory (empty when built directly).
    pub events: Vec<usize>,
    /// The context (mode before and breakpoint interval) of the group.
    pub ctx: Ctx,
    /// X⁻ (n_X).
    pub x_minus: DVector<f64>,
    /// Every crossing order (n! of them, lexicographic in positions); the first is the
    /// recorded order `0, 1, …, n−1`.
    pub pieces: Vec<OrderPiece>,
    /// The mode reached by crossing exactly the surfaces of a sign mask (bit j ⇔ guard
    /// `guards[j]` crossed), for the 2^n masks.
    pub modes: Vec<usize>,
    /// Whether every reset of the group is the identity (then `corner` is set).
    pub identity_resets: bool,
    /// The corner in the augmented space `(X, θ, t)` (module docs), for identity resets.
    pub corner: Option<Corner>,
}

/// Where a group is crossed: the setup, the context (mode before), the time, the guards in
/// the order the simulation applied them, X⁻ (n entries) and θ — what every step of building a
/// [`SimultaneousEvent`] needs.
struct GroupSite<'s, 'a, S: HybridSystem> {
    setup: &'s Setup<'a, S>,
    ctx: &'s Ctx,
    t: f64,
    guards: &'s [usize],
    x_minus: &'s [f64],
    theta: &'s [f64],
}

impl<'s, 'a, S: HybridSystem> GroupSite<'s, 'a, S> {
    /// The site, once the group is one the analysis supports: 1 to [`MAX_GROUP_SIZE`]
    /// distinct, existing, non-terminal guards, and X⁻ and θ of the setup's sizes.
    fn checked(self) -> Result<Self, Error> {
        let (setup, guards) = (self.setup, self.guards);
        let (n, nx, nth) = (guards.len(), setup.n(), setup.ntheta());
        let (site, x_minus, theta) = (&self, self.x_minus, self.theta);
        if n == 0 || n > MAX_GROUP_SIZE {
            return Err(site.error(format!("{n} guards; 1 to {MAX_GROUP_SIZE} are supported")));
        }
        if x_minus.len() < nx || theta.len() != nth {
            return Err(site.error(format!(
                "X⁻ has {} entries (need {nx}) and θ {} (need {nth})",
                x_minus.len(),
                theta.len()
            )));
        }
        for (i, &k) in guards.iter().enumerate() {
            if k >= setup.dims.guards.len() {
                return Err(site.error(format!("guard index {k} does not exist")));
            }
            if guards[..i].contains(&k) {
                return Err(site.error(format!(
                    "guard '{}' appears twice",
                    setup.dims.guard_name(k)
                )));
            }
            if setup.dims.guards[k].terminal {
                return Err(site.error(format!(
                    "guard '{}' is terminal; simultaneous groups with a terminal event are not \
                     supported",
                    setup.dims.guard_name(k)
                )));
            }
        }
        Ok(GroupSite {
            x_minus: &x_minus[..nx],
            ..self
        })
    }

    /// An error that names the group: time, mode before and guards.
    fn error(&self, m: String) -> Error {
        let dims = &self.setup.dims;
        Error::Invalid(format!(
            "simultaneous event at t = {} in mode '{}' (guards {}): {m}",
            self.t,
            dims.mode_name(self.ctx.mode),
            self.guards
                .iter()
                .map(|&k| format!("'{}'", dims.guard_name(k)))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// The mode reached for every sign mask b (bit j set: guard j crossed), by crossing the
    /// guards of b in increasing position, and whether every reset met on the way is the
    /// identity (to [`IDENTITY_TOL`]; the B-derivative's corner needs it).
    fn sign_mask_modes(&self) -> Result<(Vec<usize>, bool), Error> {
        let (setup, n) = (self.setup, self.guards.len());
        let mut modes = vec![usize::MAX; 1 << n];
        modes[0] = self.ctx.mode;
        let mut identity = true;
        for mask in 1usize..(1 << n) {
            let j = mask.trailing_zeros() as usize;
            let m = modes[mask ^ (1 << j)];
            let k = self.guards[j];
            if !setup.sys().guard_active(m, k) {
                return Err(self.error(format!(
                    "guard '{}' is not watched in mode '{}', reached by crossing the others \
                     first: not every crossing order is possible",
                    setup.dims.guard_name(k),
                    setup.dims.mode_name(m)
                )));
            }
            let r = setup
                .reset_jacobian(m, k, self.t, self.x_minus, self.theta)
                .map_err(located(setup, self.t, m))?;
            identity &= self.is_identity(&r);
            modes[mask] = r.mode_after;
        }
        Ok((modes, identity))
    }

    /// Whether a reset is the identity at X⁻: `R = X⁻`, `R_X = I`, `R_θ = 0`, `R_t = 0`.
    fn is_identity(&self, r: &ResetJac) -> bool {
        let nx = self.x_minus.len();
        let xm = DVector::from_column_slice(self.x_minus);
        let max_abs = |m: &DMatrix<f64>| if m.is_empty() { 0.0 } else { m.amax() };
        let dev = (&r.x_plus - &xm).amax() / (1.0 + xm.amax());
        let rx_dev = (&r.rx - DMatrix::<f64>::identity(nx, nx)).amax();
        let rt = if r.rt.is_empty() { 0.0 } else { r.rt.amax() };
        dev <= IDENTITY_TOL
            && rx_dev <= IDENTITY_TOL
            && max_abs(&r.rtheta) <= IDENTITY_TOL
            && rt <= IDENTITY_TOL
    }

    /// The composed jump of one crossing order (positions into the guards): the product of
    /// the ordinary jumps `Ξ`, `Ξ_θ` of theory §3 ([`Jump::at`]) through the intermediate
    /// modes, `Ξ = Ξ_n ⋯ Ξ_1`, `Ξ_θ = Ξ_n(⋯(Ξ_2 Ξ_θ,1 + Ξ_θ,2)⋯) + Ξ_θ,n`. With identity
    /// resets the mode reached must not depend on the order (`modes` by sign mask).
    fn compose(
        &self,
        order: Vec<usize>,
        modes: &[usize],
        identity: bool,
    ) -> Result<OrderPiece, Error> {
        let (setup, t) = (self.setup, self.t);
        let (nx, nth) = (self.x_minus.len(), setup.ntheta());
        let mut xi = DMatrix::<f64>::identity(nx, nx);
        let mut xi_th = DMatrix::<f64>::zeros(nx, nth);
        let mut x = self.x_minus.to_vec();
        let mut mode = self.ctx.mode;
        let mut mask = 0usize;
        let mut seq = Vec::with_capacity(order.len());
        for &pos in &order {
            let k = self.guards[pos];
            if !setup.sys().guard_active(mode, k) {
                return Err(self.error(format!(
                    "guard '{}' is not watched in mode '{}' in crossing order {:?}",
                    setup.dims.guard_name(k),
                    setup.dims.mode_name(mode),
                    order
                )));
            }
            let c = Ctx { mode, ..*self.ctx };
            let jump = Jump::at(setup, &c, k, t, &x, self.theta, false)
                .map_err(located(setup, t, mode))?;
            if !(jump.gdot.is_finite() && jump.gdot != 0.0) {
                return Err(self.error(format!(
                    "guard '{}' has rate {} along the flow of mode '{}' (grazing)",
                    setup.dims.guard_name(k),
                    jump.gdot,
                    setup.dims.mode_name(mode)
                )));
            }
            xi_th = &jump.xi * xi_th + &jump.xi_theta;
            xi = &jump.xi * xi;
            x = jump.x_plus.as_slice().to_vec();
            mode = jump.mode_after;
            mask |= 1 << pos;
            if identity && mode != modes[mask] {
                return Err(self.error(format!(
                    "the mode reached after crossing {:?} depends on the order ('{}' vs \
                     '{}'); the B-derivative needs an order-independent mode",
                    order[..seq.len() + 1]
                        .iter()
                        .map(|&p| setup.dims.guard_name(self.guards[p]))
                        .collect::<Vec<_>>(),
                    setup.dims.mode_name(mode),
                    setup.dims.mode_name(modes[mask])
                )));
            }
            seq.push(mode);
        }
        if xi.iter().chain(xi_th.iter()).any(|v| !v.is_finite()) {
            return Err(self.error(format!(
                "the composed jump of order {order:?} is not finite"
            )));
        }
        Ok(OrderPiece {
            guard_order: order.iter().map(|&p| self.guards[p]).collect(),
            order,
            modes: seq,
            saltation: xi,
            saltation_theta: xi_th,
        })
    }

    /// The corner in the augmented space `(X, θ, t)` (module docs): the normals
    /// `(G_X, G_θ, G_t)` of every guard in the mode before, and the fields `(F_mode(b), 0, 1)`
    /// of every sign mask b.
    fn corner(&self, modes: &[usize]) -> Result<Corner, Error> {
        let (setup, ctx, t) = (self.setup, self.ctx, self.t);
        let (nx, nth) = (self.x_minus.len(), setup.ntheta());
        let d = nx + nth + 1;
        let mut normals = DMatrix::zeros(self.guards.len(), d);
        for (j, &k) in self.guards.iter().enumerate() {
            let g = setup
                .guard_jacobian(ctx, k, t, self.x_minus, self.theta)
                .map_err(located(setup, t, ctx.mode))?;
            normals
                .view_mut((j, 0), (1, nx))
                .copy_from(&g.x.transpose());
            normals
                .view_mut((j, nx), (1, nth))
                .copy_from(&g.theta.transpose());
            normals[(j, nx + nth)] = g.t;
        }
        let mut fields = Vec::with_capacity(modes.len());
        for &m in modes {
            let c = Ctx { mode: m, ..*ctx };
            let mut v = DVector::zeros(d);
            setup
                .rhs(&c, t, self.x_minus, self.theta, &mut v.as_mut_slice()[..nx])
                .map_err(located(setup, t, m))?;
            v[nx + nth] = 1.0;
            fields.push(v);
        }
        Corner::new(normals, fields).map_err(|e| match e {
            Error::Invalid(m) => self.error(m),
            other => other,
        })
    }
}

/// All permutations of `0..n` in lexicographic order.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn rec(n: usize, cur: &mut Vec<usize>, used: &mut [bool], out: &mut Vec<Vec<usize>>) {
        if cur.len() == n {
            out.push(cur.clone());
            return;
        }
        for j in 0..n {
            if !used[j] {
                used[j] = true;
                cur.push(j);
                rec(n, cur, used, out);
                cur.pop();
                used[j] = false;
            }
        }
    }
    let mut out = Vec::new();
    rec(n, &mut Vec::with_capacity(n), &mut vec![false; n], &mut out);
    out
}

impl SimultaneousEvent {
    /// Builds the data of a group of guards `guards` (in the order the simulation applied
    /// them) crossed at `(t, X⁻)` in the context `ctx` (its mode is the mode before). Also
    /// usable with a single guard (n = 1: the ordinary jump).
    pub fn new<S: HybridSystem>(
        setup: &Setup<'_, S>,
        ctx: &Ctx,
        t: f64,
        guards: &[usize],
        x_minus: &[f64],
        theta: &[f64],
    ) -> Result<SimultaneousEvent, Error> {
        let site = GroupSite {
            setup,
            ctx,
            t,
            guards,
            x_minus,
            theta,
        }
        .checked()?;
        let (modes, identity) = site.sign_mask_modes()?;
        let pieces = permutations(guards.len())
            .into_iter()
            .map(|order| site.compose(order, &modes, identity))
            .collect::<Result<Vec<_>, _>>()?;
        let mode_after = pieces[0].modes.last().copied().unwrap_or(ctx.mode);
        let corner = if identity {
            Some(site.corner(&modes)?)
        } else {
            None
        };
        Ok(SimultaneousEvent {
            t,
            guards: guards.to_vec(),
            mode_before: ctx.mode,
            mode_after,
            group: None,
            events: Vec::new(),
            ctx: *ctx,
            x_minus: DVector::from_column_slice(site.x_minus),
            pieces,
            modes,
            identity_resets: identity,
            corner,
        })
    }

    /// Number of guards n.
    pub fn n(&self) -> usize {
        self.guards.len()
    }

    /// The piece of a crossing order given as positions into `guards`.
    pub fn piece(&self, order: &[usize]) -> Result<&OrderPiece, Error> {
        self.pieces
            .iter()
            .find(|p| p.order == order)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "simultaneous event at t = {}: {order:?} is not a crossing order of its {} \
                 guards (give a permutation of 0..{})",
                    self.t,
                    self.n(),
                    self.n()
                ))
            })
    }

    /// The piece of a crossing order given as guard ids.
    pub fn piece_by_guards(&self, guard_order: &[usize]) -> Result<&OrderPiece, Error> {
        self.pieces
            .iter()
            .find(|p| p.guard_order == guard_order)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "simultaneous event at t = {}: guard order {guard_order:?} is not a \
                     permutation of its guards {:?}",
                    self.t, self.guards
                ))
            })
    }

    /// The piece of the order the simulation applied (`0, 1, …, n−1`).
    pub fn recorded_piece(&self) -> &OrderPiece {
        &self.pieces[0]
    }

    /// The B-derivative on one column: the state perturbation after the corner
    /// `δX⁺ = S⁺δθ` from `δX⁻ = S⁻δθ` (`s_minus_col`) and the parameter direction δθ, with the
    /// crossing order (positions into `guards`) of the perturbed trajectory. Algorithm 2.1
    /// on the augmented corner (module docs); for non-identity resets, the piece of the
    /// recorded order. Ties (directions on a boundary between pieces) go to the smaller
    /// position; B is continuous, so the value does not depend on the tie-break.
    pub fn directional(
        &self,
        s_minus_col: &DVector<f64>,
        theta_dir: &DVector<f64>,
    ) -> Result<(DVector<f64>, Vec<usize>), Error> {
        let nx = self.x_minus.len();
        let nth = self.pieces[0].saltation_theta.ncols();
        if s_minus_col.len() != nx || theta_dir.len() != nth {
            return Err(Error::Invalid(format!(
                "simultaneous event at t = {}: the column has {} entries (need {nx}) and the \
                 direction {} (need {nth})",
                self.t,
                s_minus_col.len(),
                theta_dir.len()
            )));
        }
        match &self.corner {
            Some(corner) => {
                let mut rho = DVector::zeros(nx + nth + 1);
                rho.rows_mut(0, nx).copy_from(s_minus_col);
                rho.rows_mut(nx, nth).copy_from(theta_dir);
                let (v, order) = bderivative_value(corner, &rho)?;
                Ok((v.rows(0, nx).into_owned(), order))
            }
            None => {
                let p = self.recorded_piece();
                Ok((p.apply(s_minus_col, theta_dir), p.order.clone()))
            }
        }
    }

    /// The largest entry of the differences between the pieces' composed jumps `[Ξ | Ξ_θ]`
    /// and the recorded order's (0 when all orders agree).
    pub fn max_piece_difference(&self) -> f64 {
        let r = &self.pieces[0];
        self.pieces
            .iter()
            .map(|p| {
                let a = (&p.saltation - &r.saltation).amax();
                let b = if r.saltation_theta.is_empty() {
                    0.0
                } else {
                    (&p.saltation_theta - &r.saltation_theta).amax()
                };
                a.max(b)
            })
            .fold(0.0, f64::max)
    }
}

/// The simultaneous events (groups of ≥ 2 events sharing a group id) of a trajectory of X
/// (a trajectory of (X, S) works too: only the first n_X components are used).
pub fn simultaneous_events<S: HybridSystem>(
    setup: &Setup<'_, S>,
    traj: &Trajectory,
    theta: &[f64],
) -> Result<Vec<SimultaneousEvent>, Error> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < traj.events.len() {
        let g = traj.events[i].group;
        let mut j = i;
        while j < traj.events.len() && traj.events[j].group == g {
            j += 1;
        }
        if j - i >= 2 {
            let evs = &traj.events[i..j];
            if let Some(e) = evs.iter().find(|e| e.terminal) {
                return Err(Error::Invalid(format!(
                    "simultaneous event at t = {} contains the terminal guard '{}': not \
                     supported",
                    e.t,
                    setup.dims.guard_name(e.guard)
                )));
            }
            let ctx = traj.event_ctx(i);
            let guards: Vec<usize> = evs.iter().map(|e| e.guard).collect();
            let mut ev =
                SimultaneousEvent::new(setup, &ctx, evs[0].t, &guards, &evs[0].y_minus, theta)?;
            ev.group = Some(g);
            ev.events = (i..j).collect();
            out.push(ev);
        }
        i = j;
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The column pass
// ---------------------------------------------------------------------------------------------

/// What a column does at a simultaneous group.
#[derive(Debug, Clone, PartialEq)]
enum GroupRule {
    /// The B-derivative (the crossing order the column's perturbation induces).
    BDerivative,
    /// The composed jump of a fixed order (positions into the group's guards).
    Order(Vec<usize>),
}

/// One event of the plain run, as the sensitivity pass must meet it.
#[derive(Debug, Clone)]
struct PlanEvent {
    t: f64,
    guard: usize,
    mode_before: usize,
    /// (index of its group among the simultaneous groups, position in the group)
    multi: Option<(usize, usize)>,
}

#[derive(Debug, Clone)]
struct Plan {
    events: Vec<PlanEvent>,
    /// The guards of each simultaneous group, in recorded order.
    groups: Vec<Vec<usize>>,
}

impl Plan {
    fn of(traj: &Trajectory, groups: &[SimultaneousEvent]) -> Plan {
        let mut events: Vec<PlanEvent> = traj
            .events
            .iter()
            .map(|e| PlanEvent {
                t: e.t,
                guard: e.guard,
                mode_before: e.mode_before,
                multi: None,
            })
            .collect();
        for (gi, g) in groups.iter().enumerate() {
            for (pos, &ei) in g.events.iter().enumerate() {
                events[ei].multi = Some((gi, pos));
            }
        }
        Plan {
            events,
            groups: groups.iter().map(|g| g.guards.clone()).collect(),
        }
    }
}

/// X with k sensitivity columns `s_c = S δθ_c` ([`ColumnFlow::along`]), integrated
/// together, with the rule each column follows at each simultaneous group.
struct ColumnRhs<'s, 'a, S: HybridSystem> {
    flow: ColumnFlow<'s, 'a, S>,
    plan: Plan,
    /// rules[column][group]
    rules: Vec<Vec<GroupRule>>,
    next: Cell<usize>,
    /// seen[group]: bit j set once the group's guard at position j has been met
    seen: RefCell<Vec<u64>>,
    /// orders[group][column]: the order (positions) applied at the group
    orders: RefCell<Vec<Vec<Vec<usize>>>>,
}

impl<'s, 'a, S: HybridSystem> std::ops::Deref for ColumnRhs<'s, 'a, S> {
    type Target = ColumnFlow<'s, 'a, S>;
    fn deref(&self) -> &Self::Target {
        &self.flow
    }
}

impl<S: HybridSystem> HybridRhs<f64> for ColumnRhs<'_, '_, S> {
    column_flow_rhs!();
    fn event(
        &self,
        ctx: &Ctx,
        k: usize,
        t: f64,
        y: &[f64],
        terminal: bool,
    ) -> Result<(usize, Vec<f64>), ModelError> {
        let n = self.setup.n();
        let kc = self.k();
        let i = self.next.get();
        self.next.set(i + 1);
        let dims = &self.setup.dims;
        let pe = self.plan.events.get(i).ok_or_else(|| {
            ModelError::Other(format!(
                "the sensitivity pass met an event of guard '{}' at t = {t} beyond the {} \
                 events of the plain simulation",
                dims.guard_name(k),
                self.plan.events.len()
            ))
        })?;
        // A single event must match the plain run's exactly. Within a simultaneous group the
        // crossing order the loop applies may differ between runs (the crossing times agree
        // to round-off), so a group is matched as a set: its first event in the mode before,
        // then each of its guards once.
        let matches = match pe.multi {
            None => pe.guard == k && pe.mode_before == ctx.mode,
            Some((g, pos)) => {
                let mut seen = self.seen.borrow_mut();
                let member = self.plan.groups[g].iter().position(|&x| x == k);
                match member {
                    Some(j)
                        if seen[g] & (1 << j) == 0 && (pos > 0 || pe.mode_before == ctx.mode) =>
                    {
                        seen[g] |= 1 << j;
                        true
                    }
                    _ => false,
                }
            }
        };
        if !matches || (pe.t - t).abs() > PLAN_TIME_TOL * t.abs().max(1.0) {
            return Err(ModelError::Other(format!(
                "the sensitivity pass met guard '{}' in mode '{}' at t = {t} where the plain \
                 simulation had guard '{}' in mode '{}' at t = {} (event {i}): near-simultaneous \
                 crossings resolved differently; tighten the tolerances or move θ",
                dims.guard_name(k),
                dims.mode_name(ctx.mode),
                dims.guard_name(pe.guard),
                dims.mode_name(pe.mode_before),
                pe.t
            )));
        }
        let s_minus = self.columns_of(y);
        let (mode_after, x_plus, s_plus) = match pe.multi {
            None => {
                let jump = Jump::at(self.setup, ctx, k, t, &y[..n], &self.theta, terminal)?;
                let sp = &jump.xi * &s_minus + self.times_dirs(&jump.xi_theta);
                (jump.mode_after, jump.x_plus.as_slice().to_vec(), sp)
            }
            Some((g, pos)) => {
                let (m2, xp) = self.setup.reset(ctx.mode, k, t, &y[..n], &self.theta)?;
                let sp = if pos == 0 {
                    let ev = SimultaneousEvent::new(
                        self.setup,
                        ctx,
                        t,
                        &self.plan.groups[g],
                        &y[..n],
                        &self.theta,
                    )
                    .map_err(|e| ModelError::Other(e.to_string()))?;
                    let mut sp = DMatrix::zeros(n, kc);
                    let mut orders = self.orders.borrow_mut();
                    for col in 0..kc {
                        let dth = self.direction(col);
                        let sc = s_minus.column(col).into_owned();
                        let (v, order) = match &self.rules[col][g] {
                            GroupRule::BDerivative => ev.directional(&sc, &dth),
                            GroupRule::Order(o) => {
                                ev.piece(o).map(|p| (p.apply(&sc, &dth), o.clone()))
                            }
                        }
                        .map_err(|e| ModelError::Other(e.to_string()))?;
                        sp.set_column(col, &v);
                        orders[g][col] = order;
                    }
                    sp
                } else {
                    s_minus
                };
                (m2, xp, sp)
            }
        };
        let mut out = x_plus;
        out.extend_from_slice(s_plus.as_slice());
        Ok((mode_after, out))
    }
}

/// The result of a column pass.
struct ColumnRun {
    values: Vec<f64>,
    /// derivatives[objective][column]
    derivatives: Vec<Vec<f64>>,
    /// orders[group][column] (positions)
    orders: Vec<Vec<Vec<usize>>>,
    groups: Vec<SimultaneousEvent>,
}

/// The plain run at θ and its simultaneous events (what the sensitivity pass must meet).
fn plain_groups<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
) -> Result<(Trajectory, Vec<SimultaneousEvent>), Error> {
    setup.check_theta(theta.len())?;
    let plain = setup.simulate(theta)?;
    let groups = simultaneous_events(setup, &plain, theta)?;
    Ok((plain, groups))
}

/// One pass of X with the columns `dirs` (nθ×k), `rules[column][group]` at the groups found
/// by the plain run `plain`.
fn run_columns<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
    dirs: DMatrix<f64>,
    plain: &Trajectory,
    groups: Vec<SimultaneousEvent>,
    rules: Vec<Vec<GroupRule>>,
) -> Result<ColumnRun, Error> {
    setup.check_theta(theta.len())?;
    let n = setup.n();
    let kc = dirs.ncols();
    let flow = ColumnFlow::along(setup, theta, dirs)?;
    if rules.len() != kc || rules.iter().any(|r| r.len() != groups.len()) {
        return Err(Error::Invalid(
            "internal: one rule per column and group".into(),
        ));
    }
    let (m0, y0) = flow.initial()?;
    let rhs = ColumnRhs {
        flow,
        orders: RefCell::new(vec![vec![Vec::new(); kc]; groups.len()]),
        plan: Plan::of(plain, &groups),
        rules,
        next: Cell::new(0),
        seen: RefCell::new(vec![0; groups.len()]),
    };
    let traj = simulate_hybrid(
        &rhs,
        y0,
        m0,
        &setup.breakpoints(),
        &setup.solver,
        &setup.events,
    )?;
    if rhs.next.get() != rhs.plan.events.len() {
        return Err(Error::Invalid(format!(
            "the sensitivity pass met {} events, the plain simulation {}: near-simultaneous \
             crossings resolved differently; tighten the tolerances or move θ",
            rhs.next.get(),
            rhs.plan.events.len()
        )));
    }
    let multi: Vec<bool> = rhs.plan.events.iter().map(|e| e.multi.is_some()).collect();
    // the X part of the run, for the values and the event contexts
    let fr = super::forward::ForwardResult {
        trajectory: traj,
        values: vec![],
        gradients: vec![],
        events: vec![],
    };
    let xt = fr.state_trajectory(n);
    let traj = fr.trajectory;
    let values = setup.objective_values(&xt, theta)?;
    let s_f = rhs.columns_of(&traj.y_final);
    // the objectives' seeds (as for the direct and adjoint gradients), applied to the
    // columns: λ_tfᵀ S(tf) + μ_tfᵀ δθ + Σ_events c_Xᵀ S⁻ + c_θᵀ δθ
    let jumps = Jump::tape(setup, &xt, theta)?;
    let seeds = ObjectiveSeeds::build(setup, &xt, theta, |i| Ok(&jumps[i]))?;
    if let Some(i) = (0..xt.events.len()).find(|&i| multi[i] && seeds.has_event_cost(i)) {
        return Err(Error::Invalid(format!(
            "an event cost term refers to the event of guard '{}' at t = {}, which is part of a \
             simultaneous event: not supported by the nonsmooth analysis",
            setup.dims.guard_name(xt.events[i].guard),
            xt.events[i].t
        )));
    }
    let derivatives = rhs
        .flow
        .derivatives(&seeds, &s_f, |i| rhs.columns_of(&traj.events[i].y_minus));
    Ok(ColumnRun {
        values,
        derivatives,
        orders: rhs.orders.into_inner(),
        groups,
    })
}

// ---------------------------------------------------------------------------------------------
// Directional derivatives
// ---------------------------------------------------------------------------------------------

/// The one-sided directional derivative of every objective.
#[derive(Debug, Clone)]
pub struct DirectionalDerivative {
    /// The direction δθ.
    pub direction: Vec<f64>,
    /// ψ_i(θ).
    pub values: Vec<f64>,
    /// `Dψ_i(θ; δθ) = lim_{ε→0+} (ψ_i(θ + εδθ) − ψ_i(θ))/ε`.
    pub derivatives: Vec<f64>,
    /// For each simultaneous group (in time order), the crossing order of the perturbed
    /// trajectory as guard ids.
    pub orders: Vec<Vec<usize>>,
    /// The simultaneous events of the trajectory at θ.
    pub groups: Vec<SimultaneousEvent>,
}

/// `Dψ(θ; δθ)` by forward mode through the B-derivative at every simultaneous event (module
/// docs). Without simultaneous events it is `∇ψ·δθ`.
pub fn directional_derivative<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
    dir: &[f64],
) -> Result<DirectionalDerivative, Error> {
    let mut v = directional_derivatives(setup, theta, &[dir.to_vec()])?;
    Ok(v.remove(0))
}

/// [`directional_derivative`] for several directions in one pass (one column each).
pub fn directional_derivatives<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
    dirs: &[Vec<f64>],
) -> Result<Vec<DirectionalDerivative>, Error> {
    let nth = setup.ntheta();
    if dirs.is_empty() {
        return Err(Error::Invalid("no direction given".into()));
    }
    for (i, d) in dirs.iter().enumerate() {
        if d.len() != nth {
            return Err(Error::Invalid(format!(
                "direction {i} has {} entries; θ has {nth}",
                d.len()
            )));
        }
    }
    let k = dirs.len();
    let dm = DMatrix::from_fn(nth, k, |r, c| dirs[c][r]);
    let (plain, groups) = plain_groups(setup, theta)?;
    let rules = vec![vec![GroupRule::BDerivative; groups.len()]; k];
    let run = run_columns(setup, theta, dm, &plain, groups, rules)?;
    Ok((0..k)
        .map(|c| DirectionalDerivative {
            direction: dirs[c].clone(),
            values: run.values.clone(),
            derivatives: run.derivatives.iter().map(|d| d[c]).collect(),
            orders: run
                .orders
                .iter()
                .zip(&run.groups)
                .map(|(o, g)| o[c].iter().map(|&p| g.guards[p]).collect())
                .collect(),
            groups: run.groups.clone(),
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Piecewise gradients
// ---------------------------------------------------------------------------------------------

/// The gradient of ψ for one crossing order of one group.
#[derive(Debug, Clone)]
pub struct PieceGradient {
    /// The order as positions into the group's guards.
    pub order: Vec<usize>,
    /// The order as guard ids.
    pub guard_order: Vec<usize>,
    /// dψ_i/dθ with this order's composed jump at the group (and the recorded order at every
    /// other group), per objective.
    pub gradients: Vec<Vec<f64>>,
}

/// The piece gradients of one simultaneous group.
#[derive(Debug, Clone)]
pub struct GroupGradients {
    pub t: f64,
    pub guards: Vec<usize>,
    /// One per crossing order, in the order of [`SimultaneousEvent::pieces`] (the recorded
    /// order first).
    pub pieces: Vec<PieceGradient>,
    /// max over pieces and objectives of ‖g_σ − g_recorded‖∞ / max_σ ‖g_σ‖∞.
    pub max_relative_difference: f64,
    /// `max_relative_difference > NONSMOOTH_TOL`.
    pub nonsmooth: bool,
}

/// ψ with its piecewise gradients at θ.
#[derive(Debug, Clone)]
pub struct NonsmoothEvaluation {
    pub values: Vec<f64>,
    /// The gradients of the recorded orders (what the ordinary forward and adjoint methods
    /// return), per objective.
    pub gradients: Vec<Vec<f64>>,
    /// One entry per simultaneous group, in time order.
    pub groups: Vec<GroupGradients>,
    /// Whether a simultaneous group exists whose piece gradients differ (ψ has no gradient
    /// at θ, only one-sided directional derivatives).
    pub nonsmooth: bool,
    /// The largest `max_relative_difference` over the groups (0 without groups).
    pub max_relative_difference: f64,
    /// The simultaneous events at θ.
    pub events: Vec<SimultaneousEvent>,
}

/// The gradient of every piece of every simultaneous group, in one forward pass (module
/// docs), and the `nonsmooth` flag.
pub fn piece_gradients<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
) -> Result<NonsmoothEvaluation, Error> {
    let nth = setup.ntheta();
    let (plain, groups) = plain_groups(setup, theta)?;
    // blocks: the recorded order everywhere, then (g, σ) for every non-recorded σ
    let mut blocks: Vec<Option<(usize, Vec<usize>)>> = vec![None];
    for (g, ev) in groups.iter().enumerate() {
        for p in ev.pieces.iter().skip(1) {
            blocks.push(Some((g, p.order.clone())));
        }
    }
    let nb = blocks.len();
    let mut dirs = DMatrix::zeros(nth, nb * nth);
    for b in 0..nb {
        for i in 0..nth {
            dirs[(i, b * nth + i)] = 1.0;
        }
    }
    let mut rules = Vec::with_capacity(nb * nth);
    for blk in &blocks {
        let per_group: Vec<GroupRule> = groups
            .iter()
            .enumerate()
            .map(|(g, ev)| match blk {
                Some((bg, o)) if *bg == g => GroupRule::Order(o.clone()),
                _ => GroupRule::Order((0..ev.n()).collect()),
            })
            .collect();
        rules.extend(std::iter::repeat_n(per_group, nth));
    }
    let run = run_columns(setup, theta, dirs, &plain, groups, rules)?;
    let block_grad = |b: usize| -> Vec<Vec<f64>> {
        run.derivatives
            .iter()
            .map(|d| d[b * nth..(b + 1) * nth].to_vec())
            .collect()
    };
    let recorded = block_grad(0);
    let mut out_groups = Vec::new();
    let mut overall = 0.0f64;
    for (g, ev) in run.groups.iter().enumerate() {
        let mut pieces = vec![PieceGradient {
            order: ev.pieces[0].order.clone(),
            guard_order: ev.pieces[0].guard_order.clone(),
            gradients: recorded.clone(),
        }];
        for (b, blk) in blocks.iter().enumerate() {
            if let Some((bg, o)) = blk {
                if *bg == g {
                    let p = ev.piece(o)?;
                    pieces.push(PieceGradient {
                        order: o.clone(),
                        guard_order: p.guard_order.clone(),
                        gradients: block_grad(b),
                    });
                }
            }
        }
        let mut diff = 0.0f64;
        for oi in 0..run.values.len() {
            let scale = pieces
                .iter()
                .flat_map(|p| p.gradients[oi].iter())
                .fold(0.0f64, |a, v| a.max(v.abs()));
            if scale == 0.0 {
                continue;
            }
            for p in &pieces {
                let d = p.gradients[oi]
                    .iter()
                    .zip(&recorded[oi])
                    .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
                diff = diff.max(d / scale);
            }
        }
        overall = overall.max(diff);
        out_groups.push(GroupGradients {
            t: ev.t,
            guards: ev.guards.clone(),
            pieces,
            max_relative_difference: diff,
            nonsmooth: diff > NONSMOOTH_TOL,
        });
    }
    Ok(NonsmoothEvaluation {
        values: run.values,
        gradients: recorded,
        nonsmooth: out_groups.iter().any(|g| g.nonsmooth),
        groups: out_groups,
        max_relative_difference: overall,
        events: run.groups,
    })
}

/// The smallest common helper for callers that only need the flag: whether ψ is nonsmooth
/// at θ (a simultaneous group whose piece gradients differ).
pub fn is_nonsmooth<S: HybridSystem>(setup: &Setup<'_, S>, theta: &[f64]) -> Result<bool, Error> {
    Ok(piece_gradients(setup, theta)?.nonsmooth)
}
