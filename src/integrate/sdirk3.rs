//! Alexander's SDIRK 3(2): one step, its three stages by simplified Newton.

use super::dense::DenseStep;
use super::newton::{shifted_factors, shifted_solve, Factors, Newton, Solve};
use super::ode::{Attempt, OdeRhs, Tolerances, NEWTON_MAX_ITER, NEWTON_TOL};
use super::tableau::Sdirk3;
use crate::error::ModelError;
use crate::model::Scalar;

/// One step of Alexander's SDIRK 3(2) (Hairer & Wanner II, §IV.6, Table 6.5; the stage
/// equations `Y_s = y + h Σ_{j<s} a_sj k_j + hγ F(t + c_s h, Y_s)` by simplified Newton
/// with the matrix `I − hγ J` of [`Newton`], the error estimate filtered through it,
/// (IV.8.20)). A failed stage iteration (with a Jacobian evaluated at `(t, y)`) or a
/// singular matrix is [`Attempt::NewtonFailed`].
pub(super) fn sdirk3_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, newton: &mut Newton,
) -> Result<Attempt<D>, ModelError> {
    let m = Sdirk3::new();
    let hr = h.re();
    let yr: Vec<f64> = y.iter().map(|v| v.re()).collect();
    let mut evals = 0;
    let hg = hr * m.gamma;
    let solved = newton.step(
        rhs,
        (t.re(), &yr),
        hr,
        |j| shifted_factors(j, hg, D::REAL),
        |f| sdirk3_stages(rhs, &m, f, (t, y, h), tol, &mut evals),
    )?;
    // stiffly accurate: y1 is the last stage value
    let Some((ks, y1)) = solved else {
        return Ok(Attempt::NewtonFailed { evals });
    };
    let n = y.len();
    let f1 = ks[2].clone();
    let mut e: Vec<D> = (0..n)
        .map(|i| {
            let mut acc = D::zero();
            for s in 0..3 {
                acc += ks[s][i] * (m.b[s] - m.b_hat[s]);
            }
            h * acc
        })
        .collect();
    // Filter the estimate through (I − hγJ)⁻¹ (Hairer & Wanner II, (IV.8.20)) so that it
    // stays bounded on stiff components.
    sdirk_solve(
        newton.factors().expect("the step converged with them"),
        &mut e,
    );
    let md = rhs.error_dim();
    let er: Vec<f64> = e.iter().take(md).map(|v| v.re()).collect();
    let err = tol.norm(&er, &y[..md], &y1[..md]);
    let mut dense = DenseStep::new(t, h, y, &y1, f0, &f1, None);
    dense.fresh_jacobian = newton.fresh();
    Ok(Attempt::done(y1, f1, err, dense, evals))
}

/// [`shifted_solve`] with its own scratch.
fn sdirk_solve<D: Scalar>(f: &Factors, r: &mut [D]) {
    let mut x = vec![D::zero(); r.len()];
    shifted_solve(f, r, &mut x);
}

/// The three stages of an SDIRK3 step, each by simplified Newton from the previous stage
/// value (converged when the weighted norm of the update is below [`NEWTON_TOL`]; failed
/// when it diverges or after [`NEWTON_MAX_ITER`] iterations). Returns the stage slopes
/// `k_s` and the last stage value with the largest contraction rate observed, and the
/// iterations taken.
fn sdirk3_stages<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, m: &Sdirk3, f: &Factors, (t, y, h): (D, &[D], D), tol: &Tolerances, evals: &mut usize,
) -> Result<(Solve<(Vec<Vec<D>>, Vec<D>)>, usize), ModelError> {
    let n = y.len();
    let mut ks: Vec<Vec<D>> = Vec::with_capacity(3);
    let mut ycur = y.to_vec();
    let mut iterations = 0;
    let mut rate: f64 = 0.0;
    for s in 0..3 {
        // base = y + h Σ_{j<s} a_sj k_j ; solve Y = base + hγ F(t + c_s h, Y)
        let mut base = y.to_vec();
        for (j, kj) in ks.iter().enumerate() {
            let a = m.a[s][j];
            for i in 0..n {
                base[i] += h * kj[i] * a;
            }
        }
        // predictor: the previous stage value
        let ts = t + h * m.c[s];
        let mut fy = vec![D::zero(); n];
        let mut converged = false;
        let mut last_norm = f64::INFINITY;
        for it in 0..NEWTON_MAX_ITER {
            rhs.eval(ts, &ycur, &mut fy)?;
            *evals += 1;
            iterations += 1;
            let mut r: Vec<D> = (0..n)
                .map(|i| base[i] + h * fy[i] * m.gamma - ycur[i])
                .collect();
            sdirk_solve(f, &mut r);
            let dr: Vec<f64> = r.iter().map(|v| v.re()).collect();
            let nrm = tol.norm(&dr, &ycur, &ycur);
            for i in 0..n {
                ycur[i] += r[i];
            }
            if !nrm.is_finite() || nrm > 2.0 * last_norm && nrm > 1.0 {
                return Ok((Solve::Failed, iterations));
            }
            if it > 0 {
                rate = rate.max(nrm / last_norm);
            }
            last_norm = nrm;
            if nrm < NEWTON_TOL {
                converged = true;
                break;
            }
        }
        if !converged {
            return Ok((Solve::Failed, iterations));
        }
        rhs.eval(ts, &ycur, &mut fy)?;
        *evals += 1;
        ks.push(fy);
    }
    Ok((Solve::Converged((ks, ycur), rate), iterations))
}
