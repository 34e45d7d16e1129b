//! Typed cost terms over named outputs (theory.md §1):
//! `ψ = ∫ L dt + Φ(x(tf)) + Σ_events E(t_e, x⁻)`. Running terms become quadrature states
//! `ż = L` (so their jumps at events need no code of their own); a vector ψ is a list of
//! [`Objective`]s, each a sum of terms.

mod data;
mod event_guard;
mod law;
pub use data::{Channel, Datum, Samples};
pub use event_guard::EventGuard;
use law::Law;

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

/// One term of an objective. Outputs and guards are indices into the system's lists.
#[derive(Debug, Clone)]
pub enum Term {
    /// `∫ w·y dt`
    Integral { output: usize, weight: f64 },
    /// `∫ w·(y − target)² dt`
    IntegralSquared {
        output: usize,
        target: f64,
        weight: f64,
    },
    /// `∫ w·(y − y_ref(t))² dt`, with y_ref the same output along a reference run.
    Track {
        output: usize,
        weight: f64,
        reference: Arc<Reference>,
    },
    /// `∫ w·Σ_j u_j² dt` (control effort).
    Effort { weight: f64 },
    /// `w·y(tf)`
    Terminal { output: usize, weight: f64 },
    /// `w·(y(tf) − target)²`
    TerminalSquared {
        output: usize,
        target: f64,
        weight: f64,
    },
    /// `w·t_e` of the `occurrence`-th (1-based) firing of `guard` (or event, for
    /// [`EventGuard::Any`]).
    EventTime {
        guard: EventGuard,
        occurrence: usize,
        weight: f64,
    },
    /// `w·(t_e − target)²` of the `occurrence`-th firing of `guard`.
    EventTimeSquared {
        guard: EventGuard,
        occurrence: usize,
        target: f64,
        weight: f64,
    },
    /// `w·(θ_i − target)²`: a regularization on a parameter (or control coefficient).
    ParameterSquared {
        index: usize,
        target: f64,
        weight: f64,
    },
    /// `w·y(t_e, x⁻)`: an output just before the `occurrence`-th firing.
    EventOutput {
        guard: EventGuard,
        occurrence: usize,
        output: usize,
        weight: f64,
    },
    /// `w·θ_i`: a parameter (or control coefficient) itself (a constraint's functional).
    Parameter { index: usize, weight: f64 },
    /// `w·t_f`: the horizon's end (minimum-time problems, with a free final time; it does
    /// not depend on θ).
    FinalTime { weight: f64 },
    /// `w·(y(t_e, x⁻) − target)²`: an output just before the `occurrence`-th firing.
    EventOutputSquared {
        guard: EventGuard,
        occurrence: usize,
        output: usize,
        target: f64,
        weight: f64,
    },
    /// `w·Σ_{i,c} ((y_c(t_i) − d_{i,c})/σ_{i,c})²`: a measured record ([`Samples`]), each
    /// sample read after the events at its instant.
    Data { samples: Arc<Samples>, weight: f64 },
}

impl Term {
    /// Whether the term is an integral (a quadrature state).
    pub fn is_running(&self) -> bool {
        matches!(
            self,
            Term::Integral { .. }
                | Term::IntegralSquared { .. }
                | Term::Track { .. }
                | Term::Effort { .. }
        )
    }
    pub fn is_terminal(&self) -> bool {
        matches!(self, Term::Terminal { .. } | Term::TerminalSquared { .. })
    }
    /// (guard, occurrence) of an event term.
    pub fn event(&self) -> Option<(EventGuard, usize)> {
        match *self {
            Term::EventTime {
                guard, occurrence, ..
            }
            | Term::EventTimeSquared {
                guard, occurrence, ..
            }
            | Term::EventOutputSquared {
                guard, occurrence, ..
            }
            | Term::EventOutput {
                guard, occurrence, ..
            } => Some((guard, occurrence)),
            _ => None,
        }
    }

    /// A data term's record and weight.
    pub fn data(&self) -> Option<(&Samples, f64)> {
        match self {
            Term::Data { samples, weight } => Some((samples, *weight)),
            _ => None,
        }
    }

