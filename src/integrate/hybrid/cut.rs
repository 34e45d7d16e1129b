//! Cutting an accepted step at an event: the step is redone with the shortened length and
//! the event time refined by Newton's method on the guard at a true step's end.

use super::{with_real_parts, Bound, Ctx, HybridRhs};
use crate::error::ModelError;
use crate::integrate::dense::DenseStep;
use crate::integrate::ode::{Attempt, Tolerances};
use crate::integrate::step::try_step_from;
use crate::integrate::trajectory::Stats;
use crate::integrate::Newton;
use crate::integrate::{BdfHistory, Method};
use crate::model::Scalar;

/// The step from `t` to the event: its length, the state and slope at its end (X⁻, f⁻)
/// and its interpolant.
pub(super) struct Cut<D> {
    pub(super) he: D,
    pub(super) y: Vec<D>,
    pub(super) f: Vec<D>,
    pub(super) dense: DenseStep<D>,
}

/// Where one step starts: `(t, y)` with slope `f0`.
pub(super) struct StepStart<'a, D> {
    pub(super) t: D,
    pub(super) y: &'a [D],
    pub(super) f0: &'a [D],
}

/// Refines the event time of guard `k` from the interpolant's root `θ* h` by Newton's
/// method on `g(t_n + h_e, Φ_{h_e}(y_n)) = 0`:
///
/// ```text
/// h_e ← h_e − g / ġ,   ġ = g_t + g_x f(t_n + h_e, Φ_{h_e}(y_n))
/// ```
///
/// (the guard on a true step's end, not on the interpolant). The iteration runs in the
/// scalar type, so for dual numbers t_e carries the exact derivative of the discrete
/// root. If no cut step can be taken, the interpolant at θ* stands in (`full` is the
/// accepted step whose interpolant that is; `history` a multistep method's history at `t`).
#[allow(clippy::too_many_arguments)]
pub(super) fn cut_step<D: Scalar, H: HybridRhs<D> + ?Sized>(
    method: Method, rhs: &Bound<'_, D, H>, ctx: &Ctx, k: usize, start: StepStart<'_, D>,
    (th_star, h_used): (f64, f64), tol: &Tolerances, full: DenseStep<D>,
    (stats, newton, history): (&mut Stats, &mut Newton, Option<&BdfHistory<D>>),
) -> Result<Cut<D>, ModelError> {
    let StepStart { t, y, f0 } = start;
    let sys = rhs.h;
    let tscale = 4.0 * f64::EPSILON * t.re().abs().max(1.0);
    let mut he = D::from(th_star * h_used);
    let mut cut: Option<Cut<D>> = None;
    for it in 0..8 {
        if !(he.re() > 0.0 && he.re() <= h_used * (1.0 + 1e-12)) {
            break;
        }
        let Attempt::Done {
            y1,
            mut f1,
            dense,
            evals,
            ..
        } = try_step_from(method, rhs, t, y, f0, he, tol, (newton, history))?
        else {
            break;
        };
        stats.rhs_evals += evals;
        if method.is_multistep() {
            // a multistep step's f1 is its corrector's: f⁻ exactly
            sys.rhs(ctx, t + he, &y1, &mut f1)?;
            stats.rhs_evals += 1;
        }
        let g = sys.guard(ctx, k, t + he, &y1);
        let rate = with_real_parts(&y1, &f1, |yr, fr| {
            sys.guard_slope(ctx, k, (t + he).re(), yr, fr)
        });
        let dt = g / rate;
        cut = Some(Cut {
            he,
            y: y1,
            f: f1,
            dense,
        });
        if !dt.re().is_finite() || (dt.re().abs() <= tscale && it >= 1) {
            break;
        }
        he -= dt;
    }
    match cut {
        Some(c) => Ok(c),
        None => {
            let he = D::from(th_star * h_used);
            let mut ye = vec![D::zero(); y.len()];
            full.eval_theta(D::from(th_star), &mut ye);
            let mut fe = vec![D::zero(); y.len()];
            sys.rhs(ctx, t + he, &ye, &mut fe)?;
            Ok(Cut {
                he,
                y: ye,
                f: fe,
                dense: full,
            })
        }
    }
}
