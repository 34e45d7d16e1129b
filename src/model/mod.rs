//! The model interface: one trait describes a hybrid system (theory.md §1), its four
//! functions written once, generic over a num-dual scalar, so that every Jacobian the
//! sensitivity analysis needs is exact (forward-mode dual numbers, one direction a pass).
//!
//! The system is constant: it never stores state. Simulations return values.

use crate::error::ModelError;

mod dims;
mod jacobian;
mod scalar;
pub(crate) mod scratch;
mod start_on_section;
mod state_map;
mod vjp;

pub use crate::sparsity::{Colouring, Pattern, PatternError, ResetPattern};
pub use dims::{Dims, Names};
pub use jacobian::{
    flow_jacobian, guard_jacobian, initial_jacobian, jacobian_of, jacobian_once, outputs_jacobian,
    reset_jacobian, reset_jacobian_on, Jacobian, ScalarFn, StructuredReset,
};
pub use scalar::{c, lane_eps, lane_seed, Lanes, Scalar, LANES, SCALAR_DUAL_DIRECTIONS};
pub use start_on_section::StartOnSection;
pub use state_map::StateMap;
pub use vjp::{vjp_by_dual_passes, vjp_by_scalar_duals, OutputCotangent, VjpArgs, VjpOut};

/// In which direction a guard must cross zero to fire (theory.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// From positive to negative.
    Falling,
    /// From negative to positive.
    Rising,
    /// Either way.
    Either,
}

impl Direction {
    /// Whether a change of sign from `g0` to `g1` is a crossing in this direction.
    pub fn crosses(self, g0: f64, g1: f64) -> bool {
        match self {
            Direction::Falling => g0 > 0.0 && g1 <= 0.0,
            Direction::Rising => g0 < 0.0 && g1 >= 0.0,
            Direction::Either => (g0 > 0.0 && g1 <= 0.0) || (g0 < 0.0 && g1 >= 0.0),
        }
    }
}

/// Declaration of one guard (event function).
#[derive(Debug, Clone, PartialEq)]
pub struct GuardInfo {
    /// The guard's name (what event terms and tables refer to).
    pub name: String,
    /// The direction in which it fires.
    pub direction: Direction,
    /// A terminal guard ends the simulation where it fires (the horizon becomes the event
    /// time, which then depends on the parameters).
    pub terminal: bool,
}

impl GuardInfo {
    /// A guard that fires and lets the run go on.
    pub fn new(name: &str, direction: Direction) -> Self {
        GuardInfo {
            name: name.to_string(),
            direction,
            terminal: false,
        }
    }
    /// A terminal guard: the run ends where it fires.
    pub fn terminal(name: &str, direction: Direction) -> Self {
        GuardInfo {
            name: name.to_string(),
            direction,
            terminal: true,
        }
    }
}

/// A hybrid dynamical system (theory.md §1). Implement this one trait to use your own
/// system with every solver, sensitivity method and optimizer of the library.
///
/// Six functions are generic over [`Scalar`]: the five you write —
/// [`initial_state`](HybridSystem::initial_state), [`flow`](HybridSystem::flow),
/// [`guard`](HybridSystem::guard), [`reset`](HybridSystem::reset),
/// [`outputs`](HybridSystem::outputs) — and
/// [`initial_state_at`](HybridSystem::initial_state_at), which has a default (it calls
/// `initial_state`), all so that the library can differentiate them exactly; write them with ordinary
/// arithmetic (`+ - * /`, `sin`, `sqrt`, `powi`, ...), using [`c`] to lift constants. The
/// rest describes the system in `f64`: its names, modes and guards in one [`Dims`]
/// ([`dims`](HybridSystem::dims)), which guards each mode watches, its start mode.
///
/// ```
/// use hybridopt::prelude::*;
///
/// /// A ball under gravity g bouncing on y = 0 with restitution e; θ = (g, e, y0).
/// struct Ball;
/// impl HybridSystem for Ball {
///     fn dims(&self) -> Dims {
///         Dims::new(["y", "v"], ["g", "e", "y0"])
///             .guards([GuardInfo::new("ground", Direction::Falling)])
///             .outputs(["y"])
///     }
///     fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
///         Ok(vec![p[2], c(0.0)])
///     }
///     fn flow<D: Scalar>(&self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D])
///         -> Result<(), ModelError> {
///         dx[0] = x[1];
///         dx[1] = -p[0];
///         Ok(())
///     }
///     fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
///         x[0]
///     }
///     fn reset<D: Scalar>(&self, m: usize, _k: usize, _t: D, x: &[D], p: &[D])
///         -> Result<(usize, Vec<D>), ModelError> {
///         Ok((m, vec![x[0], -p[1] * x[1]]))
///     }
///     fn outputs<D: Scalar>(&self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], y: &mut [D])
///         -> Result<(), ModelError> {
///         y[0] = x[0];
///         Ok(())
///     }
/// }
///
/// // the first impact at t₁ = √(2 y0/g): dt₁/dy0 = 1/√(2 g y0)
/// let t1 = Objective::new("t1", vec![Term::plain(Quantity::EventTime { guard: EventGuard::Guard(0), occurrence: 1 }, 1.0)]);
/// let setup = Setup::builder(&Ball).horizon(0.0, 1.0).objective(t1).tolerances(1e-12, 1e-14).build();
/// let ev = evaluate(&setup, &[9.81, 0.8, 2.0], GradientMethod::Direct)?;
/// assert!((ev.values[0] - (4.0f64 / 9.81).sqrt()).abs() < 1e-9);
/// assert!((ev.gradients[0][2] - 1.0 / (2.0f64 * 9.81 * 2.0).sqrt()).abs() < 1e-8);
/// # Ok::<(), hybridopt::Error>(())
/// ```
pub trait HybridSystem: Send + Sync {
    /// The system's names: states, parameters (and their defaults), controls, modes,
    /// guards and outputs, in one [`Dims`] (see [`Dims::new`]). Called when a run is set
    /// up, never per step: the setup keeps it ([`crate::setup::Setup::dims`]).
    fn dims(&self) -> Dims;
    /// Whether guard `k` is watched in `mode` (all by default).
    fn guard_active(&self, _mode: usize, _k: usize) -> bool {
        true
    }
    /// The start mode `m0(p)`.
    fn initial_mode(&self, _p: &[f64]) -> usize {
        0
    }
    /// The start state `x0(p)`.
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError>;
    /// The start state when the run starts at `t0` ([`HybridSystem::initial_state`] by
    /// default). Systems whose start values must satisfy time-dependent equations override
    /// it (a DAE's consistency check at t0, [`crate::dae`]).
    fn initial_state_at<D: Scalar>(&self, _t0: f64, p: &[D]) -> Result<Vec<D>, ModelError> {
        self.initial_state(p)
    }
    /// The flow `ẋ = f_m(t, x, u, p)`, written into `dx`.
    fn flow<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError>;
    /// The guard function `g_{m,k}(t, x, u, p)`.
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D;
    /// The reset `x⁺ = R_{m,k}(t, x⁻, p)` and the next mode. Identity by default (a pure
    /// mode switch that keeps the mode).
    fn reset<D: Scalar>(
        &self, mode: usize, _k: usize, _t: D, x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((mode, x.to_vec()))
    }
    /// The outputs `y = h_m(t, x, u, p)`, written into `out`.
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError>;

