//! The model interface: one trait describes a hybrid system (theory.md §1), its four
//! functions written once, generic over a num-dual scalar, so that every Jacobian the
//! sensitivity analysis needs is exact (forward-mode dual numbers, one direction a pass).
//!
//! The system is constant: it never stores state. Simulations return values.

use crate::error::ModelError;
use nalgebra::{DMatrix, DVector};
use num_dual::{Dual64, DualNum};

/// The scalar the model leaf code and the integrators are generic over: `f64` or a
/// num-dual number with `f64` as its primitive (e.g. [`Dual64`]).
pub trait Scalar: DualNum<Primitive = f64> + Copy + Send + Sync {
    /// `f64` itself (no derivative parts): the implicit integrators factor sparse
    /// Jacobians with a sparse LU in real runs only ([`crate::integrate`]).
    const REAL: bool = false;
    /// The first derivative part (0 for `f64`): lets the integrators control the error of
    /// a dual run's derivative as well as its value.
    fn eps_part(&self) -> f64 {
        0.0
    }
    /// `y` as a slice of this scalar when it is `f64` itself (no copy), `None` for duals:
    /// lets real-valued hot loops (guard scans) skip converting to a constant dual.
    #[inline]
    fn from_real_slice(_y: &[f64]) -> Option<&[Self]> {
        None
    }
    /// `y` as `f64` when this scalar is `f64` itself, `None` for duals.
    #[inline]
    fn real_slice_mut(_y: &mut [Self]) -> Option<&mut [f64]> {
        None
    }
}
impl Scalar for f64 {
    const REAL: bool = true;
    #[inline]
    fn from_real_slice(y: &[f64]) -> Option<&[f64]> {
        Some(y)
    }
    #[inline]
    fn real_slice_mut(y: &mut [f64]) -> Option<&mut [f64]> {
        Some(y)
    }
}
/// Dual numbers over any scalar: [`Dual64`] (first derivatives) and nested duals such as
/// `Dual<Dual64>` (second derivatives, [`crate::periodic`]) or `Dual<D>` over a generic `D`
/// (a directional derivative taken inside generic code, as the index-2 DAEs' hidden
/// constraint `k_y f + k_t` in [`crate::dae`]). The error control sees the derivative part
/// of first-order duals only (`Dual64`), as before nested duals existed.
impl<T: Scalar> Scalar for num_dual::Dual<T> {
    fn eps_part(&self) -> f64 {
        if T::NDERIV == 0 {
            self.eps.re()
        } else {
            0.0
        }
    }
}

/// Vector dual numbers with [`LANES`] derivative directions at once: one model evaluation
/// gives that many columns of a Jacobian (design.md: "vector duals for many directions").
pub type Lanes = num_dual::DualSVec64<LANES>;
/// Directions carried by one [`Lanes`] pass: 10, so that the five-bar's 20 VJP input
/// directions take 2 passes and its 10 solution directions one (the ball's 7 take one).
/// (Chosen for the five-bar; lane count does not change any result.)
pub const LANES: usize = 10;

impl<const N: usize> Scalar for num_dual::DualSVec64<N> {}

/// Up to this many input directions the default VJP takes one scalar-dual pass per
/// direction, beyond it vector-dual passes. Measured (2026-12-02, one VJP): the ball (7
/// directions) 0.19 µs scalar vs 0.26 µs vector; the five-bar through the dual default (20
/// directions) 68.6 µs scalar vs 25.9 µs vector.
pub const SCALAR_DUAL_DIRECTIONS: usize = 8;

/// `v` as a [`Lanes`] number with derivative direction `lane` seeded (none: a constant).
#[inline]
pub fn lane_seed(v: f64, lane: Option<usize>) -> Lanes {
    match lane {
        Some(l) => Lanes::from_re(v).derivative(l),
        None => Lanes::from_re(v),
    }
}

/// The derivative part of `x` in direction `lane`.
#[inline]
pub fn lane_eps(x: &Lanes, lane: usize) -> f64 {
    x.eps.0.as_ref().map_or(0.0, |m| m[lane])
}

