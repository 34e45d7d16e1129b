//! A Pratt parser from expression text to the compiled [`Expr`], resolving every name
//! against a [`Scope`] once (no look-ups at evaluation). Precedence, lowest first:
//! `||`, `&&`, comparisons (`< <= > >= == !=`, not chained), `+ -`, `* /`, unary `- !`,
//! `^` (right-associative, so `-x^2 = −(x²)` and `2^3^2 = 2⁹`). Constant sub-expressions
//! are folded. Nesting is limited to [`MAX_DEPTH`] so that neither the parser nor the
//! evaluation can overflow the stack.

use super::error::ExprError;
use super::expr::{Cmp, Env, Expr, Func1, Func2, Id, Node};
use super::lexer::{lex, Tok, Token};

/// The deepest expression tree accepted.
pub const MAX_DEPTH: usize = 200;

/// The longest expression text accepted (characters).
pub const MAX_LEN: usize = 4096;

/// The names an expression may use and the slots they resolve to.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    names: Vec<(String, Node)>,
}

impl Scope {
    pub fn new() -> Self {
        Scope::default()
    }
    /// Adds a name (the caller rejects duplicates first).
    pub fn with(mut self, name: &str, slot: Node) -> Self {
        self.names.push((name.to_string(), slot));
        self
    }
    /// Adds names bound to consecutive slots `make(0), make(1), …`.
    pub fn with_all(mut self, names: &[String], make: impl Fn(u32) -> Node) -> Self {
        for (i, n) in names.iter().enumerate() {
            self.names.push((n.clone(), make(i as u32)));
        }
        self
    }
    fn get(&self, name: &str) -> Option<Node> {
        self.names
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
            .or_else(|| (name == "pi").then_some(Node::Num(std::f64::consts::PI)))
    }
    /// The names in scope, for messages (with the built-in constant `pi` unless shadowed).
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.names.iter().map(|(n, _)| n.clone()).collect();
        if !v.iter().any(|n| n == "pi") {
            v.push("pi".into());
        }
        v
    }
}

/// A function of the language and its arity.
#[derive(Debug, Clone, Copy)]
enum Function {
    F1(Func1),
    F2(Func2),
    If,
}

const FUNCTIONS: [(&str, Function); 18] = [
    ("sin", Function::F1(Func1::Sin)),
    ("cos", Function::F1(Func1::Cos)),
    ("tan", Function::F1(Func1::Tan)),
    ("exp", Function::F1(Func1::Exp)),
    ("ln", Function::F1(Func1::Ln)),
    ("sqrt", Function::F1(Func1::Sqrt)),
    ("abs", Function::F1(Func1::Abs)),
    ("tanh", Function::F1(Func1::Tanh)),
    ("sinh", Function::F1(Func1::Sinh)),
    ("cosh", Function::F1(Func1::Cosh)),
    ("asin", Function::F1(Func1::Asin)),
    ("acos", Function::F1(Func1::Acos)),
    ("atan", Function::F1(Func1::Atan)),
    ("atan2", Function::F2(Func2::Atan2)),
    ("min", Function::F2(Func2::Min)),
    ("max", Function::F2(Func2::Max)),
    ("pow", Function::F2(Func2::Pow)),
    ("if", Function::If),
];

/// The function names, for messages.
pub fn function_names() -> Vec<&'static str> {
    FUNCTIONS.iter().map(|(n, _)| *n).collect()
}

impl Function {
    fn arity(self) -> usize {
        match self {
            Function::F1(_) => 1,
            Function::F2(_) => 2,
            Function::If => 3,
        }
    }
}

/// Parses `src` with the names of `scope`.
pub fn parse(src: &str, scope: &Scope) -> Result<Expr, ExprError> {
    let n = src.chars().count();
    if n > MAX_LEN {
        return Err(ExprError::at(
            MAX_LEN,
            format!("expression of {n} characters is longer than the limit {MAX_LEN}"),
        ));
    }
    let tokens = lex(src)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        scope,
        nodes: Vec::new(),
        depth: Vec::new(),
        nesting: 0,
    };
    if p.peek() == &Tok::End {
        return Err(ExprError::at(0, "empty expression".into()));
    }
    p.expr(0)?;
    let t = p.next();
    if t.tok != Tok::End {
        return Err(ExprError::at(
            t.col,
            format!(
                "unexpected {} after a complete expression",
                describe(&t.tok)
            ),
        ));
    }
    Ok(Expr::from_nodes(p.nodes))
}

struct Parser<'s> {
    tokens: Vec<Token>,
    pos: usize,
    scope: &'s Scope,
    nodes: Vec<Node>,
    /// Height of each node's subtree.
    depth: Vec<usize>,
    /// Current recursion depth of [`Parser::expr`] (bounded before the tree is built, so
    /// that `((((…` or `----…` cannot overflow the stack).
    nesting: usize,
}

