//! The compiled form of an expression and its evaluation, generic over the [`Scalar`]:
//! a flat arena of nodes whose names are already resolved to slots (time, state i,
//! control i, parameter i), children stored before their parents and the root last. The
//! evaluation is a walk from the root with no name look-up, and because it only uses the
//! scalar's arithmetic, the same code gives values in `f64` and exact derivatives in dual
//! numbers (theory.md §1: every Jacobian of the model by forward-mode duals).

use crate::model::Scalar;

/// Index of a node in its expression's arena.
pub type Id = u32;

/// One-argument functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func1 {
    Sin,
    Cos,
    Tan,
    Exp,
    Ln,
    Sqrt,
    Abs,
    Tanh,
    Sinh,
    Cosh,
    Asin,
    Acos,
    Atan,
}

/// Two-argument functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func2 {
    Atan2,
    Min,
    Max,
    /// `a^b` with a non-constant exponent: `exp(b ln a)` (a > 0).
    Pow,
}

/// Comparisons: 1 when true, 0 when false, derivative 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// A node of the arena.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Node {
    Num(f64),
    Time,
    State(u32),
    Control(u32),
    Param(u32),
    Neg(Id),
    Add(Id, Id),
    Sub(Id, Id),
    Mul(Id, Id),
    Div(Id, Id),
    /// `a^n` for a constant integer n.
    PowI(Id, i32),
    /// `a^r` for a constant non-integer r.
    PowF(Id, f64),
    Call1(Func1, Id),
    Call2(Func2, Id, Id),
    Cmp(Cmp, Id, Id),
    And(Id, Id),
    Or(Id, Id),
    Not(Id),
    /// `if(c, a, b)`: a where c ≠ 0, else b; only the chosen branch is evaluated.
    If(Id, Id, Id),
}

impl Node {
    /// The node with every child index mapped by `f`.
    pub(super) fn map_ids(self, f: impl Fn(Id) -> Id) -> Node {
        match self {
            Node::Neg(a) => Node::Neg(f(a)),
            Node::Add(a, b) => Node::Add(f(a), f(b)),
            Node::Sub(a, b) => Node::Sub(f(a), f(b)),
            Node::Mul(a, b) => Node::Mul(f(a), f(b)),
            Node::Div(a, b) => Node::Div(f(a), f(b)),
            Node::PowI(a, n) => Node::PowI(f(a), n),
            Node::PowF(a, r) => Node::PowF(f(a), r),
            Node::Call1(g, a) => Node::Call1(g, f(a)),
            Node::Call2(g, a, b) => Node::Call2(g, f(a), f(b)),
            Node::Cmp(c, a, b) => Node::Cmp(c, f(a), f(b)),
            Node::And(a, b) => Node::And(f(a), f(b)),
            Node::Or(a, b) => Node::Or(f(a), f(b)),
            Node::Not(a) => Node::Not(f(a)),
            Node::If(c, a, b) => Node::If(f(c), f(a), f(b)),
            leaf => leaf,
        }
    }
}

/// The inputs an expression may read. Expressions are compiled against a scope that only
/// names what their context provides (a reset has no controls, `x0` no state or time).
#[derive(Debug, Clone, Copy)]
pub struct Env<'a, D> {
    pub t: D,
    pub x: &'a [D],
    pub u: &'a [D],
    pub p: &'a [D],
}

/// A compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    nodes: Vec<Node>,
}

