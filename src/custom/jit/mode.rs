//! A mode's flow and outputs at one point in one function (the right-hand side of a run
//! with a running cost, `HybridSystem::flow_outputs`), and its whole vector–Jacobian
//! product for one cotangent `(λ, ȳ)` in one function, the
//! adjoint's inner loop of a custom system (`HybridSystem::flow_vjp` with k = 1):
//! `gx = f_xᵀ λ + h_xᵀ ȳ` (and `gu`, `gp`), the rows zeroed first, with `ȳ` given, absent,
//! or computed from the outputs' values `y` by the caller's hook (`helpers::output_hook`).
//! The same products as the flows' and the outputs' own functions (`super::vjp`) in the
//! same order — one call instead of three and the Rust between them.

use super::super::expr::Expr;
use super::emit::{flags, offset, Frame};
use super::{helpers, values, vjp};
use cranelift_codegen::ir::{AbiParam, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// The function's pointer parameters after `(t, x, u, p)`.
pub(super) struct Params {
    pub lam: Value,
    pub gx: Value,
    pub gu: Value,
    pub gp: Value,
    /// Where the outputs' values go (hook only).
    pub y: Value,
    /// ȳ: given, or filled by the hook; null when the outputs carry no cotangent.
    pub ybar: Value,
    /// The hook's context; null: ȳ is given.
    pub ctx: Value,
}

/// The sizes of the rows the function zeroes and of `y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    pub nx: usize,
    pub nu: usize,
    pub np: usize,
    pub ny: usize,
}

/// Emits the function (see the module doc).
pub(super) fn emit(
    b: &mut FunctionBuilder, frame: &mut Frame, flows: &[Expr], outputs: &[Expr], dims: Dims,
    q: &Params,
) {
    let zero = b.ins().f64const(0.0);
    for (g, n) in [(q.gx, dims.nx), (q.gu, dims.nu), (q.gp, dims.np)] {
        for k in 0..n {
            b.ins().store(flags(), zero, g, offset(k as u32));
        }
    }
    let flow_sinks = vjp::Sinks {
        w: q.lam,
        gx: q.gx,
        gu: q.gu,
        gp: q.gp,
    };
    vjp::body(b, frame, flows, &flow_sinks);
    let (outs, hook, products, end) = (
        b.create_block(),
        b.create_block(),
        b.create_block(),
        b.create_block(),
    );
    b.ins().brif(q.ybar, outs, &[], end, &[]);
    b.switch_to_block(outs);
    b.seal_block(outs);
    b.ins().brif(q.ctx, hook, &[], products, &[]);
    b.switch_to_block(hook);
    b.seal_block(hook);
    frame.loaded.clear();
    values::body(b, frame, outputs, q.y);
    call_hook(b, frame, q, dims.ny);
    b.ins().jump(products, &[]);
    b.switch_to_block(products);
    b.seal_block(products);
    frame.loaded.clear();
    let output_sinks = vjp::Sinks {
        w: q.ybar,
        ..flow_sinks
    };
    vjp::body(b, frame, outputs, &output_sinks);
    b.ins().jump(end, &[]);
    b.switch_to_block(end);
    b.seal_block(end);
    b.ins().return_(&[]);
}

/// `output_hook(ctx, y, ȳ, ny)`.
fn call_hook(b: &mut FunctionBuilder, frame: &Frame, q: &Params, ny: usize) {
    let mut sig = cranelift_codegen::ir::Signature::new(frame.call_conv);
    for _ in 0..4 {
        sig.params.push(AbiParam::new(frame.ptr));
    }
    let sig = b.import_signature(sig);
    let callee = b
        .ins()
        .iconst(frame.ptr, helpers::output_hook as *const () as usize as i64);
    let n = b.ins().iconst(frame.ptr, ny as i64);
    b.ins().call_indirect(sig, callee, &[q.ctx, q.y, q.ybar, n]);
}

/// Emits the flow-and-outputs function: the flows' values into `dx`, the outputs' into `y`
/// (one block: the inputs loaded once for both).
pub(super) fn emit_values(
    b: &mut FunctionBuilder, frame: &mut Frame, flows: &[Expr], outputs: &[Expr], dx: Value,
    y: Value,
) {
    values::body(b, frame, flows, dx);
    values::body(b, frame, outputs, y);
    b.ins().return_(&[]);
}
