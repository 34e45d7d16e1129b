//! What a cost term weighs and what a constraint bounds: one scalar quantity of a run
//! (theory.md §1) — a parameter, an output at the horizon's end, an output's integral, an
//! event's time, an output at an event, or the horizon's end itself. A cost term is a
//! quantity with a [`Law`](super::Law) (`w·q` or `w·(q − target)²`), a constraint a
//! quantity (or a path) with bounds; both check the quantity's indices here, once.

use super::EventGuard;
use crate::model::Dims;

/// One scalar quantity of a run. Outputs and guards are indices into the system's lists,
/// `index` an entry of θ = (p, c); occurrences count from 1.
///
/// ```
/// use hybridopt::prelude::*;
///
/// // the output 1 just before the 2nd firing of guard 0
/// let q = Quantity::EventOutput { guard: EventGuard::Guard(0), occurrence: 2, output: 1 };
/// assert_eq!((q.name(), q.event(), q.output()), ("event_output", Some((EventGuard::Guard(0), 2)), Some(1)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Quantity {
    /// `t_e` of the `occurrence`-th (1-based) firing of `guard` (or event, for
    /// [`EventGuard::Any`]).
    EventTime {
        guard: EventGuard,
        occurrence: usize,
    },
    /// `y(t_e, x⁻)`: an output just before the `occurrence`-th firing (the pre-event value).
    EventOutput {
        guard: EventGuard,
        occurrence: usize,
        output: usize,
    },
    /// `y(t_e, x⁺)`: an output just after the `occurrence`-th firing (the post-event
    /// value, in the mode the reset enters, `x⁺ = R(t_e, x⁻, p)`; after a terminal event,
    /// which does not reset, the value before).
    EventOutputAfter {
        guard: EventGuard,
        occurrence: usize,
        output: usize,
    },
    /// `y(t_f)`.
    Terminal { output: usize },
    /// `∫ y dt` over the horizon; a cost's law weighs the integrand (`∫ law(y) dt`, a
    /// quadrature state).
    Integral { output: usize },
    /// `θ_index` (a parameter or control coefficient).
    Parameter { index: usize },
    /// The horizon's end `t_f` (with a free final time; it does not depend on θ).
    FinalTime,
}

/// An index a quantity names that the setup does not have: what it is (`"output"`,
/// `"guard"`, `"occurrence"`, `"parameter"`), the index, and the valid range in words.
#[derive(Debug, Clone, PartialEq)]
pub struct BadIndex {
    pub what: &'static str,
    pub index: usize,
    pub valid: String,
}

impl Quantity {
    /// The quantity's name in a problem file (a constraint's `kind`).
    pub fn name(&self) -> &'static str {
        match self {
            Quantity::EventTime { .. } => "event_time",
            Quantity::EventOutput { .. } => "event_output",
            Quantity::EventOutputAfter { .. } => "event_output_after",
            Quantity::Terminal { .. } => "terminal",
            Quantity::Integral { .. } => "integral",
            Quantity::Parameter { .. } => "parameter",
            Quantity::FinalTime => "final_time",
        }
    }

    /// (guard, occurrence) of an event quantity.
    pub fn event(&self) -> Option<(EventGuard, usize)> {
        match *self {
            Quantity::EventTime { guard, occurrence }
            | Quantity::EventOutput {
                guard, occurrence, ..
            }
            | Quantity::EventOutputAfter {
                guard, occurrence, ..
            } => Some((guard, occurrence)),
            _ => None,
        }
    }

    /// The output it reads, if any.
    pub fn output(&self) -> Option<usize> {
        match *self {
            Quantity::EventOutput { output, .. }
            | Quantity::EventOutputAfter { output, .. }
            | Quantity::Terminal { output }
            | Quantity::Integral { output } => Some(output),
            _ => None,
        }
    }

    /// The θ entry it reads, if any.
    pub fn parameter(&self) -> Option<usize> {
        match *self {
            Quantity::Parameter { index } => Some(index),
            _ => None,
        }
    }

    /// Whether it is an integral (a quadrature state).
    pub fn is_running(&self) -> bool {
        matches!(self, Quantity::Integral { .. })
    }

    /// Whether it is read after its event's reset (at `x⁺`), not before it.
    pub fn is_after_event(&self) -> bool {
        matches!(self, Quantity::EventOutputAfter { .. })
    }

    /// Whether it is read at the horizon's end `t_f`.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Quantity::Terminal { .. })
    }

    /// The same event quantity at occurrence `local` of its guard (the others unchanged).
    pub fn with_occurrence(self, local: usize) -> Quantity {
        match self {
            Quantity::EventTime { guard, .. } => Quantity::EventTime {
                guard,
                occurrence: local,
            },
            Quantity::EventOutput { guard, output, .. } => Quantity::EventOutput {
                guard,
                occurrence: local,
                output,
            },
            Quantity::EventOutputAfter { guard, output, .. } => Quantity::EventOutputAfter {
                guard,
                occurrence: local,
                output,
            },
            q => q,
        }
    }

    /// The value at an event from its time `t` and the outputs `y` there (on the side
    /// of the event it is read: [`Self::is_after_event`]; 0 for a quantity that is not
    /// read at an event).
    pub fn at_event<D: crate::model::Scalar>(&self, t: D, y: &[D]) -> D {
        match *self {
            Quantity::EventTime { .. } => t,
            Quantity::EventOutput { output, .. } | Quantity::EventOutputAfter { output, .. } => {
                y[output]
            }
            _ => D::zero(),
        }
    }

    /// The indices it names exist: its output among the system's outputs, its guard among
    /// the guards, its occurrence ≥ 1, its θ entry among `ntheta` (the one check of every
    /// cost term and constraint).
    pub fn check(&self, dims: &Dims, ntheta: usize) -> Result<(), BadIndex> {
        let bad = |what, index, valid| Err(BadIndex { what, index, valid });
        let ny = dims.outputs.len();
        if let Some(o) = self.output().filter(|&o| o >= ny) {
            return bad("output", o, range("outputs", ny, &dims.outputs));
        }
        if let Some(i) = self.parameter().filter(|&i| i >= ntheta) {
            return bad("parameter", i, format!("θ has {ntheta} entries (0-based)"));
        }
        if let Some((guard, occurrence)) = self.event() {
            let ng = dims.guards.len();
            match guard {
                EventGuard::Guard(k) if k >= ng => {
                    let names: Vec<String> = dims.guards.iter().map(|g| g.name.clone()).collect();
                    return bad("guard", k, range("guards", ng, &names));
                }
                _ => {}
            }
            if occurrence == 0 {
                return bad(
                    "occurrence",
                    0,
                    "occurrences count from 1 (the first firing is 1)".into(),
                );
            }
        }
        Ok(())
    }
}

/// "the system has n <what> (0-based): names".
fn range(what: &str, n: usize, names: &[String]) -> String {
    match n {
        0 => format!("the system has no {what}"),
        _ => format!(
            "the system has {n} {what}, 0..={} ({})",
            n - 1,
            names.join(", ")
        ),
    }
}
