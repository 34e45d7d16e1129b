//! Points and bodies in planar natural coordinates (theory.md §5; reference-models.md §2).
//!
//! The generalized coordinates `q` are the Cartesian coordinates of the moving points.
//! A uniform slender bar is described exactly by its two end points, so its kinetic energy
//! is a constant quadratic form in the end-point velocities and the mass matrix does not
//! depend on `q`.
//!
//! Matrices are dense, row-major `Vec<D>`/`&mut [D]` of size `n×n`, `n = q.len()`.

use super::param::ParamRef;
use crate::error::ModelError;
use crate::model::{c, Scalar};

/// A point of the mechanism.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Point {
    /// A fixed point (ground pivot, anchor), with coordinates that may be parameters.
    Fixed { x: ParamRef, y: ParamRef },
    /// A moving point whose coordinates are `q[ix]` (x) and `q[ix + 1]` (y).
    Moving { ix: usize },
}

impl Point {
    /// A fixed point at constant coordinates.
    pub fn fixed(x: f64, y: f64) -> Self {
        Point::Fixed {
            x: ParamRef::Const(x),
            y: ParamRef::Const(y),
        }
    }

    /// A moving point with coordinates `(q[ix], q[ix + 1])`.
    pub fn moving(ix: usize) -> Self {
        Point::Moving { ix }
    }

    /// The indices of the point's coordinates in `q`, or `None` for a fixed point.
    pub fn coords(&self) -> Option<(usize, usize)> {
        match *self {
            Point::Fixed { .. } => None,
            Point::Moving { ix } => Some((ix, ix + 1)),
        }
    }

    /// Position `r = (x, y)`: the fixed coordinates, or `(q[ix], q[ix+1])`.
    pub fn position<D: Scalar>(&self, q: &[D], p: &[D]) -> Result<[D; 2], ModelError> {
        match *self {
            Point::Fixed { x, y } => Ok([x.value(p)?, y.value(p)?]),
            Point::Moving { ix } => Ok([q[ix], q[ix + 1]]),
        }
    }

    /// Velocity `ṙ`: zero for a fixed point, `(v[ix], v[ix+1])` for a moving one.
    pub fn velocity<D: Scalar>(&self, v: &[D]) -> [D; 2] {
        match *self {
            Point::Fixed { .. } => [D::zero(), D::zero()],
            Point::Moving { ix } => [v[ix], v[ix + 1]],
        }
    }
}

/// Adds the 2-vector `g` into the entries of `row` (length n) that belong to point `pt`
/// (nothing for a fixed point). Used to assemble forces and constraint Jacobian rows.
pub(crate) fn add_at<D: Scalar>(row: &mut [D], pt: &Point, g: [D; 2]) {
    if let Some((ix, iy)) = pt.coords() {
        row[ix] += g[0];
        row[iy] += g[1];
    }
}

/// Adds `s·I₂` into the 2×2 block (`a`, `b`) of the row-major `n×n` matrix `mat`.
fn add_block<D: Scalar>(n: usize, mat: &mut [D], a: (usize, usize), b: (usize, usize), s: D) {
    mat[a.0 * n + b.0] += s;
    mat[a.1 * n + b.1] += s;
}

/// A uniform slender bar of mass `mass` between points `i` and `j` (indices into the
/// mechanism's points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    pub i: usize,
    pub j: usize,
    pub mass: ParamRef,
}

impl Bar {
    /// Adds the bar's mass matrix into the row-major `n×n` matrix `mat`.
    ///
    /// With `r(s) = (1−s) r_i + s r_j`, `s ∈ [0, 1]`, the kinetic energy
    /// `T = (m/2)∫₀¹|ṙ(s)|² ds = (m/6)(|ṙ_i|² + ṙ_i·ṙ_j + |ṙ_j|²)` gives, in natural
    /// coordinates (reference-models.md §2; seed 000 §3):
    ///
    /// - both ends moving: `M_bar = (m/6) [[2I, I], [I, 2I]]` on the blocks (i, j);
    /// - one end fixed: only the moving end's block `(m/3) I` remains;
    /// - both ends fixed: nothing.
    pub fn add_mass<D: Scalar>(
        &self, points: &[Point], p: &[D], n: usize, mat: &mut [D],
    ) -> Result<(), ModelError> {
        let m = self.mass.value(p)?;
        match (points[self.i].coords(), points[self.j].coords()) {
            (Some(a), Some(b)) => {
                let d = m * c::<D>(1.0 / 3.0); // 2m/6
                let o = m * c::<D>(1.0 / 6.0); // m/6
                add_block(n, mat, a, a, d);
                add_block(n, mat, b, b, d);
                add_block(n, mat, a, b, o);
                add_block(n, mat, b, a, o);
            }
            (Some(a), None) | (None, Some(a)) => add_block(n, mat, a, a, m * c::<D>(1.0 / 3.0)),
            (None, None) => {}
        }
        Ok(())
    }

    /// Adds the bar's gravity load into the generalized force `f`: the exact generalized
    /// force of the potential `V = m g (y_i + y_j)/2` is `−m g/2` in y at each moving end
    /// (reference-models.md §2). Gravity acts along −y with magnitude `g`.
    pub fn add_gravity<D: Scalar>(
        &self, points: &[Point], p: &[D], g: D, f: &mut [D],
    ) -> Result<(), ModelError> {
        let w = -(self.mass.value(p)? * g * c::<D>(0.5));
        add_at(f, &points[self.i], [D::zero(), w]);
        add_at(f, &points[self.j], [D::zero(), w]);
        Ok(())
    }

    /// Gravitational potential energy `V = m g (y_i + y_j)/2` (height of the centre of mass).
    pub fn gravity_potential<D: Scalar>(
        &self, points: &[Point], q: &[D], p: &[D], g: D,
    ) -> Result<D, ModelError> {
        let ri = points[self.i].position(q, p)?;
        let rj = points[self.j].position(q, p)?;
        Ok(self.mass.value(p)? * g * (ri[1] + rj[1]) * c::<D>(0.5))
    }
}

/// A point mass `mass` at point `point`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointMass {
    pub point: usize,
    pub mass: ParamRef,
}

impl PointMass {
    /// Adds `m I₂` on the point's block (`T = (m/2)|ṙ|²`); nothing if the point is fixed.
    pub fn add_mass<D: Scalar>(
        &self, points: &[Point], p: &[D], n: usize, mat: &mut [D],
    ) -> Result<(), ModelError> {
        if let Some(a) = points[self.point].coords() {
            add_block(n, mat, a, a, self.mass.value(p)?);
        }
        Ok(())
    }

    /// Adds the gravity load `(0, −m g)` at the point (potential `V = m g y`).
    pub fn add_gravity<D: Scalar>(
        &self, points: &[Point], p: &[D], g: D, f: &mut [D],
    ) -> Result<(), ModelError> {
        let w = -(self.mass.value(p)? * g);
        add_at(f, &points[self.point], [D::zero(), w]);
        Ok(())
    }

    /// Gravitational potential energy `V = m g y`.
    pub fn gravity_potential<D: Scalar>(
        &self, points: &[Point], q: &[D], p: &[D], g: D,
    ) -> Result<D, ModelError> {
        let r = points[self.point].position(q, p)?;
        Ok(self.mass.value(p)? * g * r[1])
    }
}
