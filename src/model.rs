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
    /// The first derivative part (0 for `f64`): lets the integrators control the error of
    /// a dual run's derivative as well as its value.
    fn eps_part(&self) -> f64 {
        0.0
    }
}
impl Scalar for f64 {}
impl Scalar for Dual64 {
    fn eps_part(&self) -> f64 {
        self.eps
    }
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
    pub name: String,
    pub direction: Direction,
    /// A terminal guard ends the simulation where it fires (the horizon becomes the event
    /// time, which then depends on the parameters).
    pub terminal: bool,
}

impl GuardInfo {
    pub fn new(name: &str, direction: Direction) -> Self {
        GuardInfo {
            name: name.to_string(),
            direction,
            terminal: false,
        }
    }
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
/// All functions are generic over [`Scalar`] so that the library can differentiate them
/// exactly; write them with ordinary arithmetic (`+ - * /`, `sin`, `sqrt`, `powi`, ...),
/// using [`c`] to lift constants.
pub trait HybridSystem: Sync {
    /// Names of the states `x`.
    fn state_names(&self) -> Vec<String>;
    /// Names of the parameters `p`.
    fn param_names(&self) -> Vec<String>;
    /// Names of the time-varying controls `u` (none by default).
    fn control_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// Names of the modes (one by default).
    fn mode_names(&self) -> Vec<String> {
        vec!["default".to_string()]
    }
    /// All guards of all modes; [`HybridSystem::guard_active`] says which are live in a mode.
    fn guards(&self) -> Vec<GuardInfo>;
    /// Whether guard `k` is watched in `mode` (all by default).
    fn guard_active(&self, _mode: usize, _k: usize) -> bool {
        true
    }
    /// Names of the outputs (quantities that cost terms and plots refer to).
    fn output_names(&self) -> Vec<String>;
    /// The start mode `m0(p)`.
    fn initial_mode(&self, _p: &[f64]) -> usize {
        0
    }
    /// The start state `x0(p)`.
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError>;
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
}

/// Sizes of a system, queried once.
#[derive(Debug, Clone, PartialEq)]
pub struct Dims {
    pub states: Vec<String>,
    pub params: Vec<String>,
    pub controls: Vec<String>,
    pub modes: Vec<String>,
    pub guards: Vec<GuardInfo>,
    pub outputs: Vec<String>,
}

impl Dims {
    pub fn of<S: HybridSystem + ?Sized>(sys: &S) -> Self {
        Dims {
            states: sys.state_names(),
            params: sys.param_names(),
            controls: sys.control_names(),
            modes: sys.mode_names(),
            guards: sys.guards(),
            outputs: sys.output_names(),
        }
    }
    pub fn nx(&self) -> usize {
        self.states.len()
    }
    pub fn np(&self) -> usize {
        self.params.len()
    }
    pub fn nu(&self) -> usize {
        self.controls.len()
    }
    pub fn mode_name(&self, m: usize) -> String {
        self.modes
            .get(m)
            .cloned()
            .unwrap_or_else(|| format!("#{m}"))
    }
    pub fn guard_name(&self, k: usize) -> String {
        self.guards
            .get(k)
            .map(|g| g.name.clone())
            .unwrap_or_else(|| format!("#{k}"))
    }
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.outputs.iter().position(|o| o == name)
    }
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
    /// Builds dual inputs with derivative direction `j` seeded.
    fn seed(
        &self,
        j: usize,
        t: f64,
        x: &[f64],
        u: &[f64],
        p: &[f64],
    ) -> (Dual64, Vec<Dual64>, Vec<Dual64>, Vec<Dual64>) {
        let mk = |i: usize, v: f64| Dual64::new(v, if i == j { 1.0 } else { 0.0 });
        let td = mk(0, t);
        let xd = x.iter().enumerate().map(|(i, &v)| mk(1 + i, v)).collect();
        let ud = u
            .iter()
            .enumerate()
            .map(|(i, &v)| mk(1 + self.nx + i, v))
            .collect();
        let pd = p
            .iter()
            .enumerate()
            .map(|(i, &v)| mk(1 + self.nx + self.nu + i, v))
            .collect();
        (td, xd, ud, pd)
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
    for j in 0..lay.n() {
        let (td, xd, ud, pd) = lay.seed(j, t, x, u, p);
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
        let lift = |v: &[f64]| v.iter().map(|&a| Dual64::from(a)).collect::<Vec<_>>();
        f(td, &lift(x), &lift(u), &lift(p), &mut out)?;
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
    let (next, _) = sys.reset(mode, k, t, x, p)?;
    let jac = jacobian_of(nx, t, x, &[], p, |t, x, _u, p, out| {
        let (_, xp) = sys.reset(mode, k, t, x, p)?;
        out.copy_from_slice(&xp);
        Ok(())
    })?;
    Ok((next, jac))
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