/// Lifts an `f64` into the scalar type.
#[inline]
pub fn c<D: Scalar>(v: f64) -> D {
    D::from(v)
}

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
/// let t1 = Objective::new("t1", vec![Term::EventTime { guard: EventGuard::Guard(0), occurrence: 1, weight: 1.0 }]);
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
        &self,
        mode: usize,
        t: D,
        x: &[D],
        u: &[D],
        p: &[D],
        dx: &mut [D],
    ) -> Result<(), ModelError>;
    /// The guard function `g_{m,k}(t, x, u, p)`.
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D;
    /// The reset `x⁺ = R_{m,k}(t, x⁻, p)` and the next mode. Identity by default (a pure
    /// mode switch that keeps the mode).
    fn reset<D: Scalar>(
        &self,
        mode: usize,
        _k: usize,
        _t: D,
        x: &[D],
        _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((mode, x.to_vec()))
    }
    /// The outputs `y = h_m(t, x, u, p)`, written into `out`.
    fn outputs<D: Scalar>(
        &self,
        mode: usize,
        t: D,
        x: &[D],
        u: &[D],
        p: &[D],
        out: &mut [D],
    ) -> Result<(), ModelError>;

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

/// The outputs' cotangents ȳ of a [`HybridSystem::flow_vjp`] (k×ny, row-major).
#[derive(Clone, Copy)]
pub enum OutputCotangent<'a> {
    /// No output is weighted.
    None,
    /// Given values.
    Given(&'a [f64]),
    /// Computed from the outputs' values y at the point, `f(y, ȳ)`: the hook evaluates y
    /// together with the flow (one evaluation, e.g. one saddle-point solve, for both) and
    /// writes it to [`VjpOut::y`].
    At(&'a dyn Fn(&[f64], &mut [f64])),
}

impl OutputCotangent<'_> {
    /// ȳ as a slice: given, or computed from `y` into `buf`; empty when `None`.
    pub fn resolve<'b>(&'b self, y: &[f64], k: usize, buf: &'b mut Vec<f64>) -> &'b [f64] {
        match self {
            OutputCotangent::None => &[],
            OutputCotangent::Given(v) => v,
            OutputCotangent::At(f) => {
                buf.clear();
                buf.resize(k * y.len(), 0.0);
                f(y, buf);
                buf
            }
        }
    }
    /// Whether the outputs enter at all.
    pub fn is_some(&self) -> bool {
        !matches!(self, OutputCotangent::None)
    }
}

/// The point and the cotangents of [`HybridSystem::flow_vjp`].
#[derive(Clone, Copy)]
pub struct VjpArgs<'a> {
    pub mode: usize,
    pub t: f64,
    pub x: &'a [f64],
    pub u: &'a [f64],
    pub p: &'a [f64],
    /// Number of cotangent pairs k.
    pub k: usize,
    /// k×nx cotangents of the flow.
    pub lam: &'a [f64],
    /// The cotangents of the outputs.
    pub ybar: OutputCotangent<'a>,
}

/// Where [`HybridSystem::flow_vjp`] writes (each overwritten, row-major by cotangent).
#[derive(Debug)]
pub struct VjpOut<'a> {
    /// k×nx
    pub gx: &'a mut [f64],
    /// k×nu
    pub gu: &'a mut [f64],
    /// k×np
    pub gp: &'a mut [f64],
    /// The outputs' values y (ny), written when [`VjpArgs::ybar`] is
    /// [`OutputCotangent::At`]; may be empty otherwise.
    pub y: &'a mut [f64],
}

/// ȳ of a dual-pass VJP: given, or computed from the outputs at the point (evaluated here
/// in `f64` and written to `y`).
fn output_cotangents<'b, S: HybridSystem + ?Sized>(
    sys: &S,
    a: &'b VjpArgs<'_>,
    y: &mut [f64],
    buf: &'b mut Vec<f64>,
) -> Result<&'b [f64], ModelError> {
    if let OutputCotangent::At(_) = a.ybar {
        sys.outputs(a.mode, a.t, a.x, a.u, a.p, y)?;
    }
    Ok(a.ybar.resolve(y, a.k, buf))
}

