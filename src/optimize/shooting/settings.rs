//! A multiple-shooting problem's own settings (`[shooting]`): where the nodes are, where
//! their states start, and a periodic problem's closing.

/// Where the nodes are.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeTimes {
    /// K segments of equal length (a periodic problem: of the guess's period).
    Segments(usize),
    /// The interior node times `t_1 < … < t_{K−1}`, strictly inside the horizon.
    Times(Vec<f64>),
}

/// Where the nodes' states start.
#[derive(Debug, Clone, PartialEq)]
pub enum Guess {
    /// The single-shooting run of the start θ, sampled at the node times.
    SingleShooting,
    /// A table of (t, mode, states) — a previous run's `trajectory.csv`, a measured or a
    /// hand-drawn motion — interpolated linearly at the node times.
    Table(GuessTable),
}

/// An initial-guess table ([`GuessTable::read_csv`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GuessTable {
    /// The file it came from (for messages).
    pub file: String,
    /// Times, non-decreasing (a time given twice with different rows marks an event: before,
    /// then after; with equal rows, a breakpoint).
    pub t: Vec<f64>,
    /// Each row's mode, if the table gives them (else the system's start mode).
    pub mode: Option<Vec<usize>>,
    /// Each row's states.
    pub states: Vec<Vec<f64>>,
}

/// A periodic problem's closing: the last segment ends at the first firing of `guard`,
/// and the state after its reset equals the start `x0(θ)` in the states listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Closure {
    pub guard: usize,
    /// Indices of the states that must return (all of them, unless the start is charted
    /// on the guard's surface and one state follows from the others).
    pub states: Vec<usize>,
}

/// A multiple-shooting problem's own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Shooting {
    pub nodes: NodeTimes,
    pub guess: Guess,
    pub closure: Option<Closure>,
}
