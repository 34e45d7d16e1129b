//! One step of each integrator, the error norm, the PI step-size controller and the
//! starting step. Generic over the scalar so that a whole simulation can run in dual
//! numbers; step-size decisions use real parts only, so a dual run takes exactly the steps
//! of the `f64` run.

pub use super::bdf::history::BdfHistory;
use super::dense::DenseStep;
use super::newton::{shifted_factors, shifted_solve, Factors, Newton, Solve};
pub use super::ode::{Attempt, NewtonJacobian, OdeRhs, Tolerances};
pub(super) use super::ode::{NEWTON_MAX_ITER, NEWTON_TOL};
use super::tableau::{dopri5, Radau5, Sdirk3};
use crate::error::ModelError;
use crate::model::scratch::with_stack;
use crate::model::Scalar;

/// The integration methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Dormand–Prince 5(4), explicit, 4th-order dense output. The default: non-stiff problems.
    #[default]
    Dopri5,
    /// Alexander's L-stable SDIRK 3(2) with the exact Jacobian and cubic Hermite dense
    /// output: stiff problems (penalty contact, stiff springs).
    Sdirk3,
    /// The 3-stage Radau IIA collocation method of order 5 (Hairer & Wanner II, §IV.5,
    /// §IV.8): stiffly accurate and L-stable, simplified Newton with the exact Jacobian,
    /// the filtered embedded error estimate of order 3 and the collocation polynomial as
    /// dense output. Stiff problems at tight tolerances, and DAEs in reduced form.
    Radau5,
    /// The variable-order BDFs of orders 1–5 as Shampine & Reichelt's NDFs (MATLAB's
    /// ode15s; docs/theory.md §8, "BDF"): one Newton matrix `I − cJ` and, once converged,
    /// one right-hand side per step. Large stiff systems (its steps cost a fraction of
    /// Radau IIA's); restarted at order 1 after every event and breakpoint.
    Bdf,
}

impl Method {
    /// Order of the error estimate + 1 (the exponent base of the controller).
    pub fn error_order(self) -> usize {
        match self {
            Method::Dopri5 => dopri5::EMBEDDED_ORDER + 1,
            Method::Sdirk3 => Sdirk3::EMBEDDED_ORDER + 1,
            Method::Radau5 => Radau5::EMBEDDED_ORDER + 1,
            // the order-1 start (the BDF chooses its own step sizes)
            Method::Bdf => 2,
        }
    }
    /// A multistep method: its history restarts at order 1 at every segment start (so the
    /// first step is chosen afresh, not inherited), and the slope a step returns is its
    /// corrector's, `F(t1, y1)` only to the Newton tolerance (a step cut at an event
    /// evaluates F for an exact f⁻).
    pub fn is_multistep(self) -> bool {
        self == Method::Bdf
    }

    /// The order (a BDF run's starting order: it varies from 1 to 5).
    pub fn order(self) -> usize {
        match self {
            Method::Dopri5 => dopri5::ORDER,
            Method::Sdirk3 => Sdirk3::ORDER,
            Method::Radau5 => Radau5::ORDER,
            Method::Bdf => 1,
        }
    }
}

/// Tries one step of `method` from `(t, y)` with slope `f0 = F(t, y)` and step `h`. The
/// implicit methods use and update the run's [`Newton`] state (DOPRI5 ignores it); a BDF
/// step here is the first of a run (the loop passes its history to `try_step_from`).
#[allow(clippy::too_many_arguments)]
pub fn try_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    method: Method, rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, newton: &mut Newton,
) -> Result<Attempt<D>, ModelError> {
    try_step_from(method, rhs, t, y, f0, h, tol, (newton, None))
}

