//! What a sweep records: the plan, one record per point, and the file `sweep.json` that
//! holds them (read back by `merge`, so every type here round-trips through serde).

use super::grid::Axis;
use super::named::Named;
use super::shard::Shard;
use super::starts::Range;
use crate::error::Error;
use crate::optimize::Outcome;
use crate::sensitivity::GradientMethod;
use serde::{Deserialize, Serialize};

/// What is swept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Plan {
    /// Cost and gradient at every point of a grid.
    Grid { axes: Vec<Axis> },
    /// `count` optimizations from random points of `ranges` (the optimized entries).
    Starts {
        count: usize,
        seed: u64,
        ranges: Vec<Range>,
    },
}

impl Plan {
    /// The number of points (of a checked plan: see [`super::grid::check_axes`]).
    pub fn total(&self) -> usize {
        match self {
            Plan::Grid { axes } => axes.iter().map(|a| a.n).product(),
            Plan::Starts { count, .. } => *count,
        }
    }
}

/// How one point ended. In `sweep.json` a start's outcome is the optimizer's own
/// ([`Outcome`], by the same names), beside `evaluated` and `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointOutcome {
    /// A grid point: cost and gradient computed.
    Evaluated,
    /// The evaluation or optimization failed; see the record's `error`.
    Failed,
    /// A start: how its optimization ended.
    #[serde(untagged)]
    Optimized(Outcome),
}

impl From<Outcome> for PointOutcome {
    fn from(o: Outcome) -> Self {
        PointOutcome::Optimized(o)
    }
}

impl PointOutcome {
    /// The name `sweep.json` gives it (`evaluated`, `failed`, or the [`Outcome`]'s name).
    pub fn name(self) -> &'static str {
        match self {
            PointOutcome::Evaluated => "evaluated",
            PointOutcome::Failed => "failed",
            PointOutcome::Optimized(o) => o.name(),
        }
    }
}

/// The kind of a point's failure (the library error's variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A grazing event ([`crate::Error::Grazing`]).
    Grazing,
    /// Too many events ([`crate::Error::Zeno`]).
    Zeno,
    /// A guard firing again after its reset ([`crate::Error::Sticking`]).
    Sticking,
    /// The step fell below its minimum ([`crate::Error::StepSizeUnderflow`]).
    StepSizeUnderflow,
    /// A NaN or infinity ([`crate::Error::NonFinite`]).
    NonFinite,
    /// The model's code failed ([`crate::Error::Model`]).
    Model,
    /// The implicit integrator's Newton iteration failed ([`crate::Error::NewtonFailure`]).
    NewtonFailure,
    /// The step budget ran out ([`crate::Error::TooManySteps`]).
    TooManySteps,
    /// A needed event did not happen ([`crate::Error::MissingEvent`]).
    MissingEvent,
    /// The optimization library failed ([`crate::Error::Optimizer`]).
    Optimizer,
    /// Trial points kept leaving the cost's domain ([`crate::Error::RestartsExhausted`]).
    RestartsExhausted,
    /// Any other error (the message says which).
    Other,
}

impl FailureKind {
    pub fn of(e: &Error) -> FailureKind {
        match e {
            Error::Grazing { .. } => FailureKind::Grazing,
            Error::Zeno { .. } => FailureKind::Zeno,
            Error::Sticking { .. } => FailureKind::Sticking,
            Error::StepSizeUnderflow { .. } => FailureKind::StepSizeUnderflow,
            Error::NonFinite { .. } => FailureKind::NonFinite,
            Error::Model { .. } => FailureKind::Model,
            Error::NewtonFailure { .. } => FailureKind::NewtonFailure,
            Error::TooManySteps { .. } => FailureKind::TooManySteps,
            Error::MissingEvent { .. } => FailureKind::MissingEvent,
            Error::Optimizer(_) => FailureKind::Optimizer,
            Error::RestartsExhausted { .. } => FailureKind::RestartsExhausted,
            Error::StoppedAtKink => FailureKind::Optimizer,
            _ => FailureKind::Other,
        }
    }
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// A point's failure: its kind and the error's message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointError {
    pub kind: FailureKind,
    pub message: String,
}

