//! One step of the 3-stage Radau IIA method of order 5 (Hairer & Wanner, *Solving ODEs
//! II*, §IV.5 and §IV.8): the stage system solved by simplified Newton in the eigenbasis of
//! `A⁻¹` (one real and one complex linear system of the state's size per iteration, with
//! factors kept across steps by [`Newton`]), the filtered embedded error estimate, and the
//! collocation polynomial as dense output. Generic over the scalar like SDIRK3: a dual run
//! iterates the same Newton with the same real factors; its derivative parts contract at
//! the same rate, and convergence is judged on both (each on its own scale); the
//! derivative parts' error estimate joins the step control, as DOPRI5's.

use super::dense::DenseStep;
use super::lu::{Factored, Lu};
use super::newton::{Factors, Newton, Solve};
use super::ode::{
    Attempt, JacobianBlock, NewtonJacobian, OdeRhs, Tolerances, NEWTON_MAX_ITER, NEWTON_TOL,
};
use super::sparse::SparseLu;
use super::tableau::Radau5;
use crate::error::ModelError;
use crate::model::Scalar;
use nalgebra::{Complex, Matrix3, Vector3};
use std::sync::OnceLock;

/// The eigenbasis of Radau IIA's `A⁻¹` (Hairer & Wanner II, (IV.8.15)):
/// `T⁻¹ A⁻¹ T = Λ = [[γ, 0, 0], [0, α, −β], [0, β, α]]`, with γ = 1/γ0 the real eigenvalue
/// and α ± iβ the complex pair. Computed from the tableau: α = (tr A⁻¹ − γ)/2,
/// β = √(det A⁻¹/γ − α²), the eigenvectors as cross products of two rows of `A⁻¹ − λI`;
/// with `w` the eigenvector of α + iβ, `T = [v_γ, Re w, −Im w]`.
pub(crate) struct Eigenbasis {
    pub(crate) gamma: f64,
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
    pub(crate) t: [[f64; 3]; 3],
    pub(crate) t_inv: [[f64; 3]; 3],
}

impl Eigenbasis {
    fn compute(tab: &Radau5) -> Self {
        let a = Matrix3::from_fn(|i, j| tab.a[i][j]);
        let ai = a.try_inverse().expect("Radau IIA's A is invertible");
        let gamma = 1.0 / tab.gamma0;
        let alpha = (ai.trace() - gamma) / 2.0;
        let beta = (ai.determinant() / gamma - alpha * alpha).sqrt();
        // a null vector of a 3 × 3 matrix of rank 2: the largest cross product of two rows
        fn null<T: nalgebra::ComplexField + Copy>(m: nalgebra::Matrix3<T>) -> Vector3<T> {
            let rows = [
                m.row(0).transpose(),
                m.row(1).transpose(),
                m.row(2).transpose(),
            ];
            [(0, 1), (0, 2), (1, 2)]
                .iter()
                .map(|&(i, j)| rows[i].cross(&rows[j]))
                .max_by(|x, y| x.norm().partial_cmp(&y.norm()).expect("finite"))
                .expect("three pairs")
        }
        let v = null(ai - Matrix3::identity() * gamma);
        let lambda = Complex::new(alpha, beta);
        let aic: Matrix3<Complex<f64>> = ai.map(|x| Complex::new(x, 0.0));
        let w = null(aic - Matrix3::identity() * lambda);
        let t = Matrix3::from_columns(&[v, w.map(|z| z.re), w.map(|z| -z.im)]);
        let t_inv = t.try_inverse().expect("the eigenbasis is a basis");
        let arr = |m: Matrix3<f64>| [0, 1, 2].map(|i| [0, 1, 2].map(|j| m[(i, j)]));
        Eigenbasis {
            gamma,
            alpha,
            beta,
            t: arr(t),
            t_inv: arr(t_inv),
        }
    }

