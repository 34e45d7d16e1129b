//! Hybrid DAEs (seed 001; theory.md §6; reference-models §7–§8): the rectifier (index 1,
//! a guard on the algebraic state) against its semi-analytic oracle, the pendulum against
//! a wall (index 2, an implicit impact transition) against the same motion in its angle,
//! the witnesses (adjoint, direct, central FD, dual) on both, and the typed errors of bad
//! DAE input.

use crate::common;
#[path = "common/rectifier.rs"]
mod rectifier_oracle;

use common::{assert_close, assert_within, gradients_by};
use hybridopt::cost::{Objective, Quantity, Term};
use hybridopt::dae::{Dae, DaeDims, DaeIndex, DaeSystem, Point, Transition};
use hybridopt::error::{Error, ModelError};
use hybridopt::integrate::{Method, SolverOptions};
use hybridopt::sensitivity::GradientMethod::{Adjoint, Direct, Dual, Fd};
use hybridopt::setup::Setup;
use hybridopt::systems::PendulumAngle;
use hybridopt::systems::PendulumWall;
use hybridopt::systems::Rectifier;
use hybridopt::testing::{OFF, ON};
use hybridopt::{Direction, GuardInfo, HybridSystem, Scalar};

const TOL: f64 = 1e-10;

/// The rectifier's setup as `rectifier_capacitor.toml` has it: Radau IIA at `tol`.
fn rectifier_setup(sys: &Dae<Rectifier>, tol: f64) -> Setup<'_, Dae<Rectifier>> {
    let vc = sys.dims().output_index("vC").unwrap();
    Setup::builder(sys)
        .solver(SolverOptions {
            method: Method::Radau5,
            ..SolverOptions::default()
        })
        .horizon(0.0, 5.0)
        .objective(Objective::new(
            "psi",
            vec![Term::squared(Quantity::Integral { output: vc }, 0.8, 1.0)],
        ))
        .tolerances(tol, tol)
        .build()
}

#[test]
fn rectifier_switches_on_the_algebraic_current_and_matches_the_oracle() {
    let sys = Dae::new(Rectifier);
    let setup = rectifier_setup(&sys, TOL);
    let p = Rectifier::default_params();
    let traj = setup.simulate(&p).unwrap();
    let (psi_ref, switches) = rectifier_oracle::oracle(&p, 5.0, 0.8);
    // the diode switches off and on once per period: 10 transitions in [0, 5]
    assert_eq!(traj.events.len(), 10, "transitions");
    assert_eq!(switches.len(), 10, "oracle switches");
    for (i, (e, t)) in traj.events.iter().zip(&switches).enumerate() {
        let (before, after) = if i % 2 == 0 { (ON, OFF) } else { (OFF, ON) };
        assert_eq!((e.before.mode, e.after.mode), (before, after), "event {i}");
        assert!(
            (e.t - t).abs() <= 1e-8,
            "event {i}: t = {} vs oracle {t}",
            e.t
        );
    }
    let (value, grad_ref) = rectifier_oracle::oracle_gradient(&p, 5.0, 0.8);
    assert_within("rectifier oracle self-check", (value - psi_ref).abs(), 0.0);
    println!("oracle ψ = {psi_ref:.12e}, dψ/dp = {grad_ref:?}");
    // At the problem's tolerance (1e-10, Radau IIA) every method holds ψ, and dψ/dp in
    // norm, to the oracle. Each entry relative to itself (no floor) is checked at 1e-12:
    // the smallest entry, dψ/dφ0 (0.2 % of the largest), has an error O(tol)·‖dψ/dp‖ in
    // absolute terms, so at 1e-10 the adjoint's is 8.6e-9 of itself, and the per-entry
    // check needs the tighter run to have a margin. (With DOPRI5 the adjoint missed that
    // entry by 1.5e-7 of itself at 1e-10 — the forward run's state error, which the stiff
    // on-mode amplifies by 1/r = 100 in the μ integrands; Radau IIA resolves that mode.
    // The dual witness needs its Newton iteration converged on the derivative parts too,
    // integrate/radau.rs.) Measured at 1e-10: ψ 1.4e-12 (adjoint, dual), 2.7e-14 (direct);
    // norm 7.0e-11, 8.5e-14, 5.6e-11 (adjoint, direct, dual).
    for (m, psi, grad) in gradients_by(&setup, &p, &[Adjoint, Direct, Dual]) {
        assert_within(
            &format!("rectifier ψ ({}) vs oracle at 1e-10", m.name()),
            (psi - psi_ref).abs() / psi_ref,
            3e-11,
        );
        assert_within(
            &format!(
                "rectifier ‖dψ/dp − oracle‖/‖oracle‖ ({}) at 1e-10",
                m.name()
            ),
            common::rel_l2(&grad, &grad_ref),
            1.5e-9,
        );
    }
    // measured per entry at 1e-12: 2.6e-11 (adjoint), 2.3e-12 (direct), 7.2e-11 (dual);
    // ψ 8.3e-15, 3.3e-14, 8.3e-15
    let tight = rectifier_setup(&sys, 1e-12);
    for (m, psi, grad) in gradients_by(&tight, &p, &[Adjoint, Direct, Dual]) {
        assert_within(
            &format!("rectifier ψ ({}) vs oracle at 1e-12", m.name()),
            (psi - psi_ref).abs() / psi_ref,
            1e-12,
        );
        assert_close(
            &format!(
                "rectifier dψ/dp ({}) vs oracle at 1e-12, per entry",
                m.name()
            ),
            &grad,
            &grad_ref,
            2e-9,
            0.0,
        );
    }
}