impl From<&Error> for PointError {
    fn from(e: &Error) -> Self {
        PointError {
            kind: FailureKind::of(e),
            message: e.to_string(),
        }
    }
}

/// One point of a sweep. Values that a failure left undefined are `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    /// The point's index in the whole sweep (0-based).
    pub index: usize,
    /// The point: the grid axes' values, or a start's values of the optimized entries.
    pub parameters: Named,
    /// A start: the optimized entries at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_parameters: Option<Named>,
    /// A start: ψ at the start point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_cost: Option<f64>,
    /// ψ (the first objective) at the point, or at the end of a start.
    pub cost: Option<f64>,
    /// Grid: ‖∂ψ/∂(axes)‖; start: the optimizer's final ‖dψ/dθ_free‖.
    pub gradient_norm: Option<f64>,
    /// Grid: ∂ψ/∂(each axis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gradient: Option<Named>,
    /// A start: the optimizer's iterations and evaluations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluations: Option<usize>,
    pub outcome: PointOutcome,
    /// The number of events of the (final) trajectory.
    pub events: Option<usize>,
    pub error: Option<PointError>,
    /// A start of a constrained problem: the largest constraint violation at its end (a
    /// start that does not meet the constraints is never the best).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_violation: Option<f64>,
}

/// A constrained start counts as feasible (and can be the best) when its largest
/// violation is at most this.
pub const FEASIBLE: f64 = 1e-6;

impl PointRecord {
    /// Point `index` at `parameters` before it is run: failed, with nothing measured (the
    /// run fills in what it reaches).
    pub fn pending(index: usize, parameters: Named) -> Self {
        PointRecord {
            index,
            parameters,
            final_parameters: None,
            initial_cost: None,
            cost: None,
            gradient_norm: None,
            gradient: None,
            iterations: None,
            evaluations: None,
            outcome: PointOutcome::Failed,
            events: None,
            error: None,
            max_violation: None,
        }
    }
}

/// Keeps a value only if it is finite (JSON has no NaN or ∞: a non-finite value would
/// not read back as itself).
pub fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// The best point: lowest cost among the points that did not fail (nor end infeasible or
/// violating a constraint by more than `FEASIBLE`), the lowest index on a tie.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Best {
    pub index: usize,
    pub cost: f64,
    /// A start: the event times and guards of the best start's final trajectory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<EventMark>>,
}

/// One event of the best trajectory (for the plot's markers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventMark {
    pub t: f64,
    pub guard: String,
}

/// Counts over the points in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub points: usize,
    pub failed: usize,
}

/// `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepFile {
    pub problem: String,
    /// FNV-1a (64 bit, hex) of the problem file's bytes: `merge` refuses shards of
    /// different files.
    pub problem_digest: String,
    /// All parameters (after `--param` overrides) at which the sweep runs.
    pub base_parameters: Named,
    pub plan: Plan,
    /// Grid: the gradient method; starts: the optimizer's.
    pub gradient: GradientMethod,
    /// Starts: the optimizer's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<serde_json::Value>,
    /// Outputs drawn in the best start's trajectory plot.
    pub plot_outputs: Vec<String>,
    /// The number of points of the whole sweep.
    pub total_points: usize,
    /// Present in a shard's file only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub counts: Counts,
    pub best: Option<Best>,
    pub points: Vec<PointRecord>,
}

impl SweepFile {
    /// Counts and best point of `points` (the best's events are filled in separately).
    pub fn summarize(points: &[PointRecord]) -> (Counts, Option<(usize, f64)>) {
        let failed = points
            .iter()
            .filter(|p| p.outcome == PointOutcome::Failed)
            .count();
        let best = points
            .iter()
            .filter(|p| {
                p.outcome != PointOutcome::Failed
                    && p.outcome != PointOutcome::Optimized(Outcome::Infeasible)
            })
            .filter(|p| p.max_violation.is_none_or(|v| v <= FEASIBLE))
            .filter_map(|p| p.cost.map(|c| (p.index, c)))
            .fold(None, |acc: Option<(usize, f64)>, (i, c)| match acc {
                Some((bi, bc)) if bc < c || (bc == c && bi < i) => Some((bi, bc)),
                _ => Some((i, c)),
            });
        (
            Counts {
                points: points.len(),
                failed,
            },
            best,
        )
    }