    /// The basis of the method (computed once).
    pub(crate) fn get() -> &'static Eigenbasis {
        static BASIS: OnceLock<Eigenbasis> = OnceLock::new();
        BASIS.get_or_init(|| Eigenbasis::compute(&Radau5::new()))
    }
}

/// The two iteration matrices of step h for the block form of [`NewtonJacobian`]
/// (`copies` blocks, then `rest` components with zero Jacobian): `γ/h I − J` and
/// `(α + iβ)/h I − J`, factored — by the sparse LU when the block is sparse and `sparse`
/// (a real run), else densely.
fn factor(jac: &NewtonJacobian, h: f64, sparse: bool) -> Option<Factors> {
    let e = Eigenbasis::get();
    let shift = Complex::new(e.alpha / h, e.beta / h);
    if let (JacobianBlock::Sparse(s), true) = (&jac.block, sparse) {
        return Some(Factors::Radau {
            real: Factored::Sparse(Box::new(SparseLu::<f64>::factor(s, e.gamma / h)?)),
            complex: Factored::Sparse(Box::new(SparseLu::<Complex<f64>>::factor(s, shift)?)),
            copies: jac.copies,
        });
    }
    let block = jac.block.to_dense();
    let m = block.nrows();
    let real: Vec<f64> = (0..m * m)
        .map(|k| {
            let (i, j) = (k % m, k / m);
            (if i == j { e.gamma / h } else { 0.0 }) - block[(i, j)]
        })
        .collect();
    let complex: Vec<Complex<f64>> = (0..m * m)
        .map(|k| {
            let (i, j) = (k % m, k / m);
            let d = if i == j {
                shift
            } else {
                Complex::new(0.0, 0.0)
            };
            d - Complex::new(block[(i, j)], 0.0)
        })
        .collect();
    Some(Factors::Radau {
        real: Factored::Dense(Lu::factor(m, real)?),
        complex: Factored::Dense(Lu::factor(m, complex)?),
        copies: jac.copies,
    })
}

/// The factors of one step in the block form (see [`factor`]).
struct RadauFactors<'f> {
    real: &'f Factored<f64>,
    complex: &'f Factored<Complex<f64>>,
    copies: usize,
    h: f64,
}

impl RadauFactors<'_> {
    fn of(f: &Factors, h: f64) -> RadauFactors<'_> {
        match f {
            Factors::Radau {
                real,
                complex,
                copies,
            } => RadauFactors {
                real,
                complex,
                copies: *copies,
                h,
            },
            Factors::Sdirk { .. } => unreachable!("Radau IIA's factors are built by `factor`"),
        }
    }

    /// `(γ/h I − J)⁻¹ r` in place, block by block (the rest divided by γ/h).
    fn solve_real<D: Scalar>(&self, r: &mut [D], x: &mut [D]) {
        let m = self.real.dim();
        let g = Eigenbasis::get().gamma / self.h;
        for c in 0..self.copies {
            self.real.solve(&mut r[c * m..(c + 1) * m], x);
        }
        for v in &mut r[self.copies * m..] {
            *v /= g;
        }
    }

    /// `((α + iβ)/h I − J)⁻¹ (u + i v)` in place, block by block.
    fn solve_complex<D: Scalar>(&self, u: &mut [D], v: &mut [D], xu: &mut [D], xv: &mut [D]) {
        let m = self.complex.dim();
        let e = Eigenbasis::get();
        for c in 0..self.copies {
            let r = c * m..(c + 1) * m;
            self.complex
                .solve_pair((&mut u[r.clone()], &mut v[r]), (&mut xu[..], &mut xv[..]));
        }
        // the rest: divided by (α + iβ)/h
        let s = Complex::new(1.0, 0.0) / Complex::new(e.alpha / self.h, e.beta / self.h);
        for i in self.copies * m..u.len() {
            let (a, b) = (u[i], v[i]);
            u[i] = a * s.re - b * s.im;
            v[i] = a * s.im + b * s.re;
        }
    }
}

