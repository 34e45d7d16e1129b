//! The variable-order backward differentiation formulas of orders 1–5 in the form of
//! Shampine & Reichelt's NDFs (*The MATLAB ODE Suite*, SIAM J. Sci. Comput. 18, 1997,
//! §2): the solution's backward differences on a grid of constant step are the method's
//! history, a step size change re-interpolates them onto the new grid, the corrector is
//! solved by simplified Newton with the one matrix `I − c J` (c = h/α_k), and the order
//! and step are chosen together after k + 1 steps of one size (quasi-constant step size).
//! docs/theory.md §8 ("BDF") states the formulas.
//!
//! A step is a pure function of the history it starts from: [`bdf_step`] returns the
//! history after it ([`BdfHistory`]), which the caller keeps only when it accepts the
//! step; the simulator then moves the history the step started from into its dense step,
//! so a checkpointed window replays its steps bit for bit.

mod coefficients;
pub(super) mod history;

use super::dense::DenseStep;
use super::newton::{shifted_factors, shifted_solve, Factors, Newton, Solve};
use super::ode::{Attempt, OdeRhs, Tolerances, NEWTON_MAX_ITER};
use crate::error::ModelError;
use crate::model::Scalar;
use coefficients::{alpha, error_constant, gamma, newton_coefficients};
use history::BdfHistory;

/// Corrector iterations at most (CVODE's `maxcor` + 1). A dual run may take up to
/// [`NEWTON_MAX_ITER`]: a step of dual length (cut at an event) converges its derivative
/// parts more slowly than its values.
const NEWTON_ITER: usize = 4;
/// Steps after which the corrector's convergence rate is measured again (CVODE's MSBP).
const RATE_REFRESH: usize = 20;
/// The step size factor's lower bound after a rejected step.
const FACTOR_MIN: f64 = 0.2;

/// The corrector's Newton tolerance on the remaining error in the weighted norm:
/// `max(10 ε / rtol, min(0.03, √rtol))` (Shampine & Reichelt's and scipy's choice).
fn newton_tol(tol: &Tolerances) -> f64 {
    (10.0 * f64::EPSILON / tol.rtol).max(0.03f64.min(tol.rtol.sqrt()))
}

