//! The knots of a tabulated nominal and the reference read from them, shared by the period
//! table and the run table: between two knots x_ref is the cubic Hermite interpolant of the
//! values and slopes (fourth order), u_nom and K linear; beyond an end knot the reference
//! goes on to first order along that knot's slope with u_nom and K held
//! (docs/theory.md §10).

use super::law::RefPoint;
use crate::model::Scalar;
use nalgebra::{DMatrix, DVector};

/// Knots in increasing time: the state, its slope `f(x, u)`, the control and the gain,
/// stored transposed (`Kᵀ`, so that its column-major order is K's row-major order).
#[derive(Debug, Clone, Default)]
pub(super) struct Knots {
    x: Vec<DVector<f64>>,
    f: Vec<DVector<f64>>,
    u: Vec<DVector<f64>>,
    kt: Vec<DMatrix<f64>>,
}

impl Knots {
    /// An empty table with room for `n` knots.
    pub(super) fn with_capacity(n: usize) -> Self {
        Knots {
            x: Vec::with_capacity(n),
            f: Vec::with_capacity(n),
            u: Vec::with_capacity(n),
            kt: Vec::with_capacity(n),
        }
    }

    /// Appends a knot: state, slope, control, gain K (nu × nx).
    pub(super) fn push(
        &mut self, x: DVector<f64>, f: DVector<f64>, u: DVector<f64>, k: &DMatrix<f64>,
    ) {
        self.x.push(x);
        self.f.push(f);
        self.u.push(u);
        self.kt.push(k.transpose());
    }

    /// The number of knots.
    pub(super) fn len(&self) -> usize {
        self.x.len()
    }

    /// Every gain set to zero: the open loop.
    pub(super) fn zero_gains(&mut self) {
        self.kt.iter_mut().for_each(|k| k.fill(0.0));
    }

    /// Beyond knot `i` by `dt` (signed): `x_i + f_i dt`, u_i and K_i held.
    pub(super) fn beyond<D: Scalar>(&self, i: usize, dt: D) -> RefPoint<D> {
        let x = self.x[i]
            .iter()
            .zip(self.f[i].iter())
            .map(|(&x, &f)| dt * f + x)
            .collect();
        RefPoint {
            x,
            u: self.u[i].iter().map(|&a| D::from(a)).collect(),
            k: self.kt[i].iter().map(|&a| D::from(a)).collect(),
        }
    }

    /// Between knots `i` and `i + 1`, `h` apart, at `s = (τ − t_i)/h ∈ [0, 1]`: x by the
    /// cubic Hermite basis `h00 x_i + h10 h f_i + h01 x_{i+1} + h11 h f_{i+1}`, u and K by
    /// `(1 − s) a + s b`.
    pub(super) fn between<D: Scalar>(&self, i: usize, s: D, h: f64) -> RefPoint<D> {
        let (s2, s3) = (s * s, s * s * s);
        let h00 = s3 * 2.0 - s2 * 3.0 + 1.0;
        let h10 = (s3 - s2 * 2.0 + s) * h;
        let h01 = s2 * 3.0 - s3 * 2.0;
        let h11 = (s3 - s2) * h;
        let x = (0..self.x[i].len())
            .map(|j| {
                h00 * self.x[i][j]
                    + h10 * self.f[i][j]
                    + h01 * self.x[i + 1][j]
                    + h11 * self.f[i + 1][j]
            })
            .collect();
        let lin = |a: f64, b: f64| (D::one() - s) * a + s * b;
        let u = (0..self.u[i].len())
            .map(|j| lin(self.u[i][j], self.u[i + 1][j]))
            .collect();
        let (ka, kb) = (&self.kt[i], &self.kt[i + 1]);
        let k = ka.iter().zip(kb.iter()).map(|(&a, &b)| lin(a, b)).collect();
        RefPoint { x, u, k }
    }
}