/// Simplified Newton on the stage system `Z = h (A ⊗ I) F(t + c h, y0 + Z)` from `Z = 0`,
/// in the transformed variables `W = (T⁻¹ ⊗ I) Z` (Hairer & Wanner II, (IV.8.16)):
///
/// ```text
/// (h⁻¹ Λ ⊗ I − I ⊗ J) ΔW = −h⁻¹ (Λ ⊗ I) W + (T⁻¹ ⊗ I) F(t + c h, y0 + (T ⊗ I) W),
/// W ← W + ΔW
/// ```
///
/// (the right-hand side evaluated as `[h (T⁻¹ ⊗ I) F − (Λ ⊗ I) W] / h`, the division by
/// the real part of h, so that a dual h's derivative enters from the first iteration)
///
/// — one real system `(γ/h I − J)` and one complex `((α + iβ)/h I − J)` per iteration —
/// with the weighted RMS norm of `ΔZ = (T ⊗ I) ΔW` (scale `atol + rtol |y0_i|`). Converged
/// when `‖ΔZ‖ ≤ NEWTON_TOL`, or when the estimated remaining error `θ/(1 − θ) ‖ΔZ‖` is (θ
/// the observed contraction rate, (IV.8.10)–(IV.8.11)), or when ‖ΔZ‖ is at the round-off
/// floor `10 ε ‖(|y0| + |Z|)/scale‖` (at tight tolerances that floor is above
/// `NEWTON_TOL`). Failed when θ ≥ 1, when `θ^(iterations left) ‖ΔZ‖` predicts no
/// convergence within [`NEWTON_MAX_ITER`], or on non-finite values. Returns the stage
/// increments Z (stage i at i·n) with θ (0 after a single iteration), and the number of
/// iterations.
/// The RMS norm of a stage vector of length 3n, entry k = s·n + i (stage s, component i,
/// given by `v(k, i)`) weighted by `inv[i]` (the reciprocal scale), summed in four
/// interleaved partial sums (one running sum is the Newton loop's longest dependency
/// chain).
#[inline(always)]
fn stage_rms(inv: &[f64], v: impl Fn(usize, usize) -> f64) -> f64 {
    let n = inv.len();
    let mut acc = [0.0; 4];
    for st in 0..3 {
        let base = st * n;
        let mut i = 0;
        while i + 4 <= n {
            for (l, a) in acc.iter_mut().enumerate() {
                let r = v(base + i + l, i + l) * inv[i + l];
                *a += r * r;
            }
            i += 4;
        }
        for (l, k) in (i..n).enumerate() {
            let r = v(base + k, k) * inv[k];
            acc[l] += r * r;
        }
    }
    (((acc[0] + acc[1]) + (acc[2] + acc[3])) / (3 * n).max(1) as f64).sqrt()
}

