//! How a table names the guard of an event: a guard's name, or `"any"`.

use serde::Deserialize;

/// The guard of an event cost term: a guard's name, or `"any"` (every event counts,
/// whichever guard fires it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
pub enum GuardSpec {
    /// `guard = "any"`.
    Any,
    /// A guard by name.
    Named(String),
}

impl From<String> for GuardSpec {
    fn from(s: String) -> GuardSpec {
        if s == "any" {
            GuardSpec::Any
        } else {
            GuardSpec::Named(s)
        }
    }
}
