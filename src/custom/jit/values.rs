//! The values function of a program: `out[i] = e_i(t, x, u, p)` for its expressions in
//! order, one straight block.

use super::super::expr::Expr;
use super::emit::{flags, offset, Frame};
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Emits the function: [`body`], then return.
pub(super) fn emit(b: &mut FunctionBuilder, frame: &mut Frame, exprs: &[Expr], out: Value) {
    body(b, frame, exprs, out);
    b.ins().return_(&[]);
}

/// Emits the values into the current block; `out` is the output array's pointer.
pub(super) fn body(b: &mut FunctionBuilder, frame: &mut Frame, exprs: &[Expr], out: Value) {
    for (i, e) in exprs.iter().enumerate() {
        let v = frame.values(b, e);
        // an empty arena never comes from the parser; it reads as NaN (Expr::eval)
        let value = match v.last() {
            Some(&r) => r,
            None => b.ins().f64const(f64::NAN),
        };
        b.ins().store(flags(), value, out, offset(i as u32));
    }
}
