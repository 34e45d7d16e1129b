//! Levenberg–Marquardt with bounds (docs/theory.md §9): Moré's trust-region form (trust.rs) on the variables
//! not held at a bound, the step projected onto the box, the radius steered by the ratio
//! ρ of actual to predicted reduction. Near a solution the Gauss–Newton step fits inside
//! the radius and is taken whole (μ = 0), so zero-residual fits converge quadratically;
//! the result says how many of the last steps were such pure Gauss–Newton steps.

use super::bounds::{BoundSide, BoxBounds};
use super::calls::{self, Counts, Evaluated};
use super::error::LsqError;
use super::outcome::{LmIteration, LmResult, LsqOutcome};
use super::problem::Residuals;
use super::settings::LmSettings;
use super::trust::StepModel;
use nalgebra::{DMatrix, DVector};

/// A step is accepted when it achieves this fraction of its predicted reduction.
const ACCEPT: f64 = 1e-4;

/// Minimizes ½‖r(x)‖² over l ≤ x ≤ u from x₀ (projected into the box) by
/// Levenberg–Marquardt. Returns the best point always, with a typed outcome; an error
/// only for unusable input (bounds, settings) or arrays of the wrong shape.
pub fn levenberg_marquardt<P: Residuals>(
    problem: &P, x0: &[f64], bounds: &BoxBounds, settings: &LmSettings,
) -> Result<LmResult, LsqError> {
    settings.validate()?;
    let x = bounds.check(x0)?;
    let mut counts = Counts::default();
    let mut m = None;
    let start = match calls::residuals(problem, &x, true, &mut m, &mut counts)? {
        Ok(s) => s,
        Err(message) => return Ok(start_failed(x0, &x, message, counts)),
    };
    let j0 = start.j.as_ref().expect("asked for J");
    let d = DVector::from_iterator(x.len(), j0.column_iter().map(|c| c.norm()));
    let d = d.map(|v| if v > 0.0 { v } else { 1.0 });
    let dx = d.component_mul(&DVector::from_column_slice(&x)).norm();
    let mut run = Run {
        problem,
        bounds,
        settings,
        m,
        counts,
        history: vec![],
        radius: if dx > 0.0 {
            settings.radius_factor * dx
        } else {
            settings.radius_factor
        },
        d,
        cost_initial: start.cost,
        current: start,
        iterations: 0,
        rejections: 0,
        gauss_newton_run: 0,
        last_error: None,
    };
    let (outcome, message) = run.iterate()?;
    Ok(run.finish(x0, outcome, message))
}

/// The result when the start cannot be evaluated.
fn start_failed(x0: &[f64], x: &[f64], message: String, counts: Counts) -> LmResult {
    LmResult {
        outcome: LsqOutcome::StartFailed,
        message,
        x_initial: x0.to_vec(),
        x: x.to_vec(),
        cost_initial: f64::NAN,
        cost: f64::NAN,
        residuals: vec![],
        gradient_norm: f64::NAN,
        iterations: 0,
        residual_evaluations: counts.residuals,
        jacobian_evaluations: counts.jacobians,
        active: vec![None; x.len()],
        final_gauss_newton_steps: 0,
        history: vec![],
        jacobian: None,
    }
}

/// What one trial step led to.
enum Trial {
    /// Accepted (the iterate moved); an ending if a test held.
    Accepted(Option<(LsqOutcome, String)>),
    /// Rejected (radius shrunk); an ending if a test held or the run stalled.
    Rejected(Option<(LsqOutcome, String)>),
}

/// A run's state.
struct Run<'a, P> {
    problem: &'a P,
    bounds: &'a BoxBounds,
    settings: &'a LmSettings,
    m: Option<usize>,
    counts: Counts,
    history: Vec<LmIteration>,
    /// Moré's scaling D: the largest column norms of J seen so far.
    d: DVector<f64>,
    radius: f64,
    cost_initial: f64,
    current: Evaluated,
    iterations: usize,
    rejections: usize,
    /// Consecutive accepted pure Gauss–Newton steps, up to now.
    gauss_newton_run: usize,
    last_error: Option<String>,
}

/// The step's facts a trial needs besides the model.
struct Step {
    mu: f64,
    xt: Vec<f64>,
    dx: DVector<f64>,
    /// ‖Δx‖ within the relative step test.
    small: bool,
    /// The linear model's reduction of ½‖r‖²: ½‖r‖² − ½‖r + JΔx‖².
    pred: f64,
    /// The bounds cut the step (it is not the model's minimizer over the free variables).
    projected: bool,
    /// ‖D Δx‖.
    scaled: f64,
}

