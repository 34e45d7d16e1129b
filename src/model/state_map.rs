//! A reset's state Jacobian `R_x = ∂R/∂x` as an operator (docs/theory.md §3, "The jump as
//! an operator"): dense, or the identity with the few rows the reset changes replaced by
//! sparse rows ([`crate::model::ResetPattern`]). Applying the second to an n×k block costs
//! O(n·k) — a copy and the changed rows — where the dense product costs O(n²·k); a chain of
//! a thousand states whose impact sets one velocity has one such row.

use nalgebra::{DMatrix, DVector};

/// `R_x` of one reset.
#[derive(Debug, Clone, PartialEq)]
pub enum StateMap {
    /// Every entry.
    Dense(DMatrix<f64>),
    /// The n×n identity except the listed rows, each a sparse row of `(column, value)`
    /// pairs (rows sorted, each listed once).
    Rows {
        n: usize,
        rows: Vec<(usize, Vec<(usize, f64)>)>,
    },
}

impl StateMap {
    /// The n×n identity (a reset that keeps every state).
    pub fn identity(n: usize) -> StateMap {
        StateMap::Rows {
            n,
            rows: Vec::new(),
        }
    }

    /// The number of states.
    pub fn dim(&self) -> usize {
        match self {
            StateMap::Dense(m) => m.nrows(),
            StateMap::Rows { n, .. } => *n,
        }
    }

    /// The map on `n ≥ dim` states whose extra states are kept: `[[R_x, 0], [0, I]]` (the
    /// augmented state of a setup, whose quadratures a reset does not touch).
    pub fn kept_beyond(self, n: usize) -> StateMap {
        match self {
            StateMap::Dense(m) if m.nrows() < n => {
                let mut full = DMatrix::identity(n, n);
                full.view_mut((0, 0), m.shape()).copy_from(&m);
                StateMap::Dense(full)
            }
            StateMap::Rows { rows, .. } => StateMap::Rows { n, rows },
            dense => dense,
        }
    }

    /// `R_x M` (M is n×k): the copy of M with the changed rows replaced by
    /// `Σ_j R_x[i, j] M[j, :]`, O(n·k + nnz·k) for the rows form.
    pub fn mul(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        match self {
            StateMap::Dense(r) => r * m,
            StateMap::Rows { rows, .. } => {
                let mut out = m.clone();
                for (i, row) in rows {
                    for c in 0..m.ncols() {
                        out[(*i, c)] = row.iter().map(|&(j, a)| a * m[(j, c)]).sum();
                    }
                }
                out
            }
        }
    }

    /// `R_xᵀ M` (M is n×k): M with the changed rows zeroed, then each changed row i adds
    /// `R_x[i, j] M[i, :]` to row j; O(n·k + nnz·k) for the rows form.
    pub fn tr_mul(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        match self {
            StateMap::Dense(r) => r.tr_mul(m),
            StateMap::Rows { rows, .. } => {
                let mut out = m.clone();
                for (i, _) in rows {
                    out.row_mut(*i).fill(0.0);
                }
                for (i, row) in rows {
                    for c in 0..m.ncols() {
                        let mi = m[(*i, c)];
                        for &(j, a) in row {
                            out[(j, c)] += a * mi;
                        }
                    }
                }
                out
            }
        }
    }

    /// `R_x v`.
    pub fn mul_vec(&self, v: &DVector<f64>) -> DVector<f64> {
        match self {
            StateMap::Dense(r) => r * v,
            rows => {
                let m = rows.mul(&DMatrix::from_column_slice(v.len(), 1, v.as_slice()));
                DVector::from_column_slice(m.as_slice())
            }
        }
    }

    /// `R_xᵀ v`.
    pub fn tr_mul_vec(&self, v: &DVector<f64>) -> DVector<f64> {
        match self {
            StateMap::Dense(r) => r.tr_mul(v),
            rows => {
                let m = rows.tr_mul(&DMatrix::from_column_slice(v.len(), 1, v.as_slice()));
                DVector::from_column_slice(m.as_slice())
            }
        }
    }

    /// `out += a R_x[i, :]ᵀ` (row i of the map, scaled).
    pub fn add_row(&self, i: usize, a: f64, out: &mut DVector<f64>) {
        match self {
            StateMap::Dense(r) => *out += r.row(i).transpose() * a,
            StateMap::Rows { rows, .. } => match rows.binary_search_by_key(&i, |(r, _)| *r) {
                Ok(at) => rows[at].1.iter().for_each(|&(j, v)| out[j] += a * v),
                Err(_) => out[i] += a,
            },
        }
    }

    /// `max_ij |R_x − I|`.
    pub fn distance_from_identity(&self) -> f64 {
        match self {
            StateMap::Dense(r) => {
                let n = r.nrows();
                if n == 0 {
                    0.0
                } else {
                    (r - DMatrix::<f64>::identity(n, n)).amax()
                }
            }
            StateMap::Rows { rows, .. } => rows
                .iter()
                .flat_map(|(i, row)| {
                    let diagonal = row.iter().any(|&(j, _)| j == *i);
                    let entries = row
                        .iter()
                        .map(move |&(j, a)| if j == *i { (a - 1.0).abs() } else { a.abs() });
                    // a changed row that does not read its own state has a 0 where I has 1
                    entries.chain((!diagonal).then_some(1.0))
                })
                .fold(0.0, f64::max),
        }
    }

    /// The n×n matrix (for the consumers that multiply maps densely: monodromy products,
    /// Riccati jumps, composed simultaneous events).
    pub fn to_dense(&self) -> DMatrix<f64> {
        match self {
            StateMap::Dense(r) => r.clone(),
            StateMap::Rows { n, rows } => {
                let mut d = DMatrix::identity(*n, *n);
                for (i, row) in rows {
                    d.row_mut(*i).fill(0.0);
                    for &(j, a) in row {
                        d[(*i, j)] += a;
                    }
                }
                d
            }
        }
    }
}