    /// The file without its points, counts, best and shard: what every shard of one sweep
    /// shares.
    pub fn header_key(&self) -> Result<String, Error> {
        let mut h = self.clone();
        h.points.clear();
        h.shard = None;
        h.best = None;
        h.counts = Counts {
            points: 0,
            failed: 0,
        };
        serde_json::to_string(&h).map_err(|e| Error::Internal(format!("sweep header: {e}")))
    }
}

/// FNV-1a, 64 bit (Fowler, Noll & Vo): `h ← (h ⊕ byte)·0x100000001B3` from
/// `h = 0xCBF29CE484222325`, as 16 hex digits.
pub fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_test_vectors() {
        // from the FNV reference test suite (Noll's fnv test vectors)
        assert_eq!(digest(b""), "cbf29ce484222325");
        assert_eq!(digest(b"a"), "af63dc4c8601ec8c");
        assert_eq!(digest(b"foobar"), "85944171f73967e8");
    }

    fn rec(index: usize, cost: Option<f64>, outcome: PointOutcome) -> PointRecord {
        PointRecord {
            index,
            parameters: Named::zip(["a"], &[0.1 * index as f64]),
            final_parameters: None,
            initial_cost: None,
            cost,
            gradient_norm: cost,
            gradient: None,
            iterations: None,
            evaluations: None,
            outcome,
            events: Some(3),
            error: None,
            max_violation: None,
        }
    }

    /// A start's outcome is written by the optimizer's own name and read back as it.
    #[test]
    fn point_outcomes_round_trip_by_name() {
        let all = [
            PointOutcome::Evaluated,
            PointOutcome::Failed,
            Outcome::Converged.into(),
            Outcome::MaxIterations.into(),
            Outcome::StationaryStart.into(),
            Outcome::Infeasible.into(),
        ];
        for o in all {
            let json = serde_json::to_string(&o).unwrap();
            assert_eq!(json, format!("\"{}\"", o.name()));
            assert_eq!(serde_json::from_str::<PointOutcome>(&json).unwrap(), o);
        }
        assert!(serde_json::from_str::<PointOutcome>("\"finished\"").is_err());
    }

    /// A constrained start that ends infeasible, or violating a constraint by more than
    /// FEASIBLE, is never the best, whatever its cost.
    #[test]
    fn best_skips_infeasible_starts() {
        let mut violating = rec(1, Some(0.5), Outcome::MaxIterations.into());
        violating.max_violation = Some(1e-3);
        let mut feasible = rec(2, Some(3.0), Outcome::Converged.into());
        feasible.max_violation = Some(1e-12);
        let pts = [
            rec(0, Some(0.1), Outcome::Infeasible.into()),
            violating,
            feasible,
        ];
        assert_eq!(SweepFile::summarize(&pts).1, Some((2, 3.0)));
    }

    #[test]
    fn best_skips_failures_and_breaks_ties_by_index() {
        let pts = [
            rec(0, Some(2.0), PointOutcome::Evaluated),
            rec(1, Some(1.0), PointOutcome::Evaluated),
            rec(2, Some(0.5), PointOutcome::Failed),
            rec(3, Some(1.0), PointOutcome::Evaluated),
            rec(4, None, PointOutcome::Failed),
        ];
        let (c, best) = SweepFile::summarize(&pts);
        assert_eq!(c.failed, 2);
        assert_eq!(best, Some((1, 1.0)));
        let mut rev = pts.to_vec();
        rev.reverse();
        assert_eq!(SweepFile::summarize(&rev).1, Some((1, 1.0)));
    }

    #[test]
    fn records_round_trip_through_json() {
        let mut r = rec(7, Some(0.1 + 0.2), PointOutcome::Failed);
        r.error = Some(PointError {
            kind: FailureKind::MissingEvent,
            message: "m".into(),
        });
        r.parameters.0.push(("b".into(), 1.0 / 3.0));
        let s = serde_json::to_string(&r).unwrap();
        assert!(s.contains("\"kind\":\"missing_event\""));
        let back: PointRecord = serde_json::from_str(&s).unwrap();
        assert_eq!(back, r);
    }
}
