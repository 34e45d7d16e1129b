//! Sparsity patterns of a flow's state Jacobian `∂f_m/∂x` and their column colouring
//! (docs/theory.md §8, "Sparse Jacobians").
//!
//! A system may declare, per mode, which states each component of its flow reads
//! ([`crate::model::HybridSystem::flow_pattern`]); systems written in TOML get theirs from
//! the names their expressions read. Columns of the Jacobian that share no row can be
//! evaluated by one directional derivative seeded on all of them at once (Curtis, Powell
//! & Reid, "On the estimation of sparse Jacobian matrices", *IMA J. Appl. Math.* 13, 1974):
//! a chain's tridiagonal coupling needs 3 such passes whatever its length, against one per
//! state for a dense Jacobian.

use thiserror::Error;

/// A pattern that cannot describe an `n × n` Jacobian.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PatternError {
    /// A row or column index at or beyond the number of states.
    #[error("sparsity pattern: entry ({row}, {col}) is outside the {n} × {n} state Jacobian")]
    OutOfRange { row: usize, col: usize, n: usize },
    /// The rows given are not one per state.
    #[error("sparsity pattern: {given} rows given for {n} states (one list of columns per flow component)")]
    RowCount { given: usize, n: usize },
}

/// The structural nonzeros of an `n × n` Jacobian `∂f/∂x`: entry (i, j) is in the pattern
/// when component i of the flow may depend on state j. Kept by columns (the rows of each
/// column sorted, without repeats).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    n: usize,
    /// Column j's rows are `rows[col_start[j]..col_start[j + 1]]`.
    col_start: Vec<usize>,
    rows: Vec<usize>,
}

impl Pattern {
    /// From the states each flow component reads: `reads[i]` lists the columns j with
    /// `∂f_i/∂x_j` possibly nonzero (in any order, repeats allowed).
    pub fn from_rows(n: usize, reads: &[Vec<usize>]) -> Result<Pattern, PatternError> {
        if reads.len() != n {
            return Err(PatternError::RowCount {
                given: reads.len(),
                n,
            });
        }
        let mut by_col: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, cols) in reads.iter().enumerate() {
            for &j in cols {
                if j >= n {
                    return Err(PatternError::OutOfRange { row: i, col: j, n });
                }
                by_col[j].push(i);
            }
        }
        Ok(Self::from_columns(n, by_col))
    }

    /// Every entry: what a system without a declared pattern is taken to have.
    pub fn dense(n: usize) -> Pattern {
        Self::from_columns(n, (0..n).map(|_| (0..n).collect()).collect())
    }

    fn from_columns(n: usize, mut by_col: Vec<Vec<usize>>) -> Pattern {
        let mut col_start = Vec::with_capacity(n + 1);
        let mut rows = Vec::new();
        col_start.push(0);
        for col in &mut by_col {
            col.sort_unstable();
            col.dedup();
            rows.extend_from_slice(col);
            col_start.push(rows.len());
        }
        Pattern { n, col_start, rows }
    }

    /// The number of states.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The number of structural nonzeros.
    pub fn nnz(&self) -> usize {
        self.rows.len()
    }

    /// The rows of column j (sorted).
    pub fn column(&self, j: usize) -> &[usize] {
        &self.rows[self.col_start[j]..self.col_start[j + 1]]
    }

    /// Whether (i, j) is in the pattern.
    pub fn contains(&self, i: usize, j: usize) -> bool {
        self.column(j).binary_search(&i).is_ok()
    }

    /// The pattern with every diagonal entry added (an iteration matrix `c I − J`).
    pub fn with_diagonal(&self) -> Pattern {
        let by_col = (0..self.n)
            .map(|j| {
                let mut c = self.column(j).to_vec();
                c.push(j);
                c
            })
            .collect();
        Self::from_columns(self.n, by_col)
    }

    /// The transposed pattern (of `Jᵀ`, the adjoint's Jacobian).
    pub fn transpose(&self) -> Pattern {
        let mut by_col: Vec<Vec<usize>> = vec![Vec::new(); self.n];
        for j in 0..self.n {
            for &i in self.column(j) {
                by_col[i].push(j);
            }
        }
        Self::from_columns(self.n, by_col)
    }

    /// A column colouring: columns of one colour share no row, so one directional
    /// derivative seeded on all of them gives each of their entries (Curtis–Powell–Reid).
    /// Greedy in column order (each column takes the smallest colour not used by a column
    /// it shares a row with): banded patterns of half-bandwidth w get at most 2w + 1
    /// colours, a dense one n.
    pub fn colouring(&self) -> Colouring {
        let n = self.n;
        // the columns of each row, to find a column's neighbours
        let mut row_cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        for j in 0..n {
            for &i in self.column(j) {
                row_cols[i].push(j);
            }
        }
        let mut colour = vec![usize::MAX; n];
        let mut used_by = Vec::<usize>::new(); // colour → last column that saw it taken
        let mut count = 0;
        for j in 0..n {
            for &i in self.column(j) {
                for &k in &row_cols[i] {
                    if colour[k] != usize::MAX {
                        used_by[colour[k]] = j;
                    }
                }
            }
            let c = (0..count).find(|&c| used_by[c] != j).unwrap_or(count);
            if c == count {
                count += 1;
                used_by.push(usize::MAX);
            }
            colour[j] = c;
        }
        Colouring { colour, count }
    }
}

