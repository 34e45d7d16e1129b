//! Every derivative has witnesses (design.md habit 2): the adjoint, the direct method and
//! the dual-number run through the integrator agree to near the integration tolerance, and
//! central finite differences of ψ agree to FD accuracy, on a mode switch without reset
//! (switched linear system), several impacts with time-dependent reset and forcing (impact
//! pendulum), and a controlled system with each control basis (thrust ball). Also the
//! implicit integrator (SDIRK3) on the switched system.

mod common;

use common::{gradients_by, rel_l2};
use hybridopt::control::{Basis, ControlGrid};
use hybridopt::cost::{Objective, Term};
use hybridopt::integrate::Method;
use hybridopt::sensitivity::GradientMethod::{self, Adjoint, Direct, Dual, Fd};
use hybridopt::setup::Setup;
use hybridopt::systems::bouncing_ball::ThrustBall;
use hybridopt::systems::impact_pendulum::ImpactPendulum;
use hybridopt::systems::switched::SwitchedLinear;
use hybridopt::HybridSystem;

/// Agreement asked of the exact methods with each other, and of FD with them.
const EXACT_TOL: f64 = 1e-7;
const FD_TOL: f64 = 1e-5;

fn tight<S: HybridSystem>(s: &mut Setup<'_, S>, tol: f64) {
    s.solver.rtol = tol;
    s.solver.atol = tol;
}

/// Runs `methods`, checks the values agree, every exact pair to `exact_tol` and FD against
/// each exact one to `fd_tol` (relative L2 over the whole gradient and, so that large
/// parameter derivatives cannot hide errors in the control coefficients, over the control
/// block alone), and returns the worst (exact, fd) differences.
fn check<S: HybridSystem>(
    name: &str,
    s: &Setup<'_, S>,
    theta: &[f64],
    methods: &[GradientMethod],
    exact_tol: f64,
    fd_tol: f64,
) -> (f64, f64) {
    let res = gradients_by(s, theta, methods);
    let v0 = res[0].1;
    let g_norm = res[0].2.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(
        g_norm > 1e-3,
        "{name}: gradient {:?} is too small to test",
        res[0].2
    );
    let (mut worst_exact, mut worst_fd) = (0.0f64, 0.0f64);
    let np = s.np();
    let mut blocks = vec![(0, theta.len())];
    if s.nc() > 0 {
        blocks.push((np, theta.len()));
    }
    for (i, (mi, vi, gi)) in res.iter().enumerate() {
        assert!(
            (vi - v0).abs() <= 1e-8 * v0.abs().max(1.0),
            "{name}: ψ by {} = {vi} vs {v0}",
            mi.name()
        );
        for (mj, _, gj) in &res[..i] {
            let r = blocks
                .iter()
                .map(|&(a, b)| rel_l2(&gi[a..b], &gj[a..b]))
                .fold(0.0, f64::max);
            let (tol, worst) = if *mi == Fd || *mj == Fd {
                (fd_tol, &mut worst_fd)
            } else {
                (exact_tol, &mut worst_exact)
            };
            *worst = worst.max(r);
            assert!(
                r <= tol,
                "{name}: {} vs {}: relative L2 difference {r:e} > {tol:e}\n{}: {gi:?}\n{}: {gj:?}",
                mi.name(),
                mj.name(),
                mi.name(),
                mj.name()
            );
        }
    }
    println!(
        "{name}: ψ = {v0:.10}, exact methods agree to {worst_exact:.1e}, fd to {worst_fd:.1e}"
    );
    (worst_exact, worst_fd)
}

fn switched_setup(sys: &SwitchedLinear) -> Setup<'_, SwitchedLinear> {
    let obj = Objective::new(
        "psi",
        vec![
            Term::IntegralSquared {
                output: 0,
                target: 0.0,
                weight: 1.0,
            },
            Term::TerminalSquared {
                output: 1,
                target: 0.2,
                weight: 1.0,
            },
            Term::EventTimeSquared {
                guard: 0,
                occurrence: 2,
                target: 2.0,
                weight: 0.5,
            },
        ],
    );
    let mut s = Setup::new(sys, 0.0, 6.0, None, vec![obj]);
    tight(&mut s, 1e-10);
    s
}