/// [`try_step`] with a multistep method's history (`None`: the first step of a run; the
/// one-step methods ignore it).
#[allow(clippy::too_many_arguments)]
pub fn try_step_from<D: Scalar, R: OdeRhs<D> + ?Sized>(
    method: Method, rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances,
    (newton, history): (&mut Newton, Option<&BdfHistory<D>>),
) -> Result<Attempt<D>, ModelError> {
    match method {
        Method::Dopri5 => dopri5_step(rhs, t, y, f0, h, tol),
        Method::Sdirk3 => sdirk3_step(rhs, t, y, f0, h, tol, newton),
        Method::Radau5 => super::radau::radau5_step(rhs, t, y, f0, h, tol, newton),
        Method::Bdf => super::bdf::bdf_step(rhs, t, y, f0, h, tol, newton, history),
    }
}

fn dopri5_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances,
) -> Result<Attempt<D>, ModelError> {
    let n = y.len();
    // the end value and slope on the stack for small systems, copied out once the step
    // is computed (no zeroed heap buffers to fill). Written out rather than through
    // `with_stack`: the closure form cost the ball 0.6 % more instructions (measured).
    let mut ends = [D::zero(); 2 * DOPRI5_STACK];
    let mut heap = Vec::new();
    let ends = if n <= DOPRI5_STACK {
        &mut ends[..2 * n]
    } else {
        heap.resize(2 * n, D::zero());
        &mut heap[..]
    };
    let (y1, f1) = ends.split_at_mut(n);
    let (err, dense) = dopri5_dense_into(rhs, t, y, f0, h, tol, y1, f1)?;
    Ok(Attempt::done(y1.to_vec(), f1.to_vec(), err, dense, 6))
}

/// Largest system whose DOPRI5 stages live on the stack.
const DOPRI5_STACK: usize = 16;

/// `Σ_s w_s k_s[i]` over the stages with a non-zero weight, in stage order (component i
/// of a stage sum; `k` holds stage s at `s·n`). One accumulator in a register per
/// component: no pass over a scratch vector per stage.
#[inline(always)]
fn stage_sum<D: Scalar>(w: &[f64], k: &[D], n: usize, i: usize) -> D {
    let mut acc = D::zero();
    for (s, &ws) in w.iter().enumerate() {
        if ws != 0.0 {
            acc += k[s * n + i] * ws;
        }
    }
    acc
}

/// One DOPRI5 step (Hairer, Nørsett & Wanner I, §II.5, Table 5.2) with its end value and
/// slope written into `y1`, `f1` (length n) and its interpolant returned with the weighted
/// error norm: `Y_s = y + h Σ_{j<s} a_sj k_j`, `k_s = F(t + c_s h, Y_s)`, `y1 = Y_7`
/// (FSAL), the error `h Σ e_s k_s` and the dense coefficient `r5 = h Σ d_s k_s`. The stage
/// slopes live on the stack for small systems: the interpolant is the step's only
/// allocation.
#[allow(clippy::too_many_arguments)]
fn dopri5_dense_into<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, y1: &mut [D], f1: &mut [D],
) -> Result<(f64, DenseStep<D>), ModelError> {
    use dopri5::D as DD;
    let n = y.len();
    with_stages(n, |k| {
        let err = dopri5_stages(rhs, t, y, f0, h, tol, k, y1)?;
        f1.copy_from_slice(&k[6 * n..]);
        // r5 = h Σ_s d_s k_s, component by component (the sum in stage order)
        let dense = DenseStep::with_r5(t, h, y, y1, f0, f1, |i| h * stage_sum(&DD, k, n, i));
        Ok((err, dense))
    })
}

/// `step` on DOPRI5's seven stage slopes (7n, zeroed): on the stack for systems up to
/// [`DOPRI5_STACK`] states, on the heap above. Systems up to [`DOPRI5_SMALL`] states get
/// a buffer of their tier, so that a step zeroes 56 scalars rather than 112.
#[inline(always)]
fn with_stages<D: Scalar, T>(n: usize, step: impl FnOnce(&mut [D]) -> T) -> T {
    if n <= DOPRI5_SMALL {
        with_stack::<{ 7 * DOPRI5_SMALL }, D, T>(7 * n, step)
    } else {
        with_stack::<{ 7 * DOPRI5_STACK }, D, T>(7 * n, step)
    }
}

