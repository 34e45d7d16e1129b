//! Custom systems' expression programs compiled to machine code when the system is built
//! (Cranelift), for their real (`f64`) evaluations: each program's values, and per mode
//! the flow with the outputs and the whole vector–Jacobian product, the forward run's and
//! the adjoint's inner loops. Dual numbers
//! (the Jacobians, the direct method's columns) stay with the interpreter
//! (`super::program`), which is also the witness.
//!
//! The compiled code performs the interpreter's operations in the interpreter's order:
//! `+ − × ÷` and negation as IEEE 754 instructions (Cranelift contracts no `a·b + c` into
//! a fused multiply–add and reassociates nothing), integer powers by the same repeated
//! squaring, and everything else — functions, non-integer powers, comparisons, logic,
//! `if`, `min`/`max` and their partials — by calls of the interpreter's own Rust functions
//! (`helpers`). Hence the same bits, not merely values within an ulp: tests/jit.rs checks
//! values and products bit for bit on every shipped custom problem and on every node kind.
//!
//! The layout: `compiler` builds one module per system, `emit` holds what the function
//! bodies share, `values` and `vjp` are the bodies, `mode` the per-mode functions made of
//! them, `helpers` the functions they call, `code` the memory they live in.

mod code;
mod compiler;
mod emit;
mod helpers;
mod mode;
mod values;
mod vjp;

pub use compiler::Compiler;
pub use mode::Dims;

use crate::model::OutputCotangent;

use super::expr::{Expr, Node};
use code::Code;
use std::sync::Arc;

/// `(t, x, u, p, out)`.
type ValuesFn = unsafe extern "C" fn(f64, *const f64, *const f64, *const f64, *mut f64);

/// `(t, x, u, p, λ, gx, gu, gp, y, ȳ, ctx)` (`mode`).
type ModeFn = unsafe extern "C" fn(
    f64,
    *const f64,
    *const f64,
    *const f64,
    *const f64,
    *mut f64,
    *mut f64,
    *mut f64,
    *mut f64,
    *mut f64,
    *const u8,
);

/// `(t, x, u, p, dx, y)` (`mode`).
type ModeValuesFn =
    unsafe extern "C" fn(f64, *const f64, *const f64, *const f64, *mut f64, *mut f64);

/// How long each array a program's code reads or writes must be: one past the largest
/// state, control and parameter index it names, and its expression count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    x: usize,
    u: usize,
    p: usize,
    n: usize,
}

impl Needs {
    fn of(exprs: &[Expr]) -> Needs {
        let mut needs = Needs {
            x: 0,
            u: 0,
            p: 0,
            n: exprs.len(),
        };
        for node in exprs.iter().flat_map(|e| e.nodes()) {
            match *node {
                Node::State(k) => needs.x = needs.x.max(k as usize + 1),
                Node::Control(k) => needs.u = needs.u.max(k as usize + 1),
                Node::Param(k) => needs.p = needs.p.max(k as usize + 1),
                _ => {}
            }
        }
        needs
    }
}

/// A program's machine code: its values.
#[derive(Clone)]
pub struct Compiled {
    values: ValuesFn,
    needs: Needs,
    /// Keeps the code alive (shared by the system's programs).
    _code: Arc<Code>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("needs", &self.needs)
            .finish()
    }
}

impl Compiled {
    fn new(values: ValuesFn, needs: Needs, code: Arc<Code>) -> Compiled {
        Compiled {
            values,
            needs,
            _code: code,
        }
    }

    /// `out[i] = e_i(t, x, u, p)`; `false` (nothing written) where an array is shorter
    /// than the code reads or writes — the interpreter then reports it as it would.
    #[inline]
    pub fn values(&self, t: f64, x: &[f64], u: &[f64], p: &[f64], out: &mut [f64]) -> bool {
        let n = self.needs;
        if x.len() < n.x || u.len() < n.u || p.len() < n.p || out.len() < n.n {
            return false;
        }
        // SAFETY: the code reads x[..n.x], u[..n.u], p[..n.p] and writes out[..n.n]
        // (`Needs::of`), all in bounds as just checked.
        unsafe { (self.values)(t, x.as_ptr(), u.as_ptr(), p.as_ptr(), out.as_mut_ptr()) };
        true
    }
}

/// Output cotangents up to this many live on the stack in [`ModeCode::product`].
const YBAR_STACK: usize = 32;