impl<P: Residuals> Run<'_, P> {
    /// Iterations until a test holds.
    fn iterate(&mut self) -> Result<(LsqOutcome, String), LsqError> {
        loop {
            let j = self.current.j.clone().expect("iterates carry J");
            let g = j.tr_mul(&self.current.r);
            let gnorm = self
                .bounds
                .projected_gradient_norm(&self.current.x, g.as_slice());
            if gnorm <= self.settings.gtol {
                let msg = format!("projected ‖Jᵀr‖∞ = {gnorm:e} ≤ gtol");
                return Ok((LsqOutcome::ConvergedGradient, msg));
            }
            if self.iterations >= self.settings.max_iterations {
                let msg = format!("{} iterations", self.iterations);
                return Ok((LsqOutcome::MaxIterations, msg));
            }
            for (di, col) in self.d.iter_mut().zip(j.column_iter()) {
                *di = di.max(col.norm());
            }
            let free = self.bounds.free_set(&self.current.x, g.as_slice());
            let jf = j.select_columns(free.iter());
            let df = DVector::from_iterator(free.len(), free.iter().map(|&i| self.d[i]));
            let model = StepModel::new(&jf, &self.current.r, &df);
            loop {
                match self.trial(&model, &free, &j, gnorm)? {
                    Trial::Accepted(Some(end)) | Trial::Rejected(Some(end)) => return Ok(end),
                    Trial::Accepted(None) => break,
                    Trial::Rejected(None) => {}
                }
            }
        }
    }

    /// The step for the current radius, projected onto the box, and its predicted
    /// reduction ½‖r‖² − ½‖r + J Δx‖².
    fn step(&self, model: &StepModel, free: &[usize], j: &DMatrix<f64>) -> Step {
        let (mu, pf) = model.for_radius(self.radius);
        let x = &self.current.x;
        let mut xt = x.clone();
        for (a, &i) in free.iter().enumerate() {
            xt[i] += pf[a];
        }
        let free_step = xt.clone();
        self.bounds.project(&mut xt);
        let projected = xt != free_step;
        let dx = DVector::from_iterator(x.len(), xt.iter().zip(x).map(|(a, b)| a - b));
        let xnorm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let xtol = self.settings.xtol;
        // −rᵀJΔx − ½‖JΔx‖², not ½‖r‖² − ½‖r + JΔx‖²: no cancellation of the costs
        let jdx = j * &dx;
        Step {
            mu,
            small: dx.norm() <= xtol * (xnorm + xtol),
            projected,
            pred: -self.current.r.dot(&jdx) - 0.5 * jdx.norm_squared(),
            scaled: self.d.component_mul(&dx).norm(),
            xt,
            dx,
        }
    }

    /// One trial: evaluate, accept or reject, steer the radius, test for the end.
    fn trial(
        &mut self, model: &StepModel, free: &[usize], j: &DMatrix<f64>, gnorm: f64,
    ) -> Result<Trial, LsqError> {
        let s = self.step(model, free, j);
        let cost = self.current.cost;
        // the step and reduction tests count only for the model's own minimizer (μ = 0),
        // never for a step cut short by a radius that failures shrank
        // a step the bounds cut is no minimizer of the model: its predicted reduction may
        // even be negative, and it proves nothing about convergence
        let gauss_newton = s.mu == 0.0 && !s.projected;
        let reduction_small = (0.0..=self.settings.ftol * cost).contains(&s.pred);
        let evaluated = if s.pred > 0.0 {
            let eager = self.settings.eager_jacobian;
            Some(calls::residuals(
                self.problem,
                &s.xt,
                eager,
                &mut self.m,
                &mut self.counts,
            )?)
        } else {
            None
        };
        let (trial_cost, rho) = match &evaluated {
            Some(Ok(t)) => (t.cost, (cost - t.cost) / s.pred),
            _ => (f64::NAN, f64::NAN),
        };
        let accepted = rho >= ACCEPT;
        self.history.push(LmIteration {
            iteration: self.iterations,
            cost,
            trial_cost,
            gradient_norm: gnorm,
            mu: s.mu,
            radius: self.radius,
            step_norm: s.dx.norm(),
            rho,
            accepted,
            held: self.current.x.len() - free.len(),
            x: self.current.x.clone(),
        });
        self.steer(rho, gauss_newton, s.scaled);
        if let Some(Err(e)) = &evaluated {
            self.last_error = Some(e.clone());
        }
        if accepted {
            let Some(Ok(t)) = evaluated else {
                unreachable!("accepted means evaluated")
            };
            return self.accept(t, &s, gauss_newton, reduction_small);
        }
        if gauss_newton && s.small {
            let msg = "the Gauss–Newton step is within the relative step test (and gains nothing measurable)";
            return Ok(Trial::Rejected(Some((
                LsqOutcome::ConvergedStep,
                msg.into(),
            ))));
        }
        if gauss_newton && reduction_small {
            let msg = format!(
                "the Gauss–Newton step predicts a reduction of {:e} ≤ ftol·½‖r‖²",
                s.pred
            );
            return Ok(Trial::Rejected(Some((LsqOutcome::ConvergedReduction, msg))));
        }
        self.rejections += 1;
        if self.rejections >= self.settings.max_rejections {
            let why = self
                .last_error
                .clone()
                .map_or(String::new(), |e| format!("; last error: {e}"));
            let msg = format!(
                "{} consecutive rejected steps (trust radius {:e}){why}",
                self.rejections, self.radius
            );
            return Ok(Trial::Rejected(Some((LsqOutcome::Stalled, msg))));
        }
        Ok(Trial::Rejected(None))
    }

    /// Moré's radius update: halve it (to at most half the step) when ρ < ¼ or the trial
    /// failed, quarter it when the step predicted no decrease; set it to twice the step
    /// when ρ ≥ ¾, or when ρ ≥ ¼ for a Gauss–Newton step.
    fn steer(&mut self, rho: f64, gauss_newton: bool, scaled: f64) {
        if rho.is_nan() {
            self.radius = 0.25
                * if scaled > 0.0 {
                    self.radius.min(scaled)
                } else {
                    self.radius
                };
        } else if rho < 0.25 {
            self.radius = 0.5 * self.radius.min(scaled);
        } else if rho >= 0.75 || gauss_newton {
            self.radius = self.radius.max(2.0 * scaled);
        }
    }

    /// Moves to an accepted trial (evaluating J there if the trial did not), then applies
    /// the step and reduction tests.
    fn accept(
        &mut self, mut t: Evaluated, s: &Step, gauss_newton: bool, reduction_small: bool,
    ) -> Result<Trial, LsqError> {
        let actual_small = self.current.cost - t.cost <= self.settings.ftol * self.current.cost;
        if t.j.is_none() {
            match calls::residuals(self.problem, &t.x, true, &mut self.m, &mut self.counts)? {
                Ok(full) => t = full,
                Err(e) => {
                    self.current = t;
                    self.iterations += 1;
                    let msg = format!("the Jacobian failed at an accepted point: {e}");
                    return Ok(Trial::Accepted(Some((LsqOutcome::Stalled, msg))));
                }
            }
        }
        self.current = t;
        self.iterations += 1;
        self.rejections = 0;
        self.gauss_newton_run = if gauss_newton {
            self.gauss_newton_run + 1
        } else {
            0
        };
        if gauss_newton && s.small {
            let msg = "‖Δx‖ ≤ xtol (‖x‖ + xtol)".to_string();
            return Ok(Trial::Accepted(Some((LsqOutcome::ConvergedStep, msg))));
        }
        if gauss_newton && reduction_small && actual_small {
            let msg = "actual and predicted reductions ≤ ftol relative".to_string();
            return Ok(Trial::Accepted(Some((LsqOutcome::ConvergedReduction, msg))));
        }
        Ok(Trial::Accepted(None))
    }

    /// The result at the current (best) point.
    fn finish(self, x0: &[f64], outcome: LsqOutcome, message: String) -> LmResult {
        let c = self.current;
        let g = c.j.as_ref().map(|j| j.tr_mul(&c.r));
        let active: Vec<Option<BoundSide>> = (0..c.x.len())
            .map(|i| match &g {
                Some(g) if self.bounds.held(&c.x, g.as_slice(), i) => {
                    Some(self.bounds.at(&c.x, i).unwrap_or(BoundSide::Lower))
                }
                Some(_) => None,
                None => self.bounds.at(&c.x, i),
            })
            .collect();
        let gradient_norm = g.map_or(f64::NAN, |g| {
            self.bounds.projected_gradient_norm(&c.x, g.as_slice())
        });
        LmResult {
            outcome,
            message,
            x_initial: x0.to_vec(),
            cost_initial: self.cost_initial,
            cost: c.cost,
            residuals: c.r.iter().copied().collect(),
            gradient_norm,
            iterations: self.iterations,
            residual_evaluations: self.counts.residuals,
            jacobian_evaluations: self.counts.jacobians,
            active,
            final_gauss_newton_steps: self.gauss_newton_run,
            history: self.history,
            jacobian: c.j,
            x: c.x,
        }
    }
}
