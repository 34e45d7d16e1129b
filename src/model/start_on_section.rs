//! A system whose start state is a parameter: `θ = (p, x0)` (or `θ = x0` with the
//! parameters frozen), so that one direct-sensitivity pass from a state gives `∂x(t)/∂x0`
//! (a return map's monodromy, a shooting segment's or an iLQR stage's state Jacobian) and
//! `∂x(t)/∂p` together. The periodic orbits start on their section with it (hence the
//! name); multiple shooting and the iLQR start each segment or stage with it.

use super::{Dims, HybridSystem, Scalar, VjpArgs, VjpOut};
use crate::error::ModelError;

/// A system whose start state is taken from its last `nx` parameters. With `frozen`
/// parameters, those are constants and `θ = x0` alone (so that a sensitivity pass carries
/// only the `n` columns of the monodromy, as Newton's iterations need).
pub struct StartOnSection<'a, S: HybridSystem> {
    pub base: &'a S,
    pub np: usize,
    pub mode: usize,
    frozen: Option<Vec<f64>>,
    /// Whether the run takes the base system's control channels (multiple shooting's
    /// segments); not for the return map.
    controls: bool,
}

impl<'a, S: HybridSystem> StartOnSection<'a, S> {
    /// θ = (p, x0).
    pub fn new(base: &'a S, mode: usize) -> Self {
        StartOnSection {
            base,
            np: base.dims().np(),
            mode,
            frozen: None,
            controls: false,
        }
    }
    /// θ = (p, x0, c): the base system's control channels as its own (c their coefficients).
    pub fn with_controls(mut self) -> Self {
        self.controls = true;
        self
    }
    /// θ = x0, the parameters fixed at `p`.
    pub fn frozen(base: &'a S, mode: usize, p: &[f64]) -> Self {
        StartOnSection {
            np: 0,
            frozen: Some(p.to_vec()),
            ..Self::new(base, mode)
        }
    }
    /// θ = (p, x0), or x0 when the parameters are frozen.
    pub fn theta(&self, p: &[f64], x0: &[f64]) -> Vec<f64> {
        let mut th = if self.frozen.is_some() {
            Vec::new()
        } else {
            p.to_vec()
        };
        th.extend_from_slice(x0);
        th
    }
    /// The base system's parameters in the scalar type.
    #[inline]
    fn params<'p, D: Scalar>(&self, p: &'p [D], buf: &'p mut Vec<D>) -> &'p [D] {
        match &self.frozen {
            Some(f) => {
                buf.clear();
                buf.extend(f.iter().map(|&v| D::from(v)));
                buf
            }
            None => &p[..self.np],
        }
    }
}

impl<S: HybridSystem> HybridSystem for StartOnSection<'_, S> {
    /// The base system's, with θ = (p, x0) (or x0 when frozen) and no parameter defaults.
    fn dims(&self) -> Dims {
        let mut d = self.base.dims();
        if self.frozen.is_some() {
            d.params.clear();
        }
        d.params
            .extend(d.states.iter().map(|s| format!("{s}@section")));
        d.param_defaults = None;
        if !self.controls {
            d.controls.clear();
        }
        d
    }
    fn flow_pattern(&self, mode: usize) -> Option<crate::sparsity::Pattern> {
        self.base.flow_pattern(mode)
    }
    fn reset_pattern(&self, mode: usize, k: usize) -> Option<crate::sparsity::ResetPattern> {
        self.base.reset_pattern(mode, k)
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        self.base.guard_active(mode, k)
    }
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        self.base.geometry()
    }
    fn initial_mode(&self, _p: &[f64]) -> usize {
        self.mode
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(p[self.np..].to_vec())
    }
    #[inline]
    fn flow<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let mut b = Vec::new();
        self.base.flow(mode, t, x, u, self.params(p, &mut b), dx)
    }
    #[inline]
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        let mut b = Vec::new();
        self.base.guard(mode, k, t, x, u, self.params(p, &mut b))
    }
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let mut b = Vec::new();
        self.base.reset(mode, k, t, x, self.params(p, &mut b))
    }
    /// The base system's products (its own `flow_vjp`, e.g. a mechanism's implicit one);
    /// the flow does not read the start state, so its entries of `gp` are zero.
    fn flow_vjp(&self, a: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError> {
        let mut b = Vec::new();
        let p = self.params(a.p, &mut b);
        let (n_theta, n_base) = (a.p.len(), p.len());
        let mut gp = vec![0.0; a.k * n_base];
        let base_out = VjpOut {
            gx: out.gx,
            gu: out.gu,
            gp: &mut gp,
            y: out.y,
        };
        self.base.flow_vjp(VjpArgs { p, ..a }, base_out)?;
        out.gp.fill(0.0);
        for j in 0..a.k {
            // θ = (p, x0): the base parameters' entries (none when they are frozen)
            out.gp[j * n_theta..j * n_theta + self.np]
                .copy_from_slice(&gp[j * n_base..j * n_base + self.np]);
        }
        Ok(())
    }
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let mut b = Vec::new();
        self.base
            .outputs(mode, t, x, u, self.params(p, &mut b), out)
    }
}
