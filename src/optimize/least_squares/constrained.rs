//! The generalized Gauss–Newton method of Bock's multiple shooting (docs/theory.md §9): min ½‖r(w)‖² subject
//! to c(w) = 0 (the continuity of the shooting nodes) and the bounds of w. Each iteration
//! solves the linearized problem min ½‖r + JΔ‖² s.t. c + CΔ = 0 in the null space of C
//! (nullspace.rs), with a Levenberg damping of the null-space part only when a step fails;
//! the step is globalized by a backtracking (Armijo) line search on the exact-penalty
//! merit φ = ½‖r‖² + ρ‖c‖₁, with ρ raised to 1.5 times the largest multiplier when below it
//! (so that the step is a descent direction of φ). Bounds: an active set inside the
//! subproblem, so that the linearized constraints hold for every step it returns.

use super::bounds::{BoundSide, BoxBounds};
use super::calls::{self, max_abs, Counts};
use super::error::LsqError;
use super::nullspace::{self, Linear, SubStep};
use super::outcome::{GgnIteration, GgnResult, LsqOutcome};
use super::problem::{ConstrainedResiduals, Linearization};
use super::settings::GgnSettings;
use nalgebra::DVector;

/// The damping's first value (relative to ‖J Z‖²) after a failed step; it is raised ×10
/// per further failure and lowered ÷10 per full step, to 0 below this.
const MU_FIRST: f64 = 1e-8;

/// Minimizes ½‖r(w)‖² subject to c(w) = 0 and l ≤ w ≤ u from w₀ (projected into the
/// box). Returns the last accepted iterate (each lowers the merit) with its multipliers
/// and a typed outcome; an error for unusable input, wrong shapes, or constraints whose
/// Jacobian has dependent rows at the start.
pub fn generalized_gauss_newton<P: ConstrainedResiduals>(
    problem: &P, w0: &[f64], bounds: &BoxBounds, settings: &GgnSettings,
) -> Result<GgnResult, LsqError> {
    settings.validate()?;
    let w = bounds.check(w0)?;
    let mut run = Run {
        problem,
        bounds,
        settings,
        sizes: None,
        counts: Counts::default(),
        history: vec![],
        penalty: 0.0,
        mu_rel: 0.0,
        iterations: 0,
        dampings: 0,
        full_run: 0,
        held: vec![],
        w: w.clone(),
        at: None,
        first: None,
    };
    let start = calls::constrained(problem, &w, true, &mut run.sizes, &mut run.counts)?;
    let (outcome, message) = match start {
        Ok(l) => {
            run.first = Some((half_sq(&l), max_abs(&l.c)));
            run.at = Some(l);
            run.iterate()?
        }
        Err(e) => (LsqOutcome::StartFailed, e),
    };
    run.finish(w0, outcome, message)
}

/// ½‖r‖².
fn half_sq(l: &Linearization) -> f64 {
    0.5 * l.r.norm_squared()
}

/// A run's state.
struct Run<'a, P> {
    problem: &'a P,
    bounds: &'a BoxBounds,
    settings: &'a GgnSettings,
    sizes: Option<(usize, usize)>,
    counts: Counts,
    history: Vec<GgnIteration>,
    penalty: f64,
    mu_rel: f64,
    iterations: usize,
    dampings: usize,
    full_run: usize,
    /// The held set of the last subproblem at the current iterate.
    held: Vec<(usize, BoundSide)>,
    w: Vec<f64>,
    /// The current iterate's linearization (with both Jacobians).
    at: Option<Linearization>,
    /// Cost and max |c| at the start.
    first: Option<(f64, f64)>,
}

