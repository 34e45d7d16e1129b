//! The Rust functions the compiled code calls (the host's C convention) for every
//! operation but `+ − × ÷`, negation and integer powers: the interpreter's own code on
//! `f64` ([`Expr::apply`] for values, `partial1`/`partial2` of `super::super::reverse` for
//! the local partials), hence the same function and the same bits.
//!
//! A call passes the node by address, its operands renumbered 0, 1, 2 in the order of the
//! node's fields (`Node::map_ids`), and the operands' values in that order. The nodes live
//! in the compiled code's own table (`super::code::Code`), as long as the code does.

use super::super::expr::{Expr, Id, Node};
use super::super::reverse::{partial1, partial2};

/// The value of `node` from its operands' values `a, b, c`: `Expr::apply` on `f64`.
///
/// # Safety
/// `node` points to a live [`Node`] (the compiled code's table).
pub(super) unsafe extern "C" fn apply(node: *const Node, a: f64, b: f64, c: f64) -> f64 {
    // SAFETY: the caller's contract
    let node = unsafe { *node };
    let v = [a, b, c];
    Expr::apply(node, &|k: Id| v[k as usize])
}

/// `∂node/∂(first operand)` at operands `a, b` where the node's value is `f`: the partial
/// of a one- or two-argument function, as the interpreter's reverse sweep takes it.
///
/// # Safety
/// As [`apply`].
pub(super) unsafe extern "C" fn partial_first(node: *const Node, a: f64, b: f64, f: f64) -> f64 {
    // SAFETY: the caller's contract
    match unsafe { *node } {
        Node::Call1(g, _) => partial1(g, a, f),
        Node::Call2(g, ..) => partial2(g, a, b, f).0,
        _ => f64::NAN,
    }
}

/// `∂node/∂(second operand)` of a two-argument function (see [`partial_first`]).
///
/// # Safety
/// As [`apply`].
pub(super) unsafe extern "C" fn partial_second(node: *const Node, a: f64, b: f64, f: f64) -> f64 {
    // SAFETY: the caller's contract
    match unsafe { *node } {
        Node::Call2(g, ..) => partial2(g, a, b, f).1,
        _ => f64::NAN,
    }
}

/// The signature every helper has: `(node, f64, f64, f64) -> f64`.
pub(super) type Helper = unsafe extern "C" fn(*const Node, f64, f64, f64) -> f64;

/// The output cotangents' hook of a mode's product (`super::mode`): `ȳ = f(y, ȳ)` by the
/// caller's closure, with `ctx` the address of a `&dyn Fn(&[f64], &mut [f64])`.
///
/// # Safety
/// `ctx` points to such a reference, live for the call; `y` and `ybar` to `ny` values.
pub(super) unsafe extern "C" fn output_hook(
    ctx: *const u8, y: *const f64, ybar: *mut f64, ny: usize,
) {
    // SAFETY: the caller's contract
    unsafe {
        let f = *(ctx as *const &dyn Fn(&[f64], &mut [f64]));
        f(
            std::slice::from_raw_parts(y, ny),
            std::slice::from_raw_parts_mut(ybar, ny),
        )
    }
}