    /// The flow and the outputs at one point, into `dx` and `y`: [`Self::flow`] then
    /// [`Self::outputs`] unless a system computes both at once (a custom system's machine
    /// code: one call for the right-hand side of a run with a running cost).
    #[inline(always)]
    fn flow_outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D], y: &mut [D],
    ) -> Result<(), ModelError> {
        self.flow(mode, t, x, u, p, dx)?;
        self.outputs(mode, t, x, u, p, y)
    }

    /// Which states each component of the flow `f_m` may read: the structural nonzeros of
    /// `∂f_m/∂x` (docs/theory.md §8, "Sparse Jacobians"). `None` (the default): every
    /// entry. With a pattern, the implicit integrators evaluate `f_x` by column colouring
    /// (one directional derivative per colour instead of one per state) and factor their
    /// iteration matrices with a sparse LU when the system is large enough
    /// ([`crate::integrate::LinearAlgebra`]). A pattern must contain every entry the flow
    /// can make nonzero in that mode; one that leaves an entry out slows Newton's
    /// iteration down or stops it converging (the results stay those of the flow itself).
    fn flow_pattern(&self, _mode: usize) -> Option<crate::sparsity::Pattern> {
        None
    }
    /// Which states the reset of guard k in mode m changes, and which states each new
    /// value reads: the structure of `∂R/∂x` (docs/theory.md §3, "The jump as an
    /// operator"). `None` (the default): every entry. With a pattern, the reset's Jacobian
    /// takes one directional derivative per state read (not one per state) and the jump
    /// maps the sensitivities in O(n) per column instead of O(n²). A pattern must contain
    /// every state the reset can change and every state each changed value can read (on
    /// any branch); the derivatives of entries left out are taken as the identity's.
    fn reset_pattern(&self, _mode: usize, _k: usize) -> Option<crate::sparsity::ResetPattern> {
        None
    }
    /// The system's geometry, for pictures and animations of its motion
    /// ([`crate::animate`]); none by default. A system that has one implements
    /// [`Geometry`](crate::geometry::Geometry) and returns `Some(self)` here.
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        None
    }

    /// Vector–Jacobian products of the flow and the outputs for `k` cotangent pairs at once
    /// (the adjoint's inner loop, theory.md §4): for each j < k,
    ///
    /// ```text
    /// gx_j = f_xᵀ λ_j + h_xᵀ ȳ_j,   gu_j = f_uᵀ λ_j + h_uᵀ ȳ_j,   gp_j = f_pᵀ λ_j + h_pᵀ ȳ_j
    /// ```
    ///
    /// with `f = f_m(t, x, u, p)` and `h` the outputs. Layouts are row-major by cotangent:
    /// `lam` is k×nx, `ybar` k×ny (see [`OutputCotangent`]), `gx` k×nx, `gu` k×nu, `gp`
    /// k×np. Override it when the flow has structure that makes the product cheaper
    /// than one dual pass per input (the multibody systems differentiate their saddle-point
    /// solve implicitly). The default is exact: [`vjp_by_dual_passes`].
    fn flow_vjp(&self, args: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError>
    where
        Self: Sized,
    {
        if args.x.len() + args.u.len() + args.p.len() <= SCALAR_DUAL_DIRECTIONS {
            vjp_by_scalar_duals(self, args, out)
        } else {
            vjp_by_dual_passes(self, args, out)
        }
    }
}