/// [`vjp_by_dual_passes`] with one direction per pass in scalar duals ([`Dual64`]): the
/// same numbers; cheaper than vector duals for small models, where a vector dual's
/// per-operation overhead dominates (see [`SCALAR_DUAL_DIRECTIONS`]).
pub fn vjp_by_scalar_duals<S: HybridSystem + ?Sized>(
    sys: &S,
    a: VjpArgs<'_>,
    out: VjpOut<'_>,
) -> Result<(), ModelError> {
    SCALAR_PASS.with(|cell| {
        let mut b = cell.borrow_mut();
        let ScalarPassBuffers {
            xd,
            ud,
            pd,
            f,
            y,
            ybar,
        } = &mut *b;
        let ybar = output_cotangents(sys, &a, out.y, ybar)?;
        let ny = ybar.len() / a.k.max(1);
        let with_y = a.ybar.is_some();
        scalar_passes(sys, &a, ybar, ny, with_y, (xd, ud, pd, f, y), out)
    })
}

/// Buffers of [`vjp_by_scalar_duals`], kept per thread so that the adjoint's inner loop
/// does not allocate once they have grown.
#[derive(Default)]
struct ScalarPassBuffers {
    xd: Vec<Dual64>,
    ud: Vec<Dual64>,
    pd: Vec<Dual64>,
    f: Vec<Dual64>,
    y: Vec<Dual64>,
    ybar: Vec<f64>,
}

thread_local! {
    static SCALAR_PASS: std::cell::RefCell<ScalarPassBuffers> = Default::default();
}

type DualBuffers<'b> = (
    &'b mut Vec<Dual64>,
    &'b mut Vec<Dual64>,
    &'b mut Vec<Dual64>,
    &'b mut Vec<Dual64>,
    &'b mut Vec<Dual64>,
);

/// The passes of [`vjp_by_scalar_duals`] on reused buffers.
fn scalar_passes<S: HybridSystem + ?Sized>(
    sys: &S,
    a: &VjpArgs<'_>,
    ybar: &[f64],
    ny: usize,
    with_y: bool,
    (xd, ud, pd, f, y): DualBuffers<'_>,
    out: VjpOut<'_>,
) -> Result<(), ModelError> {
    let (nx, nu, np) = (a.x.len(), a.u.len(), a.p.len());
    let lift = |dst: &mut Vec<Dual64>, v: &[f64]| {
        dst.clear();
        dst.extend(v.iter().map(|&r| Dual64::from(r)));
    };
    lift(xd, a.x);
    lift(ud, a.u);
    lift(pd, a.p);
    f.clear();
    f.resize(nx, Dual64::from(0.0));
    y.clear();
    y.resize(ny, Dual64::from(0.0));
    let td = Dual64::from(a.t);
    for d in 0..nx + nu + np {
        let seed = |xd: &mut [Dual64], ud: &mut [Dual64], pd: &mut [Dual64], e: f64| {
            if d < nx {
                xd[d].eps = e
            } else if d < nx + nu {
                ud[d - nx].eps = e
            } else {
                pd[d - nx - nu].eps = e
            }
        };
        seed(xd, ud, pd, 1.0);
        let r = sys.flow(a.mode, td, xd, ud, pd, f).and_then(|_| {
            if with_y {
                sys.outputs(a.mode, td, xd, ud, pd, y)
            } else {
                Ok(())
            }
        });
        seed(xd, ud, pd, 0.0);
        r?;
        for j in 0..a.k {
            let mut s: f64 = a.lam[j * nx..(j + 1) * nx]
                .iter()
                .zip(f.iter())
                .map(|(l, fv)| l * fv.eps)
                .sum();
            if with_y {
                s += ybar[j * ny..(j + 1) * ny]
                    .iter()
                    .zip(y.iter())
                    .map(|(b, yv)| b * yv.eps)
                    .sum::<f64>();
            }
            if d < nx {
                out.gx[j * nx + d] = s;
            } else if d < nx + nu {
                out.gu[j * nu + d - nx] = s;
            } else {
                out.gp[j * np + d - nx - nu] = s;
            }
        }
    }
    Ok(())
}

