//! The iLQR's iterations: linearize the stages along the nominal rollout (in parallel:
//! each stage's run starts from the nominal's state at its node), test the gradient,
//! run the backward pass and the line search, and adapt the regularization μ (Tassa, Erez
//! & Todorov 2012, §II.F: μ grows by a factor Δ ≥ 2 that itself grows while backward passes
//! or line searches fail, and shrinks after each accepted step; μ = 0 below `MU_MIN`, so a
//! linear-quadratic problem takes the exact Newton step).

use super::backward::{backward, gradient, StepBounds};
use super::forward::Rollout;
use super::stage::{Linear, Stages};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::{HistoryRow, OptimizerSettings, Outcome};
use nalgebra::DVector;
use rayon::prelude::*;
use std::sync::Arc;

/// Below this, μ is 0.
const MU_MIN: f64 = 1e-6;
/// Above this, the run ends (no step decreases the cost however short).
const MU_MAX: f64 = 1e10;
/// The factor's base Δ₀.
const DELTA0: f64 = 2.0;

/// How the iterations ended, with the last (best) rollout.
pub(crate) struct Solved {
    pub outcome: Outcome,
    pub termination: String,
    pub iterations: u64,
    pub best: Rollout,
    pub history: Vec<HistoryRow>,
    /// Plain rollouts and linearization passes.
    pub rollouts: u64,
    pub linearizations: u64,
}

/// The regularization's schedule.
struct Mu {
    mu: f64,
    delta: f64,
}

impl Mu {
    fn raise(&mut self) -> bool {
        self.delta = (self.delta * DELTA0).max(DELTA0);
        self.mu = (self.mu * self.delta).max(MU_MIN);
        self.mu <= MU_MAX
    }
    fn lower(&mut self) {
        self.delta = (self.delta / DELTA0).min(1.0 / DELTA0);
        self.mu = if self.mu * self.delta > MU_MIN {
            self.mu * self.delta
        } else {
            0.0
        };
    }
}

impl<S: HybridSystem> Stages<'_, '_, S> {
    /// Every stage's linearization along `r`.
    pub fn linearize_all(&self, r: &Rollout) -> Result<Vec<Linear>, Error> {
        (0..self.n())
            .into_par_iter()
            .map(|k| self.linearize(k, &r.x[k], r.modes[k], &r.theta, &r.pieces[k]))
            .collect()
    }

    /// Each stage's bounds on δu around θ.
    fn step_bounds(&self, theta: &[f64]) -> StepBounds {
        self.layout
            .stages
            .iter()
            .map(|st| {
                let b = |side: fn((f64, f64)) -> f64| {
                    DVector::from_iterator(
                        st.new.len(),
                        st.new.iter().map(|&q| side(self.bounds_of(q)) - theta[q]),
                    )
                };
                (b(|(lo, _)| lo), b(|(_, hi)| hi))
            })
            .collect()
    }

    /// ‖∇J‖ over the free entries at θ, from the stages' linearizations, projected on θ's
    /// bounds: a component pushing an entry that sits on its bound out of the box is no
    /// descent direction (zero), as the SQP's KKT stationarity counts it.
    pub fn grad_norm(&self, lin: &[Linear], theta: &[f64]) -> f64 {
        let g = gradient(lin, &self.layout, theta.len());
        self.layout
            .free
            .iter()
            .map(|&q| {
                let (lo, hi) = self.bounds_of(q);
                let out = (theta[q] <= lo && g[q] > 0.0) || (theta[q] >= hi && g[q] < 0.0);
                if out {
                    0.0
                } else {
                    g[q] * g[q]
                }
            })
            .sum::<f64>()
            .sqrt()
    }

