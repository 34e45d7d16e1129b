//! Dense LU factors with partial pivoting (Golub & Van Loan, *Matrix Computations*, §3.4,
//! the right-looking `kji` form) of the implicit integrators' iteration matrices, real or
//! complex. The factors are real (or complex over `f64`); the substitutions are generic
//! over the scalar, so a dual run's derivative parts are solved with the same factors.

use crate::model::Scalar;
use nalgebra::{Complex, DMatrix};
use std::ops::{Div, Mul, Sub};

/// The entries an LU factorization needs: `f64` or `Complex<f64>`.
pub(crate) trait Entry:
    Copy + PartialEq + Mul<Output = Self> + Sub<Output = Self> + Div<Output = Self>
{
    fn zero() -> Self;
    /// The pivot's size (the modulus).
    fn modulus(self) -> f64;
}

impl Entry for f64 {
    fn zero() -> Self {
        0.0
    }
    fn modulus(self) -> f64 {
        self.abs()
    }
}

impl Entry for Complex<f64> {
    fn zero() -> Self {
        Complex::new(0.0, 0.0)
    }
    fn modulus(self) -> f64 {
        self.norm()
    }
}

/// `P M = L U` of a square matrix M, packed column-major: L (unit diagonal) strictly below
/// the diagonal, U on and above it; `perm[i]` is the row of M that is row i of `P M`.
#[derive(Debug, Clone)]
pub(crate) struct Lu<T> {
    a: Vec<T>,
    perm: Vec<usize>,
    n: usize,
}

impl<T: Entry> Lu<T> {
    /// Factors `m` (n × n, column-major data), or `None` when a pivot is zero or not finite
    /// (M is singular to working precision).
    pub(crate) fn factor(n: usize, mut a: Vec<T>) -> Option<Self> {
        debug_assert_eq!(a.len(), n * n);
        let mut perm: Vec<usize> = (0..n).collect();
        for k in 0..n {
            // the pivot: the largest entry of column k on or below the diagonal
            let col = &a[k * n..(k + 1) * n];
            let (p, size) = (k..n)
                .map(|i| (i, col[i].modulus()))
                .fold((k, -1.0), |best, c| if c.1 > best.1 { c } else { best });
            if !(size > 0.0) || !size.is_finite() {
                return None;
            }
            if p != k {
                perm.swap(p, k);
                for j in 0..n {
                    a.swap(j * n + p, j * n + k);
                }
            }
            let pivot = a[k * n + k];
            for i in k + 1..n {
                a[k * n + i] = a[k * n + i] / pivot;
            }
            // the trailing update, column by column: A[i, j] −= L[i, k] U[k, j]
            let (left, right) = a.split_at_mut((k + 1) * n);
            let lk = &left[k * n..];
            for cj in right.chunks_exact_mut(n) {
                let ukj = cj[k];
                if ukj == T::zero() {
                    continue;
                }
                for i in k + 1..n {
                    cj[i] = cj[i] - lk[i] * ukj;
                }
            }
        }
        Some(Lu { a, perm, n })
    }

    pub(crate) fn dim(&self) -> usize {
        self.n
    }
}

impl Lu<f64> {
    /// Factors a real matrix.
    pub(crate) fn of(m: &DMatrix<f64>) -> Option<Self> {
        Self::factor(m.nrows(), m.as_slice().to_vec())
    }

    /// Solves `M x = b` in place (`b` of length n, overwritten by x); `x` is scratch.
    pub(crate) fn solve<D: Scalar>(&self, b: &mut [D], x: &mut [D]) {
        let n = self.n;
        for i in 0..n {
            x[i] = b[self.perm[i]];
        }
        // L (unit), column by column
        for k in 0..n {
            let xk = x[k];
            let col = &self.a[k * n..(k + 1) * n];
            for i in k + 1..n {
                x[i] -= xk * col[i];
            }
        }
        // U, column by column from the last
        for k in (0..n).rev() {
            let col = &self.a[k * n..(k + 1) * n];
            x[k] /= col[k];
            let xk = x[k];
            for i in 0..k {
                x[i] -= xk * col[i];
            }
        }
        b.copy_from_slice(&x[..n]);
    }
}

/// `(p + i q)·(u + i v)` for a complex factor entry and a pair of scalars: the real and
/// the imaginary part.
#[inline(always)]
fn cmul<D: Scalar>(c: Complex<f64>, u: D, v: D) -> (D, D) {
    (u * c.re - v * c.im, u * c.im + v * c.re)
}