/// The smaller stack tier of [`with_stages`] (the ball's forward run has 3 components,
/// its adjoint 8).
const DOPRI5_SMALL: usize = 8;

/// The stages of one DOPRI5 step (see [`dopri5_dense_into`]) into `k` and `ys` (y1 at the end;
/// `k[6n..]` is f1 by FSAL), returning the weighted error norm of `h Σ e_s k_s`.
#[allow(clippy::too_many_arguments)]
fn dopri5_stages<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances, k: &mut [D], ys: &mut [D],
) -> Result<f64, ModelError> {
    use dopri5::{A, C, E};
    let n = y.len();
    k[..n].copy_from_slice(f0);
    for s in 1..7 {
        let (done, rest) = k.split_at_mut(s * n);
        // Y_s = y + h Σ_j a_sj k_j
        for (i, (v, &y0)) in ys.iter_mut().zip(y).enumerate() {
            *v = y0 + h * stage_sum(&A[s][..s], done, n, i);
        }
        rhs.eval(t + h * C[s], ys, &mut rest[..n])?;
    }
    // Stage 7 was evaluated at y1 (FSAL): ys holds y1.
    let hr = h.re();
    let m = rhs.error_dim();
    // h Σ e_s k_s component by component, weighted on the fly (one pass, no scratch)
    let mut err = tol.norm_by(
        m,
        |i| {
            let mut e = 0.0;
            for (s, &es) in E.iter().enumerate() {
                if es != 0.0 {
                    e += es * k[s * n + i].re();
                }
            }
            e * hr
        },
        &y[..m],
        &ys[..m],
    );
    if D::NDERIV > 0 {
        err = err.max(derivative_error(tol, hr, &E, k, n, &y[..m], &ys[..m]));
    }
    Ok(err)
}

/// The result of [`try_step_dense_into`]: the step's end value and slope are in the
/// caller's buffers.
pub enum DenseAttempt<D> {
    /// The step was computed; `err` is its weighted error norm (accept when ≤ 1);
    /// `history` a multistep method's history after it.
    Done {
        err: f64,
        dense: DenseStep<D>,
        evals: usize,
        history: Option<Box<BdfHistory<D>>>,
    },
    /// The implicit stage equations did not converge: retry with a smaller step.
    NewtonFailed { evals: usize },
}

/// [`try_step_from`] with the end value and slope written into `y1`, `f1` (length n), for
/// the backward pass's replay of checkpointed steps, which swaps them in: DOPRI5 then
/// allocates only the interpolant it keeps (the same arithmetic as [`try_step`], so the
/// replayed interpolants are bit-identical to the forward run's).
#[allow(clippy::too_many_arguments)]
pub fn try_step_dense_into<D: Scalar, R: OdeRhs<D> + ?Sized>(
    method: Method, rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances,
    (y1, f1, newton, from): (&mut [D], &mut [D], &mut Newton, Option<&BdfHistory<D>>),
) -> Result<DenseAttempt<D>, ModelError> {
    if method == Method::Dopri5 {
        let (err, dense) = dopri5_dense_into(rhs, t, y, f0, h, tol, y1, f1)?;
        return Ok(DenseAttempt::Done {
            err,
            dense,
            evals: 6,
            history: None,
        });
    }
    Ok(
        match try_step_from(method, rhs, t, y, f0, h, tol, (newton, from))? {
            Attempt::Done {
                y1: a,
                f1: b,
                err,
                dense,
                evals,
                history,
            } => {
                y1.copy_from_slice(&a);
                f1.copy_from_slice(&b);
                DenseAttempt::Done {
                    err,
                    dense,
                    evals,
                    history,
                }
            }
            Attempt::NewtonFailed { evals } => DenseAttempt::NewtonFailed { evals },
        },
    )
}

