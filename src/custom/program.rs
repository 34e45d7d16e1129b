//! A list of expressions over the same inputs (a mode's flow, its outputs) compiled into
//! one straight-line program over a register file, the form a right-hand side of many
//! states is evaluated in.
//!
//! The registers are `[t | x | u | p | constants | temporaries]`: a leaf of an expression
//! (time, a state, a control, a parameter, a number) is not an instruction but the
//! register it names, so an instruction is an inner node whose operands are registers
//! ([`Node::map_ids`]), and a state whose flow is a leaf (`x' = v`) costs one copy. Each
//! expression's instructions write the temporaries from the same base (they are dead
//! once its value is out), so the file holds the inputs and the longest expression only.
//!
//! The instructions are the expressions' inner nodes in storage order, each computed by
//! [`Expr::apply`] from its children's values: the same operations in the same order as
//! [`Expr::eval`], hence the same bits in `f64` and in dual numbers. Both branches of
//! `if`, `&&` and `||` are computed and the result selects, which gives the value of the
//! lazy walk (an unselected branch never reaches the result). Short lists (a ball's two
//! states) stay expression by expression ([`STRAIGHT_MIN`]). Vector duals (the direct
//! method's columns, colored Jacobians, vector VJPs) run the same instructions lane by
//! lane on plain arrays (`Straight::run_lanes`), with num-dual's bits. Measured on the oscillator
//! chain of `benches/scaling.rs`: see docs/benchmarks.md, "Scaling".

use super::expr::{Env, Expr, Id, Node};
use crate::model::scratch::with_stack;
use crate::model::Scalar;

/// One expression of the program: its instructions and the register of its value.
#[derive(Debug, Clone)]
struct Piece {
    /// `code[start..end]` computes it (empty for a leaf).
    end: u32,
    /// The register that holds its value once the instructions ran.
    result: Id,
}

/// A list of expressions with its compiled forms (see the module doc): the expressions
/// themselves (their arenas serve the reverse sweeps and the Jacobian pattern too), from
/// [`STRAIGHT_MIN`] of them on the straight-line program that evaluates them (for dual
/// numbers, and for reals without machine code), and once attached their machine code
/// (`super::jit`), which their real evaluations run.
#[derive(Debug, Clone)]
pub struct Program {
    exprs: Vec<Expr>,
    straight: Option<Straight>,
    #[cfg(feature = "jit")]
    compiled: Option<super::jit::Compiled>,
    /// Every expression is a leaf (a number, time or an input).
    #[cfg(feature = "jit")]
    leaves: bool,
}

/// Lists of at least this many expressions are compiled into one straight-line program.
/// Below it, copying the inputs into registers costs more than the per-expression
/// evaluation saves: as a program, the expression ball's forward run (two states) took
/// 1.48–1.52× the built-in ball's against 1.43× expression by expression
/// (`cargo bench --bench gradients -- --quick`, "expression ball"), while the 1,024-state
/// chain's radau5 run took 0.167 s against 0.218 s.
pub const STRAIGHT_MIN: usize = 8;

/// The straight-line program (see the module doc).
#[derive(Debug, Clone)]
struct Straight {
    nx: usize,
    nu: usize,
    np: usize,
    /// The distinct numbers, in registers `1 + nx + nu + np ..`.
    consts: Vec<f64>,
    /// Every expression's inner nodes with register operands, one after the other.
    code: Vec<Node>,
    pieces: Vec<Piece>,
    /// The first temporary register (after the constants).
    temps: usize,
    /// The register file's length: `temps` + the longest expression's instruction count.
    len: usize,
}

/// Register files up to this length live on the stack; larger ones are allocated once per
/// evaluation.
const STACK_REGISTERS: usize = 64;

/// The smaller stack tier, less to zero on every evaluation — in dual numbers too, where a
/// register is up to 11 `f64`.
const SMALL_REGISTERS: usize = 16;

