//! The least-squares part's tests, on closed-form problems: a linear fit (normal
//! equations), exponential decay and Rosenbrock (quadratic convergence), a bound that
//! binds, an equality-constrained linear fit (its KKT system), multiple shooting of
//! x' = k x against single shooting, the Student-t table, a singular Jacobian.

mod constrained;
mod lm;
mod statistics;
mod student;

use super::problem::{ConstrainedResiduals, Linearization, Residuals};
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;

/// A deterministic "noise" sequence in [−1, 1] (no random generator in the tests).
pub(super) fn noise(i: usize) -> f64 {
    (37.0 * i as f64 + 0.3).sin() * (11.0 * i as f64).cos()
}

/// Relative difference |a − b| / max(|b|, floor).
pub(super) fn rel(a: f64, b: f64, floor: f64) -> f64 {
    (a - b).abs() / b.abs().max(floor)
}

/// y = a·exp(−b t) (+ c) fitted to samples d at times t; records the points where J was
/// evaluated; a point with b < `domain` is an evaluation error (to exercise failing trials).
pub(super) struct Decay {
    pub t: Vec<f64>,
    pub d: Vec<f64>,
    pub sigma: f64,
    pub offset: bool,
    pub domain: f64,
    pub log: RefCell<Vec<Vec<f64>>>,
}

impl Decay {
    /// Samples of a·exp(−b t) + c at m times in [0, 4], plus `noise_level`·noise(i).
    pub(super) fn new(truth: &[f64], m: usize, noise_level: f64, sigma: f64) -> Decay {
        let t: Vec<f64> = (0..m).map(|i| 4.0 * i as f64 / (m - 1) as f64).collect();
        let c = truth.get(2).copied().unwrap_or(0.0);
        let d = t
            .iter()
            .enumerate()
            .map(|(i, &t)| truth[0] * (-truth[1] * t).exp() + c + noise_level * noise(i))
            .collect();
        Decay {
            t,
            d,
            sigma,
            offset: truth.len() == 3,
            domain: f64::NEG_INFINITY,
            log: RefCell::new(vec![]),
        }
    }
}

impl Residuals for Decay {
    type Error = String;
    fn residuals(
        &self, x: &[f64], jacobian: bool,
    ) -> Result<(DVector<f64>, Option<DMatrix<f64>>), String> {
        if x[1] < self.domain {
            return Err(format!("b = {} below the domain", x[1]));
        }
        if jacobian {
            self.log.borrow_mut().push(x.to_vec());
        }
        let m = self.t.len();
        let c = if self.offset { x[2] } else { 0.0 };
        let r = DVector::from_fn(m, |i, _| {
            (x[0] * (-x[1] * self.t[i]).exp() + c - self.d[i]) / self.sigma
        });
        let j = jacobian.then(|| {
            DMatrix::from_fn(m, x.len(), |i, k| {
                let e = (-x[1] * self.t[i]).exp();
                let v = match k {
                    0 => e,
                    1 => -x[0] * self.t[i] * e,
                    _ => 1.0,
                };
                v / self.sigma
            })
        });
        Ok((r, j))
    }
}

/// Rosenbrock as residuals: r = (10 (x₂ − x₁²), 1 − x₁); zero residual at (1, 1).
pub(super) struct Rosenbrock {
    pub log: RefCell<Vec<Vec<f64>>>,
}

impl Residuals for Rosenbrock {
    type Error = String;
    fn residuals(
        &self, x: &[f64], jacobian: bool,
    ) -> Result<(DVector<f64>, Option<DMatrix<f64>>), String> {
        if jacobian {
            self.log.borrow_mut().push(x.to_vec());
        }
        let r = DVector::from_vec(vec![10.0 * (x[1] - x[0] * x[0]), 1.0 - x[0]]);
        let j = jacobian.then(|| DMatrix::from_row_slice(2, 2, &[-20.0 * x[0], 10.0, -1.0, 0.0]));
        Ok((r, j))
    }
}

/// A linear residual r = (A x − b) with equality constraints C x = d.
pub(super) struct LinearLsq {
    pub a: DMatrix<f64>,
    pub b: DVector<f64>,
    pub c: DMatrix<f64>,
    pub d: DVector<f64>,
}

impl Residuals for LinearLsq {
    type Error = String;
    fn residuals(
        &self, x: &[f64], jacobian: bool,
    ) -> Result<(DVector<f64>, Option<DMatrix<f64>>), String> {
        let x = DVector::from_column_slice(x);
        Ok((&self.a * x - &self.b, jacobian.then(|| self.a.clone())))
    }
}

impl ConstrainedResiduals for LinearLsq {
    type Error = String;
    fn evaluate(&self, w: &[f64], jacobian: bool) -> Result<Linearization, String> {
        let x = DVector::from_column_slice(w);
        Ok(Linearization {
            r: &self.a * &x - &self.b,
            c: &self.c * &x - &self.d,
            jr: jacobian.then(|| self.a.clone()),
            jc: jacobian.then(|| self.c.clone()),
        })
    }
}

/// A list of numbers in short scientific notation, for the printed measurements.
pub(super) fn sci(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x:.1e}")).collect();
    format!("[{}]", parts.join(", "))
}
