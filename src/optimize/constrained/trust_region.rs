//! The SQP's trust region (docs/constrained.md, "The solver"; Fletcher, *Practical
//! Methods of Optimization*, 2nd ed., §14.5, the Sl1QP method; Nocedal & Wright,
//! *Numerical Optimization*, 2nd ed., §18.5 and Algorithm 4.1): the QP is restricted to
//! `‖d‖∞ ≤ Δ`, a step is taken when the merit function's actual reduction is a fraction of
//! the reduction the QP model predicts, and the ratio of the two sets the next Δ.

use super::merit::{merit, second_order_correction, snap, NOISE};
use super::point::Point;
use super::problem::Problem;
use super::qp::{dot, inf_norm, QpStep};
use super::sqp::{elastic_tol, State};
use crate::error::Error;
use crate::optimize::Globalization;
use nalgebra::DVector;

/// A step is taken when `ared ≥ ACCEPT · pred`; the radius grows by `GROW` when the ratio
/// exceeds `GOOD` at the region's edge and shrinks by `SHRINK` when it is below `POOR`
/// (Nocedal & Wright Algorithm 4.1's scheme; the thresholds are the permissive end of its
/// ranges, because the merit function of a hybrid system bends at every event). A
/// rejected step shrinks the region to `SHRINK ‖d‖∞`, so that the next QP step differs;
/// a poor step that is taken shrinks the radius, not the step: an interior step (a
/// quasi-Newton step shorter than the region) would otherwise collapse the region to a
/// fraction of itself, and the four-step walk's region then stayed too small to ever
/// close its gaps (it ended infeasible after 48 iterations).
const ACCEPT: f64 = 1e-4;
const POOR: f64 = 0.25;
const GOOD: f64 = 0.75;
const GROW: f64 = 2.0;
const SHRINK: f64 = 0.25;
/// The smallest radius, relative to `1 + ‖x‖∞`: below it the iteration has stalled.
const RADIUS_MIN: f64 = 1e-12;

impl State {
    /// The model's predicted reduction of the merit function,
    /// `pred = −(∇fᵀd + ½dᵀBd) + μ (Σviol(x) − Σviol_lin(x + d))`. Where the step needs
    /// the slacks, μ is at least the QP's elastic penalty ρ, so that `pred` is the QP
    /// model's own decrease (never negative, Fletcher §14.5); otherwise μ is raised where
    /// needed so that `pred ≥ ½ μ (Σviol(x) − Σviol_lin)` (Nocedal & Wright eq. 18.36).
    /// A linearized violation within the QP's accuracy counts as met.
    fn predicted(&mut self, p: &Point, step: &QpStep) -> f64 {
        let bd = &self.b * DVector::from_column_slice(&step.d);
        let model = dot(&p.g, &step.d) + 0.5 * dot(&step.d, bd.as_slice());
        let linear = if step.linear_violation <= elastic_tol(p) {
            0.0
        } else {
            step.linear_violation
        };
        let gain = p.total_violation() - linear;
        if step.elastic > elastic_tol(p) {
            self.mu = self.mu.max(self.rho);
        } else if gain > 0.0 && model > 0.0 {
            self.mu = self.mu.max(model / (0.5 * gain));
        }
        -model + self.mu * gain
    }

    /// The trust-region step from `p`: the trial point `x + d` is taken when
    /// `ared ≥ ACCEPT · pred` (after one second-order correction if the plain step is
    /// not), or, where `pred` is below the merit's round-off, when φ does not rise beyond
    /// it; otherwise Δ shrinks to `SHRINK ‖d‖∞` and the QP is solved again. A trial point
    /// where an event the constraints need disappears counts as rejected. `None` when Δ
    /// falls below its minimum.
    pub fn trust_region(
        &mut self, nlp: &impl Problem, p: &Point, mut step: QpStep, iteration: u64,
        (lower, upper): (&[f64], &[f64]), evaluations: &mut usize,
    ) -> Result<Option<Point>, Error> {
        let floor = RADIUS_MIN * (1.0 + inf_norm(&p.x));
        loop {
            // μ may rise with each step (`predicted`), so φ(x) is taken afterwards
            let pred = self.predicted(p, &step);
            let phi0 = merit(p, self.mu);
            let noise = NOISE * phi0.abs().max(1.0);
            let dnorm = inf_norm(&step.d);
            let mut accepted = None;
            if pred > 0.0 {
                let x = snap(nlp, &p.x, &step.d, 1.0, &step.nu);
                match nlp.evaluate(&x) {
                    Ok(trial) => {
                        *evaluations += 1;
                        let ratio = |t: &Point| (phi0 - merit(t, self.mu) + noise) / pred;
                        let r = ratio(&trial);
                        // below the merit's round-off the ratio is noise: a step that
                        // does not raise φ beyond it is taken
                        if r >= ACCEPT || (pred <= noise && r >= 0.0) {
                            accepted = Some((r, trial));
                        } else if let Some(xc) = second_order_correction(nlp, p, &trial, &step) {
                            if let Ok(t) = nlp.evaluate(&xc) {
                                *evaluations += 1;
                                let r = ratio(&t);
                                if r >= ACCEPT {
                                    accepted = Some((r, t));
                                }
                            }
                        }
                    }
                    Err(e) if e.is_domain_error() => *evaluations += 1,
                    Err(e) => return Err(e),
                }
            }
            if let Some((ratio, q)) = accepted {
                if ratio < POOR {
                    self.radius *= SHRINK;
                } else if ratio > GOOD && dnorm >= 0.99 * self.radius {
                    self.radius = (GROW * self.radius).min(self.radius_max);
                }
                self.radius = self.radius.max(floor);
                self.lambda = step.lambda;
                return Ok(Some(q));
            }
            self.radius = SHRINK * dnorm.min(self.radius);
            if self.radius < floor {
                return Ok(None);
            }
            step = self.solvable_step(p, (lower, upper), iteration)?;
        }
    }

    /// The QP step; in the trust region, a QP the solver cannot finish (Clarabel's
    /// `InsufficientProgress`, `DualInfeasible` on a nearly singular B) is solved again in
    /// a region a quarter the size, down to the minimum radius.
    pub fn solvable_step(
        &mut self, p: &Point, (lower, upper): (&[f64], &[f64]), iteration: u64,
    ) -> Result<QpStep, Error> {
        let floor = RADIUS_MIN * (1.0 + inf_norm(&p.x));
        loop {
            match self.step(p, lower, upper, iteration) {
                Err(Error::Constrained(_))
                    if self.globalization == Globalization::TrustRegion
                        && SHRINK * self.radius >= floor =>
                {
                    self.radius *= SHRINK;
                }
                other => return other,
            }
        }
    }
}
