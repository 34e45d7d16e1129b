//! The values of a `[[cost]]` or `[[constraint]]` table's keys as serde reads them
//! (each kind takes some of them, `kinds.rs`), and the missing-key error.

use super::guard_spec::GuardSpec;
use serde::de::{self, MapAccess};
use std::collections::BTreeMap;

/// The values of a table's keys (each kind takes some of them).
#[derive(Debug, Default)]
pub(super) struct Keys {
    /// The keys that name an entry of θ or of the system (`param`, `output`, each
    /// quantity's entry key: [`crate::cost::Quantity::ENTRY_KEYS`]): key → name.
    pub entries: BTreeMap<&'static str, String>,
    pub guard: Option<GuardSpec>,
    pub occurrence: Option<usize>,
    pub target: Option<f64>,
    pub weight: Option<f64>,
    pub objective: Option<String>,
    pub file: Option<String>,
    pub sigma: Option<BTreeMap<String, f64>>,
    pub equals: Option<f64>,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub name: Option<String>,
}

impl Keys {
    /// Reads the value of `key` (one of the kind's keys) from `map`; a key that is none of
    /// the others names an entry.
    pub(super) fn read<'de, A: MapAccess<'de>>(
        &mut self, key: &'static str, map: &mut A,
    ) -> Result<(), A::Error> {
        match key {
            "guard" => self.guard = Some(map.next_value()?),
            "occurrence" => self.occurrence = Some(map.next_value()?),
            "target" => self.target = Some(map.next_value()?),
            "weight" => self.weight = Some(map.next_value()?),
            "objective" => self.objective = map.next_value()?,
            "file" => self.file = map.next_value()?,
            "sigma" => self.sigma = Some(map.next_value()?),
            "equals" => self.equals = map.next_value()?,
            "lower" => self.lower = map.next_value()?,
            "upper" => self.upper = map.next_value()?,
            "name" => self.name = map.next_value()?,
            entry => {
                self.entries.insert(entry, map.next_value()?);
            }
        }
        Ok(())
    }
}

/// A key's value, or serde's missing-field error naming it.
pub(super) fn need<T, E: de::Error>(v: Option<T>, key: &'static str) -> Result<T, E> {
    v.ok_or_else(|| E::missing_field(key))
}
