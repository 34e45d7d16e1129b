//! The Poincaré section and the system that starts on it.
//!
//! The section ([`SectionKind`]) is either "just after the reset of guard `guard`" or a
//! hyperplane `n·x = c` crossed in a given direction ([`super::hyperplane`], where it
//! becomes one more guard with the identity reset). The return map `P` starts at a state
//! `x` on it (in mode `mode`), flows through `count` firings of the section's guard (the
//! system's other guards may fire in between) and applies the last firing's reset:
//! `P(x) = x⁺` of the `count`-th firing. The run itself stops at that firing
//! (`EventOptions::stop_after`), so the last reset is applied here, through the one jump
//! formula (theory.md §3).
//!
//! [`StartOnSection`] (on the model's floor: multiple shooting and the iLQR start their
//! segments the same way) wraps a system so that the start state is a parameter: its
//! parameters are `θ = (p, x0)`, so one direct-sensitivity pass gives `∂P/∂x0` (the
//! monodromy) and `∂P/∂p` together.

use super::hyperplane::Hyperplane;
pub use crate::model::StartOnSection;

/// What the section is.
#[derive(Debug, Clone, PartialEq)]
pub enum SectionKind {
    /// Just after the reset of this guard (its index in the system's guards).
    AfterReset { guard: usize },
    /// The hyperplane `n·x = c`, crossed in the given direction.
    Hyperplane(Hyperplane),
}

/// Where the section is and what one period is.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub kind: SectionKind,
    /// How many crossings of the section (firings of its guard) make one period (k for a
    /// period-k orbit).
    pub count: usize,
    /// The mode the state on the section is in.
    pub mode: usize,
    /// The state components that are free on the section (the coordinates in which the
    /// section's Jacobian is reported).
    pub free: Vec<usize>,
}

impl Section {
    /// The section just after guard `guard`'s reset.
    pub fn after_reset(guard: usize, count: usize, mode: usize, free: Vec<usize>) -> Section {
        Section {
            kind: SectionKind::AfterReset { guard },
            count,
            mode,
            free,
        }
    }

    /// The hyperplane, for a hyperplane section.
    pub fn hyperplane(&self) -> Option<&Hyperplane> {
        match &self.kind {
            SectionKind::Hyperplane(h) => Some(h),
            SectionKind::AfterReset { .. } => None,
        }
    }
}
