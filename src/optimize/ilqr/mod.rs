//! A hybrid iLQR / DDP optimizer for problems with controls (docs/theory.md, "Hybrid
//! iLQR and DDP"; docs/guide/feedback.md): `[optimizer] solver = "ilqr"` or `"ddp"`.
//!
//! **Design.** Each interval `[τ_k, τ_{k+1}]` of the problem's control grid is a stage
//! `z_{k+1} = Φ_k(z_k, u_k)`, its augmented state carrying the coefficients the interval
//! shares with earlier ones (layout.rs). The stage is the real hybrid system run from its
//! node: its Jacobians `Φ_z, Φ_u` are the exact direct sensitivities over the interval,
//! which hold each event's saltation at the event's true time with the event-time shift
//! `τ = −(g_x S⁻ + g_θ)/ġ` (stage.rs) — the event is never moved to a stage's end, so
//! there is no O(h) error near impacts whatever the grid. The stage cost comes in
//! Gauss–Newton form from the same pass (costs.rs). The backward pass is the DDP
//! recursion on the value function — every event's jump `Ξᵀ V_zz Ξ` lives inside
//! `Φ_zᵀ V'_zz Φ_z` — with a box-QP for bounded coefficients (backward.rs, boxqp.rs); the
//! forward pass runs the stages under `u = û + α k + K (z − ẑ)` through the hybrid system
//! and searches α (forward.rs); the driver adapts the regularization (driver.rs);
//! witness.rs opens the stages to tests.
//!
//! Why stages on the control grid rather than a fixed time step: the decisions of the
//! problem are the grid's coefficients, so the iLQR optimizes the same θ as L-BFGS and
//! the SQP and must reach the same optimum; the integrator keeps its own adaptive steps
//! and error control inside each stage.
//!
//! The iLQR takes a cost over a fixed horizon or a free final time (T the last stage's
//! decision, layout.rs), free system parameters (stage 0's decisions, the start through
//! them: start.rs), and constraints by an augmented-Lagrangian outer loop on the SQP's
//! constraint rows (augmented.rs, measured as measure.rs says; a path constraint's
//! interior points as stage costs, points.rs) — a periodic problem's closing rows among
//! them, its horizon ending at the closing event: multiple shooting from a guess table, an
//! integral constraint, squared running terms and data terms are refused with an
//! [`IlqrError`] naming what is unsupported.
//!
//! ```
//! use hybridopt::prelude::*;
//! use hybridopt::Problem;
//! use std::path::Path;
//!
//! let mut p = Problem::load(Path::new("problems/thrust_control.toml"))?;
//! p.optimizer.solver = SolverKind::Ilqr;
//! p.optimizer.max_iters = 3;
//! let setup = p.setup()?;
//! let r = p.optimize_trajectory(&setup, &p.theta, None)?;
//! assert!(r.final_cost < r.initial_cost);
//! # Ok::<(), hybridopt::Error>(())
//! ```

mod augmented;
mod backward;
mod boxqp;
mod costs;
mod driver;
pub(crate) mod error;
mod forward;
mod layout;
mod measure;
mod points;
mod polish;
mod second;
mod stage;
mod start;
mod witness;

pub use augmented::{optimize_ilqr_constrained, optimize_ilqr_periodic};
pub use error::IlqrError;
pub use witness::{IlqrStages, StageJacobians};

use super::{OptimizeResult, OptimizerSettings, Space, ThetaEntry};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::sensitivity::evaluate;
use crate::setup::Setup;
use costs::Plan;
use layout::Layout;
use stage::Stages;
use std::sync::Arc;
use std::time::Instant;

/// Minimizes the first objective of `setup` over the free control coefficients of θ by the
/// hybrid iLQR (module docs). The result is the best point met, with the full problem's
/// evaluation (by `settings.gradient`) at the start and at the end; its history has one
/// row per iteration (the stages' cost and the gradient norm they imply).
///
/// Errors: [`IlqrError`] for what the solver does not take; those of
/// [`optimize`](super::optimize) for θ; an evaluation's error at the start.
pub fn optimize_ilqr<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    let stages_of = |only: &Setup<'_, S>, theta: &[ThetaEntry]| -> Result<_, Error> {
        let grid = only.controls.clone().ok_or(IlqrError::NoControls)?;
        let horizon = (only.t0, only.t_end);
        let layout = Layout::new(&grid, horizon, theta, only.np(), only.nx())?;
        let plan = Plan::new(&only.objectives[0], None)?;
        Ok((grid, layout, plan))
    };
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    let only = setup.only_objective(0);
    let theta = &only.resolve_theta(theta)?;
    let space = Space::new(theta)?;
    let (grid, layout, plan) = stages_of(&only, theta)?;
    let mut stages = Stages {
        setup: &only,
        layout,
        plan,
        grid,
        lower: theta
            .iter()
            .map(|e| e.lower.unwrap_or(f64::NEG_INFINITY))
            .collect(),
        upper: theta
            .iter()
            .map(|e| e.upper.unwrap_or(f64::INFINITY))
            .collect(),
        second_order: settings.solver == super::SolverKind::Ddp,
        closure: None,
    };
    let initial = evaluate(&only, &space.base, settings.gradient)?;
    let solved = stages.solve(&space.base, settings, None, progress)?;
    let last = evaluate(&only, &solved.best.theta, settings.gradient)?;
    let final_grad_norm = stages
        .layout
        .free
        .iter()
        .map(|&k| last.gradients[0][k].powi(2))
        .sum::<f64>()
        .sqrt();
    Ok(OptimizeResult {
        outcome: solved.outcome,
        termination: solved.termination,
        iterations: solved.iterations,
        evaluations: (solved.rollouts + solved.linearizations) as usize + 2,
        cost_calls: solved.rollouts,
        gradient_calls: solved.linearizations,
        initial_cost: initial.values[0],
        final_cost: last.values[0],
        theta_initial: space.base.clone(),
        theta_final: solved.best.theta,
        final_grad_norm,
        wall_time_s: start.elapsed().as_secs_f64(),
        history: solved.history,
        restarts: vec![],
        kinks: vec![],
        initial,
        last,
        constrained: None,
        shooting: None,
        least_squares: None,
    })
}
