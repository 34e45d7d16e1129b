//! The system the return map runs: the base system plus, for a hyperplane section, the
//! hyperplane as one more guard (`h(x) = n·x − c`, active in the section's mode only, with
//! the identity reset; see `hyperplane.rs`).

use super::hyperplane::{Hyperplane, GUARD_NAME};
use super::section::{Section, SectionKind};
use crate::error::ModelError;
use crate::model::{Dims, GuardInfo, HybridSystem, Scalar, VjpArgs, VjpOut};

/// The system the return map runs (module docs): `base`'s guards, then, for a hyperplane
/// section, the hyperplane's guard (active in the section's mode, identity reset).
pub struct WithSectionGuard<'a, S: HybridSystem> {
    pub base: &'a S,
    hyperplane: Option<&'a Hyperplane>,
    mode: usize,
    n_base: usize,
    /// The index of the section's guard in [`Dims::guards`](field@Dims::guards).
    pub section_guard: usize,
}

impl<'a, S: HybridSystem> WithSectionGuard<'a, S> {
    pub fn new(base: &'a S, sec: &'a Section) -> Self {
        let n_base = base.dims().guards.len();
        let (hyperplane, section_guard) = match &sec.kind {
            SectionKind::AfterReset { guard } => (None, *guard),
            SectionKind::Hyperplane(h) => (Some(h), n_base),
        };
        WithSectionGuard {
            base,
            hyperplane,
            mode: sec.mode,
            n_base,
            section_guard,
        }
    }

    /// The hyperplane, when `k` is its guard.
    #[inline]
    fn plane(&self, k: usize) -> Option<&Hyperplane> {
        self.hyperplane.filter(|_| k == self.n_base)
    }
}

impl<S: HybridSystem> HybridSystem for WithSectionGuard<'_, S> {
    /// The base system's, with the hyperplane's guard last (when the section is one).
    fn dims(&self) -> Dims {
        let mut d = self.base.dims();
        if let Some(h) = self.hyperplane {
            d.guards
                .push(GuardInfo::new(GUARD_NAME, h.crossing.direction()));
        }
        d
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        match self.plane(k) {
            Some(_) => mode == self.mode,
            None => self.base.guard_active(mode, k),
        }
    }
    fn flow_pattern(&self, mode: usize) -> Option<crate::sparsity::Pattern> {
        self.base.flow_pattern(mode)
    }
    /// The base system's; the section's guard keeps every state (its pattern the
    /// identity's when the base declares its own guards' patterns, else none).
    fn reset_pattern(&self, mode: usize, k: usize) -> Option<crate::sparsity::ResetPattern> {
        match self.plane(k) {
            Some(_) => (0..self.n_base)
                .find_map(|g| self.base.reset_pattern(mode, g))
                .map(|p| crate::sparsity::ResetPattern::identity(p.dim())),
            None => self.base.reset_pattern(mode, k),
        }
    }
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        self.base.geometry()
    }
    /// The base system's: the section's guard does not enter the flow.
    fn flow_vjp(&self, args: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError> {
        self.base.flow_vjp(args, out)
    }
    fn initial_mode(&self, p: &[f64]) -> usize {
        self.base.initial_mode(p)
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        self.base.initial_state(p)
    }
    fn initial_state_at<D: Scalar>(&self, t0: f64, p: &[D]) -> Result<Vec<D>, ModelError> {
        self.base.initial_state_at(t0, p)
    }
    #[inline]
    fn flow<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        self.base.flow(mode, t, x, u, p, dx)
    }
    #[inline]
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        match self.plane(k) {
            Some(h) => h.value(x),
            None => self.base.guard(mode, k, t, x, u, p),
        }
    }
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        match self.plane(k) {
            Some(_) => Ok((mode, x.to_vec())),
            None => self.base.reset(mode, k, t, x, p),
        }
    }
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        self.base.outputs(mode, t, x, u, p, out)
    }
}
