//! Levenberg–Marquardt: closed forms, quadratic convergence, bounds, failures.

use super::super::bounds::{BoundSide, BoxBounds};
use super::super::lm::levenberg_marquardt;
use super::super::outcome::LsqOutcome;
use super::super::problem::Residuals;
use super::super::settings::LmSettings;
use super::super::statistics::statistics;
use super::{noise, rel, Decay, LinearLsq, Rosenbrock};
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;

/// A quadratic y = θ₀ + θ₁ t + θ₂ t² through 25 noisy samples, σ = 0.05: the fit is the
/// normal equations' solution (XᵀX)⁻¹Xᵀd (Cholesky, an independent route) and the
/// covariance (XᵀX/σ²)⁻¹σ̂², σ̂² = ‖r‖²/(m − 3).
#[test]
fn linear_fit_matches_the_normal_equations() {
    let (m, sigma) = (25, 0.05);
    let t: Vec<f64> = (0..m)
        .map(|i| -1.0 + 2.5 * i as f64 / (m - 1) as f64)
        .collect();
    let x = DMatrix::from_fn(m, 3, |i, k| t[i].powi(k as i32));
    let d = DVector::from_fn(m, |i, _| {
        1.5 - 0.7 * t[i] + 0.3 * t[i] * t[i] + 0.04 * noise(i)
    });
    let problem = LinearLsq {
        a: &x / sigma,
        b: &d / sigma,
        c: DMatrix::zeros(0, 3),
        d: DVector::zeros(0),
    };
    let fit = levenberg_marquardt(
        &problem,
        &[0.0; 3],
        &BoxBounds::free(3),
        &LmSettings::default(),
    )
    .unwrap();
    let xtx = x.tr_mul(&x);
    let chol = xtx.clone().cholesky().unwrap();
    let theta = chol.solve(&x.tr_mul(&d));
    let resid = &x * &theta - &d;
    let s2 = resid.norm_squared() / sigma / sigma / (m - 3) as f64;
    let cov = chol.inverse() * (sigma * sigma * s2);
    let st = statistics(
        &fit.x,
        &fit.residuals,
        fit.jacobian.as_ref().unwrap(),
        &fit.free(),
        &[],
    )
    .unwrap();
    let mut worst = (0.0f64, 0.0f64);
    for a in 0..3 {
        worst.0 = worst.0.max(rel(fit.x[a], theta[a], 1.0));
        for b in 0..3 {
            worst.1 = worst
                .1
                .max(rel(st.covariance[a][b], cov[(a, b)], cov[(a, a)].abs()));
        }
    }
    println!(
        "linear fit: {} after {} iterations, {} evaluations; worst relative error: θ {:.2e}, Cov {:.2e}, σ̂² {:.2e}",
        fit.outcome, fit.iterations, fit.residual_evaluations, worst.0, worst.1, rel(st.sigma2, s2, 1.0)
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert!(
        fit.iterations <= 2,
        "{} iterations (measured 1)",
        fit.iterations
    );
    // the issue asks ≤ 1e-10; measured 1.7e-16 (θ), 5.6e-15 (Cov), 8e-16 (σ̂²)
    assert!(worst.0 <= 5e-15, "θ {:.2e} (measured 1.7e-16)", worst.0);
    assert!(worst.1 <= 1.5e-13, "Cov {:.2e} (measured 5.6e-15)", worst.1);
    assert!(rel(st.sigma2, s2, 1.0) <= 2.5e-14, "(measured 8e-16)");
    assert_eq!(st.degrees_of_freedom, m - 3);
}

/// The errors ‖x_k − x*‖ of the points where J was evaluated.
fn errors(log: &RefCell<Vec<Vec<f64>>>, star: &[f64]) -> Vec<f64> {
    log.borrow()
        .iter()
        .map(|x| {
            x.iter()
                .zip(star)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect()
}

/// The largest e_{k+1}/e_k² over the steps whose e_k is below `from` and e_{k+1} above
/// round-off (the quadratic-convergence constant of the final Gauss–Newton steps), and
/// how many such steps there were.
fn quadratic_constant(e: &[f64], from: f64) -> (f64, usize) {
    let pairs: Vec<f64> = e
        .windows(2)
        .filter(|w| w[0] < from && w[1] > 1e-15)
        .map(|w| w[1] / (w[0] * w[0]))
        .collect();
    (pairs.iter().copied().fold(0.0, f64::max), pairs.len())
}

/// Exact samples of 2·exp(−0.7 t) + 0.3 from a start 30–50 % off: zero residual, so the
/// final Gauss–Newton steps converge quadratically (the error squares per iteration).
#[test]
fn decay_fit_converges_quadratically() {
    let star = [2.0, 0.7, 0.3];
    let problem = Decay::new(&star, 30, 0.0, 1.0);
    let fit = levenberg_marquardt(
        &problem,
        &[1.2, 1.0, 0.6],
        &BoxBounds::free(3),
        &LmSettings::default(),
    )
    .unwrap();
    let e = errors(&problem.log, &star);
    let (constant, steps) = quadratic_constant(&e, 0.05);
    println!(
        "decay: {} ({}) after {} iterations, {} r, {} J, final GN steps {}; errors {}; e_k+1/e_k² ≤ {constant:.2} over {steps} steps",
        fit.outcome, fit.message, fit.iterations, fit.residual_evaluations, fit.jacobian_evaluations,
        fit.final_gauss_newton_steps, super::sci(&e)
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert!(
        e.last().unwrap() <= &2e-12,
        "final error {:.1e} (measured 6.8e-14)",
        e.last().unwrap()
    );
    assert!(
        steps >= 3 && constant <= 30.0,
        "constant {constant} over {steps} (measured 1.2 over 3)"
    );
    assert!(fit.final_gauss_newton_steps >= 3, "(measured 4)");
}

/// Rosenbrock's valley as residuals from (−1.2, 1), the classic test of a damped
/// Gauss–Newton method: r₂ = 1 − x₁ and then r₁ are linear in one variable each, so once the
/// step is undamped it lands exactly on (1, 1).
#[test]
fn rosenbrock_reaches_the_minimum() {
    let problem = Rosenbrock {
        log: RefCell::new(vec![]),
    };
    let fit = levenberg_marquardt(
        &problem,
        &[-1.2, 1.0],
        &BoxBounds::free(2),
        &LmSettings::default(),
    )
    .unwrap();
    let e = errors(&problem.log, &[1.0, 1.0]);
    println!(
        "rosenbrock: {} after {} iterations ({} r), final GN steps {}; errors {}",
        fit.outcome,
        fit.iterations,
        fit.residual_evaluations,
        fit.final_gauss_newton_steps,
        super::sci(&e)
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert!(
        (fit.x[0] - 1.0).abs() <= 1e-12 && (fit.x[1] - 1.0).abs() <= 1e-12,
        "(measured 0)"
    );
    assert!(fit.iterations <= 20, "(measured 9)");
    assert!(
        fit.cost
            <= fit
                .history
                .iter()
                .map(|h| h.cost)
                .fold(f64::INFINITY, f64::min)
    );
}

/// The decay's rate bounded above by 0.5 while the data say 0.7: the fit ends on the
/// bound, held (its gradient pushes out), the amplitude at its closed form given b = 0.5
/// (a = Σ dᵢeᵢ / Σ eᵢ², eᵢ = e^(−0.5 tᵢ)), and the statistics exclude b.
#[test]
fn a_binding_bound_is_held_and_excluded() {
    let problem = Decay::new(&[2.0, 0.7], 20, 0.01, 0.01);
    let bounds = BoxBounds {
        lower: vec![0.0, 0.0],
        upper: vec![10.0, 0.5],
    };
    let fit = levenberg_marquardt(&problem, &[1.0, 0.2], &bounds, &LmSettings::default()).unwrap();
    let e: Vec<f64> = problem.t.iter().map(|t| (-0.5 * t).exp()).collect();
    let see: f64 = e.iter().map(|v| v * v).sum();
    let a = e.iter().zip(&problem.d).map(|(e, d)| e * d).sum::<f64>() / see;
    let st = statistics(
        &fit.x,
        &fit.residuals,
        fit.jacobian.as_ref().unwrap(),
        &fit.free(),
        &[],
    )
    .unwrap();
    // SE of a with b fixed: σ̂ σ / √Σeᵢ² (the residuals are divided by σ = 0.01)
    let se = (st.sigma2 / see).sqrt() * 0.01;
    println!(
        "bound: {} after {} iterations; x {:?}, active {:?}; a error {:.1e}; SE {:.6e} vs {:.6e}",
        fit.outcome,
        fit.iterations,
        fit.x,
        fit.active,
        rel(fit.x[0], a, 1.0),
        st.parameters[0].standard_error,
        se
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert_eq!(fit.x[1], 0.5);
    assert_eq!(fit.active, vec![None, Some(BoundSide::Upper)]);
    assert!(rel(fit.x[0], a, 1.0) <= 4e-15, "(measured 1.3e-16)");
    assert_eq!(st.excluded, vec![1]);
    assert_eq!((st.parameters.len(), st.degrees_of_freedom), (1, 19));
    let e_se = rel(st.parameters[0].standard_error, se, 1e-300);
    assert!(e_se <= 1e-13, "{e_se:.1e} (measured 4e-16)");
}

/// Trial points outside the problem's domain (b < 0.4 fails) are rejected steps: the run
/// still converges to the optimum b = 0.7 from b = 1.5. With the domain b ≥ 0.5 the path
/// runs into the domain's edge (where the descent direction leaves it) and the run ends
/// `stalled` — below the start's cost, never called converged, the last error named.
#[test]
fn failing_trials_shorten_the_step() {
    let mut problem = Decay::new(&[2.0, 0.7], 20, 0.0, 1.0);
    problem.domain = 0.4;
    let fit = levenberg_marquardt(
        &problem,
        &[0.5, 1.5],
        &BoxBounds::free(2),
        &LmSettings::default(),
    )
    .unwrap();
    let failed = fit.history.iter().filter(|h| h.trial_cost.is_nan()).count();
    println!(
        "domain b ≥ 0.4: {} after {} iterations, {failed} failed trials, x {:?}",
        fit.outcome, fit.iterations, fit.x
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    assert!(
        failed >= 1,
        "no trial left the domain: the test tests nothing (measured 2)"
    );
    assert!(rel(fit.x[1], 0.7, 1.0) <= 1e-14, "(measured 4e-16)");
    problem.domain = 0.5;
    let fit = levenberg_marquardt(
        &problem,
        &[0.5, 1.5],
        &BoxBounds::free(2),
        &LmSettings::default(),
    )
    .unwrap();
    println!(
        "domain b ≥ 0.5: {} after {} iterations: {}; cost {:.3e} → {:.3e}",
        fit.outcome, fit.iterations, fit.message, fit.cost_initial, fit.cost
    );
    assert_eq!(fit.outcome, LsqOutcome::Stalled);
    assert!(fit.cost < fit.cost_initial && fit.message.contains("below the domain"));
}

/// A start that cannot be evaluated ends `start_failed` with the start; an exhausted
/// budget ends `max_iterations` at a point no worse than the start (never `converged`).
#[test]
fn start_failure_and_budget_are_outcomes() {
    let mut problem = Decay::new(&[2.0, 0.7], 20, 0.0, 1.0);
    problem.domain = 1.0;
    let fit = levenberg_marquardt(
        &problem,
        &[1.0, 0.5],
        &BoxBounds::free(2),
        &LmSettings::default(),
    )
    .unwrap();
    assert_eq!(fit.outcome, LsqOutcome::StartFailed);
    assert_eq!(fit.x, vec![1.0, 0.5]);
    assert!(fit.message.contains("below the domain"), "{}", fit.message);
    let problem = Rosenbrock {
        log: RefCell::new(vec![]),
    };
    let settings = LmSettings {
        max_iterations: 3,
        ..LmSettings::default()
    };
    let fit = levenberg_marquardt(&problem, &[-1.2, 1.0], &BoxBounds::free(2), &settings).unwrap();
    assert_eq!(fit.outcome, LsqOutcome::MaxIterations);
    assert!(fit.cost <= fit.cost_initial && fit.iterations == 3);
    let bad = BoxBounds {
        lower: vec![0.0, 1.0],
        upper: vec![1.0, 0.0],
    };
    assert!(levenberg_marquardt(&problem, &[0.5, 0.5], &bad, &settings).is_err());
}

/// The lazy Jacobian (r at trials, J after acceptance) reaches the same point.
#[test]
fn lazy_jacobian_agrees() {
    let problem = Decay::new(&[2.0, 0.7, 0.3], 30, 0.02, 0.02);
    let eager = levenberg_marquardt(
        &problem,
        &[1.2, 1.0, 0.6],
        &BoxBounds::free(3),
        &LmSettings::default(),
    )
    .unwrap();
    let settings = LmSettings {
        eager_jacobian: false,
        ..LmSettings::default()
    };
    let lazy =
        levenberg_marquardt(&problem, &[1.2, 1.0, 0.6], &BoxBounds::free(3), &settings).unwrap();
    println!(
        "eager: {} its, {} r, {} J; lazy: {} its, {} r, {} J",
        eager.iterations,
        eager.residual_evaluations,
        eager.jacobian_evaluations,
        lazy.iterations,
        lazy.residual_evaluations,
        lazy.jacobian_evaluations
    );
    assert!(eager.outcome.converged() && lazy.outcome.converged());
    for k in 0..3 {
        // both stop by the gradient test (gtol 1e-10), not at round-off
        assert!(rel(eager.x[k], lazy.x[k], 1.0) <= 1e-9);
    }
    let _ = problem.residuals(&eager.x, false).unwrap();
}
