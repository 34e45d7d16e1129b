//! x(t) on one segment for the backward pass, from the forward run's interpolants or its
//! replayed checkpoint windows.

use crate::error::ModelError;
use crate::integrate::hybrid::replay_window;
use crate::integrate::trajectory::Ctx;
use crate::integrate::{DenseStep, Segment, Stats};
use crate::model::HybridSystem;
use crate::setup::Plain;
use std::cell::RefCell;

/// x(t) on one segment for the backward pass: the kept interpolants, or the steps of a
/// compacted window replayed from its checkpoint (the last two windows cached, since the
/// backward pass walks through them in order).
pub(super) struct SegmentStates<'r, 's, 'a, S: HybridSystem> {
    seg: &'r Segment<f64>,
    plain: &'r Plain<'s, 'a, S, f64>,
    ctx: Ctx,
    cache: RefCell<Vec<(usize, Vec<DenseStep<f64>>)>>,
    replay_stats: RefCell<Stats>,
    /// The dense step found last (the backward pass moves slowly through the steps).
    hint: std::cell::Cell<usize>,
}

impl<'r, 's, 'a, S: HybridSystem> SegmentStates<'r, 's, 'a, S> {
    /// The states of segment `seg` (context `ctx`), replayed with `plain` where compacted.
    pub(super) fn new(seg: &'r Segment<f64>, plain: &'r Plain<'s, 'a, S, f64>, ctx: Ctx) -> Self {
        SegmentStates {
            seg,
            plain,
            ctx,
            cache: RefCell::new(Vec::new()),
            replay_stats: RefCell::new(Stats::default()),
            hint: std::cell::Cell::new(seg.steps.len().saturating_sub(1)),
        }
    }

    /// The forward steps replayed so far.
    pub(super) fn replayed(&self) -> Stats {
        *self.replay_stats.borrow()
    }

    pub(super) fn state_at(&self, t: f64, out: &mut [f64]) -> Result<(), ModelError> {
        let seg = self.seg;
        let in_tail = seg.steps.first().is_some_and(|s| t >= s.t0);
        if seg.windows.is_empty() || in_tail {
            let mut hint = self.hint.get();
            seg.state_at_hinted(t, out, &mut hint);
            self.hint.set(hint);
            return Ok(());
        }
        let t = t.clamp(seg.t_start, seg.t_end);
        let w = seg
            .windows
            .partition_point(|w| w.start() <= t)
            .saturating_sub(1);
        let mut cache = self.cache.borrow_mut();
        if !cache.iter().any(|(i, _)| *i == w) {
            let steps = replay_window(
                self.plain,
                self.ctx,
                &self.plain.setup.solver,
                &seg.windows[w],
                &mut self.replay_stats.borrow_mut(),
            )?;
            if cache.len() == 2 {
                cache.remove(0);
            }
            cache.push((w, steps));
        }
        let steps = &cache.iter().find(|(i, _)| *i == w).expect("cached").1;
        let idx = steps.partition_point(|s| s.t0 <= t).saturating_sub(1);
        steps[idx].eval(t, out);
        Ok(())
    }
}
