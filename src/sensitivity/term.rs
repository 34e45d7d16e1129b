//! A cost term's value and its derivatives in t, X and θ at one point (events and the
//! horizon's end), chained through the outputs' Jacobians: the seeds of the adjoint and
//! of the direct method's functionals.

use crate::cost::Term;
use crate::error::Error;
use crate::integrate::trajectory::Ctx;
use crate::model::HybridSystem;
use crate::setup::located;
use crate::setup::{ScalarJac, Setup};
use nalgebra::DVector;
use num_dual::Dual64;

/// Value and gradients (t, X, θ) of an event or terminal cost term at `(t, X)` in the
/// context `ctx`: the term's own derivatives chained through the outputs' Jacobians.
/// `as_terminal`: evaluate a terminal term (Φ) rather than an event term (E).
pub fn term_jacobian<S: HybridSystem>(
    setup: &Setup<'_, S>, term: &Term, ctx: &Ctx, t: f64, xx: &[f64], theta: &[f64],
    as_terminal: bool,
) -> Result<ScalarJac, Error> {
    let outs = setup
        .output_jacobian(ctx, t, xx, theta)
        .map_err(located(setup, t, ctx.mode))?;
    let dims = (setup.n(), setup.ntheta());
    Ok(term_jacobian_from(term, t, &outs, dims, as_terminal))
}

/// [`term_jacobian`] from the outputs' Jacobians at `(t, X)` (computed once for every
/// term at the same point), `(n, nθ)` the sizes of X and θ: with `y = h(t, X, θ)` and the
/// term `T(t, y)`, `T_t = ∂T/∂t + Σ_k ∂T/∂y_k h_{k,t}`, `T_X = Σ_k ∂T/∂y_k h_{k,X}`, `T_θ`
/// likewise.
pub(crate) fn term_jacobian_from(
    term: &Term, t: f64, outs: &[ScalarJac], (n, nth): (usize, usize), as_terminal: bool,
) -> ScalarJac {
    let ny = outs.len();
    let f = |td: Dual64, yd: &[Dual64]| -> Dual64 {
        if as_terminal {
            term.terminal(yd)
        } else {
            term.event_value(td, yd)
        }
    };
    let lift = |seed: Option<usize>| -> Vec<Dual64> {
        (0..ny)
            .map(|i| Dual64::new(outs[i].value, if seed == Some(i) { 1.0 } else { 0.0 }))
            .collect()
    };
    let v0 = f(Dual64::new(t, 1.0), &lift(None));
    let mut jac = ScalarJac {
        value: v0.re,
        t: v0.eps,
        x: DVector::zeros(n),
        theta: DVector::zeros(nth),
    };
    for (k, o) in outs.iter().enumerate() {
        let dk = f(Dual64::from(t), &lift(Some(k))).eps;
        if dk != 0.0 {
            jac.t += dk * o.t;
            jac.x += &o.x * dk;
            jac.theta += &o.theta * dk;
        }
    }
    jac
}
