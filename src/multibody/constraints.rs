//! Holonomic, scleronomic constraints `Φ(q, p) = 0` in planar natural coordinates
//! (theory.md §5; seed 000 §3): distance constraints and the point-on-line / point-fixed
//! constraints used for locks.
//!
//! For each constraint row the module gives the position residual `Φ`, its Jacobian `Φ_q`,
//! the velocity residual `Φ̇ = Φ_q v` and the quadratic velocity term `(Φ_q v)_q v` that
//! enters the acceleration equation `Φ̈ = Φ_q a + (Φ_q v)_q v`. None of the constraints
//! depends on time explicitly, so `Φ_t = Φ_qt = Φ_tt = 0`.

use super::bodies::{add_at, Point};
use super::param::ParamRef;
use crate::error::ModelError;
use crate::model::Scalar;

/// One constraint (one or two scalar rows).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Constraint {
    /// `Φ = |r_a − r_b|² − L²` (one row); either point may be fixed.
    Distance {
        a: usize,
        b: usize,
        length: ParamRef,
    },
    /// Point `a` on the horizontal line `y = y0`: `Φ = y_a − y0` (one row).
    HorizontalLine { a: usize, y: ParamRef },
    /// Point `a` on the vertical line `x = x0`: `Φ = x_a − x0` (one row).
    VerticalLine { a: usize, x: ParamRef },
    /// Point `a` locked at `(x0, y0)`: `Φ = (x_a − x0, y_a − y0)` (two rows).
    FixedPoint { a: usize, x: ParamRef, y: ParamRef },
}

impl Constraint {
    /// Number of scalar rows.
    pub fn rows(&self) -> usize {
        match self {
            Constraint::FixedPoint { .. } => 2,
            _ => 1,
        }
    }

    /// The point indices this constraint refers to.
    pub fn points(&self) -> Vec<usize> {
        match *self {
            Constraint::Distance { a, b, .. } => vec![a, b],
            Constraint::HorizontalLine { a, .. }
            | Constraint::VerticalLine { a, .. }
            | Constraint::FixedPoint { a, .. } => vec![a],
        }
    }

    /// The parameter references of this constraint.
    pub fn params(&self) -> Vec<ParamRef> {
        match *self {
            Constraint::Distance { length, .. } => vec![length],
            Constraint::HorizontalLine { y, .. } => vec![y],
            Constraint::VerticalLine { x, .. } => vec![x],
            Constraint::FixedPoint { x, y, .. } => vec![x, y],
        }
    }
}

/// Total number of rows of a constraint set.
pub fn count_rows(cons: &[Constraint]) -> usize {
    cons.iter().map(Constraint::rows).sum()
}

/// A constraint set evaluated at `(q, v, p)`.
#[derive(Debug, Clone)]
pub struct ConstraintEval<D> {
    /// Number of rows m.
    pub m: usize,
    /// Number of coordinates n.
    pub n: usize,
    /// Position residuals `Φ` (m).
    pub phi: Vec<D>,
    /// Jacobian `Φ_q`, row-major m×n.
    pub jac: Vec<D>,
    /// Velocity residuals `Φ̇ = Φ_q v` (m).
    pub phidot: Vec<D>,
    /// Quadratic velocity terms `(Φ_q v)_q v` (m).
    pub quad: Vec<D>,
}

/// The entry of largest magnitude, `max_i |w_i|` (zero for an empty vector). In dual
/// numbers the derivative is that of the selected entry's `|w_i|`.
pub fn max_abs<D: Scalar>(w: &[D]) -> D {
    let mut best = D::zero();
    for x in w {
        let a = x.abs();
        if a.re() > best.re() {
            best = a;
        }
    }
    best
}

impl<D: Scalar> ConstraintEval<D> {
    /// `max_i |Φ_i|`.
    pub fn phi_max(&self) -> D {
        max_abs(&self.phi)
    }
    /// `max_i |Φ̇_i|`.
    pub fn phidot_max(&self) -> D {
        max_abs(&self.phidot)
    }
    /// Row `i` of `Φ_q`.
    pub fn jac_row(&self, i: usize) -> &[D] {
        &self.jac[i * self.n..(i + 1) * self.n]
    }
}

