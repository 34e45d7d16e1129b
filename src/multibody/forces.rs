//! Applied forces in planar natural coordinates: linear springs, linear dampers and gravity
//! (theory.md §5, the generalized force `F(t, q, v, p)`; reference-models.md §2).
//!
//! Each force element adds its generalized force into `f` (length n = q.len()); conservative
//! elements also give their potential energy, so that `F = −∂V/∂q` can be checked.

use super::bodies::{add_at, Bar, Point, PointMass};
use super::param::ParamRef;
use crate::error::ModelError;
use crate::model::Scalar;

/// The vector `d = r_a − r_b` and its length `|d|`; an error if the two points coincide
/// (the direction of a spring or damper is undefined there).
fn separation<D: Scalar>(
    points: &[Point], a: usize, b: usize, q: &[D], p: &[D], what: &str,
) -> Result<([D; 2], D), ModelError> {
    let ra = points[a].position(q, p)?;
    let rb = points[b].position(q, p)?;
    let d = [ra[0] - rb[0], ra[1] - rb[1]];
    let len2 = d[0] * d[0] + d[1] * d[1];
    if len2.re().is_nan() || len2.re() <= 0.0 {
        return Err(ModelError::ZeroLength {
            what: what.to_string(),
            a,
            b,
        });
    }
    Ok((d, len2.sqrt()))
}

/// A linear spring of stiffness `k` and natural length `l0` between points `a` and `b`
/// (either may be fixed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spring {
    pub a: usize,
    pub b: usize,
    pub k: ParamRef,
    pub l0: ParamRef,
}

impl Spring {
    /// Current length `ℓ = |r_a − r_b|`.
    pub fn length<D: Scalar>(&self, points: &[Point], q: &[D], p: &[D]) -> Result<D, ModelError> {
        Ok(separation(points, self.a, self.b, q, p, "spring")?.1)
    }

    /// Potential energy `V = ½ k (ℓ − L0)²`.
    pub fn energy<D: Scalar>(&self, points: &[Point], q: &[D], p: &[D]) -> Result<D, ModelError> {
        let (_, l) = separation(points, self.a, self.b, q, p, "spring")?;
        let s = l - self.l0.value(p)?;
        Ok(self.k.value(p)? * s * s * D::from(0.5))
    }

    /// Adds the spring force: on a, `−k (ℓ − L0)(r_a − r_b)/ℓ`; on b the opposite
    /// (reference-models.md §2). This is `−∂V/∂q` for `V = ½k(ℓ − L0)²`.
    pub fn add_force<D: Scalar>(
        &self, points: &[Point], q: &[D], p: &[D], f: &mut [D],
    ) -> Result<(), ModelError> {
        let (d, l) = separation(points, self.a, self.b, q, p, "spring")?;
        let s = -(self.k.value(p)? * (l - self.l0.value(p)?) / l);
        let fa = [s * d[0], s * d[1]];
        add_at(f, &points[self.a], fa);
        add_at(f, &points[self.b], [-fa[0], -fa[1]]);
        Ok(())
    }
}

/// A linear damper of coefficient `c` acting along the line between points `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Damper {
    pub a: usize,
    pub b: usize,
    pub c: ParamRef,
}

impl Damper {
    /// Adds the damper force: with `e = (r_a − r_b)/ℓ` and the elongation rate
    /// `ℓ̇ = e·(ṙ_a − ṙ_b)`, the force on a is `−c ℓ̇ e` and on b the opposite
    /// (dissipated power `c ℓ̇² ≥ 0`).
    pub fn add_force<D: Scalar>(
        &self, points: &[Point], q: &[D], v: &[D], p: &[D], f: &mut [D],
    ) -> Result<(), ModelError> {
        let (d, l) = separation(points, self.a, self.b, q, p, "damper")?;
        let e = [d[0] / l, d[1] / l];
        let va = points[self.a].velocity(v);
        let vb = points[self.b].velocity(v);
        let rate = e[0] * (va[0] - vb[0]) + e[1] * (va[1] - vb[1]);
        let s = -(self.c.value(p)? * rate);
        let fa = [s * e[0], s * e[1]];
        add_at(f, &points[self.a], fa);
        add_at(f, &points[self.b], [-fa[0], -fa[1]]);
        Ok(())
    }
}

/// Adds the gravity loads of all bodies (gravity `g` along −y): `−m g/2` in y at each moving
/// end of a bar, `−m g` at a point mass (reference-models.md §2).
pub fn add_gravity<D: Scalar>(
    points: &[Point], bars: &[Bar], point_masses: &[PointMass], g: D, p: &[D], f: &mut [D],
) -> Result<(), ModelError> {
    for b in bars {
        b.add_gravity(points, p, g, f)?;
    }
    for m in point_masses {
        m.add_gravity(points, p, g, f)?;
    }
    Ok(())
}

/// Gravitational potential energy of all bodies: `Σ m g y_cm` (y_cm of a bar is the mean
/// of its end heights).
pub fn gravity_potential<D: Scalar>(
    points: &[Point], bars: &[Bar], point_masses: &[PointMass], g: D, q: &[D], p: &[D],
) -> Result<D, ModelError> {
    let mut v = D::zero();
    for b in bars {
        v += b.gravity_potential(points, q, p, g)?;
    }
    for m in point_masses {
        v += m.gravity_potential(points, q, p, g)?;
    }
    Ok(v)
}
