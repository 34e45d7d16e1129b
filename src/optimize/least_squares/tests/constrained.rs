//! The generalized Gauss–Newton method: the KKT solution of an equality-constrained linear
//! fit (with and without a binding bound), and multiple shooting of x' = k x against
//! single shooting.

use super::super::bounds::{BoundSide, BoxBounds};
use super::super::constrained::generalized_gauss_newton;
use super::super::lm::levenberg_marquardt;
use super::super::outcome::LsqOutcome;
use super::super::problem::{ConstrainedResiduals, Linearization, Residuals};
use super::super::settings::{GgnSettings, LmSettings};
use super::super::statistics::constrained_statistics;
use super::{noise, rel, sci, LinearLsq};
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;

/// A 12×5 linear fit with 2 equality constraints.
fn linear_problem() -> LinearLsq {
    LinearLsq {
        a: DMatrix::from_fn(12, 5, |i, k| {
            ((i * 5 + k) as f64 * 0.7).sin() + if i == k { 2.0 } else { 0.0 }
        }),
        b: DVector::from_fn(12, |i, _| noise(i) + 0.5),
        c: DMatrix::from_row_slice(2, 5, &[1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, -2.0, 0.5, 1.0]),
        d: DVector::from_vec(vec![1.0, -0.5]),
    }
}

/// The KKT system [AᵀA Cᵀ; C 0] [x; ν] = [Aᵀb; d] solved by LU (an independent route).
fn kkt(
    a: &DMatrix<f64>, b: &DVector<f64>, c: &DMatrix<f64>, d: &DVector<f64>,
) -> (DVector<f64>, DVector<f64>) {
    let (n, p) = (a.ncols(), c.nrows());
    let mut k = DMatrix::zeros(n + p, n + p);
    k.view_mut((0, 0), (n, n)).copy_from(&a.tr_mul(a));
    k.view_mut((0, n), (n, p)).copy_from(&c.transpose());
    k.view_mut((n, 0), (p, n)).copy_from(c);
    let mut rhs = DVector::zeros(n + p);
    rhs.rows_mut(0, n).copy_from(&a.tr_mul(b));
    rhs.rows_mut(n, p).copy_from(d);
    let s = k.lu().solve(&rhs).unwrap();
    (s.rows(0, n).into_owned(), s.rows(n, p).into_owned())
}