#[allow(clippy::too_many_arguments)]
fn newton_stages<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, tab: &Radau5, lu: &RadauFactors<'_>, t: D, y: &[D], h: D, tol: &Tolerances,
    evals: &mut usize,
) -> Result<(Solve<Vec<D>>, usize), ModelError> {
    let e = Eigenbasis::get();
    let (ti, tm) = (&e.t_inv, &e.t);
    let n = y.len();
    let inv_scale: Vec<f64> = y
        .iter()
        .map(|v| 1.0 / (tol.atol + tol.rtol * v.re().abs()))
        .collect();
    // a dual run's derivative parts on their own scale (as `derivative_error`)
    let inv_scale_d: Vec<f64> = y
        .iter()
        .map(|v| 1.0 / (tol.atol + tol.rtol * v.eps_part().abs()))
        .collect();
    let hinv = 1.0 / h.re();
    let mut z = vec![D::zero(); 3 * n];
    let mut w = vec![D::zero(); 3 * n];
    let mut f = vec![D::zero(); 3 * n];
    let mut r = vec![D::zero(); 3 * n];
    let mut dz = vec![D::zero(); 3 * n];
    let mut ys = vec![D::zero(); n];
    let (mut x1, mut x2) = (vec![D::zero(); n], vec![D::zero(); n]);
    let mut last = f64::INFINITY;
    for it in 0..NEWTON_MAX_ITER {
        for s in 0..3 {
            for i in 0..n {
                ys[i] = y[i] + z[s * n + i];
            }
            rhs.eval(t + h * tab.c[s], &ys, &mut f[s * n..(s + 1) * n])?;
        }
        *evals += 3;
        // r = [h (T⁻¹ ⊗ I) F − (Λ ⊗ I) W] / Re h, component by component: the right-hand
        // side above for the values; for a dual h (a step cut at an event) the derivative
        // of h enters from the first iteration on, as in `Z = h (A ⊗ I) F`, so the
        // derivative parts contract from the start instead of jumping at the second
        for i in 0..n {
            let (f0, f1, f2) = (f[i], f[n + i], f[2 * n + i]);
            let (w0, w1, w2) = (w[i], w[n + i], w[2 * n + i]);
            let g = |a: usize| (f0 * ti[a][0] + f1 * ti[a][1] + f2 * ti[a][2]) * h;
            r[i] = (g(0) - w0 * e.gamma) * hinv;
            r[n + i] = (g(1) - (w1 * e.alpha - w2 * e.beta)) * hinv;
            r[2 * n + i] = (g(2) - (w1 * e.beta + w2 * e.alpha)) * hinv;
        }
        {
            let (r0, r12) = r.split_at_mut(n);
            let (r1, r2) = r12.split_at_mut(n);
            lu.solve_real(r0, &mut x1);
            lu.solve_complex(r1, r2, &mut x1, &mut x2);
        }
        apply_correction(&r, tm, &mut z, &mut w, &mut dz);
        let iterations = it + 1;
        let nrm_re = stage_rms(&inv_scale, |k, _| dz[k].re());
        // a dual run's derivative parts must converge too, on their own scale: judged on
        // the real parts alone, a derivative much larger than its value (the rectifier's
        // ∂/∂r, 1/r = 100) kept Newton's O(NEWTON_TOL) error relative to the value
        let nrm_d = if D::NDERIV > 0 {
            stage_rms(&inv_scale_d, |k, _| dz[k].eps_part())
        } else {
            0.0
        };
        let nrm = nrm_re.max(nrm_d);
        if !nrm.is_finite() {
            return Ok((Solve::Failed, iterations));
        }
        let theta = nrm / last;
        let eta = if it > 0 && theta < 1.0 {
            theta / (1.0 - theta)
        } else {
            1.0
        };
        let small = at_round_off(nrm_re, nrm_d, (&inv_scale, &inv_scale_d), y, &z);
        if small || eta * nrm <= NEWTON_TOL {
            let rate = if it > 0 { theta } else { 0.0 };
            return Ok((Solve::Converged(z, rate), iterations));
        }
        if it > 0 {
            let left = (NEWTON_MAX_ITER - 1 - it) as i32;
            if theta >= 1.0 || theta.powi(left) * nrm > NEWTON_TOL {
                return Ok((Solve::Failed, iterations));
            }
        }
        last = nrm;
    }
    Ok((Solve::Failed, NEWTON_MAX_ITER))
}

/// `ΔZ = (T ⊗ I) ΔW; W += ΔW, Z += ΔZ` for the solved correction `ΔW` in `r`
/// (Hairer & Wanner II, (IV.8.16)–(IV.8.18)).
fn apply_correction<D: Scalar>(
    r: &[D], tm: &[[f64; 3]; 3], z: &mut [D], w: &mut [D], dz: &mut [D],
) {
    let n = r.len() / 3;
    for i in 0..n {
        let (d0, d1, d2) = (r[i], r[n + i], r[2 * n + i]);
        for s in 0..3 {
            let d = d0 * tm[s][0] + d1 * tm[s][1] + d2 * tm[s][2];
            dz[s * n + i] = d;
            z[s * n + i] += d;
        }
        w[i] += d0;
        w[n + i] += d1;
        w[2 * n + i] += d2;
    }
}