#[test]
fn rectifier_witnesses_agree() {
    let sys = Dae::new(Rectifier);
    let setup = rectifier_setup(&sys, TOL);
    let p = Rectifier::default_params();
    let all = gradients_by(&setup, &p, &[Adjoint, Direct, Fd, Dual]);
    let direct = &all[1].2;
    // Relative to the gradient's norm every witness agrees to 1e-7; entry by entry the
    // adjoint and dual to 1e-7 of each entry itself, and FD (the default step 1e-4, runs at
    // 1e-10) to 1e-6: its quotient divides the runs' tol-level error by the step, which is
    // 5e-7 on dψ/dω (1 % of the largest entry; tests/dae_acceptance.rs holds FD at 1e-7
    // with runs at 1e-12).
    for (m, _, g) in &all {
        assert_within(
            &format!("rectifier ‖{} − direct‖/‖direct‖", m.name()),
            common::rel_l2(g, direct),
            // measured adjoint 2.3e-10, FD 9.8e-11, dual 5.4e-11 (2026-12-07; the bound
            // was 1e-7 for all), margins 26×, 26×, 28×
            match m {
                Adjoint => 6e-9,
                Fd => 2.5e-9,
                _ => 1.5e-9,
            },
        );
        // measured adjoint 2.9e-8, dual 2.1e-8 (issue 9's acceptance, 1e-7, is the bound:
        // a requirement, not a margin), FD 1.8e-8 (2026-12-07; the bound was 1e-6, 56×),
        // bound 5e-7 (28×)
        let tol = if *m == Fd { 5e-7 } else { 1e-7 };
        assert_close(
            &format!("rectifier {} vs direct", m.name()),
            g,
            direct,
            tol,
            0.0,
        );
    }
}

fn pendulum_cost<S: HybridSystem>(sys: &S) -> Objective {
    let px = sys.dims().output_index("px").unwrap();
    Objective::new(
        "psi",
        vec![Term::squared(Quantity::Integral { output: px }, 0.0, 1.0)],
    )
}

