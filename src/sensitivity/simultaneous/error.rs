//! Why the analysis of a simultaneous event (its pieces, its B-derivative, the directional
//! derivatives and piece gradients through it) cannot be done, by kind.

use crate::sensitivity::corner::CornerError;

/// Largest group for which the n! crossing orders are enumerated (720 pieces).
pub const MAX_GROUP_SIZE: usize = 6;

/// A failure of the nonsmooth analysis at simultaneous events
/// ([`super::SimultaneousEvent`], [`super::directional_derivative`],
/// [`super::piece_gradients`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimultaneousError {
    /// A group of guards crossed at one instant that the analysis cannot handle: `problem`
    /// says why (its size, a guard not watched in an intermediate mode, a grazing crossing,
    /// a mode that depends on the order, a corner that is not transversal, …); `t`, `mode`
    /// (before) and `guards` (in the order the simulation applied them) name the group.
    /// (`problem` is boxed to keep [`crate::Error`] small.)
    #[error(
        "simultaneous event at t = {t} in mode '{mode}' (guards {}): {problem}",
        quoted(guards)
    )]
    Group {
        t: f64,
        mode: String,
        guards: Vec<String>,
        problem: Box<GroupProblem>,
    },
    /// A group of a trajectory contains a terminal event: not supported. Stop the run at
    /// another event, or move θ so that the terminal guard is crossed alone.
    #[error("simultaneous event at t = {t} contains the terminal guard '{guard}': not supported")]
    TerminalInGroup { t: f64, guard: String },
    /// [`super::SimultaneousEvent::piece`] was given something that is not a permutation of
    /// the group's positions `0..n`.
    #[error("simultaneous event at t = {t}: {order:?} is not a crossing order of its {n} guards (give a permutation of 0..{n})")]
    NotAnOrder { t: f64, order: Vec<usize>, n: usize },
    /// [`super::SimultaneousEvent::piece_by_guards`] was given something that is not a
    /// permutation of the group's guard ids `guards`.
    #[error("simultaneous event at t = {t}: guard order {order:?} is not a permutation of its guards {guards:?}")]
    NotAGuardOrder {
        t: f64,
        order: Vec<usize>,
        guards: Vec<usize>,
    },
    /// [`super::SimultaneousEvent::directional`] was given a column of S⁻ or a direction
    /// of the wrong length: `column` entries for the `nx` states, `direction` for θ's
    /// `ntheta`.
    #[error("simultaneous event at t = {t}: the column has {column} entries (need {nx}) and the direction {direction} (need {ntheta})")]
    ColumnLength {
        t: f64,
        column: usize,
        nx: usize,
        direction: usize,
        ntheta: usize,
    },
    /// No direction δθ was given for a directional derivative. Give at least one.
    #[error("no direction given")]
    NoDirection,
    /// A direction δθ whose length is not θ's: `found` entries for `ntheta` (`index`, when
    /// known, is its position in the list given). Give one entry per θ entry.
    #[error("{}", direction_length_text(*index, *found, *ntheta))]
    DirectionLength {
        index: Option<usize>,
        found: usize,
        ntheta: usize,
    },
    /// A direction δθ with a NaN or an infinity.
    #[error("a direction has the entry {value}: must be finite")]
    DirectionNotFinite { value: f64 },
    /// The sensitivity pass met other events than the plain simulation at the same θ:
    /// near-simultaneous crossings resolved differently in the two runs (the `divergence`
    /// says where; boxed to keep [`crate::Error`] small). Tighten the tolerances or move θ
    /// away from the near-coincidence.
    #[error("{divergence}")]
    Diverged { divergence: Box<Divergence> },
    /// A cost term on an event of a simultaneous group (an event time, an output at the
    /// event): the nonsmooth analysis does not support it (`guard` is the event's, when
    /// known). Use running or terminal terms, or move θ so the events separate.
    #[error("{}", event_cost_text(guard.as_deref(), *t))]
    EventCost { guard: Option<String>, t: f64 },
}