/// Whether Newton's correction is as small as it can be: each part's norm (the values';
/// a dual run's derivative parts', on their own scale) below `NEWTON_TOL` or at its
/// round-off floor `10 ε rms(|y| + |Z|)` — the floors computed only where they decide.
fn at_round_off<D: Scalar>(
    nrm_re: f64, nrm_d: f64, (inv_scale, inv_scale_d): (&[f64], &[f64]), y: &[D], z: &[D],
) -> bool {
    let small_re = nrm_re <= NEWTON_TOL
        || nrm_re
            <= 10.0 * f64::EPSILON * stage_rms(inv_scale, |k, i| y[i].re().abs() + z[k].re().abs());
    let small_d = nrm_d <= NEWTON_TOL
        || D::NDERIV > 0
            && nrm_d
                <= 10.0
                    * f64::EPSILON
                    * stage_rms(inv_scale_d, |k, i| {
                        y[i].eps_part().abs() + z[k].eps_part().abs()
                    });
    small_re && small_d
}

/// The embedded error estimate (Hairer & Wanner II, (IV.8.19)) of one part of the scalars
/// (`part`: the real part, or a dual run's derivative part):
/// `err = (I − hγ0 J)⁻¹ γ0 [h f + d1 Z1 + d2 Z2 + d3 Z3] = (γ/h I − J)⁻¹ [f + (d·Z)/h]`
/// (γ = 1/γ0) with `f = f(t0, y0)`; for (IV.8.20), `f = f(t0, y0 + err)` of the first
/// estimate.
fn error_estimate<D: Scalar>(
    tab: &Radau5, lu: &RadauFactors<'_>, h: D, f: &[D], z: &[D], part: impl Fn(&D) -> f64,
) -> Vec<f64> {
    let n = f.len();
    let hinv = D::one() / h;
    // summed in the scalar before taking the part: with a dual h (a step from an event
    // time) the h-derivative of h f and of the Z_i cancel as the values do
    let mut e: Vec<f64> = (0..n)
        .map(|i| {
            let mut acc = D::zero();
            for s in 0..3 {
                acc += z[s * n + i] * tab.d[s];
            }
            part(&(f[i] + acc * hinv))
        })
        .collect();
    lu.solve_real(&mut e, &mut vec![0.0; n]);
    e
}

/// The weighted norm of a dual run's derivative-part error estimate (scale
/// `atol + rtol max(|ẏ0_i|, |ẏ1_i|)` of the derivative parts), so that the witness's
/// derivative is as accurate as the tolerances ask, as DOPRI5 does for dual runs.
fn derivative_error<D: Scalar>(
    tab: &Radau5, lu: &RadauFactors<'_>, tol: &Tolerances, h: D, (f0, z): (&[D], &[D]),
    (y0, y1): (&[D], &[D]), md: usize,
) -> f64 {
    let e = error_estimate(tab, lu, h, f0, z, |v| v.eps_part());
    if md == 0 {
        return 0.0;
    }
    let s: f64 = (0..md)
        .map(|i| {
            let sc = tol.atol + tol.rtol * y0[i].eps_part().abs().max(y1[i].eps_part().abs());
            (e[i] / sc).powi(2)
        })
        .sum();
    (s / md as f64).sqrt()
}