#[test]
fn switched_linear_mode_switch_without_reset() {
    let sys = SwitchedLinear;
    let s = switched_setup(&sys);
    let p = SwitchedLinear::default_params();
    let traj = s.simulate(&p).unwrap();
    assert!(traj.events.len() >= 4, "{} switches", traj.events.len());
    check(
        "switched",
        &s,
        &p,
        &[Adjoint, Direct, Dual, Fd],
        EXACT_TOL,
        FD_TOL,
    );
}

/// The 3rd-order implicit method: adjoint, direct and FD agree to ≤ 1e-5 (the dual
/// witness runs the explicit integrator only).
#[test]
fn switched_linear_with_sdirk3() {
    let sys = SwitchedLinear;
    let mut s = switched_setup(&sys);
    s.solver.method = Method::Sdirk3;
    let p = SwitchedLinear::default_params();
    check(
        "switched/SDIRK3",
        &s,
        &p,
        &[Adjoint, Direct, Fd],
        1e-5,
        1e-5,
    );
}

#[test]
fn impact_pendulum_several_impacts() {
    let sys = ImpactPendulum;
    let obj = Objective::new(
        "psi",
        vec![
            Term::IntegralSquared {
                output: 1,
                target: 0.0,
                weight: 1.0,
            },
            Term::Integral {
                output: 2,
                weight: 0.3,
            },
            Term::TerminalSquared {
                output: 0,
                target: -0.2,
                weight: 1.0,
            },
            Term::EventTimeSquared {
                guard: 0,
                occurrence: 2,
                target: 3.5,
                weight: 1.0,
            },
            Term::EventOutputSquared {
                guard: 0,
                occurrence: 3,
                output: 1,
                target: 0.5,
                weight: 1.0,
            },
        ],
    );
    let mut s = Setup::new(&sys, 0.0, 8.0, None, vec![obj]);
    tight(&mut s, 1e-10);
    let p = ImpactPendulum::default_params();
    let traj = s.simulate(&p).unwrap();
    assert_eq!(traj.events.len(), 3, "impacts");
    check(
        "impact pendulum",
        &s,
        &p,
        &[Adjoint, Direct, Dual, Fd],
        EXACT_TOL,
        FD_TOL,
    );
}

/// The thrust ball with 12-interval controls of each basis, under two objectives: Effort +
/// EventTimeSquared + TerminalSquared, and the effort alone (where λ_z ≡ 1 and the whole
/// control gradient is the quadrature ∫ φ_a 2wu dt in the adjoint's μ).
#[test]
fn thrust_ball_with_each_control_basis() {
    let sys = ThrustBall;
    for basis in [
        Basis::PiecewiseConstant,
        Basis::PiecewiseLinear,
        Basis::CubicBspline,
    ] {
        let grid = ControlGrid {
            basis,
            t0: 0.0,
            t1: 3.0,
            intervals: 12,
            channels: 1,
        };
        let mixed = Objective::new(
            "psi",
            vec![
                Term::Effort { weight: 0.05 },
                Term::EventTimeSquared {
                    guard: 0,
                    occurrence: 2,
                    target: 1.2,
                    weight: 1.0,
                },
                Term::TerminalSquared {
                    output: 0,
                    target: 0.3,
                    weight: 1.0,
                },
            ],
        );
        let effort = Objective::new("effort", vec![Term::Effort { weight: 1.0 }]);
        for (oname, obj) in [("mixed", mixed), ("effort", effort)] {
            let mut s = Setup::new(&sys, 0.0, 3.0, Some(grid.clone()), vec![obj]);
            tight(&mut s, 1e-10);
            let mut theta = vec![9.81, 0.8, 0.1, 1.0, 0.0];
            theta.extend((0..s.nc()).map(|k| 1.5 * (0.7 * k as f64).sin()));
            let traj = s.simulate(&theta).unwrap();
            assert!(
                traj.events.len() >= 3,
                "{basis:?}: {} impacts",
                traj.events.len()
            );
            let name = format!("thrust ball {basis:?} {oname}");
            check(
                &name,
                &s,
                &theta,
                &[Adjoint, Direct, Dual, Fd],
                EXACT_TOL,
                FD_TOL,
            );
        }
    }
}
