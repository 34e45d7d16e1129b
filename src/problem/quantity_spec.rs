//! What a `[[cost]]` or `[[constraint]]` table measures, as the file names it: the keys of
//! each quantity (`output`, `guard`, `occurrence`, `param`), read by both tables
//! (`kinds.rs`) and resolved here, once, against the system into a [`Quantity`].

use super::guard_spec::GuardSpec;
use super::keys::{need, Keys};
use super::resolver::Resolver;
use crate::cost::Quantity;
use crate::error::Error;
use crate::optimize::ThetaEntry;
use serde::de;

/// A quantity with its names unresolved (module docs; the engine's [`Quantity`]).
#[derive(Debug, Clone, PartialEq)]
pub enum QuantitySpec {
    /// `param`: a parameter's (or control coefficient's) value.
    Parameter { param: String },
    /// `output`: ∫ y dt (a cost's law weighs the integrand).
    Integral { output: String },
    /// `output`: y(t_end).
    Terminal { output: String },
    /// `guard`, `occurrence`: t_e of the occurrence-th event of `guard`.
    EventTime { guard: GuardSpec, occurrence: usize },
    /// `guard`, `occurrence`, `output`: y(t_e⁻), the output just before the event.
    EventOutput {
        guard: GuardSpec,
        occurrence: usize,
        output: String,
    },
    /// `guard`, `occurrence`, `output`: y(t_e⁺), the output just after the event.
    EventOutputAfter {
        guard: GuardSpec,
        occurrence: usize,
        output: String,
    },
    /// The (free) final time.
    FinalTime,
}

/// Every quantity a table can name: its name (a constraint's `kind`, a plain cost's),
/// its squared cost's name, and its keys in the order messages list them.
pub(super) const QUANTITIES: &[(&str, &str, &[&str])] = &[
    ("parameter", "parameter_squared", &["param"]),
    ("integral", "integral_squared", &["output"]),
    ("terminal", "terminal_squared", &["output"]),
    ("event_time", "event_time_squared", &["guard", "occurrence"]),
    (
        "event_output",
        "event_output_squared",
        &["guard", "occurrence", "output"],
    ),
    ("final_time", "final_time_squared", &[]),
    (
        "event_output_after",
        "event_output_after_squared",
        &["guard", "occurrence", "output"],
    ),
];

impl QuantitySpec {
    /// The quantity named `name` (one of [`QUANTITIES`]) from its keys; a key it needs
    /// and the table lacks is serde's missing field.
    pub(super) fn from_keys<E: de::Error>(name: &str, k: &mut Keys) -> Result<Self, E> {
        Ok(match name {
            "parameter" => QuantitySpec::Parameter {
                param: need(k.param.take(), "param")?,
            },
            "integral" => QuantitySpec::Integral {
                output: need(k.output.take(), "output")?,
            },
            "terminal" => QuantitySpec::Terminal {
                output: need(k.output.take(), "output")?,
            },
            "event_time" => QuantitySpec::EventTime {
                guard: need(k.guard.take(), "guard")?,
                occurrence: need(k.occurrence.take(), "occurrence")?,
            },
            "event_output" => QuantitySpec::EventOutput {
                guard: need(k.guard.take(), "guard")?,
                occurrence: need(k.occurrence.take(), "occurrence")?,
                output: need(k.output.take(), "output")?,
            },
            "event_output_after" => QuantitySpec::EventOutputAfter {
                guard: need(k.guard.take(), "guard")?,
                occurrence: need(k.occurrence.take(), "occurrence")?,
                output: need(k.output.take(), "output")?,
            },
            "final_time" => QuantitySpec::FinalTime,
            _ => unreachable!("`{name}` is not in QUANTITIES"),
        })
    }

    /// The quantity with its names resolved by `r` (errors at the table's keys).
    pub(super) fn resolve(
        &self, r: &Resolver<'_, '_>, theta: &[ThetaEntry],
    ) -> Result<Quantity, Error> {
        Ok(match self {
            QuantitySpec::Parameter { param } => Quantity::Parameter {
                index: r.param(param, theta)?,
            },
            QuantitySpec::Integral { output } => Quantity::Integral {
                output: r.output(output)?,
            },
            QuantitySpec::Terminal { output } => Quantity::Terminal {
                output: r.output(output)?,
            },
            QuantitySpec::EventTime { guard, occurrence } => {
                let (guard, occurrence) = r.event(guard, *occurrence)?;
                Quantity::EventTime { guard, occurrence }
            }
            QuantitySpec::EventOutput {
                guard,
                occurrence,
                output,
            } => {
                let (guard, occurrence) = r.event(guard, *occurrence)?;
                Quantity::EventOutput {
                    guard,
                    occurrence,
                    output: r.output(output)?,
                }
            }
            QuantitySpec::EventOutputAfter {
                guard,
                occurrence,
                output,
            } => {
                let (guard, occurrence) = r.event(guard, *occurrence)?;
                Quantity::EventOutputAfter {
                    guard,
                    occurrence,
                    output: r.output(output)?,
                }
            }
            QuantitySpec::FinalTime => Quantity::FinalTime,
        })
    }

    /// The details a constraint's default name shows: `ground#2`, `y@ground#2`, `y`.
    pub(super) fn details(&self) -> String {
        let event = |g: &GuardSpec, occ: usize| match g {
            GuardSpec::Any => format!("any#{occ}"),
            GuardSpec::Named(n) => format!("{n}#{occ}"),
        };
        match self {
            QuantitySpec::Parameter { param } => param.clone(),
            QuantitySpec::Integral { output } | QuantitySpec::Terminal { output } => output.clone(),
            QuantitySpec::EventTime { guard, occurrence } => event(guard, *occurrence),
            QuantitySpec::EventOutput {
                guard,
                occurrence,
                output,
            } => format!("{output}@{}", event(guard, *occurrence)),
            QuantitySpec::EventOutputAfter {
                guard,
                occurrence,
                output,
            } => format!("{output}@{}+", event(guard, *occurrence)),
            QuantitySpec::FinalTime => "t_end".into(),
        }
    }
}
