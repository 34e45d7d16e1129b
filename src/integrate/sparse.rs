//! The sparse form of the implicit integrators' Newton Jacobian and of their iteration
//! matrices `c I − J` (docs/theory.md §8, "Sparse Jacobians"), factored by `faer`'s sparse
//! LU (column approximate minimum degree ordering, partial pivoting; docs/dependencies.md).
//!
//! The structure of a block (its pattern with the diagonal added) is shared by every
//! Jacobian evaluated with it, and its symbolic factorization (the ordering and the
//! elimination tree) is computed once per structure and reused by every numeric
//! factorization, real and complex. The substitutions work on `f64` slices: sparse
//! factors are built for real runs only ([`crate::model::Scalar::REAL`]); a dual run
//! factors the same Jacobian densely.

use crate::model::Scalar;
use crate::sparsity::Pattern;
use faer::linalg::solvers::SolveCore;
use faer::sparse::linalg::solvers::{Lu as FaerLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{c64, Conj, MatMut};
use nalgebra::DMatrix;
use std::sync::{Arc, OnceLock};

/// The structure of an `n × n` sparse block: a pattern that contains the diagonal, by
/// columns, with its symbolic LU and its transpose computed when first needed.
#[derive(Debug)]
pub struct Structure {
    sym: SymbolicSparseColMat<u32>,
    /// The position of entry (j, j) among the values.
    diag: Vec<usize>,
    symbolic: OnceLock<Option<SymbolicLu<u32>>>,
    /// The structure of the transpose, and for each of its positions the position of the
    /// same entry here.
    transposed: OnceLock<(Arc<Structure>, Vec<usize>)>,
}

impl Structure {
    /// The structure of `c I − J` for J of pattern `p` (the diagonal added).
    pub fn of(p: &Pattern) -> Arc<Structure> {
        let p = p.with_diagonal();
        let n = p.dim();
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::with_capacity(p.nnz());
        let mut diag = Vec::with_capacity(n);
        col_ptr.push(0u32);
        for j in 0..n {
            for &i in p.column(j) {
                if i == j {
                    diag.push(row_idx.len());
                }
                row_idx.push(i as u32);
            }
            col_ptr.push(row_idx.len() as u32);
        }
        Arc::new(Structure {
            sym: SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx),
            diag,
            symbolic: OnceLock::new(),
            transposed: OnceLock::new(),
        })
    }

    /// The number of rows (= columns).
    pub fn dim(&self) -> usize {
        self.sym.nrows()
    }

    /// The number of stored entries.
    pub fn nnz(&self) -> usize {
        self.sym.row_idx().len()
    }

    /// Every stored entry as `(position, row, column)`, column by column.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let ptr = self.sym.col_ptr();
        (0..self.dim()).flat_map(move |j| {
            (ptr[j] as usize..ptr[j + 1] as usize)
                .map(move |k| (k, self.sym.row_idx()[k] as usize, j))
        })
    }

    fn symbolic(&self) -> Option<&SymbolicLu<u32>> {
        self.symbolic
            .get_or_init(|| SymbolicLu::try_new(self.sym.as_ref()).ok())
            .as_ref()
    }

    fn transposed(&self) -> &(Arc<Structure>, Vec<usize>) {
        self.transposed.get_or_init(|| {
            let n = self.dim();
            // this structure's pattern, by rows, transposed
            let mut reads: Vec<Vec<usize>> = vec![Vec::new(); n];
            for (_, i, j) in self.entries() {
                reads[i].push(j);
            }
            let p = Pattern::from_rows(n, &reads)
                .expect("a stored entry is in range")
                .transpose();
            let t = Structure::of(&p);
            let from: Vec<usize> = t
                .entries()
                .map(|(_, i, j)| self.position(j, i).expect("the transposed entry"))
                .collect();
            (t, from)
        })
    }

    /// The position of entry (i, j), if stored.
    fn position(&self, i: usize, j: usize) -> Option<usize> {
        let ptr = self.sym.col_ptr();
        let (a, b) = (ptr[j] as usize, ptr[j + 1] as usize);
        self.sym.row_idx()[a..b]
            .binary_search(&(i as u32))
            .ok()
            .map(|k| a + k)
    }
}

/// A sparse Newton block: values on a shared [`Structure`].
#[derive(Debug, Clone)]
pub struct SparseBlock {
    pub(crate) structure: Arc<Structure>,
    pub(crate) values: Vec<f64>,
}

impl SparseBlock {
    /// Zero values on `structure`.
    pub fn zeros(structure: Arc<Structure>) -> SparseBlock {
        let values = vec![0.0; structure.nnz()];
        SparseBlock { structure, values }
    }

    /// The number of rows (= columns).
    pub fn dim(&self) -> usize {
        self.structure.dim()
    }

    /// The same matrix, dense.
    pub fn to_dense(&self) -> DMatrix<f64> {
        let n = self.dim();
        let mut m = DMatrix::zeros(n, n);
        for (k, i, j) in self.structure.entries() {
            m[(i, j)] = self.values[k];
        }
        m
    }

