//! Small dense linear solves generic over the scalar, so that model leaf code (constraint
//! matrices, impact laws) and the implicit integrator run in `f64` and in dual numbers alike.
//! Gaussian elimination with partial pivoting on the real part; derivatives of the solution
//! are then exact (the dual part solves the differentiated system `A ẋ = ḃ − Ȧ x`).

use crate::error::ModelError;
use crate::model::Scalar;

/// Relative pivot threshold below which a matrix is reported singular.
/// Default 1e-13 relative to the largest entry: a few hundred times machine epsilon.
pub const SINGULAR_PIVOT: f64 = 1e-13;

/// Solves `A X = B` in place for a row-major `n×n` matrix `a` and a row-major `n×m`
/// right-hand side `b` (m columns). On return `b` holds X; `a` is destroyed.
pub fn solve_in_place<D: Scalar>(
    n: usize, a: &mut [D], b: &mut [D], m: usize, what: &str,
) -> Result<(), ModelError> {
    debug_assert_eq!(a.len(), n * n);
    debug_assert_eq!(b.len(), n * m);
    let scale = a
        .iter()
        .fold(0.0f64, |s, v| s.max(v.re().abs()))
        .max(1e-300);
    for k in 0..n {
        let mut piv = k;
        let mut best = a[k * n + k].re().abs();
        for i in k + 1..n {
            let v = a[i * n + k].re().abs();
            if v > best {
                best = v;
                piv = i;
            }
        }
        if !(best > SINGULAR_PIVOT * scale) {
            return Err(ModelError::Singular {
                what: what.to_string(),
                pivot: best / scale,
            });
        }
        if piv != k {
            for j in 0..n {
                a.swap(k * n + j, piv * n + j);
            }
            for j in 0..m {
                b.swap(k * m + j, piv * m + j);
            }
        }
        let inv = a[k * n + k].recip();
        for i in k + 1..n {
            let l = a[i * n + k] * inv;
            if l.re() == 0.0 && l == D::zero() {
                continue;
            }
            a[i * n + k] = l;
            for j in k + 1..n {
                let akj = a[k * n + j];
                a[i * n + j] -= l * akj;
            }
            for j in 0..m {
                let bkj = b[k * m + j];
                b[i * m + j] -= l * bkj;
            }
        }
    }
    for k in (0..n).rev() {
        let inv = a[k * n + k].recip();
        for j in 0..m {
            let mut s = b[k * m + j];
            for i in k + 1..n {
                s -= a[k * n + i] * b[i * m + j];
            }
            b[k * m + j] = s * inv;
        }
    }
    Ok(())
}

/// Solves `A x = b` for one right-hand side, returning x.
pub fn solve<D: Scalar>(n: usize, a: &[D], b: &[D], what: &str) -> Result<Vec<D>, ModelError> {
    let mut a = a.to_vec();
    let mut x = b.to_vec();
    solve_in_place(n, &mut a, &mut x, 1, what)?;
    Ok(x)
}

/// An LU factorization `P A = L U` (partial pivoting) of a real n×n matrix, kept so that
/// several right-hand sides can be solved later at O(n²) each (the multibody VJP solves
/// with `K` for the accelerations, then for the cotangents).
#[derive(Debug, Clone)]
pub struct Lu {
    n: usize,
    lu: Vec<f64>,
    piv: Vec<usize>,
}