/// Binding power of an infix operator token (left, right), or None.
fn infix(t: &Tok) -> Option<(u8, u8)> {
    Some(match t {
        Tok::OrOr => (1, 2),
        Tok::AndAnd => (3, 4),
        Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge | Tok::EqEq | Tok::Ne => (5, 6),
        Tok::Plus | Tok::Minus => (7, 8),
        Tok::Star | Tok::Slash => (9, 10),
        Tok::Caret => (14, 13),
        _ => return None,
    })
}

/// Binding power of the operand of unary `-` and `!`: above `* /`, below `^`.
const PREFIX_BP: u8 = 11;

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(v) => format!("number {v}"),
        Tok::Ident(n) => format!("name `{n}`"),
        Tok::End => "end of expression".into(),
        Tok::Plus => "`+`".into(),
        Tok::Minus => "`-`".into(),
        Tok::Star => "`*`".into(),
        Tok::Slash => "`/`".into(),
        Tok::Caret => "`^`".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Lt => "`<`".into(),
        Tok::Le => "`<=`".into(),
        Tok::Gt => "`>`".into(),
        Tok::Ge => "`>=`".into(),
        Tok::EqEq => "`==`".into(),
        Tok::Ne => "`!=`".into(),
        Tok::AndAnd => "`&&`".into(),
        Tok::OrOr => "`||`".into(),
        Tok::Bang => "`!`".into(),
    }
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos.min(self.tokens.len() - 1)].tok
    }
    fn col(&self) -> usize {
        self.tokens[self.pos.min(self.tokens.len() - 1)].col
    }
    fn next(&mut self) -> Token {
        let t = self.tokens[self.pos.min(self.tokens.len() - 1)].clone();
        self.pos += 1;
        t
    }

    /// Pushes a node whose children are `kids`, folding it to a number when every child
    /// is one, and checks the tree height at column `col`.
    fn push(&mut self, node: Node, kids: &[Id], col: usize) -> Result<Id, ExprError> {
        let height = 1 + kids
            .iter()
            .map(|&k| self.depth[k as usize])
            .max()
            .unwrap_or(0);
        if height > MAX_DEPTH {
            return Err(ExprError::at(
                col,
                format!("expression nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        let n = self.nodes.len();
        let constant_kids = !kids.is_empty()
            && kids
                .iter()
                .all(|&k| matches!(self.nodes[k as usize], Node::Num(_)))
            && kids.iter().all(|&k| k as usize + kids.len() >= n);
        self.nodes.push(node);
        self.depth.push(height);
        if constant_kids {
            // evaluate the node alone: its constant children, then it, ids rebased to 0..
            let keep = n - kids.len();
            let mut mini: Vec<Node> = self.nodes[keep..n].to_vec();
            mini.push(node.map_ids(|k| k - keep as Id));
            let v = Expr::from_nodes(mini).eval::<f64>(&Env {
                t: 0.0,
                x: &[],
                u: &[],
                p: &[],
            });
            self.nodes.truncate(keep);
            self.depth.truncate(keep);
            self.nodes.push(Node::Num(v));
            self.depth.push(1);
        }
        Ok(self.nodes.len() as Id - 1)
    }

    /// An expression whose operators bind at least as tight as `min_bp`.
    fn expr(&mut self, min_bp: u8) -> Result<Id, ExprError> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(ExprError::at(
                self.col(),
                format!("expression nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        let r = self.expr_inner(min_bp);
        self.nesting -= 1;
        r
    }

    fn expr_inner(&mut self, min_bp: u8) -> Result<Id, ExprError> {
        let mut lhs = self.prefix()?;
        let mut last_cmp = false;
        loop {
            let op = self.peek().clone();
            let Some((l, r)) = infix(&op) else { break };
            if l < min_bp {
                break;
            }
            let col = self.col();
            let is_cmp = l == 5;
            if is_cmp && last_cmp {
                return Err(ExprError::at(
                    col,
                    "comparisons do not chain: write `a < b && b < c`".into(),
                ));
            }
            self.pos += 1;
            let rhs = self.expr(r)?;
            lhs = self.binary(&op, lhs, rhs, col)?;
            last_cmp = is_cmp;
        }
        Ok(lhs)
    }

    fn binary(&mut self, op: &Tok, a: Id, b: Id, col: usize) -> Result<Id, ExprError> {
        let node = match op {
            Tok::Plus => Node::Add(a, b),
            Tok::Minus => Node::Sub(a, b),
            Tok::Star => Node::Mul(a, b),
            Tok::Slash => Node::Div(a, b),
            Tok::Caret => return self.power(a, b, col),
            Tok::OrOr => Node::Or(a, b),
            Tok::AndAnd => Node::And(a, b),
            Tok::Lt => Node::Cmp(Cmp::Lt, a, b),
            Tok::Le => Node::Cmp(Cmp::Le, a, b),
            Tok::Gt => Node::Cmp(Cmp::Gt, a, b),
            Tok::Ge => Node::Cmp(Cmp::Ge, a, b),
            Tok::EqEq => Node::Cmp(Cmp::Eq, a, b),
            _ => Node::Cmp(Cmp::Ne, a, b),
        };
        self.push(node, &[a, b], col)
    }

    /// `a^b`: a constant integer exponent becomes `powi`, another constant `powf` (both
    /// constant: the `f64` power, which allows a negative base with an integer exponent),
    /// else `exp(b ln a)` (a > 0).
    fn power(&mut self, a: Id, b: Id, col: usize) -> Result<Id, ExprError> {
        let last = |p: &Self, i: Id| i as usize + 1 == p.nodes.len();
        let Node::Num(r) = self.nodes[b as usize] else {
            return self.push(Node::Call2(Func2::Pow, a, b), &[a, b], col);
        };
        if !last(self, b) {
            return self.push(Node::Call2(Func2::Pow, a, b), &[a, b], col);
        }
        // the exponent lives in the new node: drop its own
        self.nodes.pop();
        self.depth.pop();
        if let (Node::Num(x), true) = (self.nodes[a as usize], last(self, a)) {
            self.nodes.pop();
            self.depth.pop();
            return self.push(Node::Num(x.powf(r)), &[], col);
        }
        let node = if r.fract() == 0.0 && r.abs() <= 64.0 {
            Node::PowI(a, r as i32)
        } else {
            Node::PowF(a, r)
        };
        self.push(node, &[a], col)
    }

    fn prefix(&mut self) -> Result<Id, ExprError> {
        let t = self.next();
        match t.tok {
            Tok::Num(v) => self.push(Node::Num(v), &[], t.col),
            Tok::Minus => {
                let a = self.expr(PREFIX_BP)?;
                self.push(Node::Neg(a), &[a], t.col)
            }
            Tok::Plus => self.expr(PREFIX_BP),
            Tok::Bang => {
                let a = self.expr(PREFIX_BP)?;
                self.push(Node::Not(a), &[a], t.col)
            }
            Tok::LParen => {
                let e = self.expr(0)?;
                self.expect(Tok::RParen, "`)` to close the `(`", t.col)?;
                Ok(e)
            }
            Tok::Ident(name) => self.name(&name, t.col),
            other => Err(ExprError::at(
                t.col,
                format!(
                    "expected a number, a name, `-` or `(`, found {}",
                    describe(&other)
                ),
            )),
        }
    }

    fn expect(&mut self, want: Tok, what: &str, open_col: usize) -> Result<(), ExprError> {
        let t = self.next();
        if t.tok == want {
            Ok(())
        } else {
            Err(ExprError::at(
                t.col,
                format!(
                    "expected {what} (opened at column {}), found {}",
                    open_col + 1,
                    describe(&t.tok)
                ),
            ))
        }
    }

    /// A name: a function call if `(` follows, else a slot of the scope.
    fn name(&mut self, name: &str, col: usize) -> Result<Id, ExprError> {
        let func = FUNCTIONS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
        if self.peek() == &Tok::LParen {
            let Some(f) = func else {
                return Err(ExprError::at(
                    col,
                    format!(
                        "`{name}` is not a function; functions: {}",
                        function_names().join(", ")
                    ),
                ));
            };
            return self.call(name, f, col);
        }
        match self.scope.get(name) {
            Some(slot) => self.push(slot, &[], col),
            None if func.is_some() => Err(ExprError::at(
                col,
                format!("`{name}` is a function: write {name}(…)"),
            )),
            None => Err(ExprError::at(col, format!("unknown name `{name}`"))),
        }
    }

    fn call(&mut self, name: &str, f: Function, col: usize) -> Result<Id, ExprError> {
        let open = self.col();
        self.pos += 1; // `(`
        let mut args = Vec::new();
        if self.peek() != &Tok::RParen {
            loop {
                args.push(self.expr(0)?);
                if self.peek() == &Tok::Comma {
                    self.pos += 1;
                } else {
                    break;
                }
            }
        }
        self.expect(Tok::RParen, "`,` or `)`", open)?;
        if args.len() != f.arity() {
            return Err(ExprError::at(
                col,
                format!(
                    "{name}(…) takes {} argument(s), got {}",
                    f.arity(),
                    args.len()
                ),
            ));
        }
        let node = match f {
            Function::F1(g) => Node::Call1(g, args[0]),
            Function::F2(Func2::Pow) => return self.power(args[0], args[1], col),
            Function::F2(g) => Node::Call2(g, args[0], args[1]),
            Function::If => Node::If(args[0], args[1], args[2]),
        };
        self.push(node, &args, col)
    }
}
