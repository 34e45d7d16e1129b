//! What [`super::evaluate_with`] computes besides ψ and dψ/dθ by its method: the finite
//! difference step, the witnesses run next to the method (their gradients and their largest
//! relative difference to it), and the event-time sensitivities τ when the method does not
//! give them.

use super::fd::{FdOptions, FdScale};
use super::method::GradientMethod;
use crate::integrate::Stats;

/// The options of [`super::evaluate_with`], with a builder; `EvaluateOptions::new(method)`
/// alone is [`super::evaluate`].
///
/// ```
/// use hybridopt::prelude::*;
/// use hybridopt::systems::BouncingBall;
///
/// let third = Quantity::EventTime { guard: EventGuard::Guard(0), occurrence: 3 };
/// let cost = Objective::new("timing", vec![Term::squared(third, 2.0, 1.0)]);
/// let setup = Setup::builder(&BouncingBall).horizon(0.0, 3.0).objective(cost)
///     .tolerances(1e-10, 1e-12).build();
/// let options = EvaluateOptions::new(GradientMethod::Adjoint)
///     .fd_step(1e-5)
///     .witnesses(&[GradientMethod::Direct, GradientMethod::Fd])
///     .with_tau();
/// let ev = evaluate_with(&setup, &[9.81, 0.8, 0.0, 1.0, 0.5], &options).unwrap();
/// for w in &ev.witnesses {
///     assert!(w.max_relative_difference < 1e-5, "{:?}", w.method);
/// }
/// // τ of every impact by one direct pass (the adjoint does not give it)
/// let tau = ev.tau.as_ref().unwrap();
/// assert_eq!(tau.len(), ev.trajectory.events.len());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluateOptions {
    /// The method whose values and gradients the evaluation reports. Default adjoint.
    pub method: GradientMethod,
    /// The finite-difference step rule and stencil (for `Fd`, as the method or a witness).
    pub fd: FdOptions,
    /// Methods run next to `method` as witnesses (the method itself is skipped).
    pub witnesses: Vec<GradientMethod>,
    /// Whether to compute τ by one direct pass when `method` does not give it (`Adjoint`,
    /// `Fd`).
    pub tau: bool,
}

impl Default for EvaluateOptions {
    fn default() -> Self {
        EvaluateOptions::new(GradientMethod::Adjoint)
    }
}

impl EvaluateOptions {
    /// The method alone: no witness, no extra τ pass, the default FD rule (each entry's
    /// step chosen on a Richardson ladder, `super::fd`).
    pub fn new(method: GradientMethod) -> EvaluateOptions {
        EvaluateOptions {
            method,
            fd: FdOptions::default(),
            witnesses: Vec::new(),
            tau: false,
        }
    }
    /// A fixed relative FD step instead of the ladder: `h_j = rel · max(1, |θ_j|)` (see
    /// [`Self::fd_scale`]).
    pub fn fd_step(mut self, rel: f64) -> Self {
        self.fd.rel = rel;
        self.fd.adaptive = false;
        self
    }
    /// A fixed FD step scaled by `max(1, |θ_j|)` ([`FdScale::Unit`]) or `|θ_j|`
    /// ([`FdScale::Value`]), with the relative step of [`Self::fd_step`] (default 1e-4).
    pub fn fd_scale(mut self, scale: FdScale) -> Self {
        self.fd.scale = scale;
        self.fd.adaptive = false;
        self
    }
    /// A fixed FD step's stencil order, 2 or 4.
    pub fn fd_order(mut self, order: usize) -> Self {
        self.fd.order = order;
        self.fd.adaptive = false;
        self
    }
    /// The witnesses to run.
    pub fn witnesses(mut self, methods: &[GradientMethod]) -> Self {
        self.witnesses = methods.to_vec();
        self
    }
    /// Computes τ even when the method does not.
    pub fn with_tau(mut self) -> Self {
        self.tau = true;
        self
    }
}

/// The gradients of one witness and how far they are from the method's.
#[derive(Debug, Clone)]
pub struct Witness {
    pub method: GradientMethod,
    /// dψ_i/dθ for each objective, by the witness.
    pub gradients: Vec<Vec<f64>>,
    /// All the work of the witness.
    pub stats: Stats,
    /// `Fd`: each entry's error estimate and step.
    pub fd: Option<super::FdDetails>,
    /// `max_i ‖g_i^w − g_i‖∞ / ‖g_i‖∞` over the objectives i (the denominator at least
    /// 1e-300): the largest difference to the method's gradient, relative to its size.
    pub max_relative_difference: f64,
}

/// `max_i ‖a_i − b_i‖∞ / max(‖b_i‖∞, 1e-300)`.
pub(super) fn max_relative_difference(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    let inf = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0_f64, |m, x| m.max(x.abs()));
    a.iter()
        .zip(b)
        .map(|(ai, bi)| {
            let diff = inf(&mut ai.iter().zip(bi).map(|(x, y)| x - y));
            diff / inf(&mut bi.iter().copied()).max(1e-300)
        })
        .fold(0.0, f64::max)
}