/// A mode's flow and outputs at once, and its whole product for one cotangent (`mode`).
#[derive(Clone)]
pub struct ModeCode {
    f: ModeFn,
    values: ModeValuesFn,
    flows: Needs,
    outputs: Needs,
    dims: Dims,
    _code: Arc<Code>,
}

impl std::fmt::Debug for ModeCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModeCode")
            .field("dims", &self.dims)
            .finish()
    }
}

impl ModeCode {
    fn new(
        f: ModeFn, values: ModeValuesFn, flows: Needs, outputs: Needs, dims: Dims, code: Arc<Code>,
    ) -> ModeCode {
        ModeCode {
            f,
            values,
            flows,
            outputs,
            dims,
            _code: code,
        }
    }

    /// `dx = f(t, x, u, p)`, `y = h(t, x, u, p)`; `false` (nothing written) where an array
    /// is too short.
    #[inline]
    pub fn flow_outputs(
        &self, t: f64, x: &[f64], u: &[f64], p: &[f64], dx: &mut [f64], y: &mut [f64],
    ) -> bool {
        let (f, h) = (self.flows, self.outputs);
        if x.len() < f.x.max(h.x)
            || u.len() < f.u.max(h.u)
            || p.len() < f.p.max(h.p)
            || dx.len() < f.n
            || y.len() < h.n
        {
            return false;
        }
        // SAFETY: the code reads x, u, p up to the needs of both lists and writes dx[..f.n]
        // and y[..h.n], all in bounds as just checked.
        unsafe {
            (self.values)(
                t,
                x.as_ptr(),
                u.as_ptr(),
                p.as_ptr(),
                dx.as_mut_ptr(),
                y.as_mut_ptr(),
            )
        };
        true
    }

    /// `gx = f_xᵀ λ + h_xᵀ ȳ` (and `gu`, `gp`) at `(t, x, u, p)`, with `y` written when
    /// `ȳ` is computed from it; `false` (nothing written) where an array is too short or
    /// there are more outputs than [`YBAR_STACK`].
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn product(
        &self, t: f64, x: &[f64], u: &[f64], p: &[f64], lam: &[f64], ybar: OutputCotangent<'_>,
        gx: &mut [f64], gu: &mut [f64], gp: &mut [f64], y: &mut [f64],
    ) -> bool {
        let (f, h, d) = (self.flows, self.outputs, self.dims);
        let short = x.len() < f.x.max(h.x)
            || u.len() < f.u.max(h.u)
            || p.len() < f.p.max(h.p)
            || lam.len() < f.n
            || gx.len() < d.nx.max(f.x).max(h.x)
            || gu.len() < d.nu.max(f.u).max(h.u)
            || gp.len() < d.np.max(f.p).max(h.p)
            || d.ny > YBAR_STACK;
        if short {
            return false;
        }
        let mut stack = [0.0; YBAR_STACK];
        let hook: &dyn Fn(&[f64], &mut [f64]);
        let (ybar_ptr, ctx): (*mut f64, *const u8) = match ybar {
            OutputCotangent::None => (std::ptr::null_mut(), std::ptr::null()),
            OutputCotangent::Given(v) => {
                if v.len() < h.n {
                    return false;
                }
                (v.as_ptr() as *mut f64, std::ptr::null())
            }
            OutputCotangent::At(g) => {
                // the hook sees y as the interpreter's path gives it: exactly the outputs
                if y.len() != h.n {
                    return false;
                }
                hook = g;
                (
                    stack.as_mut_ptr(),
                    &hook as *const &dyn Fn(&[f64], &mut [f64]) as *const u8,
                )
            }
        };
        // SAFETY: every array is as long as the code reads or writes (checked above; ȳ on
        // the stack holds `ny` ≤ YBAR_STACK zeros for the hook, a given ȳ is only read),
        // and `ctx` points to `hook`, live for the call (`helpers::output_hook`).
        unsafe {
            (self.f)(
                t,
                x.as_ptr(),
                u.as_ptr(),
                p.as_ptr(),
                lam.as_ptr(),
                gx.as_mut_ptr(),
                gu.as_mut_ptr(),
                gp.as_mut_ptr(),
                y.as_mut_ptr(),
                ybar_ptr,
                ctx,
            )
        };
        true
    }
}