/// The exact vector–Jacobian products of [`HybridSystem::flow_vjp`] by forward-mode dual
/// numbers: the input directions e_i ∈ {x, u, p} go through `f` (and `h`, when `ȳ` is
/// given) [`LANES`] at a time in vector duals; each pass yields those columns `(f_i, h_i)`
/// and every cotangent's entries `λ_j·f_i + ȳ_j·h_i` at once, so k cotangents cost the
/// same passes as one.
pub fn vjp_by_dual_passes<S: HybridSystem + ?Sized>(
    sys: &S,
    a: VjpArgs<'_>,
    out: VjpOut<'_>,
) -> Result<(), ModelError> {
    let (nx, nu, np) = (a.x.len(), a.u.len(), a.p.len());
    let with_y = a.ybar.is_some();
    let mut buf = Vec::new();
    let ybar = output_cotangents(sys, &a, out.y, &mut buf)?;
    let ny = ybar.len() / a.k.max(1);
    let ndir = nx + nu + np;
    let td = Lanes::from_re(a.t);
    let mut f = vec![Lanes::from_re(0.0); nx];
    let mut y = vec![Lanes::from_re(0.0); ny];
    for first in (0..ndir).step_by(LANES) {
        // direction d = first + lane: x, then u, then p
        let lane_of = |d: usize| (d >= first && d < first + LANES).then(|| d - first);
        let xd: Vec<Lanes> = (0..nx).map(|i| lane_seed(a.x[i], lane_of(i))).collect();
        let ud: Vec<Lanes> = (0..nu)
            .map(|i| lane_seed(a.u[i], lane_of(nx + i)))
            .collect();
        let pd: Vec<Lanes> = (0..np)
            .map(|i| lane_seed(a.p[i], lane_of(nx + nu + i)))
            .collect();
        f.iter_mut().for_each(|v| *v = Lanes::from_re(0.0));
        sys.flow(a.mode, td, &xd, &ud, &pd, &mut f)?;
        if with_y {
            sys.outputs(a.mode, td, &xd, &ud, &pd, &mut y)?;
        }
        for d in first..(first + LANES).min(ndir) {
            let l = d - first;
            for j in 0..a.k {
                let mut s = 0.0;
                for (lv, fv) in a.lam[j * nx..(j + 1) * nx].iter().zip(&f) {
                    s += lv * lane_eps(fv, l);
                }
                if with_y {
                    for (b, yv) in ybar[j * ny..(j + 1) * ny].iter().zip(&y) {
                        s += b * lane_eps(yv, l);
                    }
                }
                if d < nx {
                    out.gx[j * nx + d] = s;
                } else if d < nx + nu {
                    out.gu[j * nu + d - nx] = s;
                } else {
                    out.gp[j * np + d - nx - nu] = s;
                }
            }
        }
    }
    Ok(())
}

/// What a system is called: the names of its states, parameters, controls, modes, guards
/// and outputs, and its parameters' default values ([`HybridSystem::dims`]). The lengths
/// are the system's sizes; the names are what problem files, cost terms, tables and plots
/// refer to.
///
/// Write it in one expression: [`Dims::new`] with the states and the parameters, then
/// what the system has besides (one mode `"default"`, no controls, guards, outputs or
/// defaults unless given):
///
/// ```
/// use hybridopt::prelude::*;
///
/// let d = Dims::new(["y", "v"], ["g", "e", "y0"])
///     .guards([GuardInfo::new("ground", Direction::Falling)])
///     .outputs(["y"]);
/// assert_eq!((d.nx(), d.np(), d.nu()), (2, 3, 0));
/// assert_eq!(d.modes, ["default"]);
/// ```
///
/// A wrapper system edits its inner system's: `let mut d = inner.dims(); d.guards.push(…); d`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dims {
    /// Names of the states `x`, in state order.
    pub states: Vec<String>,
    /// Names of the parameters `p`, in parameter order.
    pub params: Vec<String>,
    /// The parameters' default values in [`Dims::params`] order, when the system has them
    /// (none by default): what an entry of θ left out of an optimization takes
    /// ([`crate::setup::Setup::resolve_theta`]).
    pub param_defaults: Option<Vec<f64>>,
    /// Names of the time-varying controls `u` (none by default).
    pub controls: Vec<String>,
    /// Names of the modes (one, `"default"`, by default).
    pub modes: Vec<String>,
    /// All guards of all modes, indexed by `k`; [`HybridSystem::guard_active`] says which
    /// are live in a mode.
    pub guards: Vec<GuardInfo>,
    /// Names of the outputs `y` (the quantities that cost terms and plots refer to).
    pub outputs: Vec<String>,
}

