//! What a `[[cost]]` or `[[constraint]]` table measures, as the file names it: a kind of
//! [`Quantity::KINDS`] with the values of its keys (`guard`, `occurrence`, and one key
//! naming an entry: `param`, `output`, …), read by both tables (`kinds.rs`) and resolved
//! here, once, against the system into a [`Quantity`]. Nothing here names a kind: a new
//! kind is its row in [`Quantity::KINDS`].

use super::guard_spec::GuardSpec;
use super::keys::{need, Keys};
use super::resolver::Resolver;
use crate::cost::{EventGuard, Keyed, Quantity, QuantityKind};
use crate::error::Error;
use crate::optimize::ThetaEntry;
use serde::de;

/// A quantity with its names unresolved (module docs; the engine's [`Quantity`]).
#[derive(Debug, Clone)]
pub struct QuantitySpec {
    /// Its kind.
    pub kind: &'static QuantityKind,
    /// The key naming its entry and the name (`output = "v"`), if the kind has one.
    entry: Option<(&'static str, String)>,
    /// Its event's guard and occurrence, if it is read at an event.
    event: Option<(GuardSpec, usize)>,
}

impl QuantitySpec {
    /// The quantity of the kind named `name` (one of [`Quantity::KINDS`]) from its keys;
    /// a key it needs and the table lacks is serde's missing field.
    pub(super) fn from_keys<E: de::Error>(name: &str, k: &mut Keys) -> Result<Self, E> {
        let kind = Quantity::KINDS
            .iter()
            .find(|q| q.name == name)
            .unwrap_or_else(|| unreachable!("`{name}` is not in Quantity::KINDS"));
        let mut spec = QuantitySpec {
            kind,
            entry: None,
            event: None,
        };
        if kind.keys.contains(&"guard") {
            let guard = need(k.guard.take(), "guard")?;
            spec.event = Some((guard, need(k.occurrence.take(), "occurrence")?));
        }
        for &key in kind.keys {
            if key != "guard" && key != "occurrence" {
                spec.entry = Some((key, need(k.entries.remove(key), key)?));
            }
        }
        Ok(spec)
    }

    /// The quantity with its names resolved by `r` (errors at the table's keys): `param`
    /// among θ's entries, another entry key among its list ([`Quantity::ENTRY_KEYS`]).
    pub(super) fn resolve(
        &self, r: &Resolver<'_, '_>, theta: &[ThetaEntry],
    ) -> Result<Quantity, Error> {
        let mut keyed = Keyed {
            entry: 0,
            guard: EventGuard::Any,
            occurrence: 0,
        };
        if let Some((guard, occurrence)) = &self.event {
            (keyed.guard, keyed.occurrence) = r.event(guard, *occurrence)?;
        }
        if let Some((key, name)) = &self.entry {
            keyed.entry = match Quantity::ENTRY_KEYS.iter().find(|(k, _)| k == key) {
                Some((_, list)) => r.entry(key, name, list(r.dims))?,
                None => r.param(name, theta)?,
            };
        }
        Ok((self.kind.make)(keyed))
    }

    /// The details a constraint's default name shows: its entry's name, its event
    /// (`ground#2`, `any#1`) after an `@`, a `+` when it is read after the event's reset
    /// (`after`): `y`, `ground#2`, `y@ground#2`, `y@ground#2+`; `t_end` for the keyless
    /// final time.
    pub(super) fn details(&self, after: bool) -> String {
        let event = self.event.as_ref().map(|(g, occ)| match g {
            GuardSpec::Any => format!("any#{occ}"),
            GuardSpec::Named(n) => format!("{n}#{occ}"),
        });
        let plus = if after { "+" } else { "" };
        match (&self.entry, event) {
            (Some((_, name)), Some(e)) => format!("{name}@{e}{plus}"),
            (Some((_, name)), None) => name.clone(),
            (None, Some(e)) => format!("{e}{plus}"),
            (None, None) => "t_end".into(),
        }
    }
}
