//! Typed cost terms over named outputs (theory.md §1):
//! `ψ = ∫ L dt + Φ(x(tf)) + Σ_events E(t_e, x⁻)`. A term weighs one [`Quantity`] of the
//! run by a [`Law`] (or is a tracking, effort or data term). Running terms become
//! quadrature states `ż = L` (so their jumps at events need no code of their own); a
//! vector ψ is a list of [`Objective`]s, each a sum of terms.

mod data;
mod event_guard;
mod law;
mod quantity;
pub use data::{Channel, Datum, Samples};
pub use event_guard::EventGuard;
pub use law::Law;
pub use quantity::{BadIndex, Keyed, Quantity, QuantityKind};

use crate::integrate::Trajectory;
use crate::model::Scalar;
use std::sync::Arc;

/// A reference run that a tracking term follows: its trajectory and the parameter vector
/// θ = (p, c) it was made with.
#[derive(Debug, Clone)]
pub struct Reference {
    pub trajectory: Trajectory<f64>,
    pub theta: Vec<f64>,
}

/// One term of an objective: a [`Quantity`] of the run weighed by a [`Law`], or one of
/// the terms that weigh more than one quantity (a tracked output, the controls' effort, a
/// measured record).
///
/// ```
/// use hybridopt::prelude::*;
///
/// // w·(y₀(t_f) − 0.2)² and ∫ y₁ dt
/// let end = Term::squared(Quantity::Terminal { output: 0 }, 0.2, 1.0);
/// let area = Term::plain(Quantity::Integral { output: 1 }, 1.0);
/// assert!(end.is_terminal() && area.is_running());
/// ```
#[derive(Debug, Clone)]
pub enum Term {
    /// `law(q)`; for an integral the law weighs the integrand, `∫ law(y) dt`.
    Weighed { quantity: Quantity, law: Law },
    /// `∫ w·(y − y_ref(t))² dt`, with y_ref the same output along a reference run.
    Track {
        output: usize,
        weight: f64,
        reference: Arc<Reference>,
    },
    /// `∫ w·Σ_j u_j² dt` (control effort).
    Effort { weight: f64 },
    /// `w·Σ_{i,c} ((y_c(t_i) − d_{i,c})/σ_{i,c})²`: a measured record ([`Samples`]), each
    /// sample read after the events at its instant.
    Data { samples: Arc<Samples>, weight: f64 },
}

impl Term {
    /// `w·q`.
    pub fn plain(quantity: Quantity, weight: f64) -> Term {
        Term::Weighed {
            quantity,
            law: Law::Plain { weight },
        }
    }

    /// `w·(q − target)²`.
    pub fn squared(quantity: Quantity, target: f64, weight: f64) -> Term {
        Term::Weighed {
            quantity,
            law: Law::Squared { target, weight },
        }
    }

    /// The quantity a weighed term weighs.
    pub fn quantity(&self) -> Option<&Quantity> {
        match self {
            Term::Weighed { quantity, .. } => Some(quantity),
            _ => None,
        }
    }

    /// Whether the term is an integral (a quadrature state).
    pub fn is_running(&self) -> bool {
        match self {
            Term::Weighed { quantity, .. } => quantity.is_running(),
            Term::Track { .. } | Term::Effort { .. } => true,
            Term::Data { .. } => false,
        }
    }

    /// Whether the term is read at the horizon's end (`Φ(y(t_f))`).
    pub fn is_terminal(&self) -> bool {
        self.quantity().is_some_and(Quantity::is_terminal)
    }

    /// (guard, occurrence) of an event term.
    pub fn event(&self) -> Option<(EventGuard, usize)> {
        self.quantity().and_then(Quantity::event)
    }

    /// The term's kind as a problem file names it (`integral_squared`, `track`, …).
    pub fn name(&self) -> String {
        match self {
            Term::Weighed {
                quantity,
                law: Law::Plain { .. },
            } => quantity.name().to_string(),
            Term::Weighed {
                quantity,
                law: Law::Squared { .. },
            } => format!("{}_squared", quantity.name()),
            Term::Track { .. } => "track".into(),
            Term::Effort { .. } => "effort".into(),
            Term::Data { .. } => "data".into(),
        }
    }

    /// Whether it is a `parameter_squared` term (a least-squares fit's prior).
    pub fn is_parameter_squared(&self) -> bool {
        matches!(
            self,
            Term::Weighed {
                quantity: Quantity::Parameter { .. },
                law: Law::Squared { .. },
            }
        )
    }

    /// The same term at occurrence `local` of its guard (an event term placed on a
    /// segment or stage that counts its own firings; others unchanged).
    pub fn with_occurrence(&self, local: usize) -> Term {
        match self {
            Term::Weighed { quantity, law } => Term::Weighed {
                quantity: quantity.with_occurrence(local),
                law: *law,
            },
            t => t.clone(),
        }
    }

    /// A data term's record and weight.
    pub fn data(&self) -> Option<(&Samples, f64)> {
        match self {
            Term::Data { samples, weight } => Some((samples, *weight)),
            _ => None,
        }
    }

    /// [`Law::value`] of a weighed term whose quantity passes `pick`, at the value
    /// `pick` reads (0 otherwise).
    fn weigh<D: Scalar>(&self, pick: impl FnOnce(&Quantity) -> Option<D>) -> D {
        match self {
            Term::Weighed { quantity, law } => pick(quantity).map_or(D::zero(), |v| law.value(v)),
            _ => D::zero(),
        }
    }

