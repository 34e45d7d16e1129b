//! The argmin adapter: L-BFGS (More–Thuente line search) or steepest descent over the free
//! entries of θ, through the transforms their bounds imply (so every bound is honoured by
//! both solvers), with the cost scaled so that the first trial step has a chosen length.
//!
//! The steps of [`optimize()`], one file each: the entries' values and bounds
//! ([`ThetaEntry`], theta.rs), the objective as argmin sees it (adapter.rs), the solver
//! runs and their restarts (runs.rs, descent.rs), the kinks met (kink.rs), the history
//! (history.rs) and the settings (settings.rs).
//!
//! ```
//! use hybridopt::prelude::*;
//! use hybridopt::systems::BouncingBall;
//!
//! // the ball's throw v0 ≥ 0 so that its third impact is at t = 2 s (θ = g, e, c, y0, v0)
//! let third = Quantity::EventTime { guard: EventGuard::Guard(0), occurrence: 3 };
//! let cost = Objective::new("timing", vec![Term::squared(third, 2.0, 1.0)]);
//! // the run ends at the third impact (as `problems/impact_timing.toml`)
//! let mut events = hybridopt::integrate::EventOptions::default();
//! events.stop_after = Some((0, 3));
//! let setup = Setup::builder(&BouncingBall).horizon(0.0, 10.0).objective(cost)
//!     .tolerances(1e-10, 1e-12).events(events).build();
//! let theta = [
//!     ThetaEntry::fixed("g", 9.81), ThetaEntry::fixed("e", 0.8), ThetaEntry::fixed("c", 0.0),
//!     ThetaEntry::fixed("y0", 1.0), ThetaEntry::free("v0", 0.5).with_bounds(Some(0.0), None),
//! ];
//! let r = optimize(&setup, &theta, &OptimizerSettings::default(), None)?;
//! assert!(r.converged(), "{r}");
//! assert!(r.final_cost < 1e-12 && r.theta_final[4] > 0.0);
//! println!("{r}");
//! # Ok::<(), hybridopt::Error>(())
//! ```

use crate::error::Error;
use crate::model::HybridSystem;
use crate::sensitivity::Evaluation;
use crate::setup::Setup;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

mod adapter;
pub(crate) mod constrained;
mod descent;
pub(crate) mod driver;
mod fit;
mod history;
pub(crate) mod ilqr;
mod kink;
mod least_squares;
mod monotone;
mod runs;
mod settings;
pub(crate) mod shooting;
pub use crate::setup::{ThetaEntry, Transform};
pub(crate) use adapter::Space;
use adapter::{Adapter, Shared};
pub use constrained::{
    constrained_point, optimize_constrained, ConstrainedError, ConstrainedPoint, ConstrainedReport,
    ConstraintReport, ConstraintRow, Kkt,
};
use driver::Smooth;
pub use fit::{optimize_least_squares, ExperimentFit, FitReport, FitRun};
pub use history::HistoryRow;
use history::Rows;
pub use ilqr::{
    optimize_ilqr, optimize_ilqr_constrained, optimize_ilqr_periodic, IlqrError, IlqrStages,
    StageJacobians,
};
pub use kink::{min_norm_in_hull, KinkReport};
pub use least_squares::{
    constrained_statistics, generalized_gauss_newton, levenberg_marquardt, normal_quantile,
    statistics, student_t_cdf, student_t_quantile, BoundSide, BoxBounds, ConstrainedResiduals,
    GgnIteration, GgnResult, GgnSettings, Identifiability, Linearization, LmIteration, LmResult,
    LmSettings, LsqError, LsqOutcome, ParameterStatistics, Residuals, Statistics, CONFIDENCE,
    ILL_CONDITIONED,
};
use runs::{Ending, Runs, Solved};
pub use runs::{MAX_RESTARTS, RESTART_SHRINK};
pub use settings::{
    parse_gradient_method, Globalization, KinkPolicy, OptimizerSettings, SolverKind,
};
pub use shooting::{
    optimize_shooting, optimize_shooting_fit, segment_trajectories, shooting_fit_point,
    shooting_point, Closure, ClosureReport, Guess, GuessTable, Node, NodeMove, NodeReport,
    NodeSide, NodeTimes, Shooting, ShootingError, ShootingEvaluator, ShootingReport,
};

