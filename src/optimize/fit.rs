//! Fitting measured data: the problem's least-squares objective (its data terms and
//! `parameter_squared` terms, over one or several experiments) on the Levenberg–Marquardt
//! solver of least_squares/, with the residual Jacobian exact from the direct method
//! (sensitivity/residuals.rs), and the statistics at the optimum (docs/theory.md §9).
//!
//! Why a solver of its own: ψ = ‖r‖² has the Gauss–Newton matrix JᵀJ for free once J is
//! known, so near a zero- or small-residual optimum the steps converge quadratically, where
//! L-BFGS must learn the curvature from gradients (and, on a chaotic record, meets a cost
//! so rough that its line search fails).

use super::least_squares::{
    levenberg_marquardt, statistics, BoxBounds, LmIteration, LmResult, LmSettings, LsqOutcome,
    Residuals, Statistics,
};
use super::{HistoryRow, OptimizeResult, OptimizerSettings, Outcome, ThetaEntry};
use crate::error::Error;
use crate::model::HybridSystem;
use crate::sensitivity::{evaluate, residuals, GradientMethod};
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use std::time::Instant;

/// One experiment of a fit: its setup and its θ (the optimized entries are overwritten by
/// the iterate; the others are the experiment's own).
pub struct FitRun<'a, S: HybridSystem> {
    pub name: String,
    pub setup: Setup<'a, S>,
    pub theta: Vec<f64>,
}

/// What the least-squares fit adds to [`OptimizeResult`]: the solver's run and the
/// statistics at its end.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FitReport {
    /// `levenberg_marquardt`.
    pub solver: &'static str,
    /// The solver's own outcome (`converged_step`, `converged_gradient`, …).
    pub outcome: LsqOutcome,
    /// The number of residuals m (measured cells and regularization terms).
    pub residuals: usize,
    pub residual_evaluations: usize,
    pub jacobian_evaluations: usize,
    /// How many of the last steps were undamped Gauss–Newton steps.
    pub final_gauss_newton_steps: usize,
    /// Each experiment's residual count and sum of squares at the end.
    pub experiments: Vec<ExperimentFit>,
    /// σ̂², covariance, standard errors, correlations, 95 % intervals (`None` when they
    /// cannot be computed: `statistics_error` says why).
    pub statistics: Option<Statistics>,
    pub statistics_error: Option<String>,
    /// Every trial step of the solver (Levenberg–Marquardt's).
    pub steps: Vec<LmIteration>,
    /// Every iteration of the generalized Gauss–Newton method (a multiple-shooting fit,
    /// `optimize_shooting_fit`; empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub constrained_steps: Vec<super::least_squares::GgnIteration>,
}

/// One experiment's share of the fit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExperimentFit {
    pub name: String,
    pub residuals: usize,
    pub sum_of_squares: f64,
    /// A multiple-shooting fit: this experiment's nodes and gaps, and the nodes moved away
    /// from events when they were placed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shooting: Option<super::ShootingReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub node_moves: Vec<super::NodeMove>,
}

/// The stacked residuals of every experiment as a function of the free entries of θ.
struct Stacked<'r, 'a, S: HybridSystem> {
    runs: &'r [FitRun<'a, S>],
    free: Vec<usize>,
}

impl<S: HybridSystem> Stacked<'_, '_, S> {
    /// Each experiment's θ at the iterate `x` (the free entries).
    fn thetas(&self, x: &[f64]) -> Vec<Vec<f64>> {
        self.runs
            .iter()
            .map(|run| {
                let mut th = run.theta.clone();
                for (&k, &v) in self.free.iter().zip(x) {
                    th[k] = v;
                }
                th
            })
            .collect()
    }
}

impl<S: HybridSystem> Residuals for Stacked<'_, '_, S> {
    type Error = Error;

