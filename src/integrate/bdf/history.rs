//! The history a BDF run carries from one step to the next (Shampine & Reichelt 1997,
//! §2.2–2.3; docs/theory.md §8, "BDF"): the backward differences, their re-interpolation
//! onto a new step size, their update after a step, and the choice of the next order and
//! step.

use super::coefficients::{error_constant, MAX_ORDER};
use crate::model::Scalar;

/// The step size factor's bound after an accepted step.
const FACTOR_MAX: f64 = 10.0;
/// A step size increase smaller than this is not taken (CVODE's `THRESH`).
const HOLD: f64 = 1.5;

/// What a BDF run carries from one step to the next: the backward differences
/// `∇^j y_n` (j = 0 … k + 2) of the solution on a grid of step `h` ending at the current
/// point, the order k, how many steps were taken with this step size and order, and the
/// corrector's last measured convergence rate.
#[derive(Debug, Clone)]
pub struct BdfHistory<D> {
    pub(super) n: usize,
    /// Row j (at j·n) holds ∇^j y_n, j = 0 … k + 2.
    pub(super) diff: Vec<D>,
    pub(super) h: D,
    pub(super) order: usize,
    /// Steps taken with this h and order (order and step are chosen after k + 1).
    pub(super) equal: usize,
    /// The corrector's convergence rate, last measured `since` steps ago.
    pub(super) rate: f64,
    pub(super) since: usize,
    /// The step size factor for the next step (1: keep h).
    pub(super) factor: f64,
    /// The step size factor for retrying a rejected step.
    pub(super) retry: f64,
}

impl<D: Scalar> BdfHistory<D> {
    /// The start at `(y0, f0)` for steps of size `h`: order 1, `∇y = h f0`.
    pub(super) fn start(y0: &[D], f0: &[D], h: D) -> Self {
        let n = y0.len();
        let mut diff = vec![D::zero(); 4 * n];
        diff[..n].copy_from_slice(y0);
        for i in 0..n {
            diff[n + i] = f0[i] * h;
        }
        BdfHistory {
            n,
            diff,
            h,
            order: 1,
            equal: 0,
            rate: 1.0,
            since: 0,
            factor: 1.0,
            retry: 0.5,
        }
    }

    /// The order of the next step.
    pub fn order(&self) -> usize {
        self.order
    }

    /// The step size factor the method asks for after this step.
    pub(crate) fn factor(&self) -> f64 {
        self.factor
    }

    /// The step size factor for retrying the step that produced this history, had it been
    /// rejected.
    pub(crate) fn retry_factor(&self) -> f64 {
        self.retry
    }

    /// Bytes held (for the dense output's memory budget).
    pub(crate) fn bytes(&self) -> usize {
        self.diff.len() * std::mem::size_of::<D>()
    }

    pub(super) fn row(&self, j: usize) -> &[D] {
        &self.diff[j * self.n..(j + 1) * self.n]
    }

    /// Re-interpolates the differences of orders 0 … k onto the grid of step `ρ h`
    /// (ρ = `h_new / h`): with `R_{rj}(ρ) = Π_{m<r} (m − ρ j)/(m + 1)`, the values at the
    /// new grid points are `Rᵀ ∇`, and since the signed binomial matrix `U = R(1)` is its
    /// own inverse, the new differences are `(R U)ᵀ ∇` (Shampine & Reichelt 1997, §2.3).
    pub(super) fn rescale(&mut self, h_new: D) {
        let k = self.order;
        let rho = h_new / self.h;
        let r = |rho: D| {
            let mut m = [[D::zero(); MAX_ORDER + 1]; MAX_ORDER + 1];
            for j in 0..=k {
                m[0][j] = D::one();
                for row in 1..=k {
                    let q = (row - 1) as f64;
                    m[row][j] = m[row - 1][j] * (D::from(q) - rho * j as f64) / (q + 1.0);
                }
            }
            m
        };
        let (rm, u) = (r(rho), r(D::one()));
        let mut ru = [[D::zero(); MAX_ORDER + 1]; MAX_ORDER + 1];
        for (a, row) in ru.iter_mut().enumerate().take(k + 1) {
            for (b, v) in row.iter_mut().enumerate().take(k + 1) {
                for (c, urow) in u.iter().enumerate().take(k + 1) {
                    *v += rm[a][c] * urow[b];
                }
            }
        }
        let n = self.n;
        let old: Vec<D> = self.diff[..(k + 1) * n].to_vec();
        for i in 0..=k {
            for comp in 0..n {
                let mut acc = D::zero();
                for (j, ruj) in ru.iter().enumerate().take(k + 1) {
                    acc += ruj[i] * old[j * n + comp];
                }
                self.diff[i * n + comp] = acc;
            }
        }
        self.h = h_new;
        self.equal = 0;
    }

    /// After a converged corrector with total correction d (= ∇^(k+1) y_{n+1}):
    /// `∇^(k+2) y_{n+1} = d − ∇^(k+1) y_n`, `∇^(k+1) y_{n+1} = d`, and downward
    /// `∇^j y_{n+1} = ∇^j y_n + ∇^(j+1) y_{n+1}`.
    pub(super) fn advance(&mut self, d: &[D]) {
        let (k, n) = (self.order, self.n);
        for i in 0..n {
            self.diff[(k + 2) * n + i] = d[i] - self.diff[(k + 1) * n + i];
            self.diff[(k + 1) * n + i] = d[i];
        }
        for j in (0..=k).rev() {
            for i in 0..n {
                let up = self.diff[(j + 1) * n + i];
                self.diff[j * n + i] += up;
            }
        }
        self.equal += 1;
    }

    /// The order and step for the next step once k + 1 steps were taken with this one
    /// (Shampine & Reichelt 1997, §2.2): the error estimates at orders k − 1, k, k + 1
    /// (`C_{k−1} ‖∇^k‖`, `err`, `C_{k+1} ‖∇^(k+2)‖`) each give a factor
    /// `err_q^(−1/(q+1))`; the order of the largest is taken with
    /// `min(10, safety · factor)`.
    pub(super) fn choose(&mut self, err: f64, safety: f64, norm: impl Fn(&[D]) -> f64) {
        self.factor = 1.0;
        let k = self.order;
        if self.equal < k + 1 {
            return;
        }
        let down = if k > 1 {
            error_constant(k - 1) * norm(self.row(k))
        } else {
            f64::INFINITY
        };
        let up = if k < MAX_ORDER {
            error_constant(k + 1) * norm(self.row(k + 2))
        } else {
            f64::INFINITY
        };
        let fac = |e: f64, q: usize| {
            if e == 0.0 {
                f64::MAX
            } else {
                e.powf(-1.0 / (q + 1) as f64)
            }
        };
        let options = [
            (fac(down, k - 1), k - 1),
            (fac(err, k), k),
            (fac(up, k + 1), k + 1),
        ];
        let (best, order) = options
            .iter()
            .copied()
            .fold((0.0, k), |a, b| if b.0 > a.0 { b } else { a });
        self.equal = 0;
        let factor = (safety * best).min(FACTOR_MAX);
        // CVODE's THRESH: an increase below 1.5 keeps h and the order (no new matrix, no
        // re-interpolation)
        if (1.0..HOLD).contains(&factor) {
            return;
        }
        self.order = order.clamp(1, MAX_ORDER);
        self.factor = factor;
        self.diff.resize((self.order + 3) * self.n, D::zero());
    }
}