/// How an optimization ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The solver's convergence test held (gradient or cost-change tolerance).
    Converged,
    /// The iteration budget ran out.
    MaxIterations,
    /// The line search could not make progress (e.g. at a kink or at round-off level).
    Stalled,
    /// The start point is already stationary (zero gradient).
    StationaryStart,
    /// Stopped at a kink (kink policy `stop`); see [`OptimizeResult::kinks`].
    Kink,
    /// A constrained problem whose constraints cannot be met: the run ends at a point of
    /// least violation ([`ConstrainedReport::max_violation`]).
    Infeasible,
    /// The line search found no decrease of the cost twice in a row (the second time after
    /// a fresh start from the best point): the run ends at the best point it met.
    LineSearchFailed,
    /// The SQP's QP subproblem could not be solved (Clarabel's status at every tolerance
    /// tried): the run ends at the best iterate so far.
    QpFailed,
}

impl Outcome {
    /// The name `summary.json` gives it (`converged`, `max_iterations`, …).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Converged => "converged",
            Outcome::MaxIterations => "max_iterations",
            Outcome::Stalled => "stalled",
            Outcome::StationaryStart => "stationary_start",
            Outcome::Kink => "kink",
            Outcome::Infeasible => "infeasible",
            Outcome::LineSearchFailed => "line_search_failed",
            Outcome::QpFailed => "qp_failed",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of [`optimize()`].
#[derive(Debug, Clone)]
pub struct OptimizeResult {
    pub outcome: Outcome,
    /// The solver's termination text.
    pub termination: String,
    pub iterations: u64,
    /// Simulations for cost and gradient (each point once).
    pub evaluations: usize,
    pub cost_calls: u64,
    pub gradient_calls: u64,
    pub initial_cost: f64,
    pub final_cost: f64,
    pub theta_initial: Vec<f64>,
    pub theta_final: Vec<f64>,
    /// ‖dψ/dθ_free‖ at the end (physical variables).
    pub final_grad_norm: f64,
    pub wall_time_s: f64,
    pub history: Vec<HistoryRow>,
    /// Line-search restarts after a trial point left the cost's domain (see [`MAX_RESTARTS`]).
    pub restarts: Vec<String>,
    /// Kinks met on the way (the last one is the final point's if it is a kink).
    pub kinks: Vec<KinkReport>,
    pub initial: Evaluation,
    pub last: Evaluation,
    /// A constrained run's constraints, multipliers and KKT residual
    /// ([`optimize_constrained`]); `None` for an unconstrained run.
    pub constrained: Option<ConstrainedReport>,
    /// A multiple-shooting run's nodes and continuity gaps ([`optimize_shooting`]);
    /// `None` for single shooting.
    pub shooting: Option<ShootingReport>,
    /// A least-squares fit's solver run and statistics ([`optimize_least_squares`]);
    /// `None` for the other solvers.
    pub least_squares: Option<Box<FitReport>>,
}

impl OptimizeResult {
    /// Whether the run converged (or started at a stationary point).
    pub fn converged(&self) -> bool {
        matches!(self.outcome, Outcome::Converged | Outcome::StationaryStart)
    }

    /// `setup` with the horizon of the start and of the final point (they differ only
    /// with a free final time).
    pub fn setups_at_ends<'a, S: HybridSystem>(
        &self, setup: &Setup<'a, S>,
    ) -> (Setup<'a, S>, Setup<'a, S>) {
        let at = |t: Option<f64>| {
            let mut s = setup.with_objectives(setup.objectives.clone());
            if let Some(t) = t {
                s.t_end = t;
            }
            s
        };
        let c = self.constrained.as_ref();
        (
            at(c.and_then(|c| c.t_end_initial)),
            at(c.and_then(|c| c.t_end_final)),
        )
    }
}