    /// The integrand `L` from the outputs `y`, controls `u` and, for tracking, `y_ref`.
    #[inline]
    pub fn running<D: Scalar>(&self, y: &[D], u: &[D], y_ref: D) -> D {
        match *self {
            Term::Weighed {
                quantity: Quantity::Integral { output },
                law,
            } => law.value(y[output]),
            Term::Track { output, weight, .. } => {
                let d = y[output] - y_ref;
                d * d * weight
            }
            Term::Effort { weight } => u.iter().fold(D::zero(), |s, &v| s + v * v) * weight,
            _ => D::zero(),
        }
    }

    /// The partial derivatives of [`Self::running`] in closed form, reported entry by
    /// entry (only the non-zero ones): `dy(i, ∂L/∂y_i)` and `du(i, ∂L/∂u_i)` with
    ///
    /// ```text
    /// Integral: ∂L/∂y_o = law′(y_o)  (w, or 2w(y_o − target))
    /// Track:    2w(y_o − y_ref)      Effort: ∂L/∂u_i = 2w u_i
    /// ```
    ///
    /// (the adjoint's output cotangent ȳ, theory.md §4; the unit test holds it to the
    /// dual derivative of [`Self::running`]).
    #[inline]
    pub fn running_partials(
        &self, y: &[f64], u: &[f64], y_ref: f64, mut dy: impl FnMut(usize, f64),
        mut du: impl FnMut(usize, f64),
    ) {
        match *self {
            Term::Weighed {
                quantity: Quantity::Integral { output },
                law,
            } => dy(output, law.slope(y[output])),
            Term::Track { output, weight, .. } => dy(output, 2.0 * weight * (y[output] - y_ref)),
            Term::Effort { weight } => {
                for (i, &v) in u.iter().enumerate() {
                    du(i, 2.0 * weight * v);
                }
            }
            _ => {}
        }
    }

    /// The terminal value `Φ` from the outputs at tf.
    pub fn terminal<D: Scalar>(&self, y: &[D]) -> D {
        self.weigh(|q| match *q {
            Quantity::Terminal { output } => Some(y[output]),
            _ => None,
        })
    }

    /// The value of a parameter term (0 for other kinds).
    pub fn parameter_value<D: Scalar>(&self, theta: &[D]) -> D {
        self.weigh(|q| q.parameter().map(|i| theta[i]))
    }

    /// Adds the gradient of a parameter term to `g`.
    pub fn add_parameter_gradient(&self, theta: &[f64], g: &mut [f64]) {
        if let Term::Weighed {
            quantity: Quantity::Parameter { index },
            law,
        } = *self
        {
            g[index] += law.slope(theta[index])
        }
    }

    /// The value of a final-time term at the horizon's end `tf` (0 for other kinds).
    pub fn time_value(&self, tf: f64) -> f64 {
        self.weigh(|q| (*q == Quantity::FinalTime).then_some(tf))
    }

    /// The derivative of [`Self::time_value`] in `tf` (0 for other kinds).
    pub fn time_slope(&self, tf: f64) -> f64 {
        match *self {
            Term::Weighed {
                quantity: Quantity::FinalTime,
                law,
            } => law.slope(tf),
            _ => 0.0,
        }
    }

    /// The event value `E` from the event time, the system's states and the outputs
    /// there ([`Quantity::at_event`]).
    pub fn event_value<D: Scalar>(&self, t: D, x: &[D], y: &[D]) -> D {
        self.weigh(|q| q.event().map(|_| q.at_event(t, x, y)))
    }
}

/// A named scalar cost: the sum of its terms. A setup's objectives make a vector ψ;
/// [`crate::optimize()`] minimizes the first.
///
/// ```
/// use hybridopt::prelude::*;
///
/// // ψ = ∫ y² dt + 0.1 (t₂ − 1.5)²: output 0 and the second event of any guard
/// let psi = Objective::new("psi", vec![
///     Term::squared(Quantity::Integral { output: 0 }, 0.0, 1.0),
///     Term::squared(Quantity::EventTime { guard: EventGuard::Any, occurrence: 2 }, 1.5, 0.1),
/// ]);
/// assert!(psi.terms[0].is_running() && psi.terms[1].event() == Some((EventGuard::Any, 2)));
/// ```
#[derive(Debug, Clone)]
pub struct Objective {
    pub name: String,
    pub terms: Vec<Term>,
}

impl Objective {
    /// An objective named `name`, the sum of `terms`.
    pub fn new(name: &str, terms: Vec<Term>) -> Self {
        Objective {
            name: name.to_string(),
            terms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Quantity, Term};
    use num_dual::Dual64;

    /// The closed-form partials equal the dual derivative of `running`, entry by entry.
    #[test]
    fn running_partials_equal_the_dual_derivative() {
        let y = [0.7, -1.3, 2.1];
        let u = [0.4, -0.9];
        let terms = [
            Term::plain(Quantity::Integral { output: 1 }, 0.3),
            Term::squared(Quantity::Integral { output: 2 }, 0.5, 1.7),
            Term::Effort { weight: 0.25 },
        ];
        for term in &terms {
            let (mut gy, mut gu) = ([0.0; 3], [0.0; 2]);
            term.running_partials(&y, &u, 0.0, |i, d| gy[i] += d, |i, d| gu[i] += d);
            let lift = |v: &[f64]| v.iter().map(|&a| Dual64::from(a)).collect::<Vec<_>>();
            for i in 0..5 {
                let (mut yd, mut ud) = (lift(&y), lift(&u));
                if i < 3 {
                    yd[i].eps = 1.0;
                } else {
                    ud[i - 3].eps = 1.0;
                }
                let want = term.running(&yd, &ud, Dual64::from(0.0)).eps;
                let got = if i < 3 { gy[i] } else { gu[i - 3] };
                assert!(
                    (got - want).abs() <= 1e-15 * want.abs().max(1.0),
                    "{term:?} entry {i}: {got} vs {want}"
                );
            }
        }
    }
}
