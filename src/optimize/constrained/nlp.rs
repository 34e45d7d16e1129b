//! The constrained problem as the SQP sees it: variables `x = (θ_free, T)` (T only with a
//! free final time) inside their bounds, the objective `f(x) = ψ₀(θ, T)` and the
//! constraint rows `c_r(x)` with their bounds, all with exact gradients from one engine
//! evaluation: the cost and every constraint with a functional are objectives of one setup,
//! so one forward run and one vector-adjoint pass (or one direct pass, when θ is shorter
//! than the list of objectives) give them all (docs/constrained.md, "Jacobians").

use super::error::ConstrainedError;
pub(crate) use super::point::{PathRow, Point, Row, RowAt, RowLabel};
use super::problem::Problem;
use crate::constraint::{ConstraintKind, Constraints};
use crate::cost::Quantity;
use crate::error::Error;
use crate::integrate::trajectory::Ctx;
use crate::model::HybridSystem;
use crate::optimize::ThetaEntry;
use crate::sensitivity::{evaluate, Evaluation, GradientMethod};
use crate::setup::Setup;
use num_dual::Dual64;

/// The problem: the setup with one objective per constraint functional after the cost,
/// θ's fixed values, the optimized entries, and x's bounds.
pub(crate) struct Nlp<'s, 'a, S: HybridSystem> {
    pub setup: Setup<'a, S>,
    pub constraints: &'s Constraints,
    /// Objective index of each constraint with a functional.
    objective_of: Vec<Option<usize>>,
    pub base: Vec<f64>,
    pub free: Vec<usize>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    pub method: GradientMethod,
}

impl<'s, 'a, S: HybridSystem> Nlp<'s, 'a, S> {
    /// The problem of minimizing objective 0 of `setup` over the optimized entries of
    /// `theta` (and T) subject to `constraints`.
    pub fn new(
        setup: &Setup<'a, S>, theta: &[ThetaEntry], constraints: &'s Constraints,
        method: GradientMethod,
    ) -> Result<Self, Error> {
        setup.check_theta(theta.len())?;
        let (objectives, objective_of) = functionals(setup, constraints, theta.len())?;
        let s = setup.with_objectives(objectives);
        let (free, mut lower, mut upper) = free_bounds(theta)?;
        if let Some(ft) = constraints.free_time {
            check_free_time(&s, ft)?;
            lower.push(ft.lower);
            upper.push(ft.upper);
        }
        if lower.is_empty() {
            return Err(Error::NothingToOptimize);
        }
        // the direct method when θ is shorter than the list of objectives (its cost grows
        // with θ's columns, the adjoint's with the objectives)
        let method = match method {
            GradientMethod::Adjoint if setup.ntheta() < s.objectives.len() => {
                GradientMethod::Direct
            }
            m => m,
        };
        Ok(Nlp {
            setup: s,
            constraints,
            objective_of,
            base: theta.iter().map(|e| e.value).collect(),
            free,
            lower,
            upper,
            method,
        })
    }

    /// Number of variables.
    pub fn n(&self) -> usize {
        self.lower.len()
    }

    /// The start point: θ's values and T's.
    pub fn x0(&self) -> Vec<f64> {
        let mut x: Vec<f64> = self.free.iter().map(|&k| self.base[k]).collect();
        if let Some(ft) = self.constraints.free_time {
            x.push(ft.value);
        }
        x
    }

    /// θ and T of x.
    pub fn theta_of(&self, x: &[f64]) -> (Vec<f64>, f64) {
        let mut th = self.base.clone();
        for (i, &k) in self.free.iter().enumerate() {
            th[k] = x[i];
        }
        let t_end = match self.constraints.free_time {
            Some(_) => x[self.free.len()],
            None => self.setup.t_end,
        };
        (th, t_end)
    }