/// One line: the outcome, iterations and evaluations, ψ from start to end and the final
/// gradient norm (`converged after 14 iterations (16 evaluations): ψ 1.280311e0 →
/// 6.854882e-21, |∇ψ| 2.65e-12`).
impl fmt::Display for OptimizeResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} after {} iterations ({} evaluations): ψ {:.6e} → {:.6e}, |∇ψ| {:.2e}",
            self.outcome,
            self.iterations,
            self.evaluations,
            self.initial_cost,
            self.final_cost,
            self.final_grad_norm
        )?;
        if !self.restarts.is_empty() {
            write!(f, ", {} restart(s)", self.restarts.len())?;
        }
        Ok(())
    }
}

/// Minimizes the first objective of `setup` over the entries of θ marked `optimize` (the
/// others stay at their values), each inside its bounds. `progress(iteration, scaled
/// cost)` is called after every iteration.
///
/// `theta` names its entries ([`Setup::resolve_theta`]): in any order, and a parameter
/// left out is fixed at the system's default value.
///
/// Errors: [`Error::ThetaName`] for an entry θ has no such name for, a name given twice, or
/// a left-out parameter without a default; [`Error::Bounds`] for an entry whose value is
/// not strictly inside finite, ordered bounds; [`Error::NothingToOptimize`] when nothing is optimized; an evaluation's error at
/// the start; [`Error::RestartsExhausted`] when trial points keep leaving the cost's
/// domain; [`Error::Interrupted`].
pub fn optimize<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], settings: &OptimizerSettings,
    progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    if setup.objectives.is_empty() {
        return Err(Error::NoObjective);
    }
    let only = setup.only_objective(0);
    // entries by name, in θ's order; left-out parameters at the system's defaults
    let theta = &setup.resolve_theta(theta)?;
    let space = Space::new(theta)?;
    let shared = Shared::default();
    let first = StartPoint::evaluate(&only, &space, settings, &shared)?;
    if let Some(r) = first.early_end(&space, settings, &shared, start) {
        return Ok(r);
    }
    // Scale ψ so that the first trial step −∇ψ̃ has length `first_step` in z; the scale
    // stays fixed across restarts (so the convergence tests keep their meaning).
    let scale = first.gnorm / settings.first_step;
    let runs = Runs {
        setup: &only,
        space: &space,
        settings,
        shared: shared.clone(),
        rows: Rows::new(first.f / scale, first.gnorm / scale, &first.z),
        progress,
        scale,
    };
    let solved = runs.solve(first.z.clone())?;
    finish(&runs, solved, first, start)
}

/// The start point's scaled-free cost and gradient, in z, with its evaluation.
struct StartPoint {
    z: Vec<f64>,
    f: f64,
    gnorm: f64,
    evaluation: Evaluation,
}

impl StartPoint {
    /// Evaluates the start (a kink there is recorded; the policy applies below).
    fn evaluate<S: HybridSystem>(
        setup: &Setup<'_, S>, space: &Space, settings: &OptimizerSettings, shared: &Shared,
    ) -> Result<StartPoint, Error> {
        let z = space.z(&space.base);
        let probe = Adapter::new(
            setup,
            space,
            settings.gradient,
            KinkPolicy::Descent,
            shared,
            1.0,
        );
        let s = probe.eval(&z)?;
        Ok(StartPoint {
            z,
            f: s.f,
            gnorm: s.g.iter().map(|v| v * v).sum::<f64>().sqrt(),
            evaluation: s.extra,
        })
    }