    /// `−Jᵀ` (the adjoint's Newton block), on the transposed structure.
    pub fn neg_transpose(&self) -> SparseBlock {
        let (t, from) = self.structure.transposed();
        SparseBlock {
            structure: t.clone(),
            values: from.iter().map(|&k| -self.values[k]).collect(),
        }
    }

    /// The values of `c I − J` with the entries' type.
    fn shifted<T: Copy + From<f64> + std::ops::Add<Output = T>>(&self, c: T) -> Vec<T> {
        let mut v: Vec<T> = self.values.iter().map(|&a| T::from(-a)).collect();
        for &k in &self.structure.diag {
            v[k] = v[k] + c;
        }
        v
    }
}

/// The sparse LU of an iteration matrix `c I − J`, real or complex.
pub(crate) struct SparseLu<T> {
    lu: FaerLu<u32, T>,
    n: usize,
}

impl<T> SparseLu<T> {
    pub(crate) fn dim(&self) -> usize {
        self.n
    }
}

/// `D`'s slice as `f64`: sparse factors exist in real runs only (module doc).
fn real<D: Scalar>(b: &mut [D]) -> &mut [f64] {
    D::real_slice_mut(b).expect("sparse factors are built for real (f64) runs only")
}

impl<T: faer::traits::ComplexField + Copy + From<f64> + std::ops::Add<Output = T>> SparseLu<T> {
    /// Factors `c I − J` (a real or a complex shift c) on the block's structure, reusing
    /// its symbolic factorization; `None` when the structure or a pivot is singular.
    pub(crate) fn factor(j: &SparseBlock, c: T) -> Option<Self> {
        let s = &j.structure;
        let values = j.shifted(c);
        let m = SparseColMatRef::new(s.sym.as_ref(), &values);
        let lu = FaerLu::try_new_with_symbolic(s.symbolic()?.clone(), m).ok()?;
        Some(SparseLu { lu, n: s.dim() })
    }
}

impl SparseLu<f64> {
    /// Solves `(c I − J) x = b` in place.
    pub(crate) fn solve<D: Scalar>(&self, b: &mut [D]) {
        let r = real(b);
        self.lu
            .solve_in_place_with_conj(Conj::No, MatMut::from_column_major_slice_mut(r, self.n, 1));
    }
}

impl SparseLu<c64> {
    /// Solves `(c I − J)(u + i v) = bu + i bv` in place.
    pub(crate) fn solve_pair<D: Scalar>(&self, bu: &mut [D], bv: &mut [D]) {
        let (u, v) = (real(bu), real(bv));
        let mut z: Vec<c64> = u
            .iter()
            .zip(v.iter())
            .map(|(&a, &b)| c64::new(a, b))
            .collect();
        self.lu.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut z, self.n, 1),
        );
        for (k, w) in z.iter().enumerate() {
            u[k] = w.re;
            v[k] = w.im;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block() -> SparseBlock {
        // a 4 × 4 pattern with a hole on the diagonal and an asymmetric coupling
        let p = Pattern::from_rows(4, &[vec![0, 3], vec![0, 1], vec![1], vec![2, 3]]).unwrap();
        let s = Structure::of(&p);
        let mut b = SparseBlock::zeros(s);
        for (k, i, j) in b.structure.clone().entries() {
            b.values[k] = 1.0 + 0.5 * i as f64 - 0.25 * j as f64 + if i == j { 3.0 } else { 0.0 };
        }
        b
    }

    #[test]
    fn real_and_complex_solves_match_dense() {
        let b = block();
        let j = b.to_dense();
        let c = 2.5;
        let m = DMatrix::<f64>::identity(4, 4) * c - &j;
        let lu = SparseLu::<f64>::factor(&b, c).unwrap();
        let rhs = [1.0, -2.0, 0.5, 3.0];
        let mut x = rhs;
        lu.solve(&mut x);
        let r = &m * nalgebra::DVector::from_column_slice(&x);
        for i in 0..4 {
            assert!((r[i] - rhs[i]).abs() < 1e-14, "{r}");
        }
        let cc = c64::new(1.5, 2.0);
        let lu = SparseLu::<c64>::factor(&b, cc).unwrap();
        let (mut u, mut v) = ([1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -1.0]);
        let (u0, v0) = (u, v);
        lu.solve_pair(&mut u, &mut v);
        for i in 0..4 {
            let mut acc = c64::new(0.0, 0.0);
            for k in 0..4 {
                let mik = if i == k { cc } else { c64::new(0.0, 0.0) } - c64::new(j[(i, k)], 0.0);
                acc += mik * c64::new(u[k], v[k]);
            }
            assert!((acc - c64::new(u0[i], v0[i])).norm() < 1e-14, "{acc}");
        }
    }

    #[test]
    fn neg_transpose_is_the_dense_one() {
        let b = block();
        let t = b.neg_transpose();
        assert_eq!(t.to_dense(), -b.to_dense().transpose());
    }
}
