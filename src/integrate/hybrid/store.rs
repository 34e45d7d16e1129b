//! The checkpoint store: the segments of a run, kept under a [`Checkpointing`] policy
//! (every dense step, replay windows within a memory budget, or the segments' starting
//! states alone).

use crate::integrate::options::Checkpointing;
use crate::integrate::trajectory::Segment;
use crate::model::Scalar;

/// The closed segments of a run and how their dense output is being kept.
pub(super) struct Store<D> {
    pub(super) segments: Vec<Segment<D>>,
    policy: Checkpointing,
    /// Whether new dense steps are being compacted (from the start for `Every`; for
    /// `Budget` from the step at which the budget is first passed, for the rest of the run).
    compacting: bool,
    /// Bytes of the interpolants held by the closed segments (for `Budget`).
    dense_closed: usize,
    /// Bytes of the interpolants held by the open segment (for `Budget`).
    dense_open: usize,
    /// Bytes of the replay windows held (for `Budget`).
    windows: usize,
    /// Where the Jacobian in force at the open segment's first dense step was evaluated
    /// (implicit methods; see [`Segment::compact_front`]).
    jac: Option<(D, Vec<D>)>,
    /// The first closed segment that may still hold interpolants: past the budget they
    /// are compacted oldest first (`Budget`), with the Jacobian in force before its first
    /// dense step in `oldest_jac`.
    oldest: usize,
    oldest_jac: Option<(D, Vec<D>)>,
}

impl<D: Scalar> Store<D> {
    pub(super) fn new(policy: Checkpointing) -> Self {
        Store {
            segments: Vec::new(),
            policy,
            compacting: matches!(policy, Checkpointing::Every(_)),
            dense_closed: 0,
            dense_open: 0,
            windows: 0,
            jac: None,
            oldest: 0,
            oldest_jac: None,
        }
    }

    fn every(&self) -> usize {
        match self.policy {
            Checkpointing::Never | Checkpointing::Discard => usize::MAX,
            Checkpointing::Every(k) => k.max(1),
            Checkpointing::Budget { every, .. } => every.max(1),
        }
    }

    fn over(&self, budget: usize) -> bool {
        self.dense_closed + self.dense_open + self.windows > budget
    }

    /// After a dense step was added to the open segment `seg`.
    pub(super) fn after_step(&mut self, seg: &mut Segment<D>) {
        match self.policy {
            Checkpointing::Never => {}
            Checkpointing::Discard => seg.discard_steps(),
            Checkpointing::Every(_) => {
                if seg.steps.len() >= self.every() {
                    seg.compact_all(self.every(), &mut self.jac);
                }
            }
            Checkpointing::Budget { budget_bytes, .. } => {
                self.dense_open += seg.steps.last().map_or(0, |s| s.bytes());
                // past the budget, every later step is compacted, and the oldest
                // interpolants give way to the checkpoints of the new steps
                self.compacting = self.compacting || self.over(budget_bytes);
                if self.compacting && seg.steps.len() >= self.every() {
                    self.compact_open(seg);
                }
                if self.compacting {
                    self.fit(budget_bytes);
                }
            }
        }
    }

    /// Compacts all of the open segment's dense steps, counting the bytes.
    fn compact_open(&mut self, seg: &mut Segment<D>) {
        let before = seg.windows.len();
        seg.compact_all(self.every(), &mut self.jac);
        self.dense_open = seg.dense_bytes();
        self.windows += seg.windows[before..]
            .iter()
            .map(|w| w.bytes())
            .sum::<usize>();
    }

    /// Compacts the oldest closed segments' interpolants, front first, until the held
    /// bytes fit the budget (or no closed segment holds any).
    fn fit(&mut self, budget: usize) {
        let every = self.every();
        while self.over(budget) && self.oldest < self.segments.len() {
            let seg = &mut self.segments[self.oldest];
            if seg.steps.is_empty() {
                self.oldest += 1;
                self.oldest_jac = None;
                continue;
            }
            let count = every.min(seg.steps.len());
            let freed: usize = seg.steps[..count].iter().map(|s| s.bytes()).sum();
            seg.compact_front(count, &mut self.oldest_jac);
            self.dense_closed -= freed.min(self.dense_closed);
            self.windows += seg.windows.last().map_or(0, |w| w.bytes());
        }
    }

    /// Closes a segment.
    pub(super) fn push(&mut self, mut seg: Segment<D>) {
        match self.policy {
            Checkpointing::Never => {}
            Checkpointing::Discard => seg.discard_steps(),
            Checkpointing::Every(_) => seg.compact_all(self.every(), &mut self.jac),
            Checkpointing::Budget { budget_bytes, .. } => {
                if self.compacting {
                    self.compact_open(&mut seg);
                }
                self.dense_closed += seg.dense_bytes();
                self.dense_open = 0;
                self.segments.push(seg);
                if self.compacting {
                    self.fit(budget_bytes);
                }
                self.jac = None;
                return;
            }
        }
        // the next segment starts with a new Jacobian
        self.jac = None;
        self.segments.push(seg);
    }
}