impl<P: ConstrainedResiduals> Run<'_, P> {
    /// Iterations until a test holds.
    fn iterate(&mut self) -> Result<(LsqOutcome, String), LsqError> {
        loop {
            let at = self.at.clone().expect("an evaluated iterate");
            let w = self.w.clone();
            let lin = linear(&w, &at);
            let sub = match nullspace::step(&lin, self.bounds, self.mu_rel) {
                Ok(s) => s,
                Err(e) if self.iterations == 0 && self.dampings == 0 => return Err(e),
                Err(e) => return Ok((self.stuck(&at), e.to_string())),
            };
            self.held = sub
                .held
                .iter()
                .copied()
                .filter(|&(i, _)| sub.dw[i] == 0.0)
                .collect();
            let (_, stat) = nullspace::first_order(&lin, &self.held)?;
            let maxc = max_abs(&at.c);
            let s = self.settings;
            let wnorm = DVector::from_column_slice(&self.w).norm();
            let small = sub.dw.norm() <= s.xtol * (wnorm + s.xtol);
            if maxc <= s.ctol && stat <= s.gtol {
                let msg = format!("max |c| = {maxc:e} ≤ ctol, ‖Jᵀr + Cᵀν‖∞ = {stat:e} ≤ gtol");
                return Ok((LsqOutcome::ConvergedGradient, msg));
            }
            if maxc <= s.ctol && small && self.mu_rel == 0.0 && sub.fraction == 1.0 {
                let msg = format!("max |c| = {maxc:e} ≤ ctol, ‖Δw‖ ≤ xtol (‖w‖ + xtol)");
                return Ok((LsqOutcome::ConvergedStep, msg));
            }
            if self.iterations >= s.max_iterations {
                return Ok((
                    LsqOutcome::MaxIterations,
                    format!("{} iterations", self.iterations),
                ));
            }
            if let Some(end) = self.line_search(&at, &sub, stat)? {
                return Ok(end);
            }
        }
    }

    /// Stalled, or infeasible if the constraints are still violated.
    fn stuck(&self, at: &Linearization) -> LsqOutcome {
        if max_abs(&at.c) <= self.settings.ctol {
            LsqOutcome::Stalled
        } else {
            LsqOutcome::Infeasible
        }
    }

    /// The reduction test, then backtracking on the merit from α = 1 (J with r at α = 1, the likely acceptance;
    /// r alone at shorter steps, then J once accepted). A failure raises the damping.
    fn line_search(
        &mut self, at: &Linearization, sub: &SubStep, stat: f64,
    ) -> Result<Option<(LsqOutcome, String)>, LsqError> {
        let l1 = |c: &DVector<f64>| c.iter().map(|v| v.abs()).sum::<f64>();
        self.penalty = self.penalty.max(1.5 * max_abs(&sub.nu));
        let g = at.jr.as_ref().expect("J").tr_mul(&at.r);
        let c_lin = &at.c + at.jc.as_ref().expect("C") * &sub.dw;
        let slope = g.dot(&sub.dw) + self.penalty * (l1(&c_lin) - l1(&at.c));
        let phi0 = half_sq(at) + self.penalty * l1(&at.c);
        let s = self.settings;
        if self.mu_rel == 0.0 && max_abs(&at.c) <= s.ctol && -slope <= s.ftol * phi0 {
            let msg = format!(
                "max |c| ≤ ctol, the step's predicted decrease {:e} ≤ ftol·merit",
                -slope
            );
            return Ok(Some((LsqOutcome::ConvergedReduction, msg)));
        }
        let mut alpha = 1.0;
        let mut accepted = None;
        if slope < 0.0 {
            for k in 0..self.settings.max_backtracks {
                let mut wt: Vec<f64> = self
                    .w
                    .iter()
                    .zip(sub.dw.iter())
                    .map(|(a, d)| a + alpha * d)
                    .collect();
                self.bounds.project(&mut wt);
                let t = calls::constrained(
                    self.problem,
                    &wt,
                    k == 0,
                    &mut self.sizes,
                    &mut self.counts,
                )?;
                if let Ok(t) = t {
                    if half_sq(&t) + self.penalty * l1(&t.c)
                        <= phi0 + self.settings.armijo * alpha * slope
                    {
                        accepted = Some((wt, t));
                        break;
                    }
                }
                alpha *= 0.5;
            }
        }
        self.history.push(GgnIteration {
            iteration: self.iterations,
            cost: half_sq(at),
            max_violation: max_abs(&at.c),
            stationarity: stat,
            mu: self.mu_rel * sub.scale * sub.scale,
            penalty: self.penalty,
            step_norm: sub.dw.norm(),
            alpha: if accepted.is_some() { alpha } else { 0.0 },
            accepted: accepted.is_some(),
            held: sub.held.len(),
            w: self.w.clone(),
        });
        match accepted {
            Some((wt, t)) => self.accept(wt, t, alpha == 1.0),
            None => {
                self.mu_rel = (10.0 * self.mu_rel).max(MU_FIRST);
                self.dampings += 1;
                self.full_run = 0;
                if self.dampings > self.settings.max_dampings {
                    let msg = format!(
                        "no decrease of the merit after {} dampings (slope {slope:e})",
                        self.dampings
                    );
                    return Ok(Some((self.stuck(at), msg)));
                }
                Ok(None)
            }
        }
    }

    /// Moves to an accepted point (evaluating its Jacobians if the trial did not).
    fn accept(
        &mut self, wt: Vec<f64>, mut t: Linearization, full: bool,
    ) -> Result<Option<(LsqOutcome, String)>, LsqError> {
        if t.jr.is_none() {
            match calls::constrained(self.problem, &wt, true, &mut self.sizes, &mut self.counts)? {
                Ok(l) => t = l,
                Err(e) => {
                    let msg = format!("the Jacobians failed at an accepted point: {e}");
                    return Ok(Some((self.stuck(&t), msg)));
                }
            }
        }
        self.full_run = if full && self.mu_rel == 0.0 {
            self.full_run + 1
        } else {
            0
        };
        if full {
            self.mu_rel = if self.mu_rel / 10.0 < MU_FIRST {
                0.0
            } else {
                self.mu_rel / 10.0
            };
        }
        self.w = wt;
        self.at = Some(t);
        self.iterations += 1;
        if full {
            self.dampings = 0;
        }
        Ok(None)
    }

    /// The result at the last accepted iterate.
    fn finish(
        self, w0: &[f64], outcome: LsqOutcome, message: String,
    ) -> Result<GgnResult, LsqError> {
        let n = self.w.len();
        let (cost_initial, max_violation_initial) = self.first.unwrap_or((f64::NAN, f64::NAN));
        let mut active = vec![None; n];
        for &(i, s) in &self.held {
            active[i] = Some(s);
        }
        let (multipliers, stationarity) = match &self.at {
            Some(at) => nullspace::first_order(&linear(&self.w, at), &self.held)
                .map(|(nu, s)| (nu.iter().copied().collect(), s))
                .unwrap_or((vec![], f64::NAN)),
            None => (vec![], f64::NAN),
        };
        let at = self.at;
        Ok(GgnResult {
            outcome,
            message,
            w_initial: w0.to_vec(),
            multipliers,
            cost_initial,
            cost: at.as_ref().map_or(f64::NAN, half_sq),
            max_violation_initial,
            max_violation: at.as_ref().map_or(f64::NAN, |a| max_abs(&a.c)),
            stationarity,
            residuals: at
                .as_ref()
                .map_or(vec![], |a| a.r.iter().copied().collect()),
            iterations: self.iterations,
            residual_evaluations: self.counts.residuals,
            jacobian_evaluations: self.counts.jacobians,
            active,
            final_full_steps: self.full_run,
            history: self.history,
            jacobian: at.as_ref().and_then(|a| a.jr.clone()),
            constraint_jacobian: at.and_then(|a| a.jc),
            w: self.w,
        })
    }
}

/// The linearization's view for the subproblem.
fn linear<'a>(w: &'a [f64], at: &'a Linearization) -> Linear<'a> {
    Linear {
        w,
        r: &at.r,
        c: &at.c,
        j: at.jr.as_ref().expect("J at an iterate"),
        cm: at.jc.as_ref().expect("C at an iterate"),
    }
}