/// One Radau IIA(5) step from `(t, y)` with slope `f0` and step `h`, with the Jacobian
/// and factors of `newton` (see [`Newton::step`]). Stiffly accurate: `y1 = y0 + Z3`;
/// `f1 = F(t + h, y1)` is evaluated (exact f⁻ at events). The error is (IV.8.19); when it
/// is ≥ 1 the refined (IV.8.20) decides (RADAU5 refines only on the first step and after a
/// rejection; a step here does not know its history, and the refinement only matters when
/// the first estimate rejects). The dense output is the collocation polynomial. A dual run
/// also controls the error of its derivative parts (the same estimate on them), as DOPRI5
/// does. A singular Newton matrix or a failed stage iteration (with a Jacobian evaluated
/// at `(t, y)`) is [`Attempt::NewtonFailed`].
#[allow(clippy::too_many_arguments)]
pub fn radau5_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, newton: &mut Newton,
) -> Result<Attempt<D>, ModelError> {
    let tab = Radau5::new();
    let n = y.len();
    let hr = h.re();
    let yr: Vec<f64> = y.iter().map(|v| v.re()).collect();
    let mut evals = 0;
    let solved = newton.step(
        rhs,
        (t.re(), &yr),
        hr,
        |j| factor(j, hr, D::REAL),
        |f| {
            newton_stages(
                rhs,
                &tab,
                &RadauFactors::of(f, hr),
                t,
                y,
                h,
                tol,
                &mut evals,
            )
        },
    )?;
    let Some(z) = solved else {
        return Ok(Attempt::NewtonFailed { evals });
    };
    let lu = RadauFactors::of(newton.factors().expect("the step converged with them"), hr);
    let y1: Vec<D> = (0..n).map(|i| y[i] + z[2 * n + i]).collect();
    let mut f1 = vec![D::zero(); n];
    rhs.eval(t + h, &y1, &mut f1)?;
    evals += 1;
    let md = rhs.error_dim();
    let e = error_estimate(&tab, &lu, h, f0, &z, |v| v.re());
    let mut err = tol.norm(&e[..md], &y[..md], &y1[..md]);
    if err >= 1.0 && err.is_finite() {
        let ye: Vec<D> = (0..n).map(|i| y[i] + D::from(e[i])).collect();
        let mut fe = vec![D::zero(); n];
        rhs.eval(t, &ye, &mut fe)?;
        evals += 1;
        let e2 = error_estimate(&tab, &lu, h, &fe, &z, |v| v.re());
        err = tol.norm(&e2[..md], &y[..md], &y1[..md]);
    }
    if D::NDERIV > 0 {
        let ed = derivative_error(&tab, &lu, tol, h, (f0, &z), (y, &y1), md);
        err = err.max(ed);
    }
    let mut dense = DenseStep::collocation(t, h, y, &z, [tab.c[0], tab.c[1]]);
    dense.fresh_jacobian = newton.fresh();
    Ok(Attempt::done(y1, f1, err, dense, evals))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// T⁻¹ A⁻¹ T = [[γ, 0, 0], [0, α, −β], [0, β, α]], and the known eigenvalues
    /// (Hairer & Wanner II, §IV.8: γ ≈ 3.6378, α ≈ 2.6811, β ≈ 3.0504).
    #[test]
    fn eigenbasis_block_diagonalizes_a_inverse() {
        let e = Eigenbasis::get();
        let tab = Radau5::new();
        let a = Matrix3::from_fn(|i, j| tab.a[i][j]);
        let t = Matrix3::from_fn(|i, j| e.t[i][j]);
        let ti = Matrix3::from_fn(|i, j| e.t_inv[i][j]);
        let lam = ti * a.try_inverse().unwrap() * t;
        let want = Matrix3::new(
            e.gamma, 0.0, 0.0, 0.0, e.alpha, -e.beta, 0.0, e.beta, e.alpha,
        );
        assert!((lam - want).abs().max() < 1e-12, "{lam}");
        assert!((e.gamma - 3.637834252744496).abs() < 1e-12);
        assert!((e.alpha - 2.681082873627752).abs() < 1e-12);
        assert!((e.beta - 3.050_430_199_247_41).abs() < 1e-12);
    }
}