    /// The setup with the horizon ending at `t_end`.
    pub fn setup_at(&self, t_end: f64) -> Setup<'a, S> {
        let mut s = self.setup.with_objectives(self.setup.objectives.clone());
        s.t_end = t_end;
        s
    }

    /// f, ∇f and every row at x.
    pub fn evaluate_at(&self, x: &[f64]) -> Result<Point, Error> {
        crate::interrupt::check()?;
        if x.iter().any(|v| !v.is_finite()) {
            return Err(Error::Optimizer(format!(
                "the solver proposed non-finite variables {x:?}"
            )));
        }
        let (theta, t_end) = self.theta_of(x);
        let moved;
        let setup = match self.constraints.free_time {
            Some(_) => {
                moved = self.setup_at(t_end);
                &moved
            }
            None => &self.setup,
        };
        let ev = evaluate(setup, &theta, self.method)?;
        let dt = match self.constraints.free_time {
            Some(_) => time_derivatives(setup, &ev, &theta)?,
            None => vec![],
        };
        let grad_of = |o: usize| -> Vec<f64> {
            let mut g: Vec<f64> = self.free.iter().map(|&k| ev.gradients[o][k]).collect();
            if let Some(d) = dt.get(o) {
                g.push(*d);
            }
            g
        };
        let f = ev.values[0];
        let g = grad_of(0);
        if !f.is_finite() || g.iter().any(|v| !v.is_finite()) {
            return Err(Error::Optimizer(format!(
                "non-finite cost or gradient at θ = {theta:?}"
            )));
        }
        let mut rows = Vec::new();
        for (ci, c) in self.constraints.list.iter().enumerate() {
            let (lower, upper) = c.limits();
            let whole = |value: f64, grad: Vec<f64>| Row::whole(ci, value, grad, (lower, upper));
            match (c.kind, self.objective_of[ci]) {
                (ConstraintKind::Quantity(Quantity::FinalTime), _) => {
                    let mut grad = vec![0.0; self.n()];
                    grad[self.free.len()] = 1.0;
                    rows.push(whole(t_end, grad));
                }
                (ConstraintKind::Path { output }, _) => {
                    for PathRow { at, value, grad } in
                        self.path_rows(setup, &ev, &theta, output, (lower, upper))?
                    {
                        rows.push(Row {
                            label: RowLabel { constraint: ci, at },
                            value,
                            grad,
                            lower,
                            upper,
                        });
                    }
                }
                (_, Some(o)) => rows.push(whole(ev.values[o], grad_of(o))),
                (_, None) => unreachable!("every other kind has a functional"),
            }
        }
        Ok(Point {
            x: x.to_vec(),
            theta,
            t_end,
            f,
            g,
            rows,
            evaluation: ev,
            segment_events: vec![],
        })
    }

    /// Restricts a gradient over θ to x's entries (T's entry 0).
    pub fn restrict(&self, gtheta: &[f64]) -> Vec<f64> {
        let mut g: Vec<f64> = self.free.iter().map(|&k| gtheta[k]).collect();
        if self.constraints.free_time.is_some() {
            g.push(0.0);
        }
        g
    }
}

impl<S: HybridSystem> Problem for Nlp<'_, '_, S> {
    fn bounds(&self) -> (&[f64], &[f64]) {
        (&self.lower, &self.upper)
    }
    fn x0(&self) -> Vec<f64> {
        Nlp::x0(self)
    }
    fn evaluate(&self, x: &[f64]) -> Result<Point, Error> {
        self.evaluate_at(x)
    }
    fn known_hessian(&self) -> Option<nalgebra::DMatrix<f64>> {
        let n = self.n();
        effort_hessian(&self.setup, n, |k| self.free.iter().position(|&f| f == k))
    }
}

/// The part of the cost's Hessian known in closed form, to start the quasi-Newton
/// approximation from: `2w G` on each channel's coefficients for an effort term
/// `w ∫ |u|² dt` (G the basis's Gram matrix, [`crate::control::ControlGrid::gram`]),
/// the identity on every other of the `n` variables; `pos(k)` is the variable of θ's
/// entry k, if it is one. `None` without an effort term in objective 0 of `setup`.
pub(crate) fn effort_hessian<S: HybridSystem>(
    setup: &Setup<'_, S>, n: usize, pos: impl Fn(usize) -> Option<usize>,
) -> Option<nalgebra::DMatrix<f64>> {
    use crate::cost::Term;
    let grid = setup.controls.as_ref()?;
    let w: f64 = setup.objectives[0]
        .terms
        .iter()
        .map(|t| match t {
            Term::Effort { weight } => *weight,
            _ => 0.0,
        })
        .sum();
    if !(w > 0.0) {
        return None;
    }
    let gram = grid.gram();
    let nc = grid.n_coef();
    let np = setup.np();
    let mut b = nalgebra::DMatrix::identity(n, n);
    for j in 0..grid.channels {
        for a in 0..nc {
            let Some(ia) = pos(np + j * nc + a) else {
                continue;
            };
            b[(ia, ia)] = 0.0;
            for c in 0..nc {
                if let Some(ic) = pos(np + j * nc + c) {
                    b[(ia, ic)] = 2.0 * w * gram[a][c];
                }
            }
        }
    }
    Some(b)
}

/// The functionals of a constrained problem: objective 0 of `setup` (the cost), then each
/// constraint's functional (checked against the setup), and the functional index of each
/// constraint (`None` for one without: a final time, a path constraint's points).
pub(crate) fn functionals<S: HybridSystem>(
    setup: &Setup<'_, S>, constraints: &Constraints, ntheta: usize,
) -> Result<(Vec<crate::cost::Objective>, Vec<Option<usize>>), Error> {
    let mut objectives = vec![setup.objectives[0].clone()];
    let mut objective_of = Vec::new();
    for c in &constraints.list {
        check_indices(setup, &c.kind, ntheta)?;
        objective_of.push(c.objective().map(|o| {
            objectives.push(o);
            objectives.len() - 1
        }));
    }
    Ok((objectives, objective_of))
}

/// The optimized entries of θ and their bounds (closed: the SQP may put a value on one;
/// infinite where open), each entry checked ([`ThetaEntry::check_closed`]).
pub(crate) fn free_bounds(theta: &[ThetaEntry]) -> Result<(Vec<usize>, Vec<f64>, Vec<f64>), Error> {
    for e in theta {
        e.check_closed()?;
    }
    let free: Vec<usize> = (0..theta.len()).filter(|&i| theta[i].optimize).collect();
    let lower = free
        .iter()
        .map(|&i| theta[i].lower.unwrap_or(f64::NEG_INFINITY))
        .collect();
    let upper = free
        .iter()
        .map(|&i| theta[i].upper.unwrap_or(f64::INFINITY))
        .collect();
    Ok((free, lower, upper))
}