/// One BDF step of size `h` from `(t, y)` with the history `from` (`None`: the start of
/// a run, order 1 from `f0 = F(t, y)`). The history is re-interpolated when h differs from
/// its step; the predictor is `y⁽⁰⁾ = Σ_{j≤k} ∇^j y_n`, the corrector
/// `d = c F(t + h, y⁽⁰⁾ + d) − ψ`, `ψ = Σ_{j=1}^{k} γ_j ∇^j y_n / α_k`, `c = h/α_k`, by
/// simplified Newton with `I − c J` (J from [`Newton`]); the error is
/// `C_k ‖d‖` (a dual run also controls its derivative parts, as the Runge–Kutta methods
/// do). `f1` is the corrector's `(d + ψ)/c`, which equals `F(t + h, y1)` to the Newton
/// tolerance (a step cut at an event evaluates F there: exact f⁻). The dense output is the
/// backward-difference polynomial over the step in the quartic form of [`DenseStep`]
/// (exact up to order 4; at order 5 the quartic matching its values and slopes at both
/// ends and its value at the middle).
#[allow(clippy::too_many_arguments)]
pub(crate) fn bdf_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, newton: &mut Newton,
    from: Option<&BdfHistory<D>>,
) -> Result<Attempt<D>, ModelError> {
    let n = y.len();
    let mut next = match from {
        Some(hist) => hist.clone(),
        None => BdfHistory::start(y, f0, h),
    };
    if (h - next.h).re() != 0.0 || (h - next.h).eps_part() != 0.0 {
        next.rescale(h);
    }
    let k = next.order;
    let mut pred = vec![D::zero(); n];
    let mut psi = vec![D::zero(); n];
    let ak = alpha(k);
    for j in 0..=k {
        let (row, g) = (next.row(j), gamma(j) / ak);
        for i in 0..n {
            pred[i] += row[i];
            if j > 0 {
                psi[i] += row[i] * g;
            }
        }
    }
    let c = h / ak;
    let yr: Vec<f64> = y.iter().map(|v| v.re()).collect();
    let mut evals = 0;
    let rate0 = if next.since >= RATE_REFRESH {
        1.0
    } else {
        next.rate
    };
    let cr = c.re();
    let corrector = Corrector {
        t1: t + h,
        pred: &pred,
        psi: &psi,
        c,
        rate0,
        tol: newton_tol(tol),
        scale: tol,
    };
    let solved = newton.step(
        rhs,
        (t.re(), &yr),
        cr,
        |j| shifted_factors(j, cr, D::REAL),
        |f| corrector.solve(rhs, f, &mut evals),
    )?;
    let Some((y1, d, iterations, measured)) = solved else {
        return Ok(Attempt::NewtonFailed { evals });
    };
    match measured {
        Some(rate) => {
            next.rate = rate;
            next.since = 0;
        }
        None => next.since += 1,
    }
    // the corrector's equation solved for F: (d + ψ)/c = F(t + h, y1) to the Newton
    // tolerance (no evaluation; a step cut at an event evaluates F at its end)
    let cinv = D::one() / c;
    let f1: Vec<D> = (0..n).map(|i| (d[i] + psi[i]) * cinv).collect();
    let md = rhs.error_dim();
    let ek = error_constant(k);
    let mut err = ek * tol.norm_by(md, |i| d[i].re(), &y[..md], &y1[..md]);
    if D::NDERIV > 0 {
        err = err.max(ek * derivative_norm(tol, &d[..md], &y[..md], &y1[..md]));
    }
    let safety =
        0.9 * (2 * NEWTON_ITER + 1) as f64 / (2 * NEWTON_ITER + iterations.min(NEWTON_ITER)) as f64;
    next.retry = if err.is_finite() {
        (safety * err.powf(-1.0 / (k + 1) as f64)).clamp(FACTOR_MIN, 0.9)
    } else {
        0.25
    };
    next.advance(&d);
    next.choose(err, safety, |row| {
        tol.norm_by(md, |i| row[i].re(), &y[..md], &y1[..md])
    });
    let mut dense = dense_output(t, h, y, &y1, &next, k);
    dense.fresh_jacobian = newton.fresh();
    Ok(Attempt::Done {
        y1,
        f1,
        err,
        dense,
        evals,
        history: Some(Box::new(next)),
    })
}

/// The weighted norm of the derivative parts of a dual run's correction (scale
/// `atol + rtol max(|ẏ0_i|, |ẏ1_i|)`).
fn derivative_norm<D: Scalar>(tol: &Tolerances, e: &[D], y0: &[D], y1: &[D]) -> f64 {
    let m = e.len();
    if m == 0 {
        return 0.0;
    }
    let s: f64 = (0..m)
        .map(|i| {
            let sc = tol.atol + tol.rtol * y0[i].eps_part().abs().max(y1[i].eps_part().abs());
            (e[i].eps_part() / sc).powi(2)
        })
        .sum();
    (s / m as f64).sqrt()
}

/// The step's interpolant from the differences after it (order `k`, grid `h` ending at
/// `t + h`): with θ = 1 + s, `r1 = y0`, `r2 = y1 − y0`, `r3 = p′(0) − r2`,
/// `r4 = r2 − p′(1) − r3` (derivatives in θ) and `r5 = 16 (p(½) − r1 − r2/2 − r3/4 − r4/8)`,
/// which reproduces p exactly when its degree k is at most 4.
fn dense_output<D: Scalar>(
    t: D, h: D, y0: &[D], y1: &[D], hist: &BdfHistory<D>, k: usize,
) -> DenseStep<D> {
    let n = y0.len();
    let (_, d_start) = newton_coefficients(k, -1.0);
    let (_, d_end) = newton_coefficients(k, 0.0);
    let (mid, _) = newton_coefficients(k, -0.5);
    // p′(θ = 0), p′(θ = 1) and p(θ = ½), row by row (the differences' rows are contiguous)
    let mut sums = vec![D::zero(); 3 * n];
    {
        let (a, rest) = sums.split_at_mut(n);
        let (b, m) = rest.split_at_mut(n);
        for j in 0..=k {
            let row = hist.row(j);
            let (wa, wb, wm) = (d_start[j], d_end[j], mid[j]);
            for i in 0..n {
                let v = row[i];
                a[i] += v * wa;
                b[i] += v * wb;
                m[i] += v * wm;
            }
        }
    }
    DenseStep::quartic(t, h, y0, y1, |i| {
        let r2 = y1[i] - y0[i];
        let r3 = sums[i] - r2;
        let r4 = r2 - sums[n + i] - r3;
        let r5 = (sums[2 * n + i] - y0[i] - r2 * 0.5 - r3 * 0.25 - r4 * 0.125) * 16.0;
        [r3, r4, r5]
    })
}