/// The result of [`try_step_into`]: a step computed in place (no interpolant).
pub enum StepInPlace<D> {
    /// `y1`, `f1` hold the step's end; `err` is its weighted error norm; `history` a
    /// multistep method's history after it.
    Done {
        err: f64,
        evals: usize,
        history: Option<Box<BdfHistory<D>>>,
    },
    /// The implicit stage equations did not converge: retry with a smaller step.
    NewtonFailed { evals: usize },
}

/// [`try_step_from`] for callers that need no dense output (the adjoint's backward pass):
/// the end value and slope are written into `y1`, `f1` (length n), and DOPRI5 neither
/// builds an interpolant nor allocates (its stages on the stack for small systems).
#[allow(clippy::too_many_arguments)]
pub fn try_step_into<D: Scalar, R: OdeRhs<D> + ?Sized>(
    method: Method, rhs: &R, t: D, y: &[D], f0: &[D], h: D, tol: &Tolerances,
    step: (&mut [D], &mut [D], &mut Newton, Option<&BdfHistory<D>>),
) -> Result<StepInPlace<D>, ModelError> {
    if method == Method::Dopri5 {
        let (y1, f1) = (step.0, step.1);
        let err = with_stages(y.len(), |k| {
            let err = dopri5_stages(rhs, t, y, f0, h, tol, k, y1)?;
            f1.copy_from_slice(&k[6 * y.len()..]);
            Ok(err)
        })?;
        return Ok(StepInPlace::Done {
            err,
            evals: 6,
            history: None,
        });
    }
    Ok(
        match try_step_dense_into(method, rhs, t, y, f0, h, tol, step)? {
            DenseAttempt::Done {
                err,
                evals,
                history,
                ..
            } => StepInPlace::Done {
                err,
                evals,
                history,
            },
            DenseAttempt::NewtonFailed { evals } => StepInPlace::NewtonFailed { evals },
        },
    )
}

/// The weighted error norm of the derivative parts of a dual run (the same embedded
/// estimate applied to the derivative), so that the witness's derivative is as accurate
/// as the tolerances ask (the analogue of including S in the direct method's error test).
fn derivative_error<D: Scalar>(
    tol: &Tolerances, h: f64, e: &[f64], k: &[D], stride: usize, y0: &[D], y1: &[D],
) -> f64 {
    let n = y0.len();
    let mut s = 0.0;
    for i in 0..n {
        let mut acc = 0.0;
        for (st, es) in e.iter().enumerate() {
            acc += es * k[st * stride + i].eps_part();
        }
        let sc = tol.atol + tol.rtol * y0[i].eps_part().abs().max(y1[i].eps_part().abs());
        let r = h * acc / sc;
        s += r * r;
    }
    if n == 0 {
        0.0
    } else {
        (s / n as f64).sqrt()
    }
}

/// One step of Alexander's SDIRK 3(2) (Hairer & Wanner II, §IV.6, Table 6.5; the stage
/// equations `Y_s = y + h Σ_{j<s} a_sj k_j + hγ F(t + c_s h, Y_s)` by simplified Newton
/// with the matrix `I − hγ J` of [`Newton`], the error estimate filtered through it,
/// (IV.8.20)). A failed stage iteration (with a Jacobian evaluated at `(t, y)`) or a
/// singular matrix is [`Attempt::NewtonFailed`].
fn sdirk3_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
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

