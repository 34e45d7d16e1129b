//! What a cost term weighs and what a constraint bounds: one scalar quantity of a run
//! (theory.md §1) — a parameter, an output at the horizon's end, an output's integral, an
//! event's time, an output at an event, or the horizon's end itself. A cost term is a
//! quantity with a [`Law`](super::Law) (`w·q` or `w·(q − target)²`), a constraint a
//! quantity (or a path) with bounds; both check the quantity's indices here, once.
//!
//! Every kind is declared once, beside its variant, in [`Quantity::KINDS`]: its name in
//! a problem file, its keys, what it means (the row of the guide's table of quantities,
//! which a test holds to this list) and how it is made from its resolved keys. The
//! problem file reads and resolves every kind from that list, and the engine reads a
//! quantity at its event through [`Quantity::at_event`] (the time, the states and the
//! outputs there), so a new kind is its variant and its row here, its witness test and
//! its row in the guide.

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
    /// `x_state(t_e⁻)`: a state of the system just before the `occurrence`-th firing
    /// (what a model's outputs need not show: a bound on a state at an event).
    EventState {
        guard: EventGuard,
        occurrence: usize,
        state: usize,
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
/// `"state"`, `"guard"`, `"occurrence"`, `"parameter"`), the index, and the valid range in words.
#[derive(Debug, Clone, PartialEq)]
pub struct BadIndex {
    pub what: &'static str,
    pub index: usize,
    pub valid: String,
}

/// A kind of quantity as a problem file names it (a constraint's `kind`, a plain cost's;
/// its squared cost is `<name>_squared`).
#[derive(Debug)]
pub struct QuantityKind {
    /// Its name.
    pub name: &'static str,
    /// The keys that name it, in the order messages list them: `guard` and `occurrence`
    /// (an event), or a key of [`Quantity::ENTRY_KEYS`] or `param` (an entry of θ).
    pub keys: &'static [&'static str],
    /// What it is: its row of the guide's table of quantities (docs/guide/problem-files.md,
    /// "Quantities").
    pub meaning: &'static str,
    /// The quantity from its keys resolved against the system.
    pub make: fn(Keyed) -> Quantity,
}

/// A kind's keys resolved against the system: the index its entry key names (an entry of
/// θ, an output, a state), its event's guard and occurrence (`0`, `Any` and `0` for keys
/// the kind does not have).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keyed {
    pub entry: usize,
    pub guard: EventGuard,
    pub occurrence: usize,
}