/// The colour of each column of a [`Pattern`] ([`Pattern::colouring`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Colouring {
    colour: Vec<usize>,
    count: usize,
}

impl Colouring {
    /// The colour of column j.
    pub fn of(&self, j: usize) -> usize {
        self.colour[j]
    }

    /// The number of colours (directional derivatives per Jacobian).
    pub fn count(&self) -> usize {
        self.count
    }
}

/// The structure of a reset's state Jacobian `∂R/∂x` (docs/theory.md §3, "The jump as an
/// operator"): the states the reset may change, each with the states its new value may
/// read; every other state is kept (`x_i⁺ = x_i⁻`, its row of `∂R/∂x` the identity's). An
/// impact that sets one velocity from itself has one changed row reading one state,
/// whatever the size of the system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetPattern {
    n: usize,
    /// `(row, columns)` per changed state, by row (columns sorted, without repeats).
    rows: Vec<(usize, Vec<usize>)>,
}

impl ResetPattern {
    /// From the changed states and what each reads (any order; a row given twice has its
    /// columns merged).
    pub fn from_rows(
        n: usize, changed: impl IntoIterator<Item = (usize, Vec<usize>)>,
    ) -> Result<ResetPattern, PatternError> {
        let mut rows: Vec<(usize, Vec<usize>)> = Vec::new();
        for (i, cols) in changed {
            if let Some(&j) = cols.iter().find(|&&j| j >= n).or((i >= n).then_some(&i)) {
                return Err(PatternError::OutOfRange { row: i, col: j, n });
            }
            match rows.iter_mut().find(|(r, _)| *r == i) {
                Some((_, c)) => c.extend(cols),
                None => rows.push((i, cols)),
            }
        }
        rows.sort_unstable_by_key(|(i, _)| *i);
        for (_, c) in &mut rows {
            c.sort_unstable();
            c.dedup();
        }
        Ok(ResetPattern { n, rows })
    }

    /// The reset that keeps every state (a pure mode switch).
    pub fn identity(n: usize) -> ResetPattern {
        ResetPattern {
            n,
            rows: Vec::new(),
        }
    }

    /// The number of states.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The changed states with the states each reads, by row.
    pub fn rows(&self) -> &[(usize, Vec<usize>)] {
        &self.rows
    }

    /// Every state some changed state reads (sorted, without repeats): the directions a
    /// Jacobian of the reset needs.
    pub fn columns(&self) -> Vec<usize> {
        let mut c: Vec<usize> = self
            .rows
            .iter()
            .flat_map(|(_, c)| c.iter().copied())
            .collect();
        c.sort_unstable();
        c.dedup();
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tridiagonal(n: usize) -> Pattern {
        let reads: Vec<Vec<usize>> = (0..n)
            .map(|i| (i.saturating_sub(1)..(i + 2).min(n)).collect())
            .collect();
        Pattern::from_rows(n, &reads).unwrap()
    }

    #[test]
    fn colours_share_no_row() {
        for p in [
            tridiagonal(9),
            Pattern::dense(5),
            tridiagonal(9).transpose(),
        ] {
            let c = p.colouring();
            for j in 0..p.dim() {
                for k in j + 1..p.dim() {
                    if c.of(j) == c.of(k) {
                        let shared = p.column(j).iter().any(|i| p.column(k).contains(i));
                        assert!(!shared, "columns {j} and {k} share a row and a colour");
                    }
                }
            }
        }
        assert_eq!(tridiagonal(9).colouring().count(), 3);
        assert_eq!(Pattern::dense(5).colouring().count(), 5);
    }

    #[test]
    fn transpose_and_diagonal() {
        let p = Pattern::from_rows(3, &[vec![2], vec![0, 0], vec![]]).unwrap();
        assert_eq!(p.nnz(), 2);
        assert!(p.contains(0, 2) && p.contains(1, 0) && !p.contains(2, 0));
        let t = p.transpose();
        assert!(t.contains(2, 0) && t.contains(0, 1) && t.nnz() == 2);
        assert_eq!(p.with_diagonal().nnz(), 5);
        assert_eq!(
            Pattern::from_rows(2, &[vec![3], vec![]]),
            Err(PatternError::OutOfRange {
                row: 0,
                col: 3,
                n: 2
            })
        );
    }
}