/// The step-size controller. DOPRI5: the PI controller (Gustafsson 1991; Hairer & Wanner
/// II, (IV.2.43)), `h_new = h · clamp(fac · err^(−α) · err_prev^β, facmin, facmax)` with
/// α = 0.7/q, β = 0.4/q. The implicit methods: the predictive controller of Gustafsson
/// (1994) that RADAU5 uses by default (Hairer & Wanner II, §IV.8, (8.25)),
///
/// ```text
/// h_new = h · clamp(min(fac · err^(−1/q), fac · (h / h_prev) · err_prev^(1/q) / err^(2/q)), facmin, facmax)
/// ```
///
/// with `h_prev`, `err_prev` of the previous accepted step of the segment (err_prev at
/// least 10⁻², RADAU5's `ERRACC`; the first accepted step uses the first term alone). It
/// shrinks the step ahead of a rising error instead of after a rejection; measured on the
/// 1,024-state chain (benches/scaling.rs): Radau IIA 829 → 522 steps, 1,781 → 1,148 Newton
/// iterations, SDIRK3 3,898 → 2,597 steps, at the same accuracy. Everywhere q is the error
/// order + 1, the safety fac = 0.9, facmin = 0.2, facmax = 5 (facmax = 1 right after a
/// rejection). For the implicit methods on systems of at least [`hold_min_dim`]
/// components a factor in `[1, 1.2]` becomes 1 (RADAU5's `QUOT1`, `QUOT2`; Hairer &
/// Wanner II, §IV.8): the step size is held so that the factored iteration matrices are
/// reused.
#[derive(Debug, Clone)]
pub struct Controller {
    alpha: f64,
    beta: f64,
    /// Hold h when the factor is within [1, 1.2] (implicit methods).
    hold: bool,
    /// `err_prev^β`, kept rather than `err_prev` (one power per accepted step).
    err_prev_beta: f64,
    rejected_last: bool,
    /// `Some(1/q)` for the predictive controller (the implicit methods).
    predictive: Option<f64>,
    /// The previous accepted step's `h` and `max(err, 10⁻²)` (predictive controller).
    prev: Option<(f64, f64)>,
}

/// The smallest integrated dimension at which an implicit method holds the step size to
/// reuse its factors: Radau IIA 32, SDIRK3 128 (its one n × n matrix is cheaper to factor),
/// never for DOPRI5. Below it a factorization costs less than the steps that holding adds
/// (holding takes ≈ 35 % more steps). Measured on the oscillator chain (benches/scaling.rs,
/// the adjoint's time with and without holding): Radau IIA 0.96× at 16 states, 1.1× at 32,
/// 1.4× at 64; SDIRK3 0.8× at 32 and 64 states, 1.2× at 128. Below it the step size also
/// stays a smooth function of the parameters (a held step is a jump in h(θ), which a
/// finite-difference witness sees as noise of the tolerance's size over its step).
pub fn hold_min_dim(method: Method) -> usize {
    match method {
        Method::Dopri5 => usize::MAX,
        Method::Radau5 => 32,
        Method::Sdirk3 => 128,
        // the BDFs keep their step size for k + 1 steps by construction
        Method::Bdf => usize::MAX,
    }
}

impl Controller {
    /// The controller of `method` on a system of `dim` integrated components.
    pub fn new(method: Method, dim: usize) -> Self {
        let q = method.error_order() as f64;
        Controller {
            alpha: 0.7 / q,
            beta: 0.4 / q,
            hold: dim >= hold_min_dim(method),
            err_prev_beta: 1e-4f64.powf(0.4 / q),
            rejected_last: false,
            predictive: (method != Method::Dopri5).then_some(1.0 / q),
            prev: None,
        }
    }

    /// Factor for the next step after an accepted step of size `h` with error `err`.
    pub fn accept(&mut self, err: f64, h: f64) -> f64 {
        let e = err.max(1e-10);
        let mut fac = match self.predictive {
            None => 0.9 * e.powf(-self.alpha) * self.err_prev_beta,
            Some(k) => {
                let own = 0.9 * e.powf(-k);
                let fac = match self.prev {
                    Some((hp, ep)) => own.min(0.9 * (h / hp).abs() * ep.powf(k) / e.powf(2.0 * k)),
                    None => own,
                };
                self.prev = Some((h, e.max(1e-2)));
                fac
            }
        };
        let facmax = if self.rejected_last { 1.0 } else { 5.0 };
        fac = fac.clamp(0.2, facmax);
        if self.hold && (1.0..=1.2).contains(&fac) {
            fac = 1.0;
        }
        self.err_prev_beta = e.powf(self.beta);
        self.rejected_last = false;
        fac
    }