/// The corrector of one step (see [`bdf_step`]).
struct Corrector<'a, D> {
    t1: D,
    pred: &'a [D],
    psi: &'a [D],
    c: D,
    /// The convergence rate assumed for the first iteration.
    rate0: f64,
    tol: f64,
    scale: &'a Tolerances,
}

impl<D: Scalar> Corrector<'_, D> {
    /// Simplified Newton from the predictor: `Δ = (I − c J)⁻¹ (c F(t1, y) − ψ − d)`,
    /// `y += Δ`, `d += Δ`. Converged when the estimated remaining error is below the
    /// tolerance: `min(1, rate0) ‖Δ‖` after the first iteration (CVODE's test with the
    /// last measured rate), `θ/(1 − θ) ‖Δ‖` after later ones (θ the observed rate);
    /// failed when θ ≥ 1, when `θ^(left)/(1 − θ) ‖Δ‖` predicts no convergence, or on
    /// non-finite values. The norm weights the real parts by `atol + rtol |y⁽⁰⁾|` and a dual
    /// run's derivative parts on their own scale. Returns `(y, d, iterations, θ measured)`.
    #[allow(clippy::type_complexity)]
    fn solve<R: OdeRhs<D> + ?Sized>(
        &self, rhs: &R, f: &Factors, evals: &mut usize,
    ) -> Result<(Solve<(Vec<D>, Vec<D>, usize, Option<f64>)>, usize), ModelError> {
        let n = self.pred.len();
        let tol = self.scale;
        let scale: Vec<f64> = self
            .pred
            .iter()
            .map(|v| tol.atol + tol.rtol * v.re().abs())
            .collect();
        let scale_d: Vec<f64> = if D::NDERIV > 0 {
            self.pred
                .iter()
                .map(|v| tol.atol + tol.rtol * v.eps_part().abs())
                .collect()
        } else {
            Vec::new()
        };
        let rms = |v: &[D]| {
            let mut s = 0.0;
            let mut sd = 0.0;
            for i in 0..n {
                s += (v[i].re() / scale[i]).powi(2);
                if D::NDERIV > 0 {
                    sd += (v[i].eps_part() / scale_d[i]).powi(2);
                }
            }
            let m = n.max(1) as f64;
            (s / m).sqrt().max((sd / m).sqrt())
        };
        let mut y = self.pred.to_vec();
        let mut d = vec![D::zero(); n];
        let mut fy = vec![D::zero(); n];
        let mut x = vec![D::zero(); n];
        let mut r = vec![D::zero(); n];
        let mut last = f64::INFINITY;
        let max_iter = if D::NDERIV > 0 {
            NEWTON_MAX_ITER
        } else {
            NEWTON_ITER
        };
        for it in 0..max_iter {
            rhs.eval(self.t1, &y, &mut fy)?;
            *evals += 1;
            for i in 0..n {
                r[i] = self.c * fy[i] - self.psi[i] - d[i];
            }
            shifted_solve(f, &mut r, &mut x);
            let nrm = rms(&r);
            if !nrm.is_finite() {
                return Ok((Solve::Failed, it + 1));
            }
            for i in 0..n {
                y[i] += r[i];
                d[i] += r[i];
            }
            let iterations = it + 1;
            let (estimate, measured) = if it == 0 {
                (self.rate0.min(1.0) * nrm, None)
            } else {
                let theta = nrm / last;
                if theta >= 1.0 {
                    return Ok((Solve::Failed, iterations));
                }
                let left = (max_iter - 1 - it) as i32;
                if left > 0 && theta.powi(left) / (1.0 - theta) * nrm > self.tol {
                    return Ok((Solve::Failed, iterations));
                }
                (theta / (1.0 - theta) * nrm, Some(theta))
            };
            if nrm == 0.0 || estimate <= self.tol {
                let rate = measured.unwrap_or(0.0);
                return Ok((
                    Solve::Converged((y, d, iterations, measured), rate),
                    iterations,
                ));
            }
            last = nrm;
        }
        Ok((Solve::Failed, max_iter))
    }
}