impl Program {
    /// Compiles `exprs`, each over inputs of `nx` states, `nu` controls and `np` parameters.
    pub fn new(exprs: Vec<Expr>, nx: usize, nu: usize, np: usize) -> Program {
        let straight = (exprs.len() >= STRAIGHT_MIN).then(|| Straight::new(&exprs, nx, nu, np));
        Program {
            #[cfg(feature = "jit")]
            leaves: exprs.iter().all(|e| e.len() <= 1),
            exprs,
            straight,
            #[cfg(feature = "jit")]
            compiled: None,
        }
    }

    /// Attaches the expressions' machine code: their real evaluations run it from now on
    /// (the products are the mode's, `super::jit::ModeCode`).
    #[cfg(feature = "jit")]
    pub fn attach(&mut self, code: super::jit::Compiled) {
        self.compiled = Some(code);
    }

    /// The expressions, in order.
    pub fn exprs(&self) -> &[Expr] {
        &self.exprs
    }

    /// Every expression's value at `env`, into `out` (one per expression).
    #[inline(always)]
    pub fn eval<D: Scalar>(&self, env: &Env<'_, D>, out: &mut [D]) {
        // a list of leaves (a guard `y`) reads its inputs faster than it calls code
        #[cfg(feature = "jit")]
        if let (false, Some(code), Some(x), Some(u), Some(p)) = (
            self.leaves,
            &self.compiled,
            D::as_real_slice(env.x),
            D::as_real_slice(env.u),
            D::as_real_slice(env.p),
        ) {
            if let Some(o) = D::real_slice_mut(&mut *out) {
                if code.values(env.t.re(), x, u, p, o) {
                    return;
                }
            }
        }
        match &self.straight {
            Some(p) => p.eval(env, out),
            None => {
                for (o, e) in out.iter_mut().zip(&self.exprs) {
                    *o = e.eval(env);
                }
            }
        }
    }
}

impl Straight {
    fn new(exprs: &[Expr], nx: usize, nu: usize, np: usize) -> Straight {
        let slot = |leaf: &Node, consts: &mut Vec<f64>| -> Option<usize> {
            Some(match *leaf {
                Node::Time => 0,
                Node::State(k) => 1 + k as usize,
                Node::Control(k) => 1 + nx + k as usize,
                Node::Param(k) => 1 + nx + nu + k as usize,
                Node::Num(c) => {
                    let at = match consts.iter().position(|v| v.to_bits() == c.to_bits()) {
                        Some(i) => i,
                        None => {
                            consts.push(c);
                            consts.len() - 1
                        }
                    };
                    1 + nx + nu + np + at
                }
                _ => return None,
            })
        };
        // first pass: the constants (they fix where the temporaries start)
        let mut consts = Vec::new();
        for e in exprs {
            for n in e.nodes() {
                if let Node::Num(_) = n {
                    slot(n, &mut consts);
                }
            }
        }
        let temps = 1 + nx + nu + np + consts.len();
        let mut code = Vec::new();
        let mut pieces = Vec::with_capacity(exprs.len());
        let mut longest = 0;
        for e in exprs {
            let mut reg: Vec<Id> = Vec::with_capacity(e.len());
            let start = code.len();
            for n in e.nodes() {
                let r = match slot(n, &mut consts) {
                    Some(r) => r,
                    None => {
                        code.push(n.map_ids(|k| reg[k as usize]));
                        temps + (code.len() - 1 - start)
                    }
                };
                reg.push(r as Id);
            }
            longest = longest.max(code.len() - start);
            pieces.push(Piece {
                end: code.len() as u32,
                // an empty arena never comes from the parser; it reads as NaN (Expr::eval)
                result: reg.last().copied().unwrap_or(Id::MAX),
            });
        }
        Straight {
            nx,
            nu,
            np,
            consts,
            code,
            pieces,
            temps,
            len: temps + longest,
        }
    }

    #[inline]
    fn eval<D: Scalar>(&self, env: &Env<'_, D>, out: &mut [D]) {
        if D::LANES > 0 {
            self.run_lanes(env, out)
        } else if self.len <= SMALL_REGISTERS {
            with_stack::<SMALL_REGISTERS, D, ()>(self.len, |r| self.run(env, r, out))
        } else {
            with_stack::<STACK_REGISTERS, D, ()>(self.len, |r| self.run(env, r, out))
        }
    }