/// A list of names for [`Dims`]: an array or a slice of `&str` (`["y", "v"]`, and `[]` for
/// none), or a `Vec<String>` (names made at run time).
pub trait Names {
    /// The names as owned strings.
    fn into_names(self) -> Vec<String>;
}

impl<const N: usize> Names for [&str; N] {
    fn into_names(self) -> Vec<String> {
        self.map(String::from).into()
    }
}

impl Names for &[&str] {
    fn into_names(self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}

impl Names for Vec<String> {
    fn into_names(self) -> Vec<String> {
        self
    }
}

impl Dims {
    /// A system with these states and parameters, one mode `"default"`, and no controls,
    /// guards, outputs or parameter defaults (add them with the methods below).
    pub fn new(states: impl Names, params: impl Names) -> Self {
        Dims {
            states: states.into_names(),
            params: params.into_names(),
            param_defaults: None,
            controls: Vec::new(),
            modes: vec!["default".to_string()],
            guards: Vec::new(),
            outputs: Vec::new(),
        }
    }
    /// With these guards (all modes' guards, indexed by `k`).
    pub fn guards(mut self, guards: impl IntoIterator<Item = GuardInfo>) -> Self {
        self.guards = guards.into_iter().collect();
        self
    }
    /// With these outputs.
    pub fn outputs(mut self, outputs: impl Names) -> Self {
        self.outputs = outputs.into_names();
        self
    }
    /// With these modes (in place of the one `"default"`).
    pub fn modes(mut self, modes: impl Names) -> Self {
        self.modes = modes.into_names();
        self
    }
    /// With these control channels.
    pub fn controls(mut self, controls: impl Names) -> Self {
        self.controls = controls.into_names();
        self
    }
    /// With these parameter defaults (in parameter order).
    pub fn param_defaults(mut self, values: impl Into<Vec<f64>>) -> Self {
        self.param_defaults = Some(values.into());
        self
    }
    /// The number of states.
    pub fn nx(&self) -> usize {
        self.states.len()
    }
    /// The number of parameters.
    pub fn np(&self) -> usize {
        self.params.len()
    }
    /// The number of controls.
    pub fn nu(&self) -> usize {
        self.controls.len()
    }
    /// The name of mode `m` (`#m` when it has none).
    pub fn mode_name(&self, m: usize) -> String {
        self.modes
            .get(m)
            .cloned()
            .unwrap_or_else(|| format!("#{m}"))
    }
    /// The name of guard `k` (`#k` when it has none).
    pub fn guard_name(&self, k: usize) -> String {
        self.guards
            .get(k)
            .map(|g| g.name.clone())
            .unwrap_or_else(|| format!("#{k}"))
    }
    /// The index of the output `name`.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.outputs.iter().position(|o| o == name)
    }
    /// The index of the parameter `name`.
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|o| o == name)
    }
}

/// Where the inputs of a model function sit in one flat seed vector `(t, x, u, p)`.
#[derive(Debug, Clone, Copy)]
struct Layout {
    nx: usize,
    nu: usize,
    np: usize,
}

impl Layout {
    fn n(&self) -> usize {
        1 + self.nx + self.nu + self.np
    }
    /// Seeds derivative direction `j` into dual inputs that already hold the values:
    /// every ε part is set (1 in direction j, else 0), so the buffers are reused across
    /// passes. Returns the dual time.
    fn seed_into(
        &self,
        j: usize,
        t: f64,
        x: &mut [Dual64],
        u: &mut [Dual64],
        p: &mut [Dual64],
    ) -> Dual64 {
        let e = |i: usize| if i == j { 1.0 } else { 0.0 };
        for (i, v) in x.iter_mut().enumerate() {
            v.eps = e(1 + i);
        }
        for (i, v) in u.iter_mut().enumerate() {
            v.eps = e(1 + self.nx + i);
        }
        for (i, v) in p.iter_mut().enumerate() {
            v.eps = e(1 + self.nx + self.nu + i);
        }
        Dual64::new(t, e(0))
    }
}

