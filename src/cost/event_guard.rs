//! Which events an event cost term counts: the firings of one guard, or of any guard (all
//! events in the order they occur; the simultaneous events of one crossing count one by
//! one, in the recorded order).

/// The guard an event term names: `Guard(k)` counts the firings of guard k (an index into
/// the system's guards), `Any` every event ("the 3rd event of any guard"). A problem file
/// writes the guard's name or `guard = "any"`.
///
/// ```
/// use hybridopt::prelude::*;
///
/// // the third event, whichever guard fires it
/// let third = Term::plain(Quantity::EventTime { guard: EventGuard::Any, occurrence: 3 }, 1.0);
/// assert_eq!(third.event(), Some((EventGuard::Any, 3)));
/// assert!(EventGuard::Any.counts(1) && !EventGuard::Guard(0).counts(1));
/// assert_eq!(EventGuard::from(2), EventGuard::Guard(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventGuard {
    /// The firings of this guard (its index in the system's list).
    Guard(usize),
    /// Every event, whichever guard fires it.
    Any,
}

impl EventGuard {
    /// Whether an event of guard `guard` counts.
    pub fn counts(self, guard: usize) -> bool {
        match self {
            EventGuard::Guard(k) => k == guard,
            EventGuard::Any => true,
        }
    }
}

impl From<usize> for EventGuard {
    fn from(k: usize) -> EventGuard {
        EventGuard::Guard(k)
    }
}