#[test]
fn pendulum_wall_index2_equals_the_angle_model() {
    let dae = Dae::new(PendulumWall);
    let ode = PendulumAngle;
    let p = PendulumWall::default_params();
    let s_dae = Setup::builder(&dae)
        .horizon(0.0, 5.0)
        .objective(pendulum_cost(&dae))
        .tolerances(1e-12, 1e-12)
        .build();
    let s_ode = Setup::builder(&ode)
        .horizon(0.0, 5.0)
        .objective(pendulum_cost(&ode))
        .tolerances(1e-12, 1e-12)
        .build();
    let t_dae = s_dae.simulate(&p).unwrap();
    let t_ode = s_ode.simulate(&p).unwrap();
    assert_eq!(t_dae.events.len(), t_ode.events.len(), "impacts");
    assert!(
        t_dae.events.len() >= 3,
        "the pendulum hits the wall several times"
    );
    for (a, b) in t_dae.events.iter().zip(&t_ode.events) {
        assert!((a.t - b.t).abs() <= 1e-9, "impact at {} vs {}", a.t, b.t);
    }
    let ode_all = gradients_by(&s_ode, &p, &[Direct]);
    let (psi_ode, g_ode) = (ode_all[0].1, &ode_all[0].2);
    for (m, psi, g) in gradients_by(&s_dae, &p, &[Adjoint, Direct]) {
        // measured ψ 1.31e-12 (adjoint), 1.89e-13 (direct); dψ/dp 2.05e-10 (adjoint),
        // 3.28e-11 (direct) (2026-12-07; every bound was 1e-8): margins 23×, 26×, 24×, 24×
        let (tol_psi, tol_grad) = if m == Adjoint {
            (3e-11, 5e-9)
        } else {
            (5e-12, 8e-10)
        };
        assert_within(
            &format!("pendulum_wall ψ ({}) vs angle model", m.name()),
            (psi - psi_ode).abs() / psi_ode,
            tol_psi,
        );
        assert_close(
            &format!("pendulum_wall dψ/dp ({}) vs angle model", m.name()),
            &g,
            g_ode,
            tol_grad,
            // dψ/dm is 0 in both (measured 3e-16 against 0): each entry relative to
            // max(|b_i|, 1e-6·max|b|)
            1e-6,
        );
    }
    // the position constraint drifts in the index-2 form: report and bound it
    let mut drift = 0.0f64;
    let mut vel = 0.0f64;
    for (t, si, x) in t_dae.samples(4) {
        let mode = t_dae.segments[si].mode;
        let (k, inv) = dae
            .constraint_residuals(mode, t, &x[..dae.dims().nx()], &p)
            .unwrap();
        drift = drift.max(inv);
        vel = vel.max(k);
    }
    // measured 1.94e-12 and 8.57e-13 (2026-12-07; both bounds were 1e-8), margins 26×
    // and 23×
    assert_within(
        "pendulum_wall position drift max|x² + y² − L²|",
        drift,
        5e-11,
    );
    assert_within(
        "pendulum_wall velocity constraint max|x u + y v|",
        vel,
        2e-11,
    );
}

#[test]
fn pendulum_wall_witnesses_agree() {
    let dae = Dae::new(PendulumWall);
    let p = PendulumWall::default_params();
    let setup = Setup::builder(&dae)
        .horizon(0.0, 5.0)
        .objective(pendulum_cost(&dae))
        .tolerances(TOL, TOL)
        .build();
    let all = gradients_by(&setup, &p, &[Adjoint, Direct, Fd, Dual]);
    let direct = &all[1].2;
    for (m, _, g) in &all {
        // measured adjoint 8.7e-10, dual 3.3e-10, FD 1.5e-8 (2026-12-07; the bounds were
        // 1e-8 and FD's 1e-7, 7×): 2e-8, 1e-8 (kept: 30×) and 3.5e-7, margins 23×, 30×, 24×
        let tol = match m {
            Fd => 3.5e-7,
            Adjoint => 2e-8,
            _ => 1e-8,
        };
        assert_close(
            &format!("pendulum_wall {} vs direct", m.name()),
            g,
            direct,
            tol,
            // FD of the zero entry dψ/dm is round-off (6e-13): each entry relative to
            // max(|b_i|, 1e-5·max|b|)
            1e-5,
        );
    }
}

/// A small index-1 system for the error paths: `ẏ = z`, `0 = k(y, z)` chosen per case.
struct Broken {
    case: Case,
}