    /// The result when there is nothing to run: a zero gradient, or a kink at the start
    /// with the kink policy `stop`.
    fn early_end(
        &self, space: &Space, settings: &OptimizerSettings, shared: &Shared, start: Instant,
    ) -> Option<OptimizeResult> {
        let kink = shared
            .last_kink()
            .filter(|_| settings.at_kink == KinkPolicy::Stop);
        if self.gnorm != 0.0 && kink.is_none() {
            return None;
        }
        let (outcome, termination) = match kink {
            Some(_) => (Outcome::Kink, Error::StoppedAtKink.to_string()),
            None => (
                Outcome::StationaryStart,
                "zero gradient at the start".into(),
            ),
        };
        Some(OptimizeResult {
            outcome,
            termination,
            iterations: 0,
            evaluations: 1,
            cost_calls: 0,
            gradient_calls: 0,
            initial_cost: self.f,
            final_cost: self.f,
            // at a kink, the point where it was evaluated (the transform's round trip may
            // move θ by an ulp), so that the final point is recognised as the kink
            theta_final: kink.map_or_else(|| space.base.clone(), |k| k.theta),
            theta_initial: space.base.clone(),
            final_grad_norm: self.gnorm,
            wall_time_s: start.elapsed().as_secs_f64(),
            history: vec![],
            restarts: vec![],
            kinks: shared.kinks(),
            last: self.evaluation.clone(),
            initial: self.evaluation.clone(),
            constrained: None,
            shooting: None,
            least_squares: None,
        })
    }
}

/// The outcome and the solver's termination text of how the runs ended.
fn outcome_of(ending: &Ending) -> (Outcome, String) {
    use argmin::core::TerminationReason as R;
    match ending {
        Ending::Kink => (Outcome::Kink, Error::StoppedAtKink.to_string()),
        Ending::Solver(Some(R::SolverConverged)) => {
            (Outcome::Converged, "solver converged".to_string())
        }
        Ending::Solver(Some(R::MaxItersReached)) => (
            Outcome::MaxIterations,
            "maximum number of iterations reached".to_string(),
        ),
        Ending::Solver(Some(R::SolverExit(s))) if monotone::is_line_search_failure(s) => {
            (Outcome::LineSearchFailed, s.clone())
        }
        Ending::Solver(Some(R::SolverExit(s))) => (Outcome::Stalled, s.clone()),
        Ending::Solver(Some(other)) => (Outcome::Stalled, other.text().to_string()),
        Ending::Solver(None) => (Outcome::Stalled, "no termination reason".to_string()),
    }
}

/// The result: the final point's evaluation (cached if it was the last one), its gradient
/// norm (at a kink, where the gradient does not exist, the min-norm element's), the
/// history and the counts.
fn finish<S: HybridSystem>(
    runs: &Runs<'_, '_, S>, solved: Solved<'_, '_, S>, first: StartPoint, start: Instant,
) -> Result<OptimizeResult, Error> {
    let (outcome, termination) = outcome_of(&solved.ending);
    let st = solved.state;
    // the best point met (a run's last iterate may be worse than an earlier run's, or than
    // its start after a failed line search); at a kink (policy `stop`), the kink
    let best = match solved.ending {
        Ending::Kink => None,
        Ending::Solver(_) => runs.rows.best(runs.space.free.len()),
    };
    let zf = best.or(solved.z).unwrap_or(st.z_start);
    let last = solved.bridge.sample(&zf)?.extra;
    let (theta_final, _) = runs.space.theta(&zf);
    let kinks = runs.shared.kinks();
    let final_kink = kinks.last().filter(|k| k.theta == theta_final);
    let final_grad_norm = match final_kink {
        Some(k) => k.min_norm.iter().map(|v| v * v).sum::<f64>().sqrt(),
        None => runs
            .space
            .free
            .iter()
            .map(|&k| last.gradients[0][k].powi(2))
            .sum::<f64>()
            .sqrt(),
    };
    let count = |k: &str| st.counts.get(k).copied().unwrap_or(0);
    Ok(OptimizeResult {
        outcome,
        termination,
        iterations: st.iterations,
        evaluations: runs.shared.evaluations(),
        cost_calls: count("cost_count"),
        gradient_calls: count("gradient_count"),
        initial_cost: first.f,
        final_cost: last.values[0],
        theta_initial: runs.space.base.clone(),
        theta_final,
        final_grad_norm,
        wall_time_s: start.elapsed().as_secs_f64(),
        history: runs.rows.history(runs.space, runs.scale),
        restarts: st.restarts,
        kinks,
        initial: first.evaluation,
        last,
        constrained: None,
        shooting: None,
        least_squares: None,
    })
}