    /// `r = (r_1; …; r_E)` and `J = (J_1; …; J_E)` restricted to the free columns; the
    /// experiments run in parallel.
    fn residuals(
        &self, x: &[f64], jacobian: bool,
    ) -> Result<(DVector<f64>, Option<DMatrix<f64>>), Error> {
        let thetas = self.thetas(x);
        let parts: Vec<_> = self
            .runs
            .par_iter()
            .zip(&thetas)
            .map(|(run, th)| residuals(&run.setup, th, jacobian))
            .collect::<Result<_, _>>()?;
        let m: usize = parts.iter().map(|p| p.r.len()).sum();
        let mut r = DVector::zeros(m);
        let mut j = jacobian.then(|| DMatrix::zeros(m, self.free.len()));
        let mut row = 0;
        for p in &parts {
            r.rows_mut(row, p.r.len()).copy_from(&p.r);
            if let (Some(j), Some(pj)) = (j.as_mut(), p.jacobian.as_ref()) {
                for (c, &k) in self.free.iter().enumerate() {
                    j.view_mut((row, c), (p.r.len(), 1))
                        .copy_from(&pj.column(k));
                }
            }
            row += p.r.len();
        }
        Ok((r, j))
    }
}

/// The solver's settings from the problem's: `max_iters`, and the gradient and step
/// tests at the solver's defaults (least_squares/settings.rs).
fn lm_settings(settings: &OptimizerSettings) -> LmSettings {
    LmSettings {
        max_iterations: settings.max_iters as usize,
        ..LmSettings::default()
    }
}