/// The indices a constraint names exist in `setup` (outputs, guards, θ):
/// [`ConstraintKind::Quantity(Quantity::check)`], the cost terms' check.
pub(crate) fn check_indices<S: HybridSystem>(
    setup: &Setup<'_, S>, kind: &ConstraintKind, ntheta: usize,
) -> Result<(), Error> {
    kind.check(&setup.dims, ntheta).map_err(|b| {
        ConstrainedError::Index(format!(
            "{} {} of a `{}` constraint: {}",
            b.what,
            b.index,
            kind.name(),
            b.valid
        ))
        .into()
    })
}

/// A free final time needs a horizon that ends at T (no `stop_after` event) and controls
/// defined up to T's upper bound.
pub(crate) fn check_free_time<S: HybridSystem>(
    setup: &Setup<'_, S>, ft: crate::constraint::FreeTime,
) -> Result<(), Error> {
    let ordered = ft.lower.is_finite()
        && ft.upper.is_finite()
        && ft.lower > setup.t0
        && ft.lower <= ft.value
        && ft.value <= ft.upper;
    if !ordered {
        return Err(ConstrainedError::FreeTime(format!(
            "t_end = {} with lower = {}, upper = {}: needs t0 = {} < lower ≤ value ≤ upper, all finite",
            ft.value, ft.lower, ft.upper, setup.t0
        ))
        .into());
    }
    if setup.events.stop_after.is_some() {
        return Err(ConstrainedError::FreeTime(
            "a free t_end cannot be combined with `stop_after` (the run would end at the event, not at t_end)".into(),
        )
        .into());
    }
    if let Some(g) = &setup.controls {
        if g.t1 < ft.upper || g.t0 > setup.t0 {
            return Err(ConstrainedError::FreeTime(format!(
                "the controls are defined on [{}, {}], but t_end may reach {}: define them up to t_end's upper bound",
                g.t0, g.t1, ft.upper
            ))
            .into());
        }
    }
    Ok(())
}

/// `dψ_o/dT` of every objective o at the end of `ev`'s run:
/// `Σ_running L(T) + Σ_terminal ∂Φ/∂y · ẏ(T⁻) + Σ_final-time w`, with
/// `ẏ = h_t + h_x ẋ + h_u u̇` from one dual evaluation of the outputs along the flow
/// (docs/constrained.md, "Free final time"). The controls are fixed in absolute time, so
/// nothing before T depends on T.
pub(crate) fn time_derivatives<S: HybridSystem>(
    setup: &Setup<'_, S>, ev: &Evaluation, theta: &[f64],
) -> Result<Vec<f64>, Error> {
    Ok(end_rates(setup, &ev.trajectory, theta)?.1)
}

/// The augmented slope `F(T⁻, X(T))` at the end of `traj` and [`time_derivatives`]'s
/// `dψ_o/dT` from it (the state part of `traj.y_final` is read; sensitivity columns after
/// it are ignored).
pub(crate) fn end_rates<S: HybridSystem>(
    setup: &Setup<'_, S>, traj: &crate::integrate::Trajectory, theta: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let seg = traj.segments.last().expect("a run has a segment");
    let ctx = Ctx {
        mode: traj.mode_final,
        t_lo: seg.t_lo,
        t_hi: seg.t_hi,
    };
    let t = traj.t_final;
    let (n, nx, np) = (setup.n(), setup.nx(), setup.np());
    let mut slope = vec![0.0; n];
    let at = |e| crate::setup::located(setup, t, ctx.mode)(e);
    setup
        .rhs(&ctx, t, &traj.y_final, theta, &mut slope)
        .map_err(at)?;
    let td = Dual64::new(t, 1.0);
    let xd: Vec<Dual64> = (0..nx)
        .map(|i| Dual64::new(traj.y_final[i], slope[i]))
        .collect();
    let thd: Vec<Dual64> = theta.iter().map(|&v| Dual64::from(v)).collect();
    let u = setup.controls_at(&ctx, td, &thd);
    let mut y = vec![Dual64::from(0.0); setup.dims.outputs.len()];
    setup
        .sys()
        .outputs(ctx.mode, td, &xd, &u, &thd[..np], &mut y)
        .map_err(at)?;
    let rates = setup
        .objectives
        .iter()
        .enumerate()
        .map(|(o, obj)| {
            let running: f64 = setup
                .running_of(o)
                .iter()
                .map(|&(z, _)| slope[nx + z])
                .sum();
            let ends: f64 = obj
                .terms
                .iter()
                .map(|term| {
                    let terminal = if term.is_terminal() {
                        term.terminal(&y).eps
                    } else {
                        0.0
                    };
                    terminal + term.time_slope(setup.t_end)
                })
                .sum();
            running + ends
        })
        .collect();
    Ok((slope, rates))
}