#[cfg(test)]
mod tests {
    use super::coefficients::MAX_ORDER;
    use super::*;
    use crate::integrate::forced::Forced;

    /// The error at t = 2 of fixed steps h at order k, started from the exact solution's
    /// differences (the order held: the selection never runs).
    fn fixed_order_error(k: usize, steps: usize) -> f64 {
        let h = 2.0 / steps as f64;
        let tol = Tolerances {
            rtol: 1e-12,
            atol: 1e-12,
        };
        let mut hist = BdfHistory::start(&[Forced::exact(0.0)[0]], &[0.0], h);
        hist.order = k;
        hist.diff = vec![0.0; k + 3];
        // ∇^j y at t = 0 on the grid 0, −h, −2h, …
        let mut v: Vec<f64> = (0..=k).map(|i| Forced::exact(-(i as f64) * h)[0]).collect();
        for j in 0..=k {
            hist.diff[j] = v[0];
            v = v.windows(2).map(|w| w[0] - w[1]).collect();
        }
        let mut newton = Newton::new();
        let mut y = vec![Forced::exact(0.0)[0]];
        for i in 0..steps {
            let t = i as f64 * h;
            let Attempt::Done { y1, history, .. } =
                bdf_step(&Forced, t, &y, &[0.0], h, &tol, &mut newton, Some(&hist)).unwrap()
            else {
                panic!("the corrector failed")
            };
            newton.advance();
            hist = *history.unwrap();
            assert_eq!(hist.order, k);
            hist.equal = 0;
            y = y1;
        }
        (y[0] - Forced::exact(2.0)[0]).abs()
    }

    /// Each order k converges at order k (log-log slope of the error at t = 2 against h).
    #[test]
    fn order_k_converges_at_order_k() {
        for k in 1..=MAX_ORDER {
            let ns = [40, 80, 160];
            let errs: Vec<f64> = ns.iter().map(|&n| fixed_order_error(k, n)).collect();
            let slope = (errs[0] / errs[2]).ln() / 4f64.ln();
            println!("BDF order {k}: errors {errs:?}, slope {slope:.3}");
            // a window around k: measured k ± 0.1
            assert!((slope - k as f64).abs() < 0.3, "order {k}: slope {slope}");
        }
    }

    /// The re-interpolation reproduces the polynomial: differences of a cubic on grid h,
    /// rescaled to ρh, are the cubic's differences on the new grid (exactly, to round-off).
    #[test]
    fn rescale_keeps_the_polynomial() {
        let p = |t: f64| 1.0 + 2.0 * t - 0.5 * t * t + 0.25 * t * t * t;
        let diffs = |h: f64| {
            // ∇^j p at t = 1 on the grid 1, 1 − h, 1 − 2h, 1 − 3h
            let v: Vec<f64> = (0..4).map(|i| p(1.0 - i as f64 * h)).collect();
            let mut d = vec![v.clone()];
            for j in 1..4 {
                let prev = &d[j - 1];
                d.push((0..4 - j).map(|i| prev[i] - prev[i + 1]).collect());
            }
            (0..4).map(|j| d[j][0]).collect::<Vec<f64>>()
        };
        let mut hist = BdfHistory::start(&[0.0], &[0.0], 0.1);
        hist.order = 3;
        for (j, v) in diffs(0.1).into_iter().enumerate() {
            hist.diff[j] = v;
        }
        hist.rescale(0.23);
        let want = diffs(0.23);
        for j in 0..4 {
            assert!(
                (hist.diff[j] - want[j]).abs() < 1e-13,
                "row {j}: {} vs {}",
                hist.diff[j],
                want[j]
            );
        }
    }

    /// The error constants of the BDFs (κ = 0) are 1/(k + 1); the NDFs' are smaller at
    /// orders 1–4 (Shampine & Reichelt 1997, Table 1: the NDF's error constant is
    /// `κ γ_k + 1/(k + 1)`).
    #[test]
    fn ndf_constants() {
        assert!((gamma(3) - 11.0 / 6.0).abs() < 1e-15);
        assert!((error_constant(5) - 1.0 / 6.0).abs() < 1e-15);
        for k in 1..MAX_ORDER {
            assert!(error_constant(k) < 1.0 / (k + 1) as f64);
            assert!(alpha(k) > gamma(k));
        }
    }
}