/// Fits the free entries of θ (`theta`'s `optimize` flags and bounds) to every
/// experiment's record at once; the result's `least_squares` holds the solver's run and
/// the statistics. The first experiment's evaluations fill `initial` and `last`.
pub fn optimize_least_squares<S: HybridSystem>(
    runs: &[FitRun<'_, S>], theta: &[ThetaEntry], settings: &OptimizerSettings,
) -> Result<OptimizeResult, Error> {
    let start = Instant::now();
    let first = runs
        .first()
        .ok_or_else(|| Error::Invalid("a fit needs at least one experiment".into()))?;
    let theta = first.setup.resolve_theta(theta)?;
    let free: Vec<usize> = (0..theta.len()).filter(|&k| theta[k].optimize).collect();
    let x0: Vec<f64> = free.iter().map(|&k| theta[k].value).collect();
    let bounds = BoxBounds {
        lower: free
            .iter()
            .map(|&k| theta[k].lower.unwrap_or(f64::NEG_INFINITY))
            .collect(),
        upper: free
            .iter()
            .map(|&k| theta[k].upper.unwrap_or(f64::INFINITY))
            .collect(),
    };
    let stacked = Stacked { runs, free };
    let lm = levenberg_marquardt(&stacked, &x0, &bounds, &lm_settings(settings))
        .map_err(|e| Error::Invalid(format!("least squares: {e}")))?;
    if lm.outcome == LsqOutcome::StartFailed {
        // the start's own error, typed (a domain error, a bad model), not a solver text
        stacked.residuals(&x0, true)?;
    }
    let thetas = stacked.thetas(&lm.x);
    let report = report(&stacked, &lm, &thetas)?;
    let th0 = stacked.thetas(&x0).swap_remove(0);
    let initial = evaluate(&first.setup, &th0, GradientMethod::Adjoint)?;
    let last = evaluate(&first.setup, &thetas[0], GradientMethod::Adjoint)?;
    Ok(OptimizeResult {
        outcome: outcome_of(lm.outcome),
        termination: lm.message.clone(),
        iterations: lm.history.iter().filter(|h| h.accepted).count() as u64,
        evaluations: lm.residual_evaluations,
        cost_calls: lm.residual_evaluations as u64,
        gradient_calls: lm.jacobian_evaluations as u64,
        initial_cost: 2.0 * lm.cost_initial,
        final_cost: 2.0 * lm.cost,
        theta_initial: th0,
        theta_final: thetas[0].clone(),
        final_grad_norm: 2.0 * lm.gradient_norm,
        wall_time_s: start.elapsed().as_secs_f64(),
        history: history(&stacked, &lm, &thetas[0]),
        restarts: vec![],
        kinks: vec![],
        initial,
        last,
        constrained: None,
        shooting: None,
        least_squares: Some(Box::new(report)),
    })
}

/// The optimizer's outcome for the solver's.
pub(super) fn outcome_of(o: LsqOutcome) -> Outcome {
    match o {
        LsqOutcome::ConvergedStep
        | LsqOutcome::ConvergedReduction
        | LsqOutcome::ConvergedGradient => Outcome::Converged,
        LsqOutcome::MaxIterations => Outcome::MaxIterations,
        LsqOutcome::Infeasible => Outcome::Infeasible,
        LsqOutcome::Stalled | LsqOutcome::StartFailed => Outcome::Stalled,
    }
}

/// The history: one row per accepted iterate (ψ = ‖r‖² = 2·½‖r‖², ‖∇ψ‖∞ = 2‖Jᵀr‖∞),
/// then the end point.
fn history<S: HybridSystem>(
    stacked: &Stacked<'_, '_, S>, lm: &LmResult, theta_end: &[f64],
) -> Vec<HistoryRow> {
    let mut rows: Vec<HistoryRow> = Vec::new();
    for h in lm.history.iter().filter(|h| h.accepted) {
        rows.push(HistoryRow {
            iteration: rows.len() as u64,
            cost: 2.0 * h.cost,
            grad_norm: 2.0 * h.gradient_norm,
            step: h.step_norm,
            theta: stacked.thetas(&h.x).swap_remove(0),
            max_violation: None,
            defect: None,
        });
    }
    let step = rows.last().map_or(0.0, |_| {
        lm.history
            .iter()
            .rev()
            .find(|h| h.accepted)
            .map_or(0.0, |h| h.step_norm)
    });
    rows.push(HistoryRow {
        iteration: rows.len() as u64,
        cost: 2.0 * lm.cost,
        grad_norm: 2.0 * lm.gradient_norm,
        step,
        theta: theta_end.to_vec(),
        max_violation: None,
        defect: None,
    });
    rows
}

/// The report at the end point: each experiment's share, and the statistics of the free
/// entries not held at a bound.
fn report<S: HybridSystem>(
    stacked: &Stacked<'_, '_, S>, lm: &LmResult, thetas: &[Vec<f64>],
) -> Result<FitReport, Error> {
    let experiments = stacked
        .runs
        .par_iter()
        .zip(thetas)
        .map(|(run, th)| {
            let r = residuals(&run.setup, th, false)?.r;
            Ok(ExperimentFit {
                name: run.name.clone(),
                residuals: r.len(),
                sum_of_squares: r.norm_squared(),
                shooting: None,
                node_moves: vec![],
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let (statistics, statistics_error) = match fit_statistics(stacked, lm) {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e)),
    };
    Ok(FitReport {
        solver: "levenberg_marquardt",
        outcome: lm.outcome,
        residuals: lm.residuals.len(),
        residual_evaluations: lm.residual_evaluations,
        jacobian_evaluations: lm.jacobian_evaluations,
        final_gauss_newton_steps: lm.final_gauss_newton_steps,
        experiments,
        statistics,
        statistics_error,
        steps: lm.history.clone(),
        constrained_steps: vec![],
    })
}

/// The statistics at the end point (docs/theory.md §9), over the free entries that no
/// bound holds, named by θ's names.
fn fit_statistics<S: HybridSystem>(
    stacked: &Stacked<'_, '_, S>, lm: &LmResult,
) -> Result<Statistics, String> {
    let j = match &lm.jacobian {
        Some(j) => j.clone(),
        None => stacked
            .residuals(&lm.x, true)
            .map_err(|e| e.to_string())?
            .1
            .ok_or("no Jacobian")?,
    };
    let names = stacked.runs[0].setup.theta_names();
    let free_names: Vec<String> = stacked.free.iter().map(|&k| names[k].clone()).collect();
    statistics(&lm.x, &lm.residuals, &j, &lm.free(), &free_names).map_err(|e| e.to_string())
}
