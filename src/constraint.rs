//! Constraints of an optimization (docs/constrained.md): `lower ≤ c(θ, T) ≤ upper`, each
//! `c` one of the cost terms' quantities ([`Quantity`]) with weight 1, or the path functional
//! `y(t) for every t` of the whole continuous trajectory. A constraint is an [`Objective`]
//! for the engine (so all constraints share the cost's forward run and its vector
//! adjoint), with bounds for the solver.
//!
//! ```
//! use hybridopt::prelude::*;
//!
//! // the 2nd impact at exactly 1.6 s, and y ≤ 1.2 over the whole run
//! let impact = Constraint::new(
//!     Quantity::EventTime { guard: EventGuard::Guard(0), occurrence: 2 },
//!     ConstraintBounds::Equal(1.6),
//! );
//! let ceiling = Constraint::new(
//!     ConstraintKind::Path { output: 0 },
//!     ConstraintBounds::Range { lower: None, upper: Some(1.2) },
//! );
//! assert!(impact.is_equality() && !ceiling.is_equality());
//! assert_eq!(ceiling.violation(1.25), 0.050000000000000044);
//! ```

use crate::cost::{BadIndex, Objective, Quantity, Term};
use crate::model::Dims;

/// How far `c` lies outside `[lower, upper]`: `max(lower − c, c − upper, 0)` (±∞ for an open
/// side).
pub fn violation(c: f64, lower: f64, upper: f64) -> f64 {
    (lower - c).max(c - upper).max(0.0)
}

/// The functional a constraint bounds: a [`Quantity`] of the run (the cost terms'
/// quantities), or a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstraintKind {
    /// One quantity of the run.
    Quantity(Quantity),
    /// `y(t)` at every `t` of the horizon, on the continuous trajectory: imposed at the
    /// output's local extrema, the horizon's ends and the pre-event values (docs, "Path
    /// constraints").
    Path { output: usize },
}

impl From<Quantity> for ConstraintKind {
    fn from(q: Quantity) -> ConstraintKind {
        ConstraintKind::Quantity(q)
    }
}

/// Written as the quantity's fields under `kind` (`{"kind": "event_time", "guard": …}`),
/// a path as `{"kind": "path", "output": o}`.
impl serde::Serialize for ConstraintKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match self {
            ConstraintKind::Quantity(q) => q.serialize(s),
            ConstraintKind::Path { output } => {
                let mut st = s.serialize_struct("ConstraintKind", 2)?;
                st.serialize_field("kind", "path")?;
                st.serialize_field("output", output)?;
                st.end()
            }
        }
    }
}

/// A constraint's bounds: an equality or a range (one side may be open).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintBounds {
    /// `c = value`.
    Equal(f64),
    /// `lower ≤ c ≤ upper` (`None`: open on that side; at least one is given).
    Range {
        lower: Option<f64>,
        upper: Option<f64>,
    },
}

/// One constraint: its functional, its bounds and its name in reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Constraint {
    pub name: String,
    pub kind: ConstraintKind,
    pub bounds: ConstraintBounds,
}

impl Constraint {
    /// A constraint named after its kind (`event_time`, `path`, …): a [`ConstraintKind`]
    /// or a [`Quantity`].
    pub fn new(kind: impl Into<ConstraintKind>, bounds: ConstraintBounds) -> Constraint {
        let kind = kind.into();
        Constraint {
            name: kind.name().to_string(),
            kind,
            bounds,
        }
    }

    /// The same constraint named `name`.
    pub fn named(self, name: &str) -> Constraint {
        Constraint {
            name: name.to_string(),
            ..self
        }
    }

    /// Whether it is an equality.
    pub fn is_equality(&self) -> bool {
        matches!(self.bounds, ConstraintBounds::Equal(_))
    }

    /// `(lower, upper)`, with ±∞ for an open side.
    pub fn limits(&self) -> (f64, f64) {
        match self.bounds {
            ConstraintBounds::Equal(v) => (v, v),
            ConstraintBounds::Range { lower, upper } => (
                lower.unwrap_or(f64::NEG_INFINITY),
                upper.unwrap_or(f64::INFINITY),
            ),
        }
    }

    /// How far `value` lies outside the bounds (`violation`).
    pub fn violation(&self, value: f64) -> f64 {
        let (l, u) = self.limits();
        violation(value, l, u)
    }

    /// The engine's functional of a constraint that has one (every kind but `path`,
    /// which is imposed at points found on each trajectory, and `final_time`, which is
    /// the optimizer's own variable): an objective of one term with weight 1.
    pub fn objective(&self) -> Option<Objective> {
        match self.kind {
            ConstraintKind::Quantity(Quantity::FinalTime) | ConstraintKind::Path { .. } => None,
            ConstraintKind::Quantity(q) => {
                Some(Objective::new(&self.name, vec![Term::plain(q, 1.0)]))
            }
        }
    }
}

impl ConstraintKind {
    /// The kind's name in a problem file.
    pub fn name(&self) -> &'static str {
        match self {
            ConstraintKind::Quantity(q) => q.name(),
            ConstraintKind::Path { .. } => "path",
        }
    }

    /// The indices it names exist (outputs, guards, θ): [`Quantity::check`].
    pub fn check(&self, dims: &Dims, ntheta: usize) -> Result<(), BadIndex> {
        match *self {
            ConstraintKind::Quantity(q) => q.check(dims, ntheta),
            ConstraintKind::Path { output } => Quantity::Terminal { output }.check(dims, ntheta),
        }
    }
}

/// A free final time: `t_end` is an optimization variable in `[lower, upper]`, starting at
/// `value`. The controls' grid spans `[t0, upper]`, so a control coefficient means the same
/// instant whatever `t_end` is, and `dψ/dT = L(T) + Φ_y ẏ(T⁻) + w_T` exactly
/// (docs/constrained.md, "Free final time").
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FreeTime {
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
}

/// What an optimization is subject to besides the bounds of θ: constraints and a free final
/// time (either may be absent; with neither, the problem is unconstrained).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Constraints {
    pub list: Vec<Constraint>,
    pub free_time: Option<FreeTime>,
}

impl Constraints {
    /// Whether there is nothing beyond bounds (the unconstrained solvers apply).
    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && self.free_time.is_none()
    }
}