/// The constrained linear fit is solved by the first step exactly: the KKT solution and
/// its multipliers (Aᵀ(Ax − b) + Cᵀν = 0).
#[test]
fn equality_constrained_linear_fit_is_the_kkt_solution() {
    let p = linear_problem();
    let fit = generalized_gauss_newton(&p, &[0.0; 5], &BoxBounds::free(5), &GgnSettings::default())
        .unwrap();
    let (x, nu) = kkt(&p.a, &p.b, &p.c, &p.d);
    let ex = (0..5).map(|i| rel(fit.w[i], x[i], 1.0)).fold(0.0, f64::max);
    let en = (0..2)
        .map(|i| rel(fit.multipliers[i], nu[i], 1.0))
        .fold(0.0, f64::max);
    println!(
        "KKT: {} after {} iterations ({} evaluations), max |c| {:.1e}, stationarity {:.1e}; x error {ex:.1e}, ν error {en:.1e}",
        fit.outcome, fit.iterations, fit.residual_evaluations, fit.max_violation, fit.stationarity
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert!(fit.iterations <= 2, "(measured 1)");
    assert!(
        ex <= 1.5e-14 && en <= 1.5e-14,
        "x {ex:.0e}, ν {en:.0e} (measured 2.8e-16, 5.6e-16)"
    );
}

/// With x₃ ≥ lower bound above its free optimum: the fit ends with x₃ held there, and the
/// rest is the KKT solution of the problem with x₃ fixed at the bound.
#[test]
fn a_binding_bound_in_the_constrained_fit() {
    let p = linear_problem();
    let (free_opt, _) = kkt(&p.a, &p.b, &p.c, &p.d);
    let lb = free_opt[3] + 0.5;
    let mut bounds = BoxBounds::free(5);
    bounds.lower[3] = lb;
    let fit = generalized_gauss_newton(
        &p,
        &[0.0, 0.0, 1.0, lb + 1.0, 0.0],
        &bounds,
        &GgnSettings::default(),
    )
    .unwrap();
    // x₃ = lb fixed: its column moves to the right-hand sides
    let keep = [0usize, 1, 2, 4];
    let a = p.a.select_columns(keep.iter());
    let c = p.c.select_columns(keep.iter());
    let b = &p.b - p.a.column(3) * lb;
    let d = &p.d - p.c.column(3) * lb;
    let (x, _) = kkt(&a, &b, &c, &d);
    let ex = keep
        .iter()
        .enumerate()
        .map(|(k, &i)| rel(fit.w[i], x[k], 1.0))
        .fold(0.0, f64::max);
    println!(
        "bound: {} after {} iterations, active {:?}, x error {ex:.1e}",
        fit.outcome, fit.iterations, fit.active
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert_eq!(fit.w[3], lb);
    assert_eq!(fit.active[3], Some(BoundSide::Lower));
    assert!(ex <= 1.2e-14, "{ex:.0e} (measured 4.2e-16)");
}

/// x' = k x sampled at 31 times in [0, 3] (x₀ = 1.3, k = −0.8, noise 1 %, σ = 0.01).
struct Growth {
    t: Vec<f64>,
    d: Vec<f64>,
    sigma: f64,
    /// The node times of multiple shooting (the first is 0).
    nodes: Vec<f64>,
    /// The points where the Jacobians were evaluated.
    log: RefCell<Vec<Vec<f64>>>,
}

fn growth(samples: usize, nodes: usize) -> Growth {
    noisy_growth(samples, nodes, 0.01)
}

/// Samples with noise of the given level (σ stays 0.01).
fn noisy_growth(samples: usize, nodes: usize, level: f64) -> Growth {
    let t: Vec<f64> = (0..samples)
        .map(|i| 3.0 * i as f64 / (samples - 1) as f64)
        .collect();
    let d = t
        .iter()
        .enumerate()
        .map(|(i, &t)| 1.3 * (-0.8 * t).exp() + level * noise(i))
        .collect();
    let nodes = (0..nodes).map(|j| 3.0 * j as f64 / nodes as f64).collect();
    Growth {
        t,
        d,
        sigma: 0.01,
        nodes,
        log: RefCell::new(vec![]),
    }
}

/// Single shooting: x = (x₀, k), rᵢ = (x₀ e^(k tᵢ) − dᵢ)/σ.
impl Residuals for Growth {
    type Error = String;
    fn residuals(
        &self, x: &[f64], jac: bool,
    ) -> Result<(DVector<f64>, Option<DMatrix<f64>>), String> {
        let m = self.t.len();
        let r = DVector::from_fn(m, |i, _| {
            (x[0] * (x[1] * self.t[i]).exp() - self.d[i]) / self.sigma
        });
        let j = jac.then(|| {
            DMatrix::from_fn(m, 2, |i, k| {
                let e = (x[1] * self.t[i]).exp() / self.sigma;
                if k == 0 {
                    e
                } else {
                    x[0] * self.t[i] * e
                }
            })
        });
        Ok((r, j))
    }
}

/// Multiple shooting: w = (s₀, s₁, s₂, k); a sample in segment j is s_j e^(k(t − τ_j)); the
/// gaps c_j = s_j e^(k(τ_{j+1} − τ_j)) − s_{j+1}.
impl ConstrainedResiduals for Growth {
    type Error = String;
    fn evaluate(&self, w: &[f64], jac: bool) -> Result<Linearization, String> {
        if jac {
            self.log.borrow_mut().push(w.to_vec());
        }
        let (m, nn) = (self.t.len(), self.nodes.len());
        let k = w[nn];
        let seg = |t: f64| self.nodes.iter().rposition(|&tau| tau <= t).unwrap();
        let mut r = DVector::zeros(m);
        let mut jr = DMatrix::zeros(m, nn + 1);
        for (i, &t) in self.t.iter().enumerate() {
            let s = seg(t);
            let h = t - self.nodes[s];
            let e = (k * h).exp();
            r[i] = (w[s] * e - self.d[i]) / self.sigma;
            jr[(i, s)] = e / self.sigma;
            jr[(i, nn)] = w[s] * h * e / self.sigma;
        }
        let mut c = DVector::zeros(nn - 1);
        let mut jc = DMatrix::zeros(nn - 1, nn + 1);
        for s in 0..nn - 1 {
            let h = self.nodes[s + 1] - self.nodes[s];
            let e = (k * h).exp();
            c[s] = w[s] * e - w[s + 1];
            jc[(s, s)] = e;
            jc[(s, s + 1)] = -1.0;
            jc[(s, nn)] = w[s] * h * e;
        }
        Ok(Linearization {
            r,
            c,
            jr: jac.then_some(jr),
            jc: jac.then_some(jc),
        })
    }
}

/// Three shooting nodes started from the data, k from a guess 60 % off: the generalized
/// Gauss–Newton method ends at single shooting's optimum (x₀ = s₀, k) with the gaps
/// closed, and the constrained covariance of (s₀, k) equals single shooting's (JᵀJ)⁻¹σ̂²
/// (the constrained problem is a reparametrization of the single-shooting one).
#[test]
fn multiple_shooting_matches_single_shooting() {
    let g = growth(31, 3);
    // both run to round-off, so that their difference measures agreement, not tolerances
    let lm = LmSettings {
        xtol: 1e-15,
        gtol: 1e-13,
        ftol: 1e-20,
        ..LmSettings::default()
    };
    let single = levenberg_marquardt(&g, &[1.0, -0.3], &BoxBounds::free(2), &lm).unwrap();
    let w0 = [g.d[0], g.d[10], g.d[20], -0.3];
    let ggn = GgnSettings {
        xtol: 1e-15,
        gtol: 1e-13,
        ftol: 1e-20,
        ..GgnSettings::default()
    };
    let multi = generalized_gauss_newton(&g, &w0, &BoxBounds::free(4), &ggn).unwrap();
    let ex = rel(multi.w[0], single.x[0], 1.0).max(rel(multi.w[3], single.x[1], 1.0));
    let s1 = single.statistics(&[]).unwrap();
    let s2 = multi.statistics(&[0, 3], &[]).unwrap();
    let ec = (0..2)
        .flat_map(|a| (0..2).map(move |b| (a, b)))
        .map(|(a, b)| {
            rel(
                s2.covariance[a][b],
                s1.covariance[a][b],
                s1.covariance[a][a],
            )
        })
        .fold(0.0, f64::max);
    let gaps: Vec<f64> = multi.history.iter().map(|h| h.max_violation).collect();
    println!(
        "shooting: {} after {} iterations ({} r, {} J), final full steps {}, max |c| per iteration {} → {:.1e}; \
         single: {} after {}; θ error {ex:.1e}; Cov error {ec:.1e}; dof {} vs {}; σ̂² {:.4}",
        multi.outcome, multi.iterations, multi.residual_evaluations, multi.jacobian_evaluations,
        multi.final_full_steps, super::sci(&gaps), multi.max_violation, single.outcome, single.iterations, s2.degrees_of_freedom,
        s1.degrees_of_freedom, s2.sigma2
    );
    assert!(
        multi.outcome.converged() && single.outcome.converged(),
        "{} / {}",
        multi.message,
        single.message
    );
    assert!(
        multi.max_violation <= 1e-14,
        "{:.0e} (measured 0)",
        multi.max_violation
    );
    assert!(multi.iterations <= 10, "{} (measured 6)", multi.iterations);
    assert!(ex <= 4e-13, "{ex:.0e} (measured 1.3e-14)");
    assert!(ec <= 6e-13, "{ec:.0e} (measured 2.1e-14)");
    assert_eq!(s2.degrees_of_freedom, s1.degrees_of_freedom);
    // The constrained fit's condition is that of the parameters' reduced problem: for two
    // parameters with correlation ρ (single shooting's), √((1 + |ρ|)/(1 − |ρ|)) — not the
    // condition of the whole projected J Z (the node states are measured directly).
    let c = &s1.covariance_known_sigma;
    let rho = (c[0][1] / (c[0][0] * c[1][1]).sqrt()).abs();
    let expected = ((1.0 + rho) / (1.0 - rho)).sqrt();
    let econd = rel(s2.condition, expected, expected);
    println!(
        "condition: constrained {:.6e}, from single shooting's correlation {expected:.6e} \
         (ρ = {rho:.6}), relative {econd:.1e}",
        s2.condition
    );
    assert!(econd <= 1e-13, "{econd:.0e} (measured 2.6e-15)");
}

/// The same fit at the sizes the issue names: 3,000 samples, 399 nodes (400 variables, 398
/// continuity constraints), started from the data; the time is printed, not tested.
#[test]
fn multiple_shooting_at_scale() {
    let g = growth(3000, 399);
    let start = std::time::Instant::now();
    let single = levenberg_marquardt(
        &g,
        &[1.0, -0.3],
        &BoxBounds::free(2),
        &LmSettings::default(),
    )
    .unwrap();
    let t_single = start.elapsed().as_secs_f64();
    let mut w0: Vec<f64> = g
        .nodes
        .iter()
        .map(|&tau| g.d[g.t.iter().position(|&t| t >= tau).unwrap()])
        .collect();
    w0.push(-0.3);
    let start = std::time::Instant::now();
    let multi =
        generalized_gauss_newton(&g, &w0, &BoxBounds::free(400), &GgnSettings::default()).unwrap();
    let t_multi = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    let free: Vec<usize> = (0..400).collect();
    let st = constrained_statistics(
        &multi.w,
        &multi.residuals,
        multi.jacobian.as_ref().unwrap(),
        multi.constraint_jacobian.as_ref().unwrap(),
        &free,
        &[0, 399],
        &[],
    )
    .unwrap();
    let t_stats = start.elapsed().as_secs_f64();
    let ex = rel(multi.w[0], single.x[0], 1.0).max(rel(multi.w[399], single.x[1], 1.0));
    println!(
        "at scale: {} after {} iterations ({} evaluations) in {t_multi:.2} s, max |c| {:.1e}; single {} in {t_single:.3} s; \
         θ error {ex:.1e}; statistics in {t_stats:.2} s, SE(k) {:.3e}",
        multi.outcome, multi.iterations, multi.residual_evaluations, multi.max_violation, single.outcome,
        st.parameters[1].standard_error
    );
    assert!(
        multi.outcome.converged() && single.outcome.converged(),
        "{}",
        multi.message
    );
    assert!(
        multi.max_violation <= 1e-14 && ex <= 1e-12,
        "{:.0e}, {ex:.0e} (measured 4.4e-16, 3.4e-14)",
        multi.max_violation
    );
}

/// Noise-free samples (zero residual) from k 60 % off: the generalized Gauss–Newton steps
/// are full and undamped at the end, and the error in k squares per iteration.
#[test]
fn multiple_shooting_converges_quadratically() {
    let g = noisy_growth(31, 3, 0.0);
    let w0 = [g.d[0], g.d[10], g.d[20], -0.3];
    let fit =
        generalized_gauss_newton(&g, &w0, &BoxBounds::free(4), &GgnSettings::default()).unwrap();
    let e: Vec<f64> = g.log.borrow().iter().map(|w| (w[3] + 0.8).abs()).collect();
    let ratios: Vec<f64> = e
        .windows(2)
        .filter(|p| p[0] < 0.05 && p[1] > 1e-15)
        .map(|p| p[1] / (p[0] * p[0]))
        .collect();
    println!(
        "zero residual: {} after {} iterations, final full steps {}; |k − k*| {}; e_k+1/e_k² {}",
        fit.outcome,
        fit.iterations,
        fit.final_full_steps,
        sci(&e),
        sci(&ratios)
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert!(
        ratios.len() >= 2 && ratios.iter().all(|&r| r <= 5.0),
        "(measured 0.25, 0.19)"
    );
    assert!(fit.final_full_steps >= 3, "(measured 4)");
    // the step test ends the run once the next step is below xtol·‖w‖ (2e-10)
    assert!((fit.w[3] + 0.8).abs() <= 1e-10, "(measured 2.7e-12)");
}

/// With the step and gradient tests off (xtol = gtol = 0), a noisy fit reaches round-off
/// and must end `converged_reduction` there — neither running out its budget with
/// zero-length steps nor calling itself stalled (issue 45's SQP defect), in both solvers.
#[test]
fn round_off_ends_converged() {
    let g = growth(31, 3);
    let lm = LmSettings {
        xtol: 0.0,
        gtol: 0.0,
        ..LmSettings::default()
    };
    let single = levenberg_marquardt(&g, &[1.0, -0.3], &BoxBounds::free(2), &lm).unwrap();
    let ggn = GgnSettings {
        xtol: 0.0,
        gtol: 0.0,
        ..GgnSettings::default()
    };
    let w0 = [g.d[0], g.d[10], g.d[20], -0.3];
    let multi = generalized_gauss_newton(&g, &w0, &BoxBounds::free(4), &ggn).unwrap();
    println!(
        "round-off: LM {} after {} iterations ({} evaluations); GGN {} after {} iterations ({} evaluations)",
        single.outcome, single.iterations, single.residual_evaluations, multi.outcome, multi.iterations,
        multi.residual_evaluations
    );
    assert_eq!(
        single.outcome,
        LsqOutcome::ConvergedReduction,
        "{}",
        single.message
    );
    assert_eq!(
        multi.outcome,
        LsqOutcome::ConvergedReduction,
        "{}",
        multi.message
    );
    assert!(
        single.iterations <= 12 && multi.iterations <= 12,
        "{} and {} (measured 6 and 5)",
        single.iterations,
        multi.iterations
    );
}

/// r = (x₀ − 3, x₁), c = x₀² + 1 = 0, which has no real root.
struct NoRoot {
    fail_at_start: bool,
}

impl ConstrainedResiduals for NoRoot {
    type Error = String;
    fn evaluate(&self, w: &[f64], jac: bool) -> Result<Linearization, String> {
        if self.fail_at_start {
            return Err("cannot simulate".into());
        }
        Ok(Linearization {
            r: DVector::from_vec(vec![w[0] - 3.0, w[1]]),
            c: DVector::from_vec(vec![w[0] * w[0] + 1.0]),
            jr: jac.then(|| DMatrix::identity(2, 2)),
            jc: jac.then(|| DMatrix::from_row_slice(1, 2, &[2.0 * w[0], 0.0])),
        })
    }
}

/// The constraint without a root: the run ends `infeasible` at the least violation
/// (|c| = 1 at x₀ = 0), never `converged`; a start that fails ends `start_failed` with
/// the start and the error; dependent constraint rows at the start are an error.
#[test]
fn infeasible_and_failed_starts_are_outcomes() {
    let p = NoRoot {
        fail_at_start: false,
    };
    let fit = generalized_gauss_newton(
        &p,
        &[2.0, 1.0],
        &BoxBounds::free(2),
        &GgnSettings::default(),
    )
    .unwrap();
    println!(
        "no root: {} after {} iterations: {}; max |c| {:.3} → {:.3}",
        fit.outcome, fit.iterations, fit.message, fit.max_violation_initial, fit.max_violation
    );
    assert_eq!(fit.outcome, LsqOutcome::Infeasible, "{}", fit.message);
    // measured: 5 → 1.000 after 10 iterations
    assert!(fit.max_violation >= 1.0 && fit.max_violation <= 1.001);
    let p = NoRoot {
        fail_at_start: true,
    };
    let fit = generalized_gauss_newton(
        &p,
        &[2.0, 1.0],
        &BoxBounds::free(2),
        &GgnSettings::default(),
    )
    .unwrap();
    assert_eq!(fit.outcome, LsqOutcome::StartFailed);
    assert_eq!(
        (fit.w.clone(), fit.message.as_str()),
        (vec![2.0, 1.0], "cannot simulate")
    );
    let twice = LinearLsq {
        a: DMatrix::identity(2, 2),
        b: DVector::zeros(2),
        c: DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 2.0, 0.0]),
        d: DVector::from_vec(vec![1.0, 2.0]),
    };
    let err = generalized_gauss_newton(
        &twice,
        &[0.0, 0.0],
        &BoxBounds::free(2),
        &GgnSettings::default(),
    );
    assert!(
        matches!(
            err,
            Err(super::super::error::LsqError::DependentConstraints { .. })
        ),
        "{err:?}"
    );
}

/// A start on the upper bound x₁ ≤ start that does not bind at the optimum: the active set
/// holds x₁ first, its multiplier has the wrong sign, it is released, and the run ends
/// at the unbounded KKT solution with nothing held.
#[test]
fn a_bound_that_does_not_bind_is_released() {
    let p = linear_problem();
    let (x, _) = kkt(&p.a, &p.b, &p.c, &p.d);
    let mut bounds = BoxBounds::free(5);
    let mut w0 = [0.0; 5];
    // x₁ starts on its upper bound, on the side away from the optimum
    bounds.upper[1] = x[1] + 1.0;
    w0[1] = x[1] + 1.0;
    let fit = generalized_gauss_newton(&p, &w0, &bounds, &GgnSettings::default()).unwrap();
    let ex = (0..5).map(|i| rel(fit.w[i], x[i], 1.0)).fold(0.0, f64::max);
    println!(
        "released: {} after {} iterations, held per iteration {:?}, x error {ex:.1e}",
        fit.outcome,
        fit.iterations,
        fit.history.iter().map(|h| h.held).collect::<Vec<_>>()
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert!(fit.active.iter().all(|a| a.is_none()));
    assert!(ex <= 1.2e-14, "{ex:.0e} (measured 6.1e-16)");
}