/// Evaluates a constraint set (theory.md §5; seed 000 §3, the `Φ`, `Φ̇` of (30)–(32)):
///
/// - distance, `d = r_a − r_b`, `u = ṙ_a − ṙ_b`: `Φ = d·d − L²`, `Φ_q = (2dᵀ at a, −2dᵀ at b)`,
///   `Φ̇ = 2 d·u`, `(Φ_q v)_q v = 2 u·u`;
/// - horizontal line: `Φ = y_a − y0`, `Φ_q = e_{y_a}ᵀ`, `Φ̇ = ẏ_a`, quadratic term 0;
/// - vertical line: `Φ = x_a − x0`, `Φ_q = e_{x_a}ᵀ`, `Φ̇ = ẋ_a`, quadratic term 0;
/// - fixed point: the two rows of the vertical and horizontal line through `(x0, y0)`.
///
/// Fixed points contribute no columns. `n = q.len() = v.len()`.
pub fn evaluate<D: Scalar>(
    cons: &[Constraint], points: &[Point], q: &[D], v: &[D], p: &[D],
) -> Result<ConstraintEval<D>, ModelError> {
    let n = q.len();
    let m = count_rows(cons);
    let z = D::zero();
    let two = D::from(2.0);
    let mut ev = ConstraintEval {
        m,
        n,
        phi: Vec::with_capacity(m),
        jac: vec![z; m * n],
        phidot: Vec::with_capacity(m),
        quad: Vec::with_capacity(m),
    };
    let mut row = 0;
    for con in cons {
        match *con {
            Constraint::Distance { a, b, length } => {
                let ra = points[a].position(q, p)?;
                let rb = points[b].position(q, p)?;
                let va = points[a].velocity(v);
                let vb = points[b].velocity(v);
                let d = [ra[0] - rb[0], ra[1] - rb[1]];
                let u = [va[0] - vb[0], va[1] - vb[1]];
                let l = length.value(p)?;
                ev.phi.push(d[0] * d[0] + d[1] * d[1] - l * l);
                ev.phidot.push(two * (d[0] * u[0] + d[1] * u[1]));
                ev.quad.push(two * (u[0] * u[0] + u[1] * u[1]));
                let r = &mut ev.jac[row * n..(row + 1) * n];
                add_at(r, &points[a], [two * d[0], two * d[1]]);
                add_at(r, &points[b], [-(two * d[0]), -(two * d[1])]);
                row += 1;
            }
            Constraint::HorizontalLine { a, y } => {
                let ra = points[a].position(q, p)?;
                let va = points[a].velocity(v);
                ev.phi.push(ra[1] - y.value(p)?);
                ev.phidot.push(va[1]);
                ev.quad.push(z);
                add_at(
                    &mut ev.jac[row * n..(row + 1) * n],
                    &points[a],
                    [z, D::one()],
                );
                row += 1;
            }
            Constraint::VerticalLine { a, x } => {
                let ra = points[a].position(q, p)?;
                let va = points[a].velocity(v);
                ev.phi.push(ra[0] - x.value(p)?);
                ev.phidot.push(va[0]);
                ev.quad.push(z);
                add_at(
                    &mut ev.jac[row * n..(row + 1) * n],
                    &points[a],
                    [D::one(), z],
                );
                row += 1;
            }
            Constraint::FixedPoint { a, x, y } => {
                let ra = points[a].position(q, p)?;
                let va = points[a].velocity(v);
                ev.phi.push(ra[0] - x.value(p)?);
                ev.phi.push(ra[1] - y.value(p)?);
                ev.phidot.push(va[0]);
                ev.phidot.push(va[1]);
                ev.quad.push(z);
                ev.quad.push(z);
                add_at(
                    &mut ev.jac[row * n..(row + 1) * n],
                    &points[a],
                    [D::one(), z],
                );
                add_at(
                    &mut ev.jac[(row + 1) * n..(row + 2) * n],
                    &points[a],
                    [z, D::one()],
                );
                row += 2;
            }
        }
    }
    debug_assert_eq!(row, m);
    Ok(ev)
}

/// The mixed velocity term `(Φ_q v)_q w` of every row of a constraint set: the derivative
/// of `Φ̇ = Φ_q v` along a position direction `w` (theory.md §5). Every constraint here is
/// at most quadratic in q, so this is a symmetric bilinear form in (v, w) and `w = v` gives
/// [`ConstraintEval::quad`]:
///
/// - distance, `u = ṙ_a − ṙ_b`, `s = w_a − w_b`: `2 u·s`;
/// - line and fixed-point rows (linear in q): 0.
///
/// The index-2 formulation uses it with `w = q̇` ([`super::dynamics::index2_acceleration`]).
pub fn velocity_hessian_product<D: Scalar>(
    cons: &[Constraint], points: &[Point], v: &[D], w: &[D],
) -> Vec<D> {
    let two = D::from(2.0);
    let mut out = Vec::with_capacity(count_rows(cons));
    for con in cons {
        match *con {
            Constraint::Distance { a, b, .. } => {
                let (va, vb) = (points[a].velocity(v), points[b].velocity(v));
                let (wa, wb) = (points[a].velocity(w), points[b].velocity(w));
                let u = [va[0] - vb[0], va[1] - vb[1]];
                let s = [wa[0] - wb[0], wa[1] - wb[1]];
                out.push(two * (u[0] * s[0] + u[1] * s[1]));
            }
            Constraint::HorizontalLine { .. } | Constraint::VerticalLine { .. } => {
                out.push(D::zero())
            }
            Constraint::FixedPoint { .. } => {
                out.push(D::zero());
                out.push(D::zero());
            }
        }
    }
    out
}
