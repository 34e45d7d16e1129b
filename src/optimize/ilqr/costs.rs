//! The cost split over the stages, each piece in a form whose Gauss–Newton Hessian the
//! stage's direct sensitivities give exactly (docs/theory.md §11):
//!
//! ```text
//! plain     ℓ = q                  ∇ℓ = ∇q            ∇²ℓ ≈ 0
//! squared   ℓ = w (q − q*)²        ∇ℓ = 2w (q − q*) ∇q ∇²ℓ ≈ 2w ∇q ∇qᵀ   (Gauss–Newton)
//! effort    ℓ = w ∫ Σ_j u_j² dt    ∇ℓ from the run     ∇²ℓ = 2w G_k       (exact)
//! ```
//!
//! q a quantity of the stage's run (an event time, an output before an event or at the
//! end, an integral), ∇q its exact derivative over the stage's variables from the direct
//! pass, `G_k` the Gram matrix of the basis on interval k ([`ControlGrid::gram_interval`]).
//! Running terms go to every stage, terminal terms to the last, the j-th firing of a
//! guard to the stage where the rollout fires it (counted along the stages in order, as
//! multiple shooting counts them), and terms on θ itself to the stage that decides the
//! coefficient (a `final_time` term, with a free final time, on θ's entry T). Squared
//! running terms (`integral_squared`, `track`) and data terms have no such form here: the
//! solver refuses them.
//!
//! [`ControlGrid::gram_interval`]: crate::control::ControlGrid::gram_interval

use super::error::IlqrError;
use crate::cost::{EventGuard, Law, Objective, Quantity, Term};

/// How a component's value q becomes stage cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Form {
    /// `ℓ = q` (the term's own weight inside q).
    Plain,
    /// `ℓ = w q` (a term on θ itself).
    Linear { weight: f64 },
    /// `ℓ = w (q − target)²`, q the term's quantity at weight 1.
    Squared { target: f64, weight: f64 },
    /// `ℓ = q = w ∫ Σ u² dt`, with the exact Hessian `2w G_k`.
    Effort { weight: f64 },
    /// A constraint `lower ≤ q ≤ upper` in the augmented Lagrangian with multiplier
    /// `lambda` and penalty `rho` ([`augmented`]).
    Augmented {
        lower: f64,
        upper: f64,
        lambda: f64,
        rho: f64,
    },
}

/// The augmented-Lagrangian term of a constraint `l ≤ q ≤ u` (Rockafellar 1973; Nocedal &
/// Wright §17.4, eq. 17.65; docs/theory.md §11), with `s = q + λ/ρ` and
/// `d = s − clamp(s, l, u)`:
///
/// ```text
/// ℓ = ρ/2 d² − λ²/(2ρ)      dℓ/dq = ρ d      d²ℓ/dq² = ρ (s outside [l, u]), else 0
/// ```
///
/// An equality (l = u = v) gives `λ (q − v) + ρ/2 (q − v)²`; one side gives the
/// Powell–Hestenes–Rockafellar term. λ is signed as the SQP's multipliers (positive where
/// the upper side binds): the first-order update is `λ⁺ = ρ d = dℓ/dq`. Returns
/// `(ℓ, dℓ/dq, d²ℓ/dq²)`.
pub(crate) fn augmented(q: f64, lower: f64, upper: f64, lambda: f64, rho: f64) -> (f64, f64, f64) {
    let s = q + lambda / rho;
    let d = s - s.clamp(lower, upper);
    let curvature = if lower == upper || s < lower || s > upper {
        rho
    } else {
        0.0
    };
    (
        0.5 * rho * d * d - lambda * lambda / (2.0 * rho),
        rho * d,
        curvature,
    )
}