/// A vector-valued function's value and its Jacobian split by argument.
#[derive(Debug, Clone)]
pub struct Jacobian {
    pub value: DVector<f64>,
    pub t: DVector<f64>,
    pub x: DMatrix<f64>,
    pub u: DMatrix<f64>,
    pub p: DMatrix<f64>,
}

/// Differentiates a model function `F(t, x, u, p) ∈ R^m` exactly with forward-mode dual
/// numbers (one pass per input direction).
pub fn jacobian_of<F>(
    m: usize,
    t: f64,
    x: &[f64],
    u: &[f64],
    p: &[f64],
    f: F,
) -> Result<Jacobian, ModelError>
where
    F: Fn(Dual64, &[Dual64], &[Dual64], &[Dual64], &mut [Dual64]) -> Result<(), ModelError>,
{
    let lay = Layout {
        nx: x.len(),
        nu: u.len(),
        np: p.len(),
    };
    let mut full = DMatrix::zeros(m, lay.n());
    let mut value = DVector::zeros(m);
    let mut out = vec![Dual64::from(0.0); m];
    // one set of dual inputs, re-seeded per direction (no allocation per pass)
    let lift = |v: &[f64]| v.iter().map(|&a| Dual64::from(a)).collect::<Vec<_>>();
    let (mut xd, mut ud, mut pd) = (lift(x), lift(u), lift(p));
    for j in 0..lay.n() {
        let td = lay.seed_into(j, t, &mut xd, &mut ud, &mut pd);
        out.iter_mut().for_each(|o| *o = Dual64::from(0.0));
        f(td, &xd, &ud, &pd, &mut out)?;
        for i in 0..m {
            full[(i, j)] = out[i].eps;
            if j == 0 {
                value[i] = out[i].re;
            }
        }
    }
    if lay.n() == 0 {
        let td = Dual64::from(t);
        f(td, &xd, &ud, &pd, &mut out)?;
        for i in 0..m {
            value[i] = out[i].re;
        }
    }
    Ok(Jacobian {
        value,
        t: full.column(0).into_owned(),
        x: full.columns(1, lay.nx).into_owned(),
        u: full.columns(1 + lay.nx, lay.nu).into_owned(),
        p: full.columns(1 + lay.nx + lay.nu, lay.np).into_owned(),
    })
}

/// A model function `F(t, x, u, p) ∈ R^m` that can be evaluated in any scalar, so that
/// [`jacobian_once`] can take all of its derivative directions in one vector-dual pass.
pub trait ScalarFn {
    fn call<D: Scalar>(
        &self,
        t: D,
        x: &[D],
        u: &[D],
        p: &[D],
        out: &mut [D],
    ) -> Result<(), ModelError>;
}

/// [`jacobian_of`] in one [`Lanes`] pass when the `1 + nx + nu + np` input directions fit
/// in [`LANES`] (the event tape's guard and reset Jacobians: one model evaluation and one
/// allocation instead of one of each per direction); otherwise one dual pass per
/// direction. The derivatives are exact either way.
pub fn jacobian_once<F: ScalarFn>(
    m: usize,
    t: f64,
    x: &[f64],
    u: &[f64],
    p: &[f64],
    f: &F,
) -> Result<Jacobian, ModelError> {
    let lay = Layout {
        nx: x.len(),
        nu: u.len(),
        np: p.len(),
    };
    let n = lay.n();
    if n > LANES {
        return jacobian_of(m, t, x, u, p, |t, x, u, p, out| f.call(t, x, u, p, out));
    }
    // lane 0: t, then x, u, p in order (the columns of `jacobian_of`); the seeds and the
    // outputs in one scratch (on the stack for small systems)
    crate::scratch::with_scratch(n - 1 + m, |buf: &mut [Lanes]| {
        for (i, (d, &a)) in buf.iter_mut().zip(x.iter().chain(u).chain(p)).enumerate() {
            *d = lane_seed(a, Some(1 + i));
        }
        let (xd, rest) = buf.split_at_mut(lay.nx);
        let (ud, rest) = rest.split_at_mut(lay.nu);
        let (pd, out) = rest.split_at_mut(lay.np);
        f.call(lane_seed(t, Some(0)), xd, ud, pd, out)?;
        let col = |i: usize, j: usize| lane_eps(&out[i], j);
        Ok(Jacobian {
            value: DVector::from_iterator(m, out.iter().map(|o| o.re)),
            t: DVector::from_fn(m, |i, _| col(i, 0)),
            x: DMatrix::from_fn(m, lay.nx, |i, j| col(i, 1 + j)),
            u: DMatrix::from_fn(m, lay.nu, |i, j| col(i, 1 + lay.nx + j)),
            p: DMatrix::from_fn(m, lay.np, |i, j| col(i, 1 + lay.nx + lay.nu + j)),
        })
    })
}

