//! The box-constrained QP of a stage's control step (Tassa, Mansard & Todorov 2014,
//! "Control-limited differential dynamic programming", Alg. 3, projected Newton):
//!
//! ```text
//! min_δu  ½ δuᵀ H δu + gᵀ δu    s.t.  lo ≤ δu ≤ hi
//! ```
//!
//! Each iteration fixes the clamped set (at a bound with the gradient pushing out), takes
//! the Newton step on the free set `δu_f ← δu_f − H_ff⁻¹ ∇_f`, and backtracks along its
//! projection (Armijo on the quadratic). Without active bounds it is one Newton step, so
//! the unconstrained stage keeps DDP's exact step. The free set and `H_ff`'s Cholesky
//! factor are returned for the feedback gain (zero rows for the clamped entries).

use nalgebra::{DMatrix, DVector};

/// The QP's solution: the step, which entries are free, and `H_ff⁻¹` (free × free).
pub(crate) struct BoxStep {
    pub du: DVector<f64>,
    pub free: Vec<usize>,
    pub h_ff_inv: DMatrix<f64>,
}

/// At most this many projected-Newton iterations.
const MAX_ITERS: usize = 50;

/// Solves the QP (module docs); `None` when `H_ff` is not positive definite (the caller
/// raises its regularization).
pub(crate) fn box_qp(
    h: &DMatrix<f64>, g: &DVector<f64>, lo: &DVector<f64>, hi: &DVector<f64>,
) -> Option<BoxStep> {
    let n = g.len();
    let clamp = |v: &DVector<f64>| DVector::from_fn(n, |i, _| v[i].clamp(lo[i], hi[i]));
    let q = |v: &DVector<f64>| 0.5 * v.dot(&(h * v)) + g.dot(v);
    let mut u = clamp(&DVector::zeros(n));
    let mut free: Vec<usize> = (0..n).collect();
    let mut inv = DMatrix::zeros(0, 0);
    for _ in 0..MAX_ITERS {
        let grad = g + h * &u;
        free = (0..n)
            .filter(|&i| !((u[i] <= lo[i] && grad[i] > 0.0) || (u[i] >= hi[i] && grad[i] < 0.0)))
            .collect();
        let hff = DMatrix::from_fn(free.len(), free.len(), |a, b| h[(free[a], free[b])]);
        inv = hff.cholesky()?.inverse();
        if free.is_empty() {
            break;
        }
        let gf = DVector::from_fn(free.len(), |a, _| grad[free[a]]);
        let df = -(&inv * &gf);
        if df.norm() <= 1e-14 * (1.0 + u.norm()) {
            break;
        }
        let mut d = DVector::zeros(n);
        for (a, &i) in free.iter().enumerate() {
            d[i] = df[a];
        }
        let (q0, mut step) = (q(&u), 1.0);
        let moved = loop {
            let trial = clamp(&(&u + &d * step));
            if q(&trial) - q0 <= 0.1 * grad.dot(&(&trial - &u)) {
                break Some(trial);
            }
            step *= 0.5;
            if step < 1e-12 {
                break None;
            }
        };
        match moved {
            Some(t) if (&t - &u).norm() > 1e-15 * (1.0 + u.norm()) => u = t,
            Some(t) => {
                u = t;
                break;
            }
            None => break,
        }
    }
    Some(BoxStep {
        du: u,
        free,
        h_ff_inv: inv,
    })
}