impl Form {
    /// ℓ at the quantity q.
    pub fn value(self, q: f64) -> f64 {
        match self {
            Form::Plain | Form::Effort { .. } => q,
            Form::Linear { weight } => weight * q,
            Form::Squared { target, weight } => weight * (q - target).powi(2),
            Form::Augmented {
                lower,
                upper,
                lambda,
                rho,
            } => augmented(q, lower, upper, lambda, rho).0,
        }
    }
    /// dℓ/dq at q (the factor of ∇q in ∇ℓ) and the Gauss–Newton curvature factor c in
    /// `∇²ℓ ≈ c ∇q ∇qᵀ`.
    pub fn slope_curvature(self, q: f64) -> (f64, f64) {
        match self {
            Form::Plain | Form::Effort { .. } => (1.0, 0.0),
            Form::Linear { weight } => (weight, 0.0),
            Form::Squared { target, weight } => (2.0 * weight * (q - target), 2.0 * weight),
            Form::Augmented {
                lower,
                upper,
                lambda,
                rho,
            } => {
                let (_, slope, curvature) = augmented(q, lower, upper, lambda, rho);
                (slope, curvature)
            }
        }
    }
}

/// One term of the cost as the stages see it: the term a stage's run evaluates and its form.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    pub term: Term,
    pub form: Form,
}

/// The problem's cost sorted by where it goes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// Running terms: every stage.
    pub running: Vec<Piece>,
    /// Terminal terms: the last stage.
    pub terminal: Vec<Piece>,
    /// Event terms, with their guard and (global) occurrence.
    pub events: Vec<(Piece, EventGuard, usize)>,
    /// Terms on θ itself: (index, form), the quantity θ_index.
    pub on_theta: Vec<(usize, Form)>,
    /// Output values at fixed instants (a path constraint's interior points): (t, piece
    /// with a `terminal` term), evaluated on the stage `τ_k < t ≤ τ_{k+1}` by a run over
    /// `[τ_k, t]`.
    pub points: Vec<(f64, Piece)>,
    /// A free final time's index in the extended θ: a term on T is a term on that entry.
    pub time: Option<usize>,
    /// A periodic problem's closing rows: (state m, the augmented form of
    /// `x⁺_m − x0_m(p)`), terms of the last stage (start.rs).
    pub closing: Vec<(usize, Form)>,
}

impl Plan {
    /// The plan of `objective` (with a free final time T at index `time` of the extended
    /// θ), or the term it cannot take.
    pub fn new(objective: &Objective, time: Option<usize>) -> Result<Plan, IlqrError> {
        let mut plan = Plan {
            time,
            ..Plan::default()
        };
        for term in &objective.terms {
            plan.add(term)?;
        }
        Ok(plan)
    }

    /// Adds a constraint's functional (`term`, at weight 1) in `form` to the stage that
    /// holds it: a terminal value, an event's time or output, an entry of θ; `name` names
    /// the constraint in the error for an integral (a sum over every stage, whose
    /// augmented term is no stage-wise cost).
    pub fn constraint(&mut self, term: Term, form: Form, name: &str) -> Result<(), IlqrError> {
        let quantity = term.quantity().copied();
        let piece = Piece { term, form };
        match quantity {
            Some(q) if q.is_terminal() => self.terminal.push(piece),
            Some(q) if q.event().is_some() => {
                let (guard, occurrence) = q.event().expect("an event quantity");
                self.events.push((piece, guard, occurrence))
            }
            Some(Quantity::Parameter { index }) => self.on_theta.push((index, form)),
            Some(Quantity::FinalTime) if self.time.is_some() => {
                self.on_theta.push((self.time.expect("a free final time"), form))
            }
            _ => {
                return Err(IlqrError::Constraint {
                    name: name.to_string(),
                    why: "an integral is a sum over every stage, and its augmented-Lagrangian term (a square of that sum) is no stage-wise cost",
                })
            }
        }
        Ok(())
    }

