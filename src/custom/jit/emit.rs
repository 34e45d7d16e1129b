//! The instructions shared by the values and the reverse functions: the inputs' loads,
//! integer powers, helper calls and every node's value of an expression (all branches of
//! `if`, `&&`, `||` computed, as the interpreter's tape and one-pass evaluators do).

use super::super::expr::{Expr, Id, Node};
use super::helpers::{self, Helper};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, SigRef, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilder;
use std::cell::RefCell;
use std::collections::HashMap;

/// A function's view of its inputs `(t, x, u, p)` (pointers to `f64` arrays) and what it
/// needs to call the helpers: their signature, the pointer type and the nodes' table.
pub(super) struct Frame<'n> {
    pub t: Value,
    pub x: Value,
    pub u: Value,
    pub p: Value,
    pub helper: SigRef,
    pub ptr: types::Type,
    pub call_conv: CallConv,
    #[allow(clippy::vec_box, reason = "the code holds each node's address")]
    pub nodes: &'n mut Vec<Box<Node>>,
    /// The inputs loaded so far in the current block (cleared when a block starts that
    /// the earlier ones do not dominate).
    pub loaded: HashMap<(u8, u32), Value>,
}

/// Offset of element `k` in an `f64` array.
pub(super) fn offset(k: u32) -> i32 {
    (k as i32) * 8
}

/// The loads and stores of the arrays the caller passes: aligned, in bounds (the caller
/// checks the lengths, `super::Compiled`), never trapping.
pub(super) fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

impl Frame<'_> {
    /// A leaf's value (time, an input loaded once per block, a number); `None` for an
    /// inner node.
    fn leaf(&mut self, b: &mut FunctionBuilder, node: Node) -> Option<Value> {
        let (base, kind, k) = match node {
            Node::Num(c) => return Some(b.ins().f64const(c)),
            Node::Time => return Some(self.t),
            Node::State(k) => (self.x, 0, k),
            Node::Control(k) => (self.u, 1, k),
            Node::Param(k) => (self.p, 2, k),
            _ => return None,
        };
        let v = *self
            .loaded
            .entry((kind, k))
            .or_insert_with(|| b.ins().load(types::F64, flags(), base, offset(k)));
        Some(v)
    }

    /// Every node's value of `e` in storage order: leaves as [`Self::leaf`], inner nodes
    /// as [`Self::inner`] from their children's values.
    pub(super) fn values(&mut self, b: &mut FunctionBuilder, e: &Expr) -> Vec<Value> {
        let mut v: Vec<Value> = Vec::with_capacity(e.len());
        for &node in e.nodes() {
            let value = match self.leaf(b, node) {
                Some(l) => l,
                None => self.inner(b, node, &v),
            };
            v.push(value);
        }
        v
    }

    /// An inner node's value from its children's values `v`: `+ − × ÷` and negation as
    /// instructions (IEEE 754, as Rust's `f64`), integer powers by [`powi`], the rest by a
    /// call of [`helpers::apply`].
    fn inner(&mut self, b: &mut FunctionBuilder, node: Node, v: &[Value]) -> Value {
        let at = |k: Id| v[k as usize];
        match node {
            Node::Neg(a) => b.ins().fneg(at(a)),
            Node::Add(a, c) => b.ins().fadd(at(a), at(c)),
            Node::Sub(a, c) => b.ins().fsub(at(a), at(c)),
            Node::Mul(a, c) => b.ins().fmul(at(a), at(c)),
            Node::Div(a, c) => b.ins().fdiv(at(a), at(c)),
            Node::PowI(a, n) => powi(b, at(a), n),
            other => {
                let operands = RefCell::new(Vec::with_capacity(3));
                let local = other.map_ids(|k| {
                    let mut ops = operands.borrow_mut();
                    ops.push(at(k));
                    (ops.len() - 1) as Id
                });
                let ops = operands.into_inner();
                self.call(b, helpers::apply, local, &ops)
            }
        }
    }

    /// A call of `helper` with `node` (kept in the table) and up to three operand values
    /// (the missing ones NaN).
    pub(super) fn call(
        &mut self, b: &mut FunctionBuilder, helper: Helper, node: Node, operands: &[Value],
    ) -> Value {
        let boxed = Box::new(node);
        let address = &*boxed as *const Node as usize as i64;
        self.nodes.push(boxed);
        let node_arg = b.ins().iconst(self.ptr, address);
        let mut args = vec![node_arg];
        for k in 0..3 {
            args.push(match operands.get(k) {
                Some(&o) => o,
                None => b.ins().f64const(f64::NAN),
            });
        }
        let callee = b.ins().iconst(self.ptr, helper as usize as i64);
        let call = b.ins().call_indirect(self.helper, callee, &args);
        b.inst_results(call)[0]
    }
}

/// `a^n` by repeated squaring, then `1/a^|n|` for n < 0: the multiplications of the
/// interpreter's `powi` in the same order, hence its bits.
pub(super) fn powi(b: &mut FunctionBuilder, a: Value, n: i32) -> Value {
    let mut base = a;
    let mut k = n.unsigned_abs();
    let mut acc = b.ins().f64const(1.0);
    while k > 0 {
        if k & 1 == 1 {
            acc = b.ins().fmul(acc, base);
        }
        k >>= 1;
        if k > 0 {
            base = b.ins().fmul(base, base);
        }
    }
    if n < 0 {
        let one = b.ins().f64const(1.0);
        b.ins().fdiv(one, acc)
    } else {
        acc
    }
}
