//! The SQP's subproblem, in elastic form (docs/constrained.md, "The solver"; Nocedal &
//! Wright, *Numerical Optimization*, 2nd ed., §18.2 and the elastic mode of §18.3):
//!
//! ```text
//! min_{d,p,q}  ½ dᵀB d + gᵀd + ρ Σ_r (p_r + q_r)
//! s.t.         lower_r ≤ c_r + J_r d + p_r − q_r ≤ upper_r,   p, q ≥ 0,
//!              l − x ≤ d ≤ u − x
//! ```
//!
//! The slacks p, q make every subproblem feasible; with ρ above the multipliers they are
//! zero whenever the linearized constraints can be met, and otherwise the step reduces
//! the l1 violation as far as the linearization allows. Solved by Clarabel (an interior-
//! point solver), whose duals give the multipliers with the convention
//! `B d + g + Σ_r λ_r J_r + ν = 0` (λ_r > 0 where the upper side binds, < 0 the lower;
//! ν_j > 0 at an upper bound, < 0 at a lower one).

use super::error::ConstrainedError;
use super::point::Row;
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};
use nalgebra::DMatrix;

/// The subproblem's data at one point.
pub(crate) struct Qp<'a> {
    pub b: &'a DMatrix<f64>,
    pub g: &'a [f64],
    pub rows: &'a [Row],
    /// `l − x` and `u − x` (±∞ where a variable is unbounded).
    pub dl: Vec<f64>,
    pub du: Vec<f64>,
    pub rho: f64,
}

/// The step, the multipliers and the slacks the step needs.
#[derive(Debug, Clone)]
pub(crate) struct QpStep {
    pub d: Vec<f64>,
    pub lambda: Vec<f64>,
    pub nu: Vec<f64>,
    /// Σ (p + q): zero when the linearized constraints are met.
    pub elastic: f64,
    /// The linearized violation after the step, Σ_r viol(c_r + J_r d).
    pub linear_violation: f64,
}

/// Which constraint of the QP a row of Clarabel's `A` is, to read back its dual.
#[derive(Clone, Copy)]
enum Dual {
    Row(usize, f64),
    Bound(usize, f64),
    Slack,
}

/// The QP's constraint rows for Clarabel, `A v + s = b` with `s` in the cones: the
/// equalities first (the zero cone), then the inequalities, the step's bounds and the
/// slacks' signs (the nonnegative cone), with which constraint each row is.
struct Rows {
    a: Vec<Vec<(usize, f64)>>,
    b: Vec<f64>,
    duals: Vec<Dual>,
    n_eq: usize,
}

impl Qp<'_> {
    /// Solves the subproblem.
    pub fn solve(&self) -> Result<QpStep, ConstrainedError> {
        let n = self.g.len();
        let m = self.rows.len();
        let nv = n + 2 * m;
        let rows = self.rows_for_clarabel();
        let a = csc_from_rows(&rows.a, nv);
        let p = upper_triangle(self.b, nv);
        let mut q = self.g.to_vec();
        q.extend(std::iter::repeat_n(self.rho, 2 * m));
        let cones = [
            SupportedConeT::ZeroConeT(rows.n_eq),
            SupportedConeT::NonnegativeConeT(rows.a.len() - rows.n_eq),
        ];
        let solver = solve_tight_first(&p, &q, &a, &rows.b, &cones)?;
        let sol = &solver.solution;
        let d = sol.x[..n].to_vec();
        let elastic = sol.x[n..].iter().map(|v| v.max(0.0)).sum();
        let mut lambda = vec![0.0; m];
        let mut nu = vec![0.0; n];
        for (z, dual) in sol.z.iter().zip(&rows.duals) {
            match *dual {
                Dual::Row(r, s) => lambda[r] += s * z,
                Dual::Bound(j, s) => nu[j] += s * z,
                Dual::Slack => {}
            }
        }
        let linear_violation = self
            .rows
            .iter()
            .map(|row| {
                crate::constraint::violation(row.value + dot(&row.grad, &d), row.lower, row.upper)
            })
            .sum();
        Ok(QpStep {
            d,
            lambda,
            nu,
            elastic,
            linear_violation,
        })
    }

    /// The rows of `A` by rows (sparse: the Jacobian's rows are dense, the rest unit
    /// entries) over `v = (d, p, q)`: each equality `J_r d + p_r − q_r = u_r − c_r`; each
    /// finite side of an inequality `J_r d − q_r ≤ u_r − c_r`, `−J_r d − p_r ≤ c_r − l_r`;
    /// the step's bounds `d ≤ du`, `−d ≤ −dl`; and `p, q ≥ 0`.
    fn rows_for_clarabel(&self) -> Rows {
        let n = self.g.len();
        let m = self.rows.len();
        let mut out = Rows {
            a: Vec::new(),
            b: Vec::new(),
            duals: Vec::new(),
            n_eq: 0,
        };
        let push = |out: &mut Rows, row: Vec<(usize, f64)>, b: f64, dual: Dual| {
            out.a.push(row);
            out.b.push(b);
            out.duals.push(dual);
        };
        for (r, row) in self.rows.iter().enumerate() {
            if row.is_equality() {
                let jr = jac_row(row, 1.0, Some((n + r, 1.0)), Some((n + m + r, -1.0)));
                push(&mut out, jr, row.upper - row.value, Dual::Row(r, 1.0));
            }
        }
        out.n_eq = out.a.len();
        for (r, row) in self.rows.iter().enumerate() {
            if row.is_equality() {
                continue;
            }
            if row.upper.is_finite() {
                let jr = jac_row(row, 1.0, None, Some((n + m + r, -1.0)));
                push(&mut out, jr, row.upper - row.value, Dual::Row(r, 1.0));
            }
            if row.lower.is_finite() {
                let jr = jac_row(row, -1.0, Some((n + r, -1.0)), None);
                push(&mut out, jr, row.value - row.lower, Dual::Row(r, -1.0));
            }
        }
        for j in 0..n {
            if self.du[j].is_finite() {
                push(&mut out, vec![(j, 1.0)], self.du[j], Dual::Bound(j, 1.0));
            }
            if self.dl[j].is_finite() {
                push(&mut out, vec![(j, -1.0)], -self.dl[j], Dual::Bound(j, -1.0));
            }
        }
        for k in n..n + 2 * m {
            push(&mut out, vec![(k, -1.0)], 0.0, Dual::Slack);
        }
        out
    }
}