    fn add(&mut self, term: &Term) -> Result<(), IlqrError> {
        match *term {
            Term::Effort { weight } => self.running.push(Piece {
                term: term.clone(),
                form: Form::Effort { weight },
            }),
            Term::Weighed { quantity, law } => self.add_weighed(term, quantity, law)?,
            Term::Track { .. } => return Err(unsupported("track")),
            Term::Data { .. } => {
                return Err(IlqrError::Term {
                    kind: "data",
                    why: "a fit's residuals: use gauss_newton",
                })
            }
        }
        Ok(())
    }

    /// A weighed term: plain, its weight inside q; squared, q its quantity at weight 1; a
    /// term on θ itself by its index.
    fn add_weighed(&mut self, term: &Term, q: Quantity, law: Law) -> Result<(), IlqrError> {
        let on_theta = match q {
            Quantity::FinalTime => match self.time {
                Some(t) => Some(t),
                None => {
                    return Err(IlqrError::Term {
                        kind: "final_time",
                        why: "the final time is fixed (a constant cost)",
                    })
                }
            },
            _ => q.parameter(),
        };
        if let Some(index) = on_theta {
            let form = match law {
                Law::Plain { weight } => Form::Linear { weight },
                Law::Squared { target, weight } => Form::Squared { target, weight },
            };
            self.on_theta.push((index, form));
            return Ok(());
        }
        let piece = match law {
            Law::Plain { .. } => Piece {
                term: term.clone(),
                form: Form::Plain,
            },
            Law::Squared { .. } if q.is_running() => return Err(unsupported("integral_squared")),
            Law::Squared { target, weight } => Piece {
                term: Term::plain(q, 1.0),
                form: Form::Squared { target, weight },
            },
        };
        if q.is_running() {
            self.running.push(piece);
        } else if q.is_terminal() {
            self.terminal.push(piece);
        } else if let Some((guard, occurrence)) = q.event() {
            self.events.push((piece, guard, occurrence));
        }
        Ok(())
    }
}

/// The error for a squared running term.
fn unsupported(kind: &'static str) -> IlqrError {
    IlqrError::Term {
        kind,
        why: "a squared integral's Gauss–Newton Hessian is an integral of outer products, which one direct pass does not give",
    }
}

/// The pieces of stage `k` of `n` (the objectives its run evaluates, one term each, and
/// their forms): the running terms, the terminal ones on the last stage, and the event
/// terms whose firing falls here. `before[i]` counts the firings of event term i's guard
/// in the stages before k and is advanced by this stage's `fired` guards; an event term
/// is placed here with its local occurrence.
pub(crate) fn stage_pieces(
    plan: &Plan, k: usize, n: usize, before: &mut [usize], fired: &[usize],
) -> Vec<Piece> {
    let mut out = plan.running.clone();
    if k + 1 == n {
        out.extend(plan.terminal.iter().cloned());
    }
    for (i, (piece, guard, occurrence)) in plan.events.iter().enumerate() {
        let here = fired.iter().filter(|&&g| guard.counts(g)).count();
        if before[i] < *occurrence && *occurrence <= before[i] + here {
            out.push(Piece {
                term: piece.term.with_occurrence(occurrence - before[i]),
                form: piece.form,
            });
        }
        before[i] += here;
    }
    out
}

/// The objectives a stage's run evaluates: one per piece, in order (so the running
/// pieces, first, keep their quadrature states whatever events are placed after them).
pub(crate) fn objectives(pieces: &[Piece]) -> Vec<Objective> {
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| Objective::new(&format!("piece{i}"), vec![p.term.clone()]))
        .collect()
}

/// The event terms that no stage placed: (guard, occurrence, firings counted).
pub(crate) fn missing(plan: &Plan, before: &[usize]) -> Option<(EventGuard, usize, usize)> {
    plan.events
        .iter()
        .zip(before)
        .find(|((_, _, occ), &b)| b < *occ)
        .map(|((_, g, occ), &b)| (*g, *occ, b))
}
