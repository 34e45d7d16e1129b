//! The SQP's line search (docs/constrained.md, "The solver"; Nocedal & Wright, *Numerical
//! Optimization*, 2nd ed., Algorithm 18.3): Armijo backtracking on the l1 merit function
//! along the QP's step.

use super::merit::{merit, second_order_correction, snap, NOISE};
use super::point::Point;
use super::problem::Problem;
use super::qp::{dot, QpStep};
use crate::error::Error;

/// Armijo's sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// The smallest step fraction the line search tries.
const MIN_ALPHA: f64 = 1e-10;

/// Armijo backtracking on the l1 merit function along d, with one second-order correction
/// after a rejected full step. Trial points that leave the cost's domain (an event the
/// constraints need disappears) halve the step. `None` when no step is acceptable.
pub(super) fn line_search(
    nlp: &impl Problem, p: &Point, step: &QpStep, mu: f64, evaluations: &mut usize,
) -> Result<Option<Point>, Error> {
    let phi0 = merit(p, mu);
    let slope = dot(&p.g, &step.d) - mu * (p.total_violation() - step.linear_violation);
    let noise = NOISE * phi0.abs().max(1.0);
    let mut alpha = 1.0;
    while alpha >= MIN_ALPHA {
        let x = snap(nlp, &p.x, &step.d, alpha, &step.nu);
        let trial = match nlp.evaluate(&x) {
            Ok(t) => t,
            Err(e) if e.is_domain_error() => {
                *evaluations += 1;
                alpha *= 0.5;
                continue;
            }
            Err(e) => return Err(e),
        };
        *evaluations += 1;
        if merit(&trial, mu) <= phi0 + ARMIJO * alpha * slope.min(0.0) + noise {
            return Ok(Some(trial));
        }
        if alpha == 1.0 {
            if let Some(x) = second_order_correction(nlp, p, &trial, step) {
                if let Ok(t) = nlp.evaluate(&x) {
                    *evaluations += 1;
                    if merit(&t, mu) <= phi0 + ARMIJO * slope.min(0.0) + noise {
                        return Ok(Some(t));
                    }
                }
            }
        }
        alpha *= 0.5;
    }
    Ok(None)
}
