//! The nodes of multiple shooting: where they are in time, and their modes and states at
//! the start, from a single-shooting run of the start θ or from a table of (t, states)
//! (docs/guide/shooting.md, "Nodes and guesses").

use super::error::ShootingError;
use super::settings::{Guess, GuessTable, NodeTimes, Shooting};
use crate::error::Error;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::setup::Setup;

/// Which side of an event a node at the event's instant takes.
///
/// A node whose time coincides with an event of the initial guess (to 1e-12 relative)
/// takes the state and mode **after** the event (its reset applied): the segment that
/// starts there starts in the new mode, and the continuity constraint asks the segment
/// that ends there to end after the event. The decision is reported per node.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NodeSide {
    /// Inside a flow: no event of the guess at the node's time.
    Flow,
    /// At an event of the guess (the guard's name; `table` when the guess is a table,
    /// whose repeated time marks the event): the state and mode after it.
    AfterEvent { guard: String },
}

/// One node at the start: its time, mode (fixed for the whole run), state and side.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub t: f64,
    pub mode: usize,
    pub state: Vec<f64>,
    pub side: NodeSide,
}

/// Two times closer than this (relative) are the same instant.
fn same_instant(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// The interior node times `t_1 < … < t_{K−1}` inside `(t0, t_end)`: K equal segments, or
/// the times given.
pub(super) fn node_times(nodes: &NodeTimes, t0: f64, t_end: f64) -> Result<Vec<f64>, Error> {
    let times = match nodes {
        NodeTimes::Segments(k) => {
            if *k < 2 {
                return Err(ShootingError::Nodes(format!(
                    "segments = {k}: multiple shooting needs at least 2 segments"
                ))
                .into());
            }
            (1..*k)
                .map(|i| t0 + (t_end - t0) * i as f64 / *k as f64)
                .collect()
        }
        NodeTimes::Times(v) => v.clone(),
    };
    if times.is_empty() {
        return Err(ShootingError::Nodes(
            "no interior node time: give at least one between t0 and t_end".into(),
        )
        .into());
    }
    let mut prev = t0;
    for &t in &times {
        if !(t > prev && t < t_end && t.is_finite()) {
            return Err(ShootingError::Nodes(format!(
                "{t}: node times must increase strictly inside ({t0}, {t_end}); got {times:?}"
            ))
            .into());
        }
        prev = t;
    }
    Ok(times)
}

/// The start of the nodes: node 0 is the system's own start at θ; nodes 1…K−1 come from
/// the guess. Returns the nodes and the horizon's end (a periodic problem's end is the
/// closing event of the guess).
pub(super) fn initial_nodes<S: HybridSystem>(
    base: &Setup<'_, S>, theta: &[f64], shooting: &Shooting,
) -> Result<(Vec<Node>, f64), Error> {
    let first = start_node(base, theta)?;
    let mode0 = first.mode;
    let mut nodes = vec![first];
    match &shooting.guess {
        Guess::SingleShooting => {
            let mut plain = base.with_objectives(vec![]);
            if let Some(c) = &shooting.closure {
                plain.events.stop_after = Some((c.guard, 1));
            }
            let traj = plain.simulate(theta)?;
            let t_end = match &shooting.closure {
                Some(c) => closing_time(base, &traj, c.guard)?,
                None => base.t_end,
            };
            for t in node_times(&shooting.nodes, base.t0, t_end)? {
                let node = match traj.events.iter().rev().find(|e| same_instant(e.t, t)) {
                    // at an event: the state and mode after it (the last event of the
                    // instant, when several fire together)
                    Some(e) => Node {
                        t,
                        mode: e.mode_after(),
                        state: e.after.y[..base.nx()].to_vec(),
                        side: NodeSide::AfterEvent {
                            guard: base.dims.guard_name(e.guard),
                        },
                    },
                    None => {
                        let seg = &traj.segments[traj.segment_index(t, false)];
                        let mut y = vec![0.0; plain.n()];
                        seg.state_at(t, &mut y);
                        Node {
                            t,
                            mode: seg.mode,
                            state: y[..base.nx()].to_vec(),
                            side: NodeSide::Flow,
                        }
                    }
                };
                nodes.push(node);
            }
            Ok((nodes, t_end))
        }
        Guess::Table(table) => {
            let t_end = match &shooting.closure {
                Some(_) => *table.t.last().unwrap_or(&base.t_end),
                None => base.t_end,
            };
            for t in node_times(&shooting.nodes, base.t0, t_end)? {
                nodes.push(table.node_at(t, mode0)?);
            }
            Ok((nodes, t_end))
        }
    }
}

/// Node 0: the system's own start at θ.
fn start_node<S: HybridSystem>(base: &Setup<'_, S>, theta: &[f64]) -> Result<Node, Error> {
    let (mode, x0) = base.initial(theta).map_err(|source| Error::Model {
        t: base.t0,
        mode: String::new(),
        source,
    })?;
    Ok(Node {
        t: base.t0,
        mode,
        state: x0[..base.nx()].to_vec(),
        side: NodeSide::Flow,
    })
}

/// A periodic problem as one segment: node 0 alone, and the closing time of the run from
/// it (the horizon its segment is placed for).
pub(super) fn one_segment<S: HybridSystem>(
    base: &Setup<'_, S>, theta: &[f64], closure: &super::settings::Closure,
) -> Result<(Vec<Node>, f64), Error> {
    let first = start_node(base, theta)?;
    let mut plain = base.with_objectives(vec![]);
    plain.events.stop_after = Some((closure.guard, 1));
    let traj = plain.simulate(theta)?;
    Ok((vec![first], closing_time(base, &traj, closure.guard)?))
}

/// The time of the closing event (the first firing of `guard`) of a guess run.
fn closing_time<S: HybridSystem>(
    base: &Setup<'_, S>, traj: &crate::integrate::Trajectory, guard: usize,
) -> Result<f64, Error> {
    match traj.events.last() {
        Some(e) if e.terminal && e.guard == guard => Ok(e.t),
        _ => Err(Error::MissingEvent {
            guard: base.dims.guard_name(guard),
            occurrence: 1,
            fired: 0,
            t0: base.t0,
            t1: base.t_end,
        }),
    }
}

impl GuessTable {
    /// Reads a CSV table with a header: a column `t`, one column per state named as the
    /// system names it (the first column of that name: a `trajectory.csv` lists the states
    /// before the outputs), and optionally `mode` (the mode's index or name; required when
    /// the system has more than one mode). Other columns are ignored.
    pub fn read_csv(
        path: &std::path::Path, dims: &crate::model::Dims,
    ) -> Result<GuessTable, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse_csv(&text, &path.display().to_string(), dims)
    }

    /// The table of a run of the system `dims` describes: the samples of
    /// [`Trajectory::samples`]`(1)` (t, the mode of its segment, the states), an event's
    /// instant twice (before, then after), as a previous run's `trajectory.csv` read by
    /// [`Self::read_csv`] gives it; `file` is `"run"`.
    pub fn from_trajectory(traj: &Trajectory, dims: &crate::model::Dims) -> GuessTable {
        let nx = dims.states.len();
        let samples = traj.samples(1);
        GuessTable {
            file: "run".into(),
            t: samples.iter().map(|(t, _, _)| *t).collect(),
            mode: Some(
                samples
                    .iter()
                    .map(|(_, s, _)| traj.segments[*s].mode)
                    .collect(),
            ),
            states: samples.iter().map(|(_, _, y)| y[..nx].to_vec()).collect(),
        }
    }

    /// [`Self::read_csv`] on the text of a file (`file` names it in messages).
    pub fn parse_csv(
        text: &str, file: &str, dims: &crate::model::Dims,
    ) -> Result<GuessTable, Error> {
        let bad = |message: String| -> Error {
            ShootingError::Guess {
                file: file.to_string(),
                message,
            }
            .into()
        };
        let csv = crate::table::Table::parse(text).map_err(bad)?;
        let mut sc = Vec::new();
        for s in &dims.states {
            sc.push(csv.column(s).ok_or_else(|| {
                bad(format!(
                    "no column `{s}`; the system's states are {}",
                    dims.states.join(", ")
                ))
            })?);
        }
        let mc = csv.column("mode");
        if mc.is_none() && dims.modes.len() > 1 {
            return Err(bad(format!(
                "no column `mode`: the system has {} modes ({}), so each row must say which",
                dims.modes.len(),
                dims.modes.join(", ")
            )));
        }
        let mut table = GuessTable {
            file: file.to_string(),
            t: csv.t.clone(),
            mode: mc.map(|_| Vec::new()),
            states: Vec::new(),
        };
        for r in 0..csv.len() {
            table.states.push(
                sc.iter()
                    .zip(&dims.states)
                    .map(|(&c, s)| csv.number(r, c, s).map_err(bad))
                    .collect::<Result<_, _>>()?,
            );
            if let (Some(c), Some(modes)) = (mc, table.mode.as_mut()) {
                let cell = csv.cell(r, c);
                let m = match cell.parse::<f64>() {
                    Ok(v) if v >= 0.0 && v.fract() == 0.0 && (v as usize) < dims.modes.len() => {
                        v as usize
                    }
                    _ => dims.modes.iter().position(|m| m == cell).ok_or_else(|| {
                        bad(format!(
                            "line {}, column `mode`: {cell:?} is neither a mode index below {} nor a mode name ({})",
                            csv.line(r),
                            dims.modes.len(),
                            dims.modes.join(", ")
                        ))
                    })?,
                };
                modes.push(m);
            }
        }
        if table.t.len() < 2 {
            return Err(bad("fewer than two rows".into()));
        }
        Ok(table)
    }

    /// The node at time `t`: linear interpolation between the rows around it; at a time
    /// that two rows share (an event in the table), the later row (after the event).
    fn node_at(&self, t: f64, mode0: usize) -> Result<Node, Error> {
        let (first, last) = (self.t[0], *self.t.last().expect("two rows"));
        if t < first || t > last {
            return Err(ShootingError::Guess {
                file: self.file.clone(),
                message: format!("node time {t} is outside the table's span [{first}, {last}]"),
            }
            .into());
        }
        let (i, w) = crate::table::bracket(&self.t, t);
        let mode_of = |i: usize| self.mode.as_ref().map_or(mode0, |m| m[i]);
        // a time given twice with different rows is an event; with equal rows it is a
        // breakpoint of the run that wrote the table (a `trajectory.csv` repeats the row at
        // every control-grid node and shooting node)
        let at_event = i > 0
            && self.t[i] == t
            && self.t[i - 1] == t
            && (self.states[i] != self.states[i - 1] || mode_of(i) != mode_of(i - 1));
        let state = if w == 0.0 {
            self.states[i].clone()
        } else {
            self.states[i]
                .iter()
                .zip(&self.states[i + 1])
                .map(|(a, b)| a + w * (b - a))
                .collect()
        };
        Ok(Node {
            t,
            mode: mode_of(i),
            state,
            side: if at_event {
                NodeSide::AfterEvent {
                    guard: "table".into(),
                }
            } else {
                NodeSide::Flow
            },
        })
    }
}