    fn run<D: Scalar>(&self, env: &Env<'_, D>, r: &mut [D], out: &mut [D]) {
        let (nx, nu, np) = (self.nx, self.nu, self.np);
        r[0] = env.t;
        r[1..1 + nx].copy_from_slice(&env.x[..nx]);
        r[1 + nx..1 + nx + nu].copy_from_slice(&env.u[..nu]);
        r[1 + nx + nu..1 + nx + nu + np].copy_from_slice(&env.p[..np]);
        for (slot, &c) in r[1 + nx + nu + np..].iter_mut().zip(&self.consts) {
            *slot = D::from(c);
        }
        let mut start = 0;
        for (o, piece) in out.iter_mut().zip(&self.pieces) {
            let end = piece.end as usize;
            for (i, &op) in self.code[start..end].iter().enumerate() {
                let v = Expr::apply(op, &|k: Id| r[k as usize]);
                r[self.temps + i] = v;
            }
            start = end;
            *o = r
                .get(piece.result as usize)
                .copied()
                .unwrap_or(D::from(f64::NAN));
        }
    }

    /// [`Self::run`] for vector duals ([`Scalar::LANES`] derivative lanes), lane by lane on
    /// plain arrays: a register is a value, a flag for "has a derivative part" and its
    /// lanes. Addition, subtraction, negation, multiplication and division are written out
    /// as num-dual computes them — `(a b)' = a' b + b' a`, `(a / b)' = ((a' b − b' a) i) i`
    /// with `i = 1/b` and the value `a i`, a missing derivative part (num-dual's `None`,
    /// a constant) contributing no term rather than a zero — hence the same bits as
    /// [`Self::run`] on the dual numbers themselves (test
    /// `lanes_give_the_bits_of_the_dual_numbers`); the other instructions (functions,
    /// powers, comparisons, `if`) go through the dual number. The lanes of a register are
    /// contiguous, and a pass costs no `Option` match per lane: on the 256-state chain the
    /// DOPRI5 direct gradient (6 lanes) went from 0.075 s to 0.048 s (docs/benchmarks.md,
    /// "Scaling").
    fn run_lanes<D: Scalar>(&self, env: &Env<'_, D>, out: &mut [D]) {
        let nl = D::LANES;
        let (nx, nu, np) = (self.nx, self.nu, self.np);
        let mut re = Vec::with_capacity(self.len);
        let mut has = Vec::with_capacity(self.len);
        let mut eps = vec![0.0; self.len * nl];
        let inputs = std::iter::once(&env.t)
            .chain(&env.x[..nx])
            .chain(&env.u[..nu])
            .chain(&env.p[..np]);
        for (k, v) in inputs.enumerate() {
            re.push(v.re());
            has.push(v.lanes_into(&mut eps[k * nl..(k + 1) * nl]));
        }
        re.extend_from_slice(&self.consts);
        has.resize(re.len(), false);
        re.resize(self.len, 0.0);
        has.resize(self.len, false);
        let mut start = 0;
        for (o, piece) in out.iter_mut().zip(&self.pieces) {
            let end = piece.end as usize;
            for (i, &op) in self.code[start..end].iter().enumerate() {
                let dst = self.temps + i;
                let (lo, hi) = eps.split_at_mut(dst * nl);
                let e = &mut hi[..nl];
                let lanes = |k: Id| &lo[k as usize * nl..(k as usize + 1) * nl];
                // an operand's lanes, None without a derivative part
                let opt = |k: Id| has[k as usize].then(|| lanes(k));
                let (value, with) = match op {
                    Node::Neg(a) => (
                        -re[a as usize],
                        lane_op(e, opt(a), None, |x, _| -x, |x| -x, |y| -y),
                    ),
                    Node::Add(a, b) => (
                        re[a as usize] + re[b as usize],
                        lane_op(e, opt(a), opt(b), |x, y| x + y, |x| x, |y| y),
                    ),
                    Node::Sub(a, b) => (
                        re[a as usize] - re[b as usize],
                        lane_op(e, opt(a), opt(b), |x, y| x - y, |x| x, |y| -y),
                    ),
                    Node::Mul(a, b) => {
                        let (ra, rb) = (re[a as usize], re[b as usize]);
                        let with = lane_op(
                            e,
                            opt(a),
                            opt(b),
                            |x, y| x * rb + y * ra,
                            |x| x * rb,
                            |y| y * ra,
                        );
                        (ra * rb, with)
                    }
                    Node::Div(a, b) => {
                        let (ra, rb) = (re[a as usize], re[b as usize]);
                        let inv = rb.recip();
                        let with = lane_op(
                            e,
                            opt(a),
                            opt(b),
                            |x, y| (x * rb - y * ra) * inv * inv,
                            |x| x * rb * inv * inv,
                            |y| -(y * ra) * inv * inv,
                        );
                        (ra * inv, with)
                    }
                    other => {
                        let v = Expr::apply(other, &|k: Id| D::from_lanes(re[k as usize], opt(k)));
                        (v.re(), v.lanes_into(e))
                    }
                };
                re[dst] = value;
                has[dst] = with;
            }
            start = end;
            let k = piece.result as usize;
            *o = match re.get(k) {
                Some(&v) => D::from_lanes(v, has[k].then(|| &eps[k * nl..(k + 1) * nl])),
                None => D::from(f64::NAN),
            };
        }
    }
}

