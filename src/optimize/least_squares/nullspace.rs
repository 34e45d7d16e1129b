//! The generalized Gauss–Newton subproblem (docs/theory.md §9): min ½‖r + JΔ‖² + ½μ‖Zᵀ Δ‖² subject to
//! c + CΔ = 0 and the variables held at their bounds, by the null-space method: with
//! C_Fᵀ = [Y Z] [R; 0] (Householder QR of the free columns' transpose), Δ = Y a + Z b where
//! Rᵀa = −c fixes the range part and b is the (damped) least-squares solution of
//! (J Z) b ≈ −(r + J Y a) from the SVD of J Z. Neither JᵀJ nor the KKT matrix is formed;
//! J Z has only n − p columns (multiple shooting: the parameters and one node's states).
//! The multipliers solve R ν = −Yᵀ Jᵀ(r + JΔ).

use super::bounds::{BoundSide, BoxBounds};
use super::calls::max_abs;
use super::error::LsqError;
use nalgebra::{DMatrix, DVector};

/// Relative size of R's smallest diagonal below which C's rows count as dependent.
const DEPENDENT: f64 = 1e-12;

/// The linearization at the iterate w.
pub(super) struct Linear<'a> {
    pub w: &'a [f64],
    pub r: &'a DVector<f64>,
    pub c: &'a DVector<f64>,
    pub j: &'a DMatrix<f64>,
    pub cm: &'a DMatrix<f64>,
}

/// A step of the subproblem.
#[derive(Debug, Clone)]
pub(super) struct SubStep {
    /// Δw.
    pub dw: DVector<f64>,
    /// The subproblem's multipliers ν.
    pub nu: DVector<f64>,
    /// The variables held at a bound (their Δ puts them exactly on it), with the side.
    pub held: Vec<(usize, BoundSide)>,
    /// The largest singular value of J Z (the scale μ is relative to).
    pub scale: f64,
    /// The fraction of the step kept so that it stays in the box (1 unless the active
    /// set did not settle).
    pub fraction: f64,
}

/// The null-space factors for a set of held variables.
struct Factors {
    free: Vec<usize>,
    /// R (p×p) of C_Fᵀ = Y R.
    rc: DMatrix<f64>,
    y: DMatrix<f64>,
    z: DMatrix<f64>,
}

/// QR of C_Fᵀ: Y, Z and R; an error if C_F's rows are dependent.
fn factor(cm: &DMatrix<f64>, free: Vec<usize>) -> Result<Factors, LsqError> {
    let (p, k) = (cm.nrows(), free.len());
    if p > k {
        return Err(LsqError::DependentConstraints { pivot: 0.0 });
    }
    let cft = cm.select_columns(free.iter()).transpose();
    let qr = cft.qr();
    let mut qt = DMatrix::<f64>::identity(k, k);
    qr.q_tr_mul(&mut qt);
    let q = qt.transpose();
    let rc = qr.r();
    let diag: Vec<f64> = (0..p).map(|i| rc[(i, i)].abs()).collect();
    let (lo, hi) = diag
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    if p > 0 && !(lo > DEPENDENT * hi) {
        return Err(LsqError::DependentConstraints {
            pivot: lo / hi.max(f64::MIN_POSITIVE),
        });
    }
    Ok(Factors {
        free,
        y: q.columns(0, p).into_owned(),
        z: q.columns(p, k - p).into_owned(),
        rc,
    })
}

/// The step with the variables in `held` moved by `target` (n-vector, zero elsewhere),
/// damping μ relative to the square of J Z's largest singular value.
fn solve_held(
    lin: &Linear, f: &Factors, target: &DVector<f64>, mu_rel: f64,
) -> Option<(DVector<f64>, DVector<f64>, f64)> {
    let rt = lin.r + lin.j * target;
    let ct = lin.c + lin.cm * target;
    let jf = lin.j.select_columns(f.free.iter());
    let a = f.rc.transpose().solve_lower_triangular(&(-ct))?;
    let h = &rt + &jf * (&f.y * &a);
    let mut dfree = &f.y * &a;
    let mut scale = 0.0;
    if f.z.ncols() > 0 {
        let svd = (&jf * &f.z).svd(true, true);
        let (u, v_t, s) = (svd.u?, svd.v_t?, svd.singular_values);
        scale = s.iter().fold(0.0f64, |a, &v| a.max(v));
        let mu = mu_rel * scale * scale;
        let cut = scale * f64::EPSILON * jf.nrows().max(jf.ncols()) as f64;
        let wgt = s.map(|si| {
            if mu == 0.0 && si <= cut {
                0.0
            } else {
                si / (si * si + mu)
            }
        });
        let b = -(v_t.transpose() * wgt.component_mul(&(u.transpose() * &h)));
        dfree += &f.z * b;
    }
    let mut dw = target.clone();
    for (a, &i) in f.free.iter().enumerate() {
        dw[i] = dfree[a];
    }
    let lin_r = lin.r + lin.j * &dw;
    let rhs = -(f.y.transpose() * (jf.transpose() * lin_r));
    let nu = f.rc.solve_upper_triangular(&rhs)?;
    Some((dw, nu, scale))
}