impl Lu {
    /// Factors the row-major matrix `a`; fails like [`solve_in_place`] on a pivot below
    /// [`SINGULAR_PIVOT`] relative to the largest entry.
    pub fn factor(n: usize, mut a: Vec<f64>, what: &str) -> Result<Lu, ModelError> {
        debug_assert_eq!(a.len(), n * n);
        let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs())).max(1e-300);
        let mut piv = Vec::with_capacity(n);
        for k in 0..n {
            let mut p = k;
            let mut best = a[k * n + k].abs();
            for i in k + 1..n {
                let v = a[i * n + k].abs();
                if v > best {
                    best = v;
                    p = i;
                }
            }
            if !(best > SINGULAR_PIVOT * scale) {
                return Err(ModelError::Singular {
                    what: what.to_string(),
                    pivot: best / scale,
                });
            }
            piv.push(p);
            if p != k {
                let (top, bottom) = a.split_at_mut(p * n);
                top[k * n..(k + 1) * n].swap_with_slice(&mut bottom[..n]);
            }
            // rows below k minus l_ik times row k, on slices (no bounds checks inside)
            let (upper, lower) = a.split_at_mut((k + 1) * n);
            let row_k = &upper[k * n + k + 1..(k + 1) * n];
            let inv = 1.0 / upper[k * n + k];
            for row in lower.chunks_exact_mut(n) {
                let l = row[k] * inv;
                row[k] = l;
                if l != 0.0 {
                    for (x, &y) in row[k + 1..].iter_mut().zip(row_k) {
                        *x -= l * y;
                    }
                }
            }
        }
        Ok(Lu { n, lu: a, piv })
    }

    /// Solves `A X = B` in place for a row-major n×m right-hand side.
    pub fn solve_in_place(&self, b: &mut [f64], m: usize) {
        let (n, a) = (self.n, &self.lu);
        if m == 0 {
            return;
        }
        // P b first (the factorization swapped whole rows, L included), then L y = P b
        for k in 0..n {
            let p = self.piv[k];
            if p != k {
                for j in 0..m {
                    b.swap(k * m + j, p * m + j);
                }
            }
        }
        for k in 0..n {
            let (done, rest) = b[..n * m].split_at_mut((k + 1) * m);
            let bk = &done[k * m..];
            for (i, bi) in (k + 1..n).zip(rest.chunks_exact_mut(m)) {
                let l = a[i * n + k];
                if l != 0.0 {
                    for (x, &y) in bi.iter_mut().zip(bk) {
                        *x -= l * y;
                    }
                }
            }
        }
        for k in (0..n).rev() {
            let inv = 1.0 / a[k * n + k];
            let row = &a[k * n + k + 1..(k + 1) * n];
            let (head, tail) = b[..n * m].split_at_mut((k + 1) * m);
            let bk = &mut head[k * m..];
            for (j, x) in bk.iter_mut().enumerate() {
                let mut s = *x;
                for (i, &aki) in row.iter().enumerate() {
                    s -= aki * tail[i * m + j];
                }
                *x = s * inv;
            }
        }
    }
}

/// A complex eigenvalue, serialized as `[re, im]`.
pub type Multiplier = [f64; 2];

/// Eigenvalues of a real square matrix (real Schur form), sorted by decreasing modulus.
pub fn eigenvalues(m: &nalgebra::DMatrix<f64>) -> Vec<nalgebra::Complex<f64>> {
    let mut ev: Vec<nalgebra::Complex<f64>> =
        m.clone().complex_eigenvalues().iter().copied().collect();
    ev.sort_by(|a, b| b.norm().total_cmp(&a.norm()));
    ev
}

/// `[re, im]` pairs.
pub fn pairs(v: &[nalgebra::Complex<f64>]) -> Vec<Multiplier> {
    v.iter().map(|c| [c.re, c.im]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    #[test]
    fn solves_and_differentiates() {
        // A(s) = [[2+s, 1], [1, 3]], b = [1, 2]; x(s) = A(s)^{-1} b; check dx/ds by FD.
        let f = |s: f64| solve(2, &[2.0 + s, 1.0, 1.0, 3.0], &[1.0, 2.0], "t").unwrap();
        let s = Dual64::new(0.3, 1.0);
        let one = Dual64::from(1.0);
        let x = solve(
            2,
            &[Dual64::from(2.0) + s, one, one, Dual64::from(3.0)],
            &[one, Dual64::from(2.0)],
            "t",
        )
        .unwrap();
        let h = 1e-6;
        for i in 0..2 {
            let fd = (f(0.3 + h)[i] - f(0.3 - h)[i]) / (2.0 * h);
            assert!((x[i].eps - fd).abs() < 1e-8, "{} vs {}", x[i].eps, fd);
            assert!((x[i].re - f(0.3)[i]).abs() < 1e-15);
        }
    }

    #[test]
    fn lu_solves_several_right_hand_sides() {
        // A = [[4, 3, 0], [6, 3, 1], [0, 2, 5]] (pivoting needed), X = A⁻¹B checked by AX = B
        let a = vec![4.0, 3.0, 0.0, 6.0, 3.0, 1.0, 0.0, 2.0, 5.0];
        let b = vec![1.0, 0.0, 2.0, 1.0, -1.0, 3.0];
        let lu = Lu::factor(3, a.clone(), "t").unwrap();
        let mut x = b.clone();
        lu.solve_in_place(&mut x, 2);
        for i in 0..3 {
            for j in 0..2 {
                let ax: f64 = (0..3).map(|k| a[i * 3 + k] * x[k * 2 + j]).sum();
                assert!(
                    (ax - b[i * 2 + j]).abs() < 1e-14,
                    "{ax} vs {}",
                    b[i * 2 + j]
                );
            }
        }
        assert!(Lu::factor(2, vec![1.0, 2.0, 2.0, 4.0], "s").is_err());
    }

    #[test]
    fn singular_is_reported() {
        let r = solve(2, &[1.0, 2.0, 2.0, 4.0], &[1.0, 1.0], "test matrix");
        assert!(matches!(r, Err(ModelError::Singular { .. })));
    }
}