impl Quantity {
    /// Every kind, in the order the problem file's messages list them.
    pub const KINDS: &'static [QuantityKind] = &[
        QuantityKind {
            name: "parameter",
            keys: &["param"],
            meaning: "θ_param, a parameter's or a control coefficient's (`thrust[3]`) value",
            make: |k| Quantity::Parameter { index: k.entry },
        },
        QuantityKind {
            name: "integral",
            keys: &["output"],
            meaning: "∫ y dt over the horizon (a cost's law weighs the integrand: ∫ (y − target)² dt)",
            make: |k| Quantity::Integral { output: k.entry },
        },
        QuantityKind {
            name: "terminal",
            keys: &["output"],
            meaning: "y(t_end)",
            make: |k| Quantity::Terminal { output: k.entry },
        },
        QuantityKind {
            name: "event_time",
            keys: &["guard", "occurrence"],
            meaning: "t_e, the time of that event",
            make: |k| Quantity::EventTime {
                guard: k.guard,
                occurrence: k.occurrence,
            },
        },
        QuantityKind {
            name: "event_output",
            keys: &["guard", "occurrence", "output"],
            meaning: "y(t_e⁻), the output just **before** the event",
            make: |k| Quantity::EventOutput {
                guard: k.guard,
                occurrence: k.occurrence,
                output: k.entry,
            },
        },
        QuantityKind {
            name: "final_time",
            keys: &[],
            meaning: "t_end itself (needs a free `t_end`: minimum-time problems)",
            make: |_| Quantity::FinalTime,
        },
        QuantityKind {
            name: "event_output_after",
            keys: &["guard", "occurrence", "output"],
            meaning: "y(t_e⁺), the output just **after** the event (after its reset, in the mode it enters): a rebound velocity",
            make: |k| Quantity::EventOutputAfter {
                guard: k.guard,
                occurrence: k.occurrence,
                output: k.entry,
            },
        },
        QuantityKind {
            name: "event_state",
            keys: &["guard", "occurrence", "state"],
            meaning: "x(t_e⁻), a state of the system just **before** the event (whether or not an output shows it)",
            make: |k| Quantity::EventState {
                guard: k.guard,
                occurrence: k.occurrence,
                state: k.entry,
            },
        },
    ];

    /// The keys that name an entry of the system's lists, each with the list (`param`,
    /// an entry of θ = (p, c), is the problem's to resolve).
    pub const ENTRY_KEYS: &'static [(&'static str, fn(&Dims) -> &[String])] =
        &[("output", outputs), ("state", states)];

    /// The quantity's name in a problem file (a constraint's `kind`).
    pub fn name(&self) -> &'static str {
        match self {
            Quantity::EventTime { .. } => "event_time",
            Quantity::EventOutput { .. } => "event_output",
            Quantity::EventOutputAfter { .. } => "event_output_after",
            Quantity::EventState { .. } => "event_state",
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
            }
            | Quantity::EventState {
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

    /// The system's state it reads, if any.
    pub fn state(&self) -> Option<usize> {
        match *self {
            Quantity::EventState { state, .. } => Some(state),
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
            Quantity::EventState { guard, state, .. } => Quantity::EventState {
                guard,
                occurrence: local,
                state,
            },
            q => q,
        }
    }

    /// The value at an event from its time `t`, the system's states `x` and the outputs
    /// `y` there (on the side of the event it is read: [`Self::is_after_event`]; 0 for a
    /// quantity that is not read at an event). The engine differentiates it through
    /// these reads (sensitivity/term.rs), so a new event quantity needs no code there.
    pub fn at_event<D: crate::model::Scalar>(&self, t: D, x: &[D], y: &[D]) -> D {
        match *self {
            Quantity::EventTime { .. } => t,
            Quantity::EventOutput { output, .. } | Quantity::EventOutputAfter { output, .. } => {
                y[output]
            }
            Quantity::EventState { state, .. } => x[state],
            _ => D::zero(),
        }
    }

    /// The indices it names exist: its output among the system's outputs, its state
    /// among the states, its guard among the guards, its occurrence ≥ 1, its θ entry
    /// among `ntheta` (the one check of every cost term and constraint).
    pub fn check(&self, dims: &Dims, ntheta: usize) -> Result<(), BadIndex> {
        let bad = |what, index, valid| Err(BadIndex { what, index, valid });
        let ny = dims.outputs.len();
        if let Some(o) = self.output().filter(|&o| o >= ny) {
            return bad("output", o, range("outputs", ny, &dims.outputs));
        }
        let nx = dims.states.len();
        if let Some(s) = self.state().filter(|&s| s >= nx) {
            return bad("state", s, range("states", nx, &dims.states));
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

fn outputs(d: &Dims) -> &[String] {
    &d.outputs
}

fn states(d: &Dims) -> &[String] {
    &d.states
}

#[cfg(test)]
mod tests {
    use super::{EventGuard, Keyed, Quantity};

    /// Each kind's row makes a quantity of that name, with the keys the kind lists: an
    /// event kind has `guard` and `occurrence`, an entry kind one entry key.
    #[test]
    fn every_kind_makes_its_own_quantity() {
        let k = Keyed {
            entry: 3,
            guard: EventGuard::Guard(1),
            occurrence: 2,
        };
        for kind in Quantity::KINDS {
            let q = (kind.make)(k);
            assert_eq!(q.name(), kind.name);
            let has = |key| kind.keys.contains(&key);
            assert_eq!(
                q.event().is_some(),
                has("guard") && has("occurrence"),
                "{}",
                kind.name
            );
            let entry = q.output().or(q.parameter()).or(q.state());
            let entry_keys = kind
                .keys
                .iter()
                .filter(|k| !["guard", "occurrence"].contains(k));
            assert_eq!(entry.is_some(), entry_keys.count() == 1, "{}", kind.name);
        }
    }
}
