//! Reverse-mode vector–Jacobian products over the compiled arena (the adjoint's inner
//! loop, theory.md §4): one `f64` pass stores every node's value, then one backward sweep
//! per cotangent carries `w·∂e/∂node` from the root to the leaves, where it lands in
//! `gx`, `gu` or `gp`. The arena is its own tape, so `λᵀ f_x` costs a few passes over the
//! nodes instead of one dual pass per input direction. The local partials are the
//! derivatives of the same formulas [`Expr::eval`] uses (tests/custom.rs compares the
//! products with the dual passes).

use super::expr::{compare, Expr, Func1, Func2, Node};

/// Where the leaves' adjoints go: rows of `gx`, `gu`, `gp` for one cotangent.
pub struct Sinks<'a> {
    pub gx: &'a mut [f64],
    pub gu: &'a mut [f64],
    pub gp: &'a mut [f64],
}

/// The inputs in `f64`.
#[derive(Clone, Copy)]
pub struct Point<'a> {
    pub t: f64,
    pub x: &'a [f64],
    pub u: &'a [f64],
    pub p: &'a [f64],
}

impl Expr {
    /// Every node's value in storage order (all branches evaluated), into `vals`.
    pub(super) fn tape(&self, at: Point<'_>, vals: &mut Vec<f64>) {
        vals.clear();
        for node in self.nodes() {
            let v = |k: u32| vals[k as usize];
            let val = match *node {
                Node::Num(c) => c,
                Node::Time => at.t,
                Node::State(k) => at.x[k as usize],
                Node::Control(k) => at.u[k as usize],
                Node::Param(k) => at.p[k as usize],
                other => Expr::apply(other, &v),
            };
            vals.push(val);
        }
    }

    /// Adds `w · ∂e/∂(x, u, p)` to the sinks, from the values of [`Expr::tape`]; `adj` is
    /// scratch.
    pub(super) fn sweep(&self, w: f64, vals: &[f64], adj: &mut Vec<f64>, out: &mut Sinks<'_>) {
        let nodes = self.nodes();
        if w == 0.0 || nodes.is_empty() {
            return;
        }
        adj.clear();
        adj.resize(nodes.len(), 0.0);
        adj[nodes.len() - 1] = w;
        for i in (0..nodes.len()).rev() {
            let a = adj[i];
            if a == 0.0 {
                continue;
            }
            let v = |k: u32| vals[k as usize];
            let mut add = |k: u32, d: f64| adj[k as usize] += a * d;
            match nodes[i] {
                Node::State(k) => out.gx[k as usize] += a,
                Node::Control(k) => out.gu[k as usize] += a,
                Node::Param(k) => out.gp[k as usize] += a,
                Node::Num(_) | Node::Time => {}
                Node::Neg(x) => add(x, -1.0),
                Node::Add(x, y) => {
                    add(x, 1.0);
                    add(y, 1.0);
                }
                Node::Sub(x, y) => {
                    add(x, 1.0);
                    add(y, -1.0);
                }
                Node::Mul(x, y) => {
                    add(x, v(y));
                    add(y, v(x));
                }
                Node::Div(x, y) => {
                    add(x, 1.0 / v(y));
                    add(y, -vals[i] / v(y));
                }
                Node::PowI(x, n) => add(x, partial_powi(v(x), n)),
                Node::PowF(x, r) => add(x, vals[i] * r / v(x)),
                Node::Call1(f, x) => add(x, partial1(f, v(x), vals[i])),
                Node::Call2(f, x, y) => {
                    let (dx, dy) = partial2(f, v(x), v(y), vals[i]);
                    add(x, dx);
                    add(y, dy);
                }
                Node::If(c, x, y) => {
                    let cv = v(c);
                    if !cv.is_nan() {
                        add(if cv != 0.0 { x } else { y }, 1.0);
                    }
                }
                // comparisons and logic are piecewise constant
                Node::Cmp(..) | Node::And(..) | Node::Or(..) | Node::Not(_) => {}
            }
        }
    }
}

/// `d(aⁿ)/da = n·aⁿ⁻¹` (0 for n = 0).
fn partial_powi(a: f64, n: i32) -> f64 {
    if n == 0 {
        0.0
    } else {
        n as f64 * super::expr::powi(a, n - 1)
    }
}

/// The derivative of a one-argument function at `a`, whose value there is `f`.
pub(super) fn partial1(g: Func1, a: f64, f: f64) -> f64 {
    match g {
        Func1::Sin => a.cos(),
        Func1::Cos => -a.sin(),
        Func1::Tan => 1.0 + f * f,
        Func1::Exp => f,
        Func1::Ln => 1.0 / a,
        Func1::Sqrt => 0.5 / f,
        Func1::Abs => {
            if a > 0.0 {
                1.0
            } else {
                -1.0
            }
        }
        Func1::Tanh => 1.0 - f * f,
        Func1::Sinh => a.cosh(),
        Func1::Cosh => a.sinh(),
        Func1::Asin => 1.0 / (1.0 - a * a).sqrt(),
        Func1::Acos => -1.0 / (1.0 - a * a).sqrt(),
        Func1::Atan => 1.0 / (1.0 + a * a),
    }
}

/// The partial derivatives of a two-argument function at `(a, b)` with value `f`
/// (`min`/`max`: of the selected argument, the first at a tie, as in the evaluation).
pub(super) fn partial2(g: Func2, a: f64, b: f64, f: f64) -> (f64, f64) {
    let nan = a.is_nan() || b.is_nan();
    match g {
        Func2::Atan2 => {
            let r = a * a + b * b;
            (b / r, -a / r)
        }
        Func2::Pow => (f * b / a, f * a.ln()),
        Func2::Min | Func2::Max if nan => (f64::NAN, f64::NAN),
        Func2::Min => {
            if compare(super::expr::Cmp::Le, a, b) {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        }
        Func2::Max => {
            if compare(super::expr::Cmp::Ge, a, b) {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        }
    }
}