/// Clarabel on the QP, tight tolerances first (the final steps need the multipliers to
/// ~1e-10 for a KKT residual of 1e-8); a subproblem the solver cannot finish that tightly
/// is solved again looser. The error names the last status.
fn solve_tight_first(
    p: &CscMatrix<f64>, q: &[f64], a: &CscMatrix<f64>, b: &[f64], cones: &[SupportedConeT<f64>],
) -> Result<DefaultSolver<f64>, ConstrainedError> {
    let mut last = None;
    for tol in [1e-10f64, 1e-13, 1e-8] {
        let settings = DefaultSettingsBuilder::default()
            .verbose(false)
            .max_iter(400)
            .tol_gap_abs(tol)
            .tol_gap_rel(tol)
            .tol_feas(tol)
            .tol_ktratio(tol.sqrt().min(1e-6))
            .build()
            .map_err(|e| ConstrainedError::Qp(format!("settings: {e:?}")))?;
        let mut solver = DefaultSolver::new(p, q, a, b, cones, settings)
            .map_err(|e| ConstrainedError::Qp(format!("{e:?}")))?;
        solver.solve();
        let status = solver.solution.status;
        if matches!(status, SolverStatus::Solved | SolverStatus::AlmostSolved) {
            return Ok(solver);
        }
        last = Some(status);
    }
    Err(ConstrainedError::Qp(format!(
        "the QP subproblem ended with status {:?} at every tolerance tried",
        last.expect("tried")
    )))
}

/// `s·J_r` with the slack entries.
fn jac_row(
    row: &Row, s: f64, p: Option<(usize, f64)>, q: Option<(usize, f64)>,
) -> Vec<(usize, f64)> {
    let mut v: Vec<(usize, f64)> = row
        .grad
        .iter()
        .enumerate()
        .filter(|(_, &g)| g != 0.0)
        .map(|(j, &g)| (j, s * g))
        .collect();
    v.extend(p);
    v.extend(q);
    v
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A CSC matrix with `ncol` columns from its rows.
fn csc_from_rows(rows: &[Vec<(usize, f64)>], ncol: usize) -> CscMatrix<f64> {
    let mut cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); ncol];
    for (i, r) in rows.iter().enumerate() {
        for &(j, v) in r {
            cols[j].push((i, v));
        }
    }
    let mut colptr = vec![0];
    let (mut rowval, mut nzval) = (Vec::new(), Vec::new());
    for c in &cols {
        for &(i, v) in c {
            rowval.push(i);
            nzval.push(v);
        }
        colptr.push(rowval.len());
    }
    CscMatrix::new(rows.len(), ncol, colptr, rowval, nzval)
}

/// The upper triangle of B, padded with zero columns to `nv` (the slacks).
fn upper_triangle(bm: &DMatrix<f64>, nv: usize) -> CscMatrix<f64> {
    let n = bm.nrows();
    let mut colptr = vec![0];
    let (mut rowval, mut nzval) = (Vec::new(), Vec::new());
    for j in 0..nv {
        if j < n {
            for i in 0..=j {
                let v = 0.5 * (bm[(i, j)] + bm[(j, i)]);
                if v != 0.0 {
                    rowval.push(i);
                    nzval.push(v);
                }
            }
        }
        colptr.push(rowval.len());
    }
    CscMatrix::new(nv, nv, colptr, rowval, nzval)
}

/// The infinity norm `max_j |v_j|`.
pub(crate) fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |a, x| a.max(x.abs()))
}
