//! One simultaneous event (a corner): its crossing orders with their composed jumps, and
//! the B-derivative map for identity resets (module doc of [`super`]).

use super::error::{GroupProblem, SimultaneousError, MAX_GROUP_SIZE};
use crate::error::Error;
use crate::integrate::trajectory::Ctx;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::sensitivity::corner::{bderivative_value, Corner};
use crate::sensitivity::jump::Jump;
use crate::setup::located;
use crate::setup::{ResetJac, Setup};
use nalgebra::{DMatrix, DVector};

/// A reset counts as the identity when `x⁺`, `R_X − I`, `R_θ` and `R_t` are zero to this
/// (relative to `1 + ‖X‖∞` for `x⁺ − X`).
pub(super) const IDENTITY_TOL: f64 = 1e-13;

/// The sensitivity pass accepts an event at this relative distance in time from the plain
/// run's (the two runs take different steps).
pub(super) const PLAN_TIME_TOL: f64 = 1e-6;

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
            return Err(site.error(GroupProblem::Size { n }));
        }
        if x_minus.len() < nx || theta.len() != nth {
            return Err(site.error(GroupProblem::Lengths {
                x: x_minus.len(),
                nx,
                theta: theta.len(),
                ntheta: nth,
            }));
        }
        for (i, &k) in guards.iter().enumerate() {
            if k >= setup.dims.guards.len() {
                return Err(site.error(GroupProblem::NoGuard { index: k }));
            }
            let guard = setup.dims.guard_name(k);
            if guards[..i].contains(&k) {
                return Err(site.error(GroupProblem::Repeated { guard }));
            }
            if setup.dims.guards[k].terminal {
                return Err(site.error(GroupProblem::Terminal { guard }));
            }
        }
        Ok(GroupSite {
            x_minus: &x_minus[..nx],
            ..self
        })
    }

    /// An error that names the group: time, mode before and guards.
    fn error(&self, problem: GroupProblem) -> Error {
        let dims = &self.setup.dims;
        SimultaneousError::Group {
            t: self.t,
            mode: dims.mode_name(self.ctx.mode),
            guards: self.guards.iter().map(|&k| dims.guard_name(k)).collect(),
            problem: Box::new(problem),
        }
        .into()
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
                return Err(self.error(GroupProblem::NotWatched {
                    guard: setup.dims.guard_name(k),
                    mode: setup.dims.mode_name(m),
                    order: None,
                }));
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
        let xm = DVector::from_column_slice(self.x_minus);
        let max_abs = |m: &DMatrix<f64>| if m.is_empty() { 0.0 } else { m.amax() };
        let dev = (&r.x_plus - &xm).amax() / (1.0 + xm.amax());
        let rx_dev = r.rx.distance_from_identity();
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
        &self, order: Vec<usize>, modes: &[usize], identity: bool,
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
                return Err(self.error(GroupProblem::NotWatched {
                    guard: setup.dims.guard_name(k),
                    mode: setup.dims.mode_name(mode),
                    order: Some(order),
                }));
            }
            let c = Ctx { mode, ..*self.ctx };
            let jump = Jump::at(setup, &c, k, t, &x, self.theta, false)
                .map_err(located(setup, t, mode))?;
            if !(jump.gdot.is_finite() && jump.gdot != 0.0) {
                return Err(self.error(GroupProblem::Grazing {
                    guard: setup.dims.guard_name(k),
                    rate: jump.gdot,
                    mode: setup.dims.mode_name(mode),
                }));
            }
            xi_th = jump.xi.mul(&xi_th) + &jump.xi_theta;
            xi = jump.xi.mul(&xi);
            x = jump.x_plus.as_slice().to_vec();
            mode = jump.mode_after;
            mask |= 1 << pos;
            if identity && mode != modes[mask] {
                return Err(self.error(GroupProblem::ModeDepends {
                    crossed: order[..seq.len() + 1]
                        .iter()
                        .map(|&p| setup.dims.guard_name(self.guards[p]))
                        .collect(),
                    mode: setup.dims.mode_name(mode),
                    other: setup.dims.mode_name(modes[mask]),
                }));
            }
            seq.push(mode);
        }
        if xi.iter().chain(xi_th.iter()).any(|v| !v.is_finite()) {
            return Err(self.error(GroupProblem::NotFinite { order }));
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
        Corner::new(normals, fields).map_err(|e| self.error(GroupProblem::Corner(e)))
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
        setup: &Setup<'_, S>, ctx: &Ctx, t: f64, guards: &[usize], x_minus: &[f64], theta: &[f64],
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
                SimultaneousError::NotAnOrder {
                    t: self.t,
                    order: order.to_vec(),
                    n: self.n(),
                }
                .into()
            })
    }

    /// The piece of a crossing order given as guard ids.
    pub fn piece_by_guards(&self, guard_order: &[usize]) -> Result<&OrderPiece, Error> {
        self.pieces
            .iter()
            .find(|p| p.guard_order == guard_order)
            .ok_or_else(|| {
                SimultaneousError::NotAGuardOrder {
                    t: self.t,
                    order: guard_order.to_vec(),
                    guards: self.guards.clone(),
                }
                .into()
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
        &self, s_minus_col: &DVector<f64>, theta_dir: &DVector<f64>,
    ) -> Result<(DVector<f64>, Vec<usize>), Error> {
        let nx = self.x_minus.len();
        let nth = self.pieces[0].saltation_theta.ncols();
        if s_minus_col.len() != nx || theta_dir.len() != nth {
            return Err(SimultaneousError::ColumnLength {
                t: self.t,
                column: s_minus_col.len(),
                nx,
                direction: theta_dir.len(),
                ntheta: nth,
            }
            .into());
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
    setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64],
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
                return Err(SimultaneousError::TerminalInGroup {
                    t: e.t,
                    guard: setup.dims.guard_name(e.guard),
                }
                .into());
            }
            let ctx = traj.event_ctx(i);
            let guards: Vec<usize> = evs.iter().map(|e| e.guard).collect();
            let mut ev =
                SimultaneousEvent::new(setup, &ctx, evs[0].t, &guards, &evs[0].before.y, theta)?;
            ev.group = Some(g);
            ev.events = (i..j).collect();
            out.push(ev);
        }
        i = j;
    }
    Ok(out)
}