/// κ = Jᵀ(r + JΔ) + Cᵀν: a held variable's bound multiplier (≥ 0 at a lower bound, ≤ 0 at
/// an upper one when the bound rightly holds it).
fn bound_multipliers(lin: &Linear, dw: &DVector<f64>, nu: &DVector<f64>) -> DVector<f64> {
    lin.j.tr_mul(&(lin.r + lin.j * dw)) + lin.cm.tr_mul(nu)
}

/// The subproblem's step with the bounds kept by an active set: start from the variables
/// at a bound held; hold every variable the step would carry out of the box (at the bound
/// it crosses); release the held variable whose bound multiplier has the wrong sign
/// (the largest first); re-solve, at most 2n + 4 times. If the set does not settle, the
/// last step is cut to the fraction that stays in the box.
pub(super) fn step(lin: &Linear, bounds: &BoxBounds, mu_rel: f64) -> Result<SubStep, LsqError> {
    let n = lin.w.len();
    let mut held: Vec<(usize, BoundSide)> = (0..n)
        .filter_map(|i| bounds.at(lin.w, i).map(|s| (i, s)))
        .collect();
    let mut last: Option<SubStep> = None;
    for _ in 0..2 * n + 4 {
        let (target, free) = targets(lin.w, bounds, &held);
        let f = match factor(lin.cm, free) {
            Ok(f) => f,
            Err(e) if last.is_none() => return Err(e),
            Err(_) => break,
        };
        let Some((dw, nu, scale)) = solve_held(lin, &f, &target, mu_rel) else {
            break;
        };
        let sub = SubStep {
            dw,
            nu,
            held: held.clone(),
            scale,
            fraction: 1.0,
        };
        let leaving = leaving(lin.w, &sub.dw, bounds, &f.free);
        if !leaving.is_empty() {
            held.extend(leaving);
            last = Some(sub);
            continue;
        }
        let kappa = bound_multipliers(lin, &sub.dw, &sub.nu);
        let tol = 1e-12 * (1.0 + max_abs(&kappa));
        let wrong = held
            .iter()
            .enumerate()
            .filter(|(_, &(i, s))| {
                bounds.lower[i] < bounds.upper[i]
                    && match s {
                        BoundSide::Lower => kappa[i] < -tol,
                        BoundSide::Upper => kappa[i] > tol,
                    }
            })
            .max_by(|a, b| kappa[a.1 .0].abs().total_cmp(&kappa[b.1 .0].abs()));
        match wrong {
            Some((pos, _)) => {
                held.remove(pos);
                last = Some(sub);
            }
            None => return Ok(sub),
        }
    }
    let mut sub = last.ok_or(LsqError::DependentConstraints { pivot: 0.0 })?;
    let tau = fraction_in_box(lin.w, &sub.dw, bounds);
    sub.dw *= tau;
    sub.fraction = tau;
    Ok(sub)
}

/// The n-vector of Δ for the held variables (onto their bound) and the free indices.
fn targets(
    w: &[f64], bounds: &BoxBounds, held: &[(usize, BoundSide)],
) -> (DVector<f64>, Vec<usize>) {
    let mut target = DVector::zeros(w.len());
    let mut is_held = vec![false; w.len()];
    for &(i, s) in held {
        let b = match s {
            BoundSide::Lower => bounds.lower[i],
            BoundSide::Upper => bounds.upper[i],
        };
        target[i] = b - w[i];
        is_held[i] = true;
    }
    (target, (0..w.len()).filter(|&i| !is_held[i]).collect())
}

/// The free variables that w + Δ carries out of the box, with the bound crossed.
fn leaving(
    w: &[f64], dw: &DVector<f64>, bounds: &BoxBounds, free: &[usize],
) -> Vec<(usize, BoundSide)> {
    free.iter()
        .filter_map(|&i| {
            let v = w[i] + dw[i];
            if v < bounds.lower[i] {
                Some((i, BoundSide::Lower))
            } else if v > bounds.upper[i] {
                Some((i, BoundSide::Upper))
            } else {
                None
            }
        })
        .collect()
}

/// The largest τ ∈ [0, 1] with w + τΔ in the box.
fn fraction_in_box(w: &[f64], dw: &DVector<f64>, bounds: &BoxBounds) -> f64 {
    (0..w.len()).fold(1.0f64, |tau, i| {
        let d = dw[i];
        let room = if d < 0.0 {
            (bounds.lower[i] - w[i]) / d
        } else if d > 0.0 {
            (bounds.upper[i] - w[i]) / d
        } else {
            f64::INFINITY
        };
        tau.min(room.max(0.0))
    })
}

/// The least-squares multipliers at the point (ν minimizing ‖Jᵀr + Cᵀν‖ over the free
/// variables) and the stationarity ‖Jᵀr + Cᵀν‖∞ there.
pub(super) fn first_order(
    lin: &Linear, held: &[(usize, BoundSide)],
) -> Result<(DVector<f64>, f64), LsqError> {
    let (_, free) = targets(lin.w, &BoxBounds::free(lin.w.len()), held);
    let f = factor(lin.cm, free)?;
    let jf = lin.j.select_columns(f.free.iter());
    let gf = jf.tr_mul(lin.r);
    let nu =
        f.rc.solve_upper_triangular(&(-(f.y.transpose() * &gf)))
            .ok_or(LsqError::DependentConstraints { pivot: 0.0 })?;
    let cf = lin.cm.select_columns(f.free.iter());
    let stat = max_abs(&(gf + cf.tr_mul(&nu)));
    Ok((nu, stat))
}