#[derive(Clone, Copy, PartialEq)]
enum Case {
    /// `k = z − y` with a prescribed z0 = 5 ≠ y0 = 1.
    InconsistentStart,
    /// `k = (y − 1)(z − 1)`: k_z = y − 1 vanishes at the start y0 = 1.
    SingularKz,
    /// `k = z² + 1`: no real solution.
    NoSolution,
    /// an implicit transition `T = y⁺² + 1`: no real solution.
    TransitionFails,
}

impl DaeSystem for Broken {
    fn index(&self) -> DaeIndex {
        DaeIndex::One
    }
    fn dims(&self) -> DaeDims {
        DaeDims::new(["y"], ["z"], ["a"]).guards([GuardInfo::new("hit", Direction::Rising)])
    }
    fn initial_differential<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![D::from(1.0)])
    }
    fn initial_algebraic(&self, _p: &[f64]) -> Option<Vec<f64>> {
        (self.case == Case::InconsistentStart).then(|| vec![5.0])
    }
    fn algebraic_guess(
        &self, _mode: usize, _t: f64, _y: &[f64], _m: &[f64], _p: &[f64],
    ) -> Vec<f64> {
        vec![-0.7]
    }
    fn flow<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, dy: &mut [D],
    ) -> Result<(), ModelError> {
        dy[0] = at.z[0];
        Ok(())
    }
    fn algebraic<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, res: &mut [D],
    ) -> Result<(), ModelError> {
        let (y, z) = (at.y[0], at.z[0]);
        res[0] = match self.case {
            Case::InconsistentStart | Case::TransitionFails => z - y,
            Case::SingularKz => (y - 1.0) * (z - 1.0),
            Case::NoSolution => z * z + 1.0,
        };
        Ok(())
    }
    fn guard<D: Scalar>(&self, _mode: usize, _k: usize, at: Point<'_, D>) -> D {
        at.y[0] - 2.0
    }
    fn transition<D: Scalar>(
        &self, mode: usize, _k: usize, at: Point<'_, D>,
    ) -> Result<Transition<D>, ModelError> {
        Ok(Transition::Implicit {
            mode,
            guess: vec![at.y[0].re()],
        })
    }
    fn transition_residual<D: Scalar>(
        &self, _mode: usize, _k: usize, after: &[D], _b: Point<'_, D>, res: &mut [D],
    ) -> Result<(), ModelError> {
        res[0] = after[0] * after[0] + 1.0;
        Ok(())
    }
}

fn run_broken(case: Case) -> Error {
    let sys = Dae::new(Broken { case });
    let setup = Setup::builder(&sys)
        .horizon(0.0, 3.0)
        .objective(Objective::new(
            "psi",
            vec![Term::squared(Quantity::Integral { output: 0 }, 0.0, 1.0)],
        ))
        .build();
    setup.simulate(&[1.0]).expect_err("bad DAE input must fail")
}

#[test]
fn bad_dae_input_gives_typed_errors_with_time_mode_and_residual() {
    let e = run_broken(Case::InconsistentStart);
    let msg = e.to_string();
    assert!(
        matches!(&e, Error::Model { source: ModelError::Inconsistent { residual, t, .. }, .. } if (*residual - 4.0).abs() < 1e-12 && *t == 0.0),
        "{msg}"
    );
    assert!(
        msg.contains("inconsistent initial values in mode 'default' at t = 0"),
        "{msg}"
    );

    let e = run_broken(Case::SingularKz);
    assert!(
        matches!(
            &e,
            Error::Model {
                source: ModelError::SingularAlgebraic { .. },
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("k_z"), "{e}");

    let e = run_broken(Case::NoSolution);
    assert!(
        matches!(
            &e,
            Error::Model {
                source: ModelError::AlgebraicNewton { .. },
                ..
            }
        ),
        "{e}"
    );

    let e = run_broken(Case::TransitionFails);
    assert!(
        matches!(
            &e,
            Error::Model {
                source: ModelError::TransitionNewton { .. },
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("guard 'hit'"), "{e}");
}