/// The lanes `e` of an operation's result from its operands' lanes (`None`: no derivative
/// part), as num-dual forms them: `both` where both operands have a derivative part,
/// `left` or `right` where only one has (no zero term added); `false` where neither has.
#[inline(always)]
fn lane_op(
    e: &mut [f64], a: Option<&[f64]>, b: Option<&[f64]>, both: impl Fn(f64, f64) -> f64,
    left: impl Fn(f64) -> f64, right: impl Fn(f64) -> f64,
) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            for ((e, x), y) in e.iter_mut().zip(a).zip(b) {
                *e = both(*x, *y);
            }
        }
        (Some(a), None) => {
            for (e, x) in e.iter_mut().zip(a) {
                *e = left(*x);
            }
        }
        (None, Some(b)) => {
            for (e, y) in e.iter_mut().zip(b) {
                *e = right(*y);
            }
        }
        (None, None) => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom::parser::{parse, Scope};
    use num_dual::Dual64;

    /// t, three states a, b, c, a control u and two parameters k, m.
    fn scope() -> Scope {
        Scope::new()
            .with("t", Node::Time)
            .with("a", Node::State(0))
            .with("b", Node::State(1))
            .with("c", Node::State(2))
            .with("u", Node::Control(0))
            .with("k", Node::Param(0))
            .with("m", Node::Param(1))
    }

    /// Expressions over t, three states, a control and two parameters, with shared numbers,
    /// leaves, both branches of `if`, `&&`, `||`, functions and powers.
    fn exprs() -> Vec<Expr> {
        let scope = scope();
        [
            "b",
            "-k*a - m*(2*a - b - c) - 0.5*b",
            "if(a > 0.2, sqrt(a)*u, -b^3)",
            "(a > 0 && b < 1) || c == 2",
            "2",
            "exp(-t)*sin(c) + a^1.5 + atan2(b, k) + min(a, c)",
            "k",
            "t*u - 2*c/(1 + a*a)",
            "!(a < b) + tanh(c*10)",
        ]
        .iter()
        .map(|s| parse(s, &scope).unwrap())
        .collect()
    }

    fn same_as_each<D: Scalar>(
        prog: &Program, ex: &[Expr], env: &Env<'_, D>, eq: impl Fn(D, D) -> bool,
    ) {
        let mut out = vec![D::zero(); ex.len()];
        prog.eval(env, &mut out);
        for (i, (o, e)) in out.iter().zip(ex).enumerate() {
            assert!(eq(*o, e.eval(env)), "expression {i}");
        }
    }

    /// The program's values are the expressions' own, bit for bit, in `f64` and in dual
    /// numbers, on both sides of every branch (the property the module doc claims).
    #[test]
    fn program_equals_expressions_bit_for_bit() {
        let ex = exprs();
        let prog = Program::new(ex.clone(), 3, 1, 2);
        assert!(prog.straight.is_some(), "nine expressions compile");
        let bits = |a: f64, b: f64| a.to_bits() == b.to_bits();
        for x in [[0.7, 0.3, 2.0], [-0.4, 1.5, 0.1], [0.2, 0.2, -3.0]] {
            let (u, p) = ([1.3], [50.0, 0.25]);
            let env = Env {
                t: 0.6,
                x: &x,
                u: &u,
                p: &p,
            };
            same_as_each(&prog, &ex, &env, bits);
            let xd: Vec<Dual64> = x.iter().map(|&v| Dual64::new(v, 1.0)).collect();
            let ud = [Dual64::new(u[0], -0.5)];
            let pd = [Dual64::new(p[0], 0.1), Dual64::new(p[1], 2.0)];
            let env = Env {
                t: Dual64::new(0.6, 1.0),
                x: &xd,
                u: &ud,
                p: &pd,
            };
            same_as_each(&prog, &ex, &env, |a: Dual64, b: Dual64| {
                bits(a.re, b.re) && bits(a.eps, b.eps)
            });
        }
        // a short list stays expression by expression, with the same values
        let short = Program::new(ex[..2].to_vec(), 3, 1, 2);
        assert!(short.straight.is_none());
        let (x, u, p) = ([0.7, 0.3, 2.0], [1.3], [50.0, 0.25]);
        same_as_each(
            &short,
            &ex[..2],
            &Env {
                t: 0.0,
                x: &x,
                u: &u,
                p: &p,
            },
            bits,
        );
    }

    /// The lane-wise evaluation of vector duals gives num-dual's own bits: values, every
    /// lane, and which registers have no derivative part at all (constants, an unseeded
    /// parameter), with operands of every kind on both sides of each operation and lanes of
    /// both signs of zero.
    #[test]
    fn lanes_give_the_bits_of_the_dual_numbers() {
        use num_dual::DualSVec64;
        type V = DualSVec64<3>;
        let scope = scope();
        let mut ex = exprs();
        for extra in [
            "k/a",
            "a/k",
            "b/m",
            "(a + 0.37*b)/m",
            "0.7/b",
            "1.3/(a*k)",
            "2/b",
            "a/b",
            "k/m",
            "-k",
            "-(a*b)",
            "k - a",
            "2 - a",
            "a - 2",
            "m + 3*k",
            "(a - a)*m",
            "u*u/(k + 1)",
            "sqrt(a*a + 1)/m",
        ] {
            ex.push(parse(extra, &scope).unwrap());
        }
        let prog = Program::new(ex.clone(), 3, 1, 2);
        let same = |a: V, b: V| {
            a.re.to_bits() == b.re.to_bits()
                && match (&a.eps.0, &b.eps.0) {
                    (Some(x), Some(y)) => x
                        .iter()
                        .zip(y.iter())
                        .all(|(p, q)| p.to_bits() == q.to_bits()),
                    (None, None) => true,
                    _ => false,
                }
        };
        let seeded = |v: f64, l: [f64; 3]| V::from_lanes(v, Some(&l));
        for x in [
            [0.7, 0.3, 2.0],
            [-0.4, 1.5, 0.1],
            [0.2, -0.0, -3.0],
            [0.913, 0.377, 1.71],
            [-1.93, 0.611, 0.29],
        ] {
            let xd = [
                seeded(x[0], [1.0, 0.0, -0.0]),
                seeded(x[1], [-0.0, 2.5, 0.0]),
                V::from_lanes(x[2], None),
            ];
            let ud = [seeded(1.3, [0.0, 0.0, 1.0])];
            // k seeded, m a constant
            let pd = [seeded(50.0, [-0.0, 1.0, 0.5]), V::from_lanes(0.3, None)];
            let env = Env {
                t: V::from_lanes(0.6, None),
                x: &xd,
                u: &ud,
                p: &pd,
            };
            same_as_each(&prog, &ex, &env, same);
        }
    }
}
