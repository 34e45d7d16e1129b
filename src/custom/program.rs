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
//! lazy walk (an unselected branch never reaches the result). Measured on the oscillator
//! chain of `benches/scaling.rs`: see docs/benchmarks.md, "Scaling".

use super::expr::{Env, Expr, Id, Node};
use crate::model::Scalar;
use crate::scratch::with_stack;

/// One expression of the program: its instructions and the register of its value.
#[derive(Debug, Clone, PartialEq)]
struct Piece {
    /// `code[start..end]` computes it (empty for a leaf).
    end: u32,
    /// The register that holds its value once the instructions ran.
    result: Id,
}

/// A compiled list of expressions (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
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

/// Register files up to this length live on the stack (a ball, a pendulum, a five-bar);
/// larger ones are allocated once per evaluation.
const STACK_REGISTERS: usize = 64;

impl Program {
    /// Compiles `exprs`, each over inputs of `nx` states, `nu` controls and `np` parameters.
    pub fn new(exprs: &[Expr], nx: usize, nu: usize, np: usize) -> Program {
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
        Program {
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

    /// Every expression's value at `env`, into `out` (one per expression).
    #[inline]
    pub fn eval<D: Scalar>(&self, env: &Env<'_, D>, out: &mut [D]) {
        with_stack::<STACK_REGISTERS, D, ()>(self.len, |r| self.run(env, r, out))
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
            *o = r.get(piece.result as usize).copied().unwrap_or(D::from(f64::NAN));
        }
    }
}
