//! Integration of a smooth ODE between two times, forward or backward, with no events:
//! the adjoint's backward pass over one segment.

use super::controller::{initial_step, Controller};
use super::options::SolverOptions;
use super::step::{try_step_into, StepInPlace};
use super::trajectory::Stats;
use super::Newton;
use super::OdeRhs;
use crate::error::{Error, ModelError};
use crate::model::Scalar;

/// Why a smooth integration stopped early.
#[derive(Debug)]
pub enum SmoothError {
    Model { t: f64, source: ModelError },
    Underflow { t: f64, h: f64 },
    NonFinite { t: f64 },
    TooManySteps { t: f64 },
}

impl SmoothError {
    /// The run's typed error: in mode `mode` (its name), `max_steps` the solver's limit,
    /// `what` the integrated quantity that a non-finite value is reported for.
    pub fn into_error(self, mode: String, max_steps: usize, what: &str) -> Error {
        match self {
            SmoothError::Model { t, source } => Error::Model { t, mode, source },
            SmoothError::Underflow { t, h } => Error::StepSizeUnderflow {
                t,
                mode,
                h,
                h_min: 16.0 * f64::EPSILON * t.abs().max(1.0),
            },
            SmoothError::NonFinite { t } => Error::NonFinite {
                t,
                mode,
                what: what.into(),
            },
            SmoothError::TooManySteps { t } => Error::TooManySteps { t, mode, max_steps },
        }
    }
}

/// Integrates `ẏ = F(t, y)` from `ta` to `tb` (tb < ta integrates backward). Returns the
/// end value. `h0` is a suggested first step magnitude (None: the automatic guess).
/// `observe(t, y)` is called after every accepted step.
pub fn integrate_smooth<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, ta: f64, tb: f64, y0: &[D], sopt: &SolverOptions, h0: Option<f64>, stats: &mut Stats,
    observe: Option<&mut dyn FnMut(f64, &[D])>,
) -> Result<(Vec<D>, f64), SmoothError> {
    integrate_smooth_from(rhs, ta, tb, y0, None, sopt, h0, stats, observe).map(|(y, h, _)| (y, h))
}

/// [`integrate_smooth`] with the slope at the start given (`f0 = F(ta, y0)`, when the
/// caller has it: first-same-as-last across consecutive calls) and the slope at the end
/// returned: `(y(tb), next step suggestion, F(tb, y(tb)))`.
pub fn integrate_smooth_from<'o, D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, ta: f64, tb: f64, y0: &[D], f_start: Option<Vec<D>>, sopt: &SolverOptions,
    h0: Option<f64>, stats: &mut Stats, mut observe: Option<&mut (dyn FnMut(f64, &[D]) + 'o)>,
) -> Result<(Vec<D>, f64, Vec<D>), SmoothError> {
    let tol = sopt.tolerances();
    let dir = if tb >= ta { 1.0 } else { -1.0 };
    let n = y0.len();
    let mut t = ta;
    let mut y = y0.to_vec();
    let mut f0 = start_slope(rhs, t, &y, f_start, stats)?;
    if (tb - ta).abs() <= 16.0 * f64::EPSILON * ta.abs().max(1.0) {
        return Ok((y, h0.unwrap_or(0.0), f0));
    }
    let mut h = match h0 {
        Some(h) if h > 0.0 => h,
        _ => initial_step(rhs, sopt.method, D::from(t), &y, &f0, &tol, dir, sopt.h_max)
            .map_err(|e| SmoothError::Model { t, source: e })?,
    };
    let mut ctrl = Controller::new(sopt.method, n);
    let mut taken = 0usize;
    // the step's end, written in place and swapped in when accepted (no allocation)
    let mut y1 = vec![D::zero(); n];
    let mut f1 = vec![D::zero(); n];
    let mut newton = Newton::new();
    // a multistep method's history (from the segment's start)
    let mut history = None;
    let steps = || loop {
        h = h.min(sopt.h_max);
        let (hs, last, h_min) = next_step(h, t, tb, dir);
        if !last && h < h_min {
            return Err(SmoothError::Underflow { t, h });
        }
        taken += 1;
        if taken > sopt.max_steps {
            return Err(SmoothError::TooManySteps { t });
        }
        let att = try_step_into(
            sopt.method,
            rhs,
            D::from(t),
            &y,
            &f0,
            D::from(hs),
            &tol,
            (&mut y1, &mut f1, &mut newton, history.as_deref()),
        )
        .map_err(|e| SmoothError::Model { t, source: e })?;
        match att {
            StepInPlace::NewtonFailed { evals } => {
                h = after_newton_failure(stats, evals, t, hs, h_min)?;
            }
            StepInPlace::Done {
                err,
                evals,
                history: after,
            } => {
                stats.rhs_evals += evals;
                let finite = y1.iter().all(|v| v.re().is_finite());
                if !(err <= 1.0) || !finite {
                    stats.rejected += 1;
                    if !finite && hs.abs() <= h_min {
                        return Err(SmoothError::NonFinite { t });
                    }
                    h = hs.abs()
                        * after
                            .as_ref()
                            .map_or_else(|| ctrl.reject(err), |a| a.retry_factor());
                    if hs.abs() <= h_min {
                        return Err(SmoothError::Underflow { t, h: hs.abs() });
                    }
                    continue;
                }
                stats.steps += 1;
                newton.advance();
                let fac = match &after {
                    Some(a) => a.factor(),
                    None => ctrl.accept(err, hs),
                };
                history = after;
                std::mem::swap(&mut y, &mut y1);
                std::mem::swap(&mut f0, &mut f1);
                if let Some(o) = observe.as_mut() {
                    o(if last { tb } else { t + hs }, &y);
                }
                if last {
                    return Ok((y, hs.abs() * fac, f0));
                }
                t += hs;
                h = hs.abs() * fac;
            }
        }
    };
    let result = steps();
    stats.newton += newton.counts();
    result
}

/// The slope at the start: `f_start` when the caller has it (of the right length), else
/// `F(t, y)` evaluated (and counted).
fn start_slope<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: f64, y: &[D], f_start: Option<Vec<D>>, stats: &mut Stats,
) -> Result<Vec<D>, SmoothError> {
    match f_start {
        Some(f) if f.len() == y.len() => Ok(f),
        _ => {
            let mut f = vec![D::zero(); y.len()];
            rhs.eval(D::from(t), y, &mut f)
                .map_err(|e| SmoothError::Model { t, source: e })?;
            stats.rhs_evals += 1;
            Ok(f)
        }
    }
}

/// The next step from `t` towards `tb` for a step size `h`: `(signed step, whether it is
/// the last — it reaches `tb`, or what remains is below the smallest step — and that
/// smallest step, 16 ulp of t)`.
fn next_step(h: f64, t: f64, tb: f64, dir: f64) -> (f64, bool, f64) {
    let remaining = (tb - t).abs();
    let h_min = 16.0 * f64::EPSILON * t.abs().max(1.0);
    let last = h >= remaining * (1.0 - 1e-12) || remaining <= h_min;
    (if last { tb - t } else { dir * h }, last, h_min)
}

/// A step whose Newton iteration failed: counted as rejected, retried at a quarter of its
/// size (an underflow error below the smallest step).
fn after_newton_failure(
    stats: &mut Stats, evals: usize, t: f64, hs: f64, h_min: f64,
) -> Result<f64, SmoothError> {
    stats.rhs_evals += evals;
    stats.rejected += 1;
    let h = hs.abs() * 0.25;
    if h < h_min {
        return Err(SmoothError::Underflow { t, h });
    }
    Ok(h)
}