    /// One iteration's step from `nominal`: backward passes and line searches, μ raised
    /// after each failure and lowered after the accepted rollout; or how the run ends.
    fn step(
        &self, lin: &[Linear], nominal: &Rollout, mu: &mut Mu, rollouts: &mut u64,
    ) -> Result<Rollout, (Outcome, &'static str)> {
        let bounds = self.step_bounds(&nominal.theta);
        loop {
            let Some(policy) = backward(lin, &bounds, mu.mu) else {
                if mu.raise() {
                    continue;
                }
                return Err((Outcome::Stalled, "Q_uu not positive definite at μ_max"));
            };
            if -policy.expected(1.0) <= 1e-15 * nominal.cost.abs().max(f64::MIN_POSITIVE) {
                return Err((
                    Outcome::Stalled,
                    "the predicted decrease is at round-off level",
                ));
            }
            match self.line_search(&policy, nominal, rollouts) {
                Some((r, _alpha)) => {
                    mu.lower();
                    return Ok(r);
                }
                None if mu.raise() => continue,
                None => {
                    return Err((
                        Outcome::LineSearchFailed,
                        "no step decreased the cost up to μ_max",
                    ))
                }
            }
        }
    }

    /// A free final time's stages follow T, a periodic problem's its closing event
    /// (layout.rs): the layout is rebuilt at the accepted rollout's T or closing time, and θ
    /// rolled out on it when that time belongs to another last stage.
    fn follow_time(&mut self, r: Rollout, rollouts: &mut u64) -> Result<Rollout, Error> {
        let t = match self.layout.time {
            Some(t) => r.theta[t],
            None if self.layout.closing => r.t_end,
            None => return Ok(r),
        };
        let moved = self.layout.at_time(&self.grid, t);
        let same = moved.same_stages(&self.layout);
        // the last stage's nominal end follows T even when the stages stay
        self.layout = moved;
        if same {
            return Ok(r);
        }
        *rollouts += 1;
        self.rollout(&r.theta, None)
    }

    /// The iterations from θ0 (module docs). Converged when ‖∇J‖ ≤ `tol` if given (the
    /// augmented Lagrangian's inner solves), else ≤ `tol_grad · ‖∇J₀‖ / first_step`
    /// (L-BFGS's test on its scaled cost, the same number).
    pub fn solve(
        &mut self, theta0: &[f64], settings: &OptimizerSettings, tol: Option<f64>,
        progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
    ) -> Result<Solved, Error> {
        let mut nominal = self.rollout(theta0, None)?;
        let (mut rollouts, mut linearizations) = (1u64, 0u64);
        let mut history = Vec::new();
        let mut mu = Mu {
            mu: 0.0,
            delta: 1.0,
        };
        let fixed_tol = tol;
        let mut tol = 0.0;
        let mut step = 0.0;
        let end = |outcome, text: &str, it, best, history, r, l| Solved {
            outcome,
            termination: text.to_string(),
            iterations: it,
            best,
            history,
            rollouts: r,
            linearizations: l,
        };
        for it in 0..=settings.max_iters {
            let lin = self.linearize_all(&nominal)?;
            linearizations += 1;
            let gnorm = self.grad_norm(&lin, &nominal.theta);
            if it == 0 {
                tol = fixed_tol.unwrap_or(settings.tol_grad * gnorm / settings.first_step);
            }
            history.push(HistoryRow {
                iteration: it,
                cost: nominal.cost,
                grad_norm: gnorm,
                step,
                theta: nominal.theta.clone(),
                max_violation: None,
                defect: None,
            });
            if let Some(p) = &progress {
                p(it, nominal.cost);
            }
            if gnorm <= tol {
                let text = format!("‖∇J‖ = {gnorm:.3e} ≤ {tol:.3e}");
                return Ok(end(
                    Outcome::Converged,
                    &text,
                    it,
                    nominal,
                    history,
                    rollouts,
                    linearizations,
                ));
            }
            if it == settings.max_iters {
                break;
            }
            let accepted = self.step(&lin, &nominal, &mut mu, &mut rollouts);
            match accepted {
                Ok(r) => {
                    step = self
                        .layout
                        .free
                        .iter()
                        .map(|&q| (r.theta[q] - nominal.theta[q]).powi(2))
                        .sum::<f64>()
                        .sqrt();
                    nominal = self.follow_time(r, &mut rollouts)?;
                }
                Err((outcome, text)) => {
                    return Ok(end(
                        outcome,
                        text,
                        it,
                        nominal,
                        history,
                        rollouts,
                        linearizations,
                    ))
                }
            }
        }
        let text = "maximum number of iterations reached";
        Ok(end(
            Outcome::MaxIterations,
            text,
            settings.max_iters,
            nominal,
            history,
            rollouts,
            linearizations,
        ))
    }
}