impl Expr {
    /// From an arena whose last node is the root (the parser's output).
    pub(super) fn from_nodes(nodes: Vec<Node>) -> Expr {
        Expr { nodes }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the arena is empty (never, for a parsed expression).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The value at `env` (in dual numbers: with the exact derivative).
    #[inline]
    pub fn eval<D: Scalar>(&self, env: &Env<'_, D>) -> D {
        match self.nodes.len() {
            0 => D::from(f64::NAN),
            1 => self.operand(0, env),
            n if n <= LINEAR / 2 => self.eval_linear::<D, { LINEAR / 2 }>(env),
            n if n <= LINEAR => self.eval_linear::<D, LINEAR>(env),
            n => self.operand(n as Id - 1, env),
        }
    }

    /// Evaluates a small arena in storage order (children come before parents) into a
    /// buffer on the stack: no recursion, one pass. Both branches of `if`, `&&` and `||`
    /// are evaluated and the result selected, which gives the same value as the lazy walk
    /// (an unselected branch never reaches the result).
    fn eval_linear<D: Scalar, const N: usize>(&self, env: &Env<'_, D>) -> D {
        let mut r = [D::zero(); N];
        for (i, node) in self.nodes.iter().enumerate() {
            r[i] = match *node {
                Node::Num(c) => D::from(c),
                Node::Time => env.t,
                Node::State(k) => env.x[k as usize],
                Node::Control(k) => env.u[k as usize],
                Node::Param(k) => env.p[k as usize],
                other => Self::apply(other, &|k: Id| r[k as usize]),
            };
        }
        r[self.nodes.len() - 1]
    }

    /// The states the expression reads (every `State` node, whichever branch of an `if`
    /// it is on): the structural nonzeros of its gradient in x.
    pub fn states_read(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::State(i) => Some(*i as usize),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The nodes in storage order (children before parents, the root last).
    pub(super) fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// An inner node's value from its children's values `v` (both branches of `if`,
    /// `&&`, `||` already evaluated; the result selects). Leaves give NaN: the caller
    /// reads them.
    #[inline(always)]
    pub(super) fn apply<D: Scalar>(node: Node, v: &impl Fn(Id) -> D) -> D {
        match node {
            Node::Neg(a) => -v(a),
            Node::Add(a, b) => v(a) + v(b),
            Node::Sub(a, b) => v(a) - v(b),
            Node::Mul(a, b) => v(a) * v(b),
            Node::Div(a, b) => v(a) / v(b),
            Node::PowI(a, n) => powi(v(a), n),
            Node::PowF(a, p) => powf(v(a), p),
            Node::Call1(f, a) => call1(f, v(a)),
            Node::Call2(f, a, b) => call2(f, v(a), v(b)),
            Node::Cmp(c, a, b) => truth(compare(c, v(a).re(), v(b).re())),
            Node::And(a, b) => logic(v(a).re(), || v(b).re(), true),
            Node::Or(a, b) => logic(v(a).re(), || v(b).re(), false),
            Node::Not(a) => not(v(a).re()),
            Node::If(c, a, b) => select(v(c).re(), v(a), v(b)),
            Node::Num(_) | Node::Time | Node::State(_) | Node::Control(_) | Node::Param(_) => {
                D::from(f64::NAN)
            }
        }
    }

    /// The value as a constant, if the expression reads no input.
    pub fn constant(&self) -> Option<f64> {
        match self.nodes.as_slice() {
            [Node::Num(v)] => Some(*v),
            _ => None,
        }
    }

    /// A child's value: leaves (numbers and slots, most nodes) are read here, without a
    /// call of [`Expr::node`].
    #[inline(always)]
    fn operand<D: Scalar>(&self, id: Id, env: &Env<'_, D>) -> D {
        match self.nodes[id as usize] {
            Node::Num(v) => D::from(v),
            Node::Time => env.t,
            Node::State(i) => env.x[i as usize],
            Node::Control(i) => env.u[i as usize],
            Node::Param(i) => env.p[i as usize],
            _ => self.node(id, env),
        }
    }

    /// A node's value by the recursive walk: an inner node by [`Expr::apply`] over its
    /// operands' values (the same operations as the one-pass evaluators).
    fn node<D: Scalar>(&self, id: Id, env: &Env<'_, D>) -> D {
        match self.nodes[id as usize] {
            // a leaf (only ever the root here: children go through `operand`, which reads
            // the leaves and calls back only for the other nodes)
            Node::Num(_) | Node::Time | Node::State(_) | Node::Control(_) | Node::Param(_) => {
                self.operand(id, env)
            }
            // `if` evaluates the chosen branch only
            Node::If(c, a, b) => {
                let cv = self.operand(c, env).re();
                if cv.is_nan() {
                    D::from(f64::NAN)
                } else if cv != 0.0 {
                    self.operand(a, env)
                } else {
                    self.operand(b, env)
                }
            }
            other => Self::apply(other, &|k: Id| self.operand(k, env)),
        }
    }
}

/// Arenas up to this many nodes are evaluated in one pass over a stack buffer
/// ([`Expr::eval_linear`], with a buffer of half this size up to half as many nodes);
/// larger ones by the recursive walk. 32 takes a chain's coupling term (17 nodes) in one
/// pass: 15 % off a 1,024-state radau5 run (`benches/scaling.rs`).
const LINEAR: usize = 32;

/// `!a`: 1 where a = 0, else 0; NaN propagates.
fn not<D: Scalar>(a: f64) -> D {
    if a.is_nan() {
        D::from(f64::NAN)
    } else {
        truth(a == 0.0)
    }
}

/// `if(c, a, b)` of evaluated branches: a where c ≠ 0, b where c = 0, NaN where c is.
fn select<D: Scalar>(c: f64, a: D, b: D) -> D {
    if c.is_nan() {
        D::from(f64::NAN)
    } else if c != 0.0 {
        a
    } else {
        b
    }
}

/// `a^n` by repeated squaring (`1/a^|n|` for n < 0): the same multiplications in `f64`
/// and in dual numbers, so both give the same value everywhere (num-dual's `powi` forms
/// `a^(n−3)·a³`, which is NaN at a = 0 for n < 3).
pub(super) fn powi<D: Scalar>(a: D, n: i32) -> D {
    let mut base = a;
    let mut k = n.unsigned_abs();
    let mut acc = D::one();
    while k > 0 {
        if k & 1 == 1 {
            acc *= base;
        }
        k >>= 1;
        if k > 0 {
            base = base * base;
        }
    }
    if n < 0 {
        acc.recip()
    } else {
        acc
    }
}

/// `a^r = exp(r ln a)` (a > 0; 0 at a = 0 for r > 0, NaN for a < 0): the same formula in
/// `f64` and in dual numbers.
fn powf<D: Scalar>(a: D, r: f64) -> D {
    (a.ln() * r).exp()
}

/// `tanh a = sign(a)·(1 − e^{−2|a|})/(1 + e^{−2|a|})`: no overflow for large |a| (num-dual's
/// `sinh/cosh` is ∞/∞ = NaN past |a| ≈ 710); derivative `1 − tanh²` through the duals.
fn tanh<D: Scalar>(a: D) -> D {
    let neg = a.re() < 0.0;
    let m = if neg { -a } else { a };
    let e = (m * -2.0).exp();
    let t = (D::one() - e) / (D::one() + e);
    if neg {
        -t
    } else {
        t
    }
}

/// 1 or 0 as a scalar (a constant: derivative 0).
fn truth<D: Scalar>(b: bool) -> D {
    D::from(if b { 1.0 } else { 0.0 })
}

/// `a && b` (`all = true`) or `a || b` on truth values, short-circuit; NaN propagates.
fn logic<D: Scalar>(a: f64, b: impl FnOnce() -> f64, all: bool) -> D {
    if a.is_nan() {
        return D::from(f64::NAN);
    }
    if (a != 0.0) != all {
        // decided by a: false for &&, true for ||
        return truth(!all);
    }
    let b = b();
    if b.is_nan() {
        D::from(f64::NAN)
    } else {
        truth(b != 0.0)
    }
}

/// A comparison of real parts (false when either is NaN, as in IEEE 754).
pub fn compare(c: Cmp, a: f64, b: f64) -> bool {
    match c {
        Cmp::Lt => a < b,
        Cmp::Le => a <= b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
        Cmp::Eq => a == b,
        Cmp::Ne => a != b,
    }
}

/// A one-argument function; its derivative is the scalar type's (num-dual: exact).
#[inline]
pub fn call1<D: Scalar>(f: Func1, a: D) -> D {
    match f {
        Func1::Sin => a.sin(),
        Func1::Cos => a.cos(),
        Func1::Tan => a.tan(),
        Func1::Exp => a.exp(),
        Func1::Ln => a.ln(),
        Func1::Sqrt => a.sqrt(),
        Func1::Abs => a.abs(),
        Func1::Tanh => tanh(a),
        Func1::Sinh => a.sinh(),
        Func1::Cosh => a.cosh(),
        Func1::Asin => a.asin(),
        Func1::Acos => a.acos(),
        Func1::Atan => a.atan(),
    }
}

/// A two-argument function. `min`/`max` take the derivative of the chosen argument
/// (either at a tie: the first) and give NaN if either argument is NaN.
#[inline]
pub fn call2<D: Scalar>(f: Func2, a: D, b: D) -> D {
    let nan = a.re().is_nan() || b.re().is_nan();
    match f {
        Func2::Atan2 => a.atan2(b),
        // written out (not `powd`): the same formula in f64 and in dual numbers
        Func2::Pow => (a.ln() * b).exp(),
        Func2::Min if nan => D::from(f64::NAN),
        Func2::Max if nan => D::from(f64::NAN),
        Func2::Min => {
            if a.re() <= b.re() {
                a
            } else {
                b
            }
        }
        Func2::Max => {
            if a.re() >= b.re() {
                a
            } else {
                b
            }
        }
    }
}