impl Lu<Complex<f64>> {
    /// Solves `M (u + i v) = (bu + i bv)` in place for complex M and real-scalar parts
    /// (`bu`, `bv` overwritten by u, v); `xu`, `xv` are scratch.
    pub(crate) fn solve_pair<D: Scalar>(
        &self, (bu, bv): (&mut [D], &mut [D]), (xu, xv): (&mut [D], &mut [D]),
    ) {
        let n = self.n;
        for i in 0..n {
            xu[i] = bu[self.perm[i]];
            xv[i] = bv[self.perm[i]];
        }
        for k in 0..n {
            let (uk, vk) = (xu[k], xv[k]);
            let col = &self.a[k * n..(k + 1) * n];
            for i in k + 1..n {
                let (pu, pv) = cmul(col[i], uk, vk);
                xu[i] -= pu;
                xv[i] -= pv;
            }
        }
        for k in (0..n).rev() {
            let col = &self.a[k * n..(k + 1) * n];
            let inv = Complex::new(1.0, 0.0) / col[k];
            let (uk, vk) = cmul(inv, xu[k], xv[k]);
            xu[k] = uk;
            xv[k] = vk;
            for i in 0..k {
                let (pu, pv) = cmul(col[i], uk, vk);
                xu[i] -= pu;
                xv[i] -= pv;
            }
        }
        bu.copy_from_slice(&xu[..n]);
        bv.copy_from_slice(&xv[..n]);
    }
}

/// Factors of an iteration matrix, dense or sparse ([`super::sparse`]); the sparse ones
/// are built for real runs only.
pub(crate) enum Factored<T> {
    Dense(Lu<T>),
    Sparse(Box<super::sparse::SparseLu<T>>),
}

impl<T: Entry> Factored<T> {
    pub(crate) fn dim(&self) -> usize {
        match self {
            Factored::Dense(lu) => lu.dim(),
            Factored::Sparse(lu) => lu.dim(),
        }
    }
}

impl Factored<f64> {
    /// Solves `M x = b` in place; `x` is scratch (dense only).
    pub(crate) fn solve<D: Scalar>(&self, b: &mut [D], x: &mut [D]) {
        match self {
            Factored::Dense(lu) => lu.solve(b, x),
            Factored::Sparse(lu) => lu.solve(b),
        }
    }
}

impl Factored<Complex<f64>> {
    /// Solves `M (u + i v) = (bu + i bv)` in place; `xu`, `xv` are scratch (dense only).
    pub(crate) fn solve_pair<D: Scalar>(
        &self, (bu, bv): (&mut [D], &mut [D]), scratch: (&mut [D], &mut [D]),
    ) {
        match self {
            Factored::Dense(lu) => lu.solve_pair((bu, bv), scratch),
            Factored::Sparse(lu) => lu.solve_pair(bu, bv),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_solve_matches_the_matrix() {
        let m = DMatrix::from_row_slice(3, 3, &[0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.5, 4.0]);
        let lu = Lu::of(&m).unwrap();
        let b = [1.0, -2.0, 0.5];
        let mut x = b;
        lu.solve(&mut x, &mut [0.0; 3]);
        let r = &m * nalgebra::DVector::from_column_slice(&x);
        for i in 0..3 {
            assert!((r[i] - b[i]).abs() < 1e-14, "{r}");
        }
        assert!(Lu::of(&DMatrix::<f64>::zeros(2, 2)).is_none());
    }

    #[test]
    fn complex_solve_matches_the_matrix() {
        let c = |re, im| Complex::new(re, im);
        let data = vec![c(1.0, 2.0), c(0.5, 0.0), c(0.0, -1.0), c(3.0, 1.0)];
        let m = DMatrix::from_column_slice(2, 2, &data);
        let lu = Lu::factor(2, data).unwrap();
        let (mut u, mut v) = ([1.0, -1.0], [0.25, 2.0]);
        let b: Vec<Complex<f64>> = (0..2).map(|i| c(u[i], v[i])).collect();
        lu.solve_pair((&mut u, &mut v), (&mut [0.0; 2], &mut [0.0; 2]));
        let x = nalgebra::DVector::from_fn(2, |i, _| c(u[i], v[i]));
        let r = &m * x;
        for i in 0..2 {
            assert!((r[i] - b[i]).norm() < 1e-14, "{r}");
        }
    }
}
