//! The column pass: a forward-sensitivity run whose columns cross each simultaneous group
//! by a chosen rule (the B-derivative, or one crossing order's composed jump).

use super::error::{Divergence, SimultaneousError};
use super::event::{simultaneous_events, SimultaneousEvent, PLAN_TIME_TOL};
use crate::error::{Error, ModelError};
use crate::integrate::hybrid::{GuardRate, HybridRhs};
use crate::integrate::trajectory::Ctx;
use crate::integrate::{Checkpointing, NewtonJacobian, Trajectory};
use crate::model::HybridSystem;
use crate::sensitivity::columns::{column_flow_rhs, ColumnFlow};
use crate::sensitivity::jump::Jump;
use crate::sensitivity::seeds::ObjectiveSeeds;
use crate::setup::{guards_on_leading_state, Setup};
use nalgebra::DMatrix;
use std::cell::{Cell, RefCell};

/// What a column does at a simultaneous group.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum GroupRule {
    /// The B-derivative (the crossing order the column's perturbation induces).
    BDerivative,
    /// The composed jump of a fixed order (positions into the group's guards).
    Order(Vec<usize>),
}

/// One event of the plain run, as the sensitivity pass must meet it.
#[derive(Debug, Clone)]
pub(super) struct PlanEvent {
    t: f64,
    guard: usize,
    mode_before: usize,
    /// (index of its group among the simultaneous groups, position in the group)
    multi: Option<(usize, usize)>,
}

#[derive(Debug, Clone)]
pub(super) struct Plan {
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
                mode_before: e.mode_before(),
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
pub(super) struct ColumnRhs<'s, 'a, S: HybridSystem> {
    flow: ColumnFlow<'s, 'a, S>,
    plan: Plan,
    /// rules[column][group]
    rules: Vec<Vec<GroupRule>>,
    next: Cell<usize>,
    /// seen[group]: bit j set once the group's guard at position j has been met
    seen: RefCell<Vec<u64>>,
    /// orders[group][column]: the order (positions) applied at the group
    orders: RefCell<Vec<Vec<Vec<usize>>>>,
    /// The error that stopped the pass in [`HybridRhs::event`], which can return a
    /// [`ModelError`] only: [`run_columns`] returns this one instead.
    failure: RefCell<Option<Error>>,
}

column_flow_rhs!(ColumnRhs);

impl<S: HybridSystem> ColumnRhs<'_, '_, S> {
    /// Keeps `e` for [`run_columns`] and stops the hybrid loop (its message only stands in
    /// for it there).
    fn fail(&self, e: impl Into<Error>) -> ModelError {
        let e = e.into();
        let stand_in = ModelError::Other(e.to_string());
        *self.failure.borrow_mut() = Some(e);
        stand_in
    }

    /// The event: checked against the plan, then each column across it by its rule.
    fn cross_event(
        &self, ctx: &Ctx, k: usize, t: f64, y: &[f64], terminal: bool,
    ) -> Result<(usize, Vec<f64>), ModelError> {
        let n = self.setup.n();
        let kc = self.k();
        let i = self.next.get();
        self.next.set(i + 1);
        let dims = &self.setup.dims;
        let pe = self.plan.events.get(i).ok_or_else(|| {
            self.fail(SimultaneousError::Diverged {
                divergence: Box::new(Divergence::Extra {
                    guard: dims.guard_name(k),
                    t,
                    events: self.plan.events.len(),
                }),
            })
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
            return Err(self.fail(SimultaneousError::Diverged {
                divergence: Box::new(Divergence::Other {
                    event: i,
                    guard: dims.guard_name(k),
                    mode: dims.mode_name(ctx.mode),
                    t,
                    planned_guard: dims.guard_name(pe.guard),
                    planned_mode: dims.mode_name(pe.mode_before),
                    planned_t: pe.t,
                }),
            }));
        }
        let s_minus = self.columns_of(y);
        let (mode_after, x_plus, s_plus) = match pe.multi {
            None => {
                let jump = Jump::at(self.setup, ctx, k, t, &y[..n], &self.theta, terminal)?;
                let sp = jump.xi.mul(&s_minus) + self.times_dirs(&jump.xi_theta);
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
                    .map_err(|e| self.fail(e))?;
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
                        .map_err(|e| self.fail(e))?;
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
pub(super) struct ColumnRun {
    pub(super) values: Vec<f64>,
    /// derivatives[objective][column]
    pub(super) derivatives: Vec<Vec<f64>>,
    /// orders[group][column] (positions)
    pub(super) orders: Vec<Vec<Vec<usize>>>,
    pub(super) groups: Vec<SimultaneousEvent>,
}

/// The plain run at θ and its simultaneous events (what the sensitivity pass must meet).
pub(super) fn plain_groups<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64],
) -> Result<(Trajectory, Vec<SimultaneousEvent>), Error> {
    setup.check_theta(theta.len())?;
    let plain = setup.simulate(theta)?;
    let groups = simultaneous_events(setup, &plain, theta)?;
    Ok((plain, groups))
}

/// One pass of X with the columns `dirs` (nθ×k), `rules[column][group]` at the groups found
/// by the plain run `plain`.
pub(super) fn run_columns<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], dirs: DMatrix<f64>, plain: &Trajectory,
    groups: Vec<SimultaneousEvent>, rules: Vec<Vec<GroupRule>>,
) -> Result<ColumnRun, Error> {
    setup.check_theta(theta.len())?;
    let n = setup.n();
    let kc = dirs.ncols();
    let flow = ColumnFlow::along(setup, theta, dirs)?;
    if rules.len() != kc || rules.iter().any(|r| r.len() != groups.len()) {
        return Err(Error::Internal("one rule per column and group".into()));
    }
    let (m0, y0) = flow.initial()?;
    let rhs = ColumnRhs {
        flow,
        orders: RefCell::new(vec![vec![Vec::new(); kc]; groups.len()]),
        plan: Plan::of(plain, &groups),
        rules,
        next: Cell::new(0),
        seen: RefCell::new(vec![0; groups.len()]),
        failure: RefCell::new(None),
    };
    let traj = setup
        .run_hybrid(&rhs, y0, m0, Checkpointing::Never)
        .map_err(|e| rhs.failure.take().unwrap_or(e))?;
    if rhs.next.get() != rhs.plan.events.len() {
        return Err(SimultaneousError::Diverged {
            divergence: Box::new(Divergence::Count {
                found: rhs.next.get(),
                planned: rhs.plan.events.len(),
            }),
        }
        .into());
    }
    let multi: Vec<bool> = rhs.plan.events.iter().map(|e| e.multi.is_some()).collect();
    // the X part of the run, for the values and the event contexts
    let fr = crate::sensitivity::forward::ForwardResult {
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
        return Err(SimultaneousError::EventCost {
            guard: Some(setup.dims.guard_name(xt.events[i].guard)),
            t: xt.events[i].t,
        }
        .into());
    }
    let derivatives = rhs.flow.derivatives(
        &seeds,
        &s_f,
        |i| rhs.columns_of(&traj.events[i].before.y),
        |si| rhs.columns_of(traj.state_of(crate::integrate::Instant::SegmentStart(si)).0),
    );
    Ok(ColumnRun {
        values,
        derivatives,
        orders: rhs.orders.into_inner(),
        groups,
    })
}
