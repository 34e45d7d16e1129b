//! The checkpoint store: the segments of a run, kept under a [`Checkpointing`] policy
//! (every dense step, or replay windows past a memory budget).

use crate::integrate::options::Checkpointing;
use crate::integrate::trajectory::Segment;
use crate::model::Scalar;

/// The closed segments of a run and how their dense output is being kept.
pub(super) struct Store<D> {
    pub(super) segments: Vec<Segment<D>>,
    policy: Checkpointing,
    /// Whether dense steps are being compacted (from the start for `Every`; for `Budget`
    /// from the segment in which the budget is passed on, the closed segments before it
    /// staying dense).
    compacting: bool,
    /// Bytes of interpolants held so far (for `Budget`).
    bytes: usize,
    /// Where the Jacobian in force at the open segment's first dense step was evaluated
    /// (implicit methods; see [`Segment::compact_front`]).
    jac: Option<(D, Vec<D>)>,
}

impl<D: Scalar> Store<D> {
    pub(super) fn new(policy: Checkpointing) -> Self {
        Store {
            segments: Vec::new(),
            policy,
            compacting: matches!(policy, Checkpointing::Every(_)),
            bytes: 0,
            jac: None,
        }
    }

    fn every(&self) -> usize {
        match self.policy {
            Checkpointing::Never => usize::MAX,
            Checkpointing::Every(k) => k.max(1),
            Checkpointing::Budget { every, .. } => every.max(1),
        }
    }

    /// After a dense step was added to the open segment `seg`.
    pub(super) fn after_step(&mut self, seg: &mut Segment<D>) {
        if let Checkpointing::Budget { budget_bytes, .. } = self.policy {
            if !self.compacting {
                self.bytes += seg.steps.last().map_or(0, |s| s.bytes());
                // past the budget, the open segment and every later one are compacted;
                // what was kept stays kept (compacting it would only add replay: the
                // budget is already spent)
                self.compacting = self.bytes > budget_bytes;
            }
        }
        if self.compacting && seg.steps.len() >= self.every() {
            seg.compact_all(self.every(), &mut self.jac);
        }
    }

    /// Closes a segment.
    pub(super) fn push(&mut self, mut seg: Segment<D>) {
        if self.compacting {
            seg.compact_all(self.every(), &mut self.jac);
        }
        // the next segment starts with a new Jacobian
        self.jac = None;
        self.segments.push(seg);
    }
}