    /// Factor for retrying after a rejected step.
    pub fn reject(&mut self, err: f64) -> f64 {
        self.rejected_last = true;
        if !err.is_finite() {
            return 0.25;
        }
        (0.9 * err.powf(-self.alpha)).clamp(0.2, 0.9)
    }
}

/// A starting step (Hairer, Nørsett & Wanner I, §II.4, "Starting step size"):
/// h0 = 0.01 ‖y‖/‖f‖, then balanced against a second derivative estimate.
pub fn initial_step<D: Scalar, R: OdeRhs<D> + ?Sized>(
    rhs: &R, method: Method, t: D, y: &[D], f0: &[D], tol: &Tolerances, dir: f64, h_max: f64,
) -> Result<f64, ModelError> {
    let n = y.len();
    let f0r: Vec<f64> = f0.iter().map(|v| v.re()).collect();
    let yr: Vec<f64> = y.iter().map(|v| v.re()).collect();
    let d0 = tol.norm(&yr, y, y);
    let d1 = tol.norm(&f0r, y, y);
    let mut h0 = if d0 < 1e-5 || d1 < 1e-5 {
        1e-6
    } else {
        0.01 * d0 / d1
    };
    h0 = h0.min(h_max);
    let y1: Vec<D> = (0..n).map(|i| y[i] + f0[i] * (dir * h0)).collect();
    let mut f1 = vec![D::zero(); n];
    rhs.eval(t + D::from(dir * h0), &y1, &mut f1)?;
    let df: Vec<f64> = (0..n).map(|i| (f1[i].re() - f0r[i]) / h0).collect();
    let d2 = tol.norm(&df, y, y);
    let p = (method.order() + 1) as f64;
    let h1 = if d1.max(d2) <= 1e-15 {
        (h0 * 1e-3).max(1e-6)
    } else {
        (0.01 / d1.max(d2)).powf(1.0 / p)
    };
    Ok((100.0 * h0).min(h1).min(h_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The implicit methods' predictive factor (RADAU5's (IV.8.25)) against the formula,
    /// on a rising error where the prediction is the smaller term, and DOPRI5's PI factor.
    #[test]
    fn predictive_controller_follows_its_formula() {
        let q = Method::Radau5.error_order() as f64;
        let mut c = Controller::new(Method::Radau5, 4);
        // first accepted step: the elementary term alone
        let f1 = c.accept(0.1, 0.01);
        assert_eq!(f1, (0.9 * 0.1f64.powf(-1.0 / q)).clamp(0.2, 5.0));
        // rising error: min(0.9 err^(−1/q), 0.9 (h/h_prev) err_prev^(1/q) / err^(2/q))
        let (h, err) = (0.01, 0.5f64);
        let own = 0.9 * err.powf(-1.0 / q);
        let pred = 0.9 * (h / 0.01) * 0.1f64.powf(1.0 / q) / err.powf(2.0 / q);
        assert!(pred < own, "the prediction is the active term here");
        assert_eq!(c.accept(err, h), pred.clamp(0.2, 5.0));
        // err_prev is floored at 10⁻² (RADAU5's ERRACC)
        let mut c = Controller::new(Method::Sdirk3, 4);
        let q3 = Method::Sdirk3.error_order() as f64;
        c.accept(1e-6, 0.01);
        let want = (0.9 * 0.3f64.powf(-1.0 / q3))
            .min(0.9 * 1e-2f64.powf(1.0 / q3) / 0.3f64.powf(2.0 / q3));
        assert_eq!(c.accept(0.3, 0.01), want.clamp(0.2, 5.0));
        // DOPRI5 keeps the PI controller (no memory of h)
        let mut d = Controller::new(Method::Dopri5, 4);
        let qd = Method::Dopri5.error_order() as f64;
        let pi = 0.9 * 0.5f64.powf(-0.7 / qd) * 1e-4f64.powf(0.4 / qd);
        assert_eq!(d.accept(0.5, 0.01), pi.clamp(0.2, 5.0));
    }
}