/// Why [`SimultaneousError::Group`]'s group cannot be analysed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GroupProblem {
    /// `n` guards: the analysis enumerates the n! orders for 1 to [`MAX_GROUP_SIZE`].
    #[error("{n} guards; 1 to {MAX_GROUP_SIZE} are supported")]
    Size { n: usize },
    /// X⁻ has `x` entries (fewer than the `nx` states) or θ `theta` (not `ntheta`).
    #[error("X⁻ has {x} entries (need {nx}) and θ {theta} (need {ntheta})")]
    Lengths {
        x: usize,
        nx: usize,
        theta: usize,
        ntheta: usize,
    },
    /// A guard index the system does not have.
    #[error("guard index {index} does not exist")]
    NoGuard { index: usize },
    /// A guard listed twice.
    #[error("guard '{guard}' appears twice")]
    Repeated { guard: String },
    /// A terminal guard in the group: not supported.
    #[error(
        "guard '{guard}' is terminal; simultaneous groups with a terminal event are not supported"
    )]
    Terminal { guard: String },
    /// A guard that is not watched in `mode`, reached by crossing others of the group first
    /// (`order` is that crossing order, when known): not every crossing order is possible.
    /// Watch the group's guards in the intermediate modes.
    #[error("{}", not_watched_text(guard, mode, order.as_deref()))]
    NotWatched {
        guard: String,
        mode: String,
        order: Option<Vec<usize>>,
    },
    /// A guard crossed with zero (or non-finite) rate `rate` along the flow of `mode` in
    /// some order: the crossing grazes. Move θ.
    #[error("guard '{guard}' has rate {rate} along the flow of mode '{mode}' (grazing)")]
    Grazing {
        guard: String,
        rate: f64,
        mode: String,
    },
    /// With identity resets, crossing the guards `crossed` leads to `mode` in one order and
    /// to `other` in another: the B-derivative needs an order-independent mode.
    #[error("the mode reached after crossing {crossed:?} depends on the order ('{mode}' vs '{other}'); the B-derivative needs an order-independent mode")]
    ModeDepends {
        crossed: Vec<String>,
        mode: String,
        other: String,
    },
    /// The composed jump of a crossing order (positions) is not finite.
    #[error("the composed jump of order {order:?} is not finite")]
    NotFinite { order: Vec<usize> },
    /// The corner in the augmented space `(X, θ, t)` is not a transversal crossing (the
    /// [`CornerError`] says how: dependent guard gradients, a grazing or sliding field, …).
    #[error("{0}")]
    Corner(CornerError),
}

/// Where the sensitivity pass left the plain simulation's event sequence
/// ([`SimultaneousError::Diverged`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Divergence {
    /// An event of `guard` at `t` after all `events` events of the plain simulation.
    #[error("the sensitivity pass met an event of guard '{guard}' at t = {t} beyond the {events} events of the plain simulation")]
    Extra {
        guard: String,
        t: f64,
        events: usize,
    },
    /// Event number `event` (0-based) is `guard` in `mode` at `t` in the sensitivity pass
    /// but `planned_guard` in `planned_mode` at `planned_t` in the plain simulation.
    #[error("the sensitivity pass met guard '{guard}' in mode '{mode}' at t = {t} where the plain simulation had guard '{planned_guard}' in mode '{planned_mode}' at t = {planned_t} (event {event}): near-simultaneous crossings resolved differently; tighten the tolerances or move θ")]
    Other {
        event: usize,
        guard: String,
        mode: String,
        t: f64,
        planned_guard: String,
        planned_mode: String,
        planned_t: f64,
    },
    /// The sensitivity pass met `found` events, the plain simulation `planned`.
    #[error("the sensitivity pass met {found} events, the plain simulation {planned}: near-simultaneous crossings resolved differently; tighten the tolerances or move θ")]
    Count { found: usize, planned: usize },
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|g| format!("'{g}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn direction_length_text(index: Option<usize>, found: usize, ntheta: usize) -> String {
    match index {
        Some(i) => format!("direction {i} has {found} entries; θ has {ntheta}"),
        None => format!("a direction has {found} entries; θ has {ntheta}"),
    }
}

fn not_watched_text(guard: &str, mode: &str, order: Option<&[usize]>) -> String {
    match order {
        Some(o) => {
            format!("guard '{guard}' is not watched in mode '{mode}' in crossing order {o:?}")
        }
        None => format!(
            "guard '{guard}' is not watched in mode '{mode}', reached by crossing the others \
             first: not every crossing order is possible"
        ),
    }
}

fn event_cost_text(guard: Option<&str>, t: f64) -> String {
    match guard {
        Some(g) => format!(
            "an event cost term refers to the event of guard '{g}' at t = {t}, which is part \
             of a simultaneous event: not supported by the nonsmooth analysis"
        ),
        None => "an event cost on an event of a simultaneous group is not supported with piece \
                 overrides"
            .into(),
    }
}