/// `f_m` and its Jacobians `f_t, f_x, f_u, f_p`.
pub fn flow_jacobian<S: HybridSystem + ?Sized>(
    sys: &S,
    nx: usize,
    mode: usize,
    t: f64,
    x: &[f64],
    u: &[f64],
    p: &[f64],
) -> Result<Jacobian, ModelError> {
    jacobian_of(nx, t, x, u, p, |t, x, u, p, out| {
        sys.flow(mode, t, x, u, p, out)
    })
}

/// `g_{m,k}` and its gradients `g_t, g_x, g_u, g_p` (each a 1-row Jacobian).
pub fn guard_jacobian<S: HybridSystem + ?Sized>(
    sys: &S,
    mode: usize,
    k: usize,
    t: f64,
    x: &[f64],
    u: &[f64],
    p: &[f64],
) -> Result<Jacobian, ModelError> {
    jacobian_of(1, t, x, u, p, |t, x, u, p, out| {
        out[0] = sys.guard(mode, k, t, x, u, p);
        Ok(())
    })
}

/// `R_{m,k}` with its Jacobians `R_t, R_x, R_p` (the `u` block is empty), and the next mode.
pub fn reset_jacobian<S: HybridSystem + ?Sized>(
    sys: &S,
    nx: usize,
    mode: usize,
    k: usize,
    t: f64,
    x: &[f64],
    p: &[f64],
) -> Result<(usize, Jacobian), ModelError> {
    /// The reset as a [`ScalarFn`] (no control argument), remembering the mode after.
    struct ResetFn<'s, S: ?Sized> {
        sys: &'s S,
        mode: usize,
        k: usize,
        next: std::cell::Cell<usize>,
    }
    impl<S: HybridSystem + ?Sized> ScalarFn for ResetFn<'_, S> {
        fn call<D: Scalar>(
            &self,
            t: D,
            x: &[D],
            _u: &[D],
            p: &[D],
            out: &mut [D],
        ) -> Result<(), ModelError> {
            let (next, xp) = self.sys.reset(self.mode, self.k, t, x, p)?;
            if xp.len() != out.len() {
                return Err(ModelError::SizeMismatch {
                    what: format!("reset of guard {}", self.k),
                    expected: format!("{} values (one per state)", out.len()),
                    found: xp.len().to_string(),
                });
            }
            out.copy_from_slice(&xp);
            self.next.set(next);
            Ok(())
        }
    }
    let f = ResetFn {
        sys,
        mode,
        k,
        next: std::cell::Cell::new(mode),
    };
    let jac = jacobian_once(nx, t, x, &[], p, &f)?;
    Ok((f.next.get(), jac))
}

/// The outputs and their Jacobians.
pub fn outputs_jacobian<S: HybridSystem + ?Sized>(
    sys: &S,
    ny: usize,
    mode: usize,
    t: f64,
    x: &[f64],
    u: &[f64],
    p: &[f64],
) -> Result<Jacobian, ModelError> {
    jacobian_of(ny, t, x, u, p, |t, x, u, p, out| {
        sys.outputs(mode, t, x, u, p, out)
    })
}

/// `x0(p)` and `dx0/dp`.
pub fn initial_jacobian<S: HybridSystem + ?Sized>(
    sys: &S,
    nx: usize,
    p: &[f64],
) -> Result<(DVector<f64>, DMatrix<f64>), ModelError> {
    let jac = jacobian_of(nx, 0.0, &[], &[], p, |_t, _x, _u, p, out| {
        let x0 = sys.initial_state(p)?;
        out.copy_from_slice(&x0);
        Ok(())
    })?;
    Ok((jac.value, jac.p))
}
