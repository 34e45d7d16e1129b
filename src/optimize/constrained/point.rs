//! What the SQP knows at one point x: the cost, its gradient and the constraint rows, each
//! with its origin (a constraint, a path constraint's point, a continuity condition of
//! multiple shooting) so that the rows of two iterates can be matched.

use crate::sensitivity::Evaluation;

/// Where a row of the constraint vector comes from: its constraint, and for a path
/// constraint which point of the trajectory (so that rows of two iterates can be matched).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowLabel {
    pub constraint: usize,
    pub at: RowAt,
}

/// The point of a path constraint's row (or `Whole` for every other constraint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowAt {
    Whole,
    /// The horizon's start.
    Start,
    /// The `k`-th interior extremum of arc `arc` (the arcs are the pieces between events).
    Interior {
        arc: usize,
        k: usize,
    },
    /// The pre-event value at the end of arc `arc`.
    BeforeEvent {
        arc: usize,
    },
    /// The horizon's end.
    End,
    /// Multiple shooting's continuity of state `state` at node `node`: the segment before
    /// the node ends where the node starts (node K, one past the last, is a periodic
    /// problem's closing: the state after the closing event equals the start).
    Continuity {
        node: usize,
        state: usize,
    },
}

/// One row: `lower ≤ value ≤ upper`, with its gradient over x.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub label: RowLabel,
    pub value: f64,
    pub grad: Vec<f64>,
    pub lower: f64,
    pub upper: f64,
}

impl Row {
    /// Constraint `ci`'s one row (not a path constraint's point) with its limits.
    pub fn whole(ci: usize, value: f64, grad: Vec<f64>, (lower, upper): (f64, f64)) -> Row {
        Row {
            label: RowLabel {
                constraint: ci,
                at: RowAt::Whole,
            },
            value,
            grad,
            lower,
            upper,
        }
    }

    /// `max(lower − c, c − upper, 0)`.
    pub fn violation(&self) -> f64 {
        crate::constraint::violation(self.value, self.lower, self.upper)
    }
    pub fn is_equality(&self) -> bool {
        self.lower == self.upper
    }
}

/// Everything known at one point x.
#[derive(Debug, Clone)]
pub(crate) struct Point {
    pub x: Vec<f64>,
    pub theta: Vec<f64>,
    pub t_end: f64,
    pub f: f64,
    pub g: Vec<f64>,
    pub rows: Vec<Row>,
    pub evaluation: Evaluation,
    /// Multiple shooting: each segment's event times (empty for single shooting).
    pub segment_events: Vec<Vec<f64>>,
}

impl Point {
    /// The largest violation of any row.
    pub fn max_violation(&self) -> f64 {
        self.rows.iter().map(Row::violation).fold(0.0, f64::max)
    }
    /// The largest continuity gap (multiple shooting's rows; 0 without them).
    pub fn defect(&self) -> f64 {
        self.rows
            .iter()
            .filter(|r| matches!(r.label.at, RowAt::Continuity { .. }))
            .map(|r| r.value.abs())
            .fold(0.0, f64::max)
    }
    /// The sum of the rows' violations (the l1 merit function's penalty).
    pub fn total_violation(&self) -> f64 {
        self.rows.iter().map(Row::violation).sum()
    }
}

/// One row of a path constraint: where, its value and its gradient over x.
pub(crate) struct PathRow {
    pub at: RowAt,
    pub value: f64,
    pub grad: Vec<f64>,
}
