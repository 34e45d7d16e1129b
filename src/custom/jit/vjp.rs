//! The reverse products of a list of expressions (a mode's flows, its outputs; emitted
//! into `super::mode`'s function): for one cotangent `w` (a weight per expression),
//! `gx += Σ_i w_i ∂e_i/∂x` (and `gu`, `gp`), the interpreter's sweep
//! (`super::super::reverse`) unrolled: per expression, skipped where its weight is 0, its
//! nodes' values, then from the root down each node's adjoint `a` handed to its children
//! as `adj_child += a · ∂node/∂child` — where `a ≠ 0` only, as the interpreter skips a zero
//! adjoint (a `select`, which keeps `adj_child` bit for bit) — and to the input arrays at
//! the leaves. The same partials in the same order, hence the same bits.

use super::super::expr::{Expr, Node};
use super::emit::{flags, offset, powi, Frame};
use super::helpers;
use cranelift_codegen::ir::{condcodes::FloatCC, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// The arrays the leaves' adjoints go to.
pub(super) struct Sinks {
    pub w: Value,
    pub gx: Value,
    pub gu: Value,
    pub gp: Value,
}

/// Emits the products into the current block, one guarded block per expression; ends in
/// a block of its own, which the caller continues.
pub(super) fn body(b: &mut FunctionBuilder, frame: &mut Frame, exprs: &[Expr], sinks: &Sinks) {
    for (i, e) in exprs.iter().enumerate() {
        if e.is_empty() {
            continue;
        }
        let w = b.ins().load(
            cranelift_codegen::ir::types::F64,
            flags(),
            sinks.w,
            offset(i as u32),
        );
        let zero = b.ins().f64const(0.0);
        let skip = b.ins().fcmp(FloatCC::Equal, w, zero);
        let body = b.create_block();
        let next = b.create_block();
        b.ins().brif(skip, next, &[], body, &[]);
        b.switch_to_block(body);
        b.seal_block(body);
        frame.loaded.clear();
        let v = frame.values(b, e);
        sweep(b, frame, e, &v, w, sinks);
        b.ins().jump(next, &[]);
        b.switch_to_block(next);
        b.seal_block(next);
        frame.loaded.clear();
    }
}

/// The backward sweep of one expression whose nodes' values are `v`, root adjoint `w`.
fn sweep(
    b: &mut FunctionBuilder, frame: &mut Frame, e: &Expr, v: &[Value], w: Value, sinks: &Sinks,
) {
    let nodes = e.nodes();
    // None: the adjoint is still the +0 it starts at
    let mut adj: Vec<Option<Value>> = vec![None; nodes.len()];
    adj[nodes.len() - 1] = Some(w);
    for i in (0..nodes.len()).rev() {
        let Some(a) = adj[i] else { continue };
        let zero = b.ins().f64const(0.0);
        let live = b.ins().fcmp(FloatCC::NotEqual, a, zero);
        let mut to = Edge {
            a,
            live,
            adj: &mut adj,
        };
        match nodes[i] {
            Node::State(k) => sink(b, sinks.gx, k, a, live),
            Node::Control(k) => sink(b, sinks.gu, k, a, live),
            Node::Param(k) => sink(b, sinks.gp, k, a, live),
            Node::Num(_) | Node::Time => {}
            Node::Neg(x) => {
                let d = b.ins().f64const(-1.0);
                to.add(b, x, d);
            }
            Node::Add(x, y) | Node::Sub(x, y) => {
                let one = b.ins().f64const(1.0);
                to.add(b, x, one);
                let sign = if matches!(nodes[i], Node::Add(..)) {
                    1.0
                } else {
                    -1.0
                };
                let d = b.ins().f64const(sign);
                to.add(b, y, d);
            }
            Node::Mul(x, y) => {
                to.add(b, x, v[y as usize]);
                to.add(b, y, v[x as usize]);
            }
            Node::Div(x, y) => {
                let one = b.ins().f64const(1.0);
                let dx = b.ins().fdiv(one, v[y as usize]);
                to.add(b, x, dx);
                let minus = b.ins().fneg(v[i]);
                let dy = b.ins().fdiv(minus, v[y as usize]);
                to.add(b, y, dy);
            }
            Node::PowI(x, n) => {
                let d = if n == 0 {
                    b.ins().f64const(0.0)
                } else {
                    let p = powi(b, v[x as usize], n - 1);
                    let nf = b.ins().f64const(n as f64);
                    b.ins().fmul(nf, p)
                };
                to.add(b, x, d);
            }
            Node::PowF(x, r) => {
                let rc = b.ins().f64const(r);
                let vr = b.ins().fmul(v[i], rc);
                let d = b.ins().fdiv(vr, v[x as usize]);
                to.add(b, x, d);
            }
            Node::Call1(_, x) => {
                let d = frame.call(
                    b,
                    helpers::partial_first,
                    nodes[i],
                    &[v[x as usize], v[x as usize], v[i]],
                );
                to.add(b, x, d);
            }
            Node::Call2(_, x, y) => {
                let ops = [v[x as usize], v[y as usize], v[i]];
                let dx = frame.call(b, helpers::partial_first, nodes[i], &ops);
                let dy = frame.call(b, helpers::partial_second, nodes[i], &ops);
                to.add(b, x, dx);
                to.add(b, y, dy);
            }
            Node::If(c, x, y) => {
                let cv = v[c as usize];
                let zero = b.ins().f64const(0.0);
                // c ≠ 0 and not NaN: the first branch; c = 0: the second; NaN: neither
                let first = b.ins().fcmp(FloatCC::OrderedNotEqual, cv, zero);
                let second = b.ins().fcmp(FloatCC::Equal, cv, zero);
                let one = b.ins().f64const(1.0);
                to.add_if(b, x, one, first);
                to.add_if(b, y, one, second);
            }
            // comparisons and logic are piecewise constant
            Node::Cmp(..) | Node::And(..) | Node::Or(..) | Node::Not(_) => {}
        }
    }
}

/// A node's adjoint `a` on its way to the children, where `live` (`a ≠ 0`).
struct Edge<'a> {
    a: Value,
    live: Value,
    adj: &'a mut [Option<Value>],
}

impl Edge<'_> {
    /// `adj_k += a · d` where live.
    fn add(&mut self, b: &mut FunctionBuilder, k: u32, d: Value) {
        let live = self.live;
        self.add_where(b, k, d, live);
    }

    /// `adj_k += a · d` where live and `cond`.
    fn add_if(&mut self, b: &mut FunctionBuilder, k: u32, d: Value, cond: Value) {
        let both = b.ins().band(self.live, cond);
        self.add_where(b, k, d, both);
    }

    fn add_where(&mut self, b: &mut FunctionBuilder, k: u32, d: Value, cond: Value) {
        let old = match self.adj[k as usize] {
            Some(o) => o,
            None => b.ins().f64const(0.0),
        };
        let term = b.ins().fmul(self.a, d);
        let new = b.ins().fadd(old, term);
        self.adj[k as usize] = Some(b.ins().select(cond, new, old));
    }
}

/// `g[k] += a` where `live`.
fn sink(b: &mut FunctionBuilder, g: Value, k: u32, a: Value, live: Value) {
    let old = b
        .ins()
        .load(cranelift_codegen::ir::types::F64, flags(), g, offset(k));
    let new = b.ins().fadd(old, a);
    let kept = b.ins().select(live, new, old);
    b.ins().store(flags(), kept, g, offset(k));
}