    /// The term's law on its one quantity against a constant target: `w·v` for the
    /// plain kinds, `w·(v − target)²` for the squared ones; `None` for `Track` (its
    /// target moves with the reference), `Effort` (every control), `FinalTime` (no
    /// quantity of the run) and `Data` (one quantity a measured cell, cost/data.rs).
    fn law(&self) -> Option<Law> {
        match *self {
            Term::Integral { weight, .. }
            | Term::Terminal { weight, .. }
            | Term::EventTime { weight, .. }
            | Term::EventOutput { weight, .. }
            | Term::Parameter { weight, .. } => Some(Law::Plain { weight }),
            Term::IntegralSquared { target, weight, .. }
            | Term::TerminalSquared { target, weight, .. }
            | Term::EventTimeSquared { target, weight, .. }
            | Term::ParameterSquared { target, weight, .. }
            | Term::EventOutputSquared { target, weight, .. } => {
                Some(Law::Squared { target, weight })
            }
            Term::Track { .. }
            | Term::Effort { .. }
            | Term::FinalTime { .. }
            | Term::Data { .. } => None,
        }
    }

    /// [`Law::value`] of the term's law at its quantity `v` (0 for a term without one).
    fn weigh<D: Scalar>(&self, v: D) -> D {
        self.law().map_or(D::zero(), |law| law.value(v))
    }

    /// [`Law::slope`] of the term's law at its quantity `v` (0 for a term without one).
    fn weigh_slope(&self, v: f64) -> f64 {
        self.law().map_or(0.0, |law| law.slope(v))
    }

    /// The integrand `L` from the outputs `y`, controls `u` and, for tracking, `y_ref`.
    #[inline]
    pub fn running<D: Scalar>(&self, y: &[D], u: &[D], y_ref: D) -> D {
        match *self {
            Term::Integral { output, .. } | Term::IntegralSquared { output, .. } => {
                self.weigh(y[output])
            }
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
    /// Integral: ∂L/∂y_o = w     IntegralSquared: 2w(y_o − target)
    /// Track:    2w(y_o − y_ref) Effort:          ∂L/∂u_i = 2w u_i
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
            Term::Integral { output, .. } | Term::IntegralSquared { output, .. } => {
                dy(output, self.weigh_slope(y[output]))
            }
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
        match *self {
            Term::Terminal { output, .. } | Term::TerminalSquared { output, .. } => {
                self.weigh(y[output])
            }
            _ => D::zero(),
        }
    }

    /// The value of a parameter term (0 for other kinds).
    pub fn parameter_value<D: Scalar>(&self, theta: &[D]) -> D {
        match *self {
            Term::Parameter { index, .. } | Term::ParameterSquared { index, .. } => {
                self.weigh(theta[index])
            }
            _ => D::zero(),
        }
    }

    /// Adds the gradient of a parameter term to `g`.
    pub fn add_parameter_gradient(&self, theta: &[f64], g: &mut [f64]) {
        match *self {
            Term::Parameter { index, .. } | Term::ParameterSquared { index, .. } => {
                g[index] += self.weigh_slope(theta[index])
            }
            _ => {}
        }
    }

    /// The value of a final-time term at the horizon's end `tf` (0 for other kinds).
    pub fn time_value(&self, tf: f64) -> f64 {
        match *self {
            Term::FinalTime { weight } => weight * tf,
            _ => 0.0,
        }
    }

    /// The event value `E` from the event time and the outputs just before it.
    pub fn event_value<D: Scalar>(&self, t: D, y: &[D]) -> D {
        match *self {
            Term::EventTime { .. } | Term::EventTimeSquared { .. } => self.weigh(t),
            Term::EventOutput { output, .. } | Term::EventOutputSquared { output, .. } => {
                self.weigh(y[output])
            }
            _ => D::zero(),
        }
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
///     Term::IntegralSquared { output: 0, target: 0.0, weight: 1.0 },
///     Term::EventTimeSquared { guard: EventGuard::Any, occurrence: 2, target: 1.5, weight: 0.1 },
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
    use super::Term;
    use num_dual::Dual64;

    /// The closed-form partials equal the dual derivative of `running`, entry by entry.
    #[test]
    fn running_partials_equal_the_dual_derivative() {
        let y = [0.7, -1.3, 2.1];
        let u = [0.4, -0.9];
        let terms = [
            Term::Integral {
                output: 1,
                weight: 0.3,
            },
            Term::IntegralSquared {
                output: 2,
                target: 0.5,
                weight: 1.7,
            },
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
