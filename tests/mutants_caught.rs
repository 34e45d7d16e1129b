//! Tests that kill mutants cargo-mutants found surviving the rest of the suite (issue 14).
//!
//! `adjoint/layout.rs` `Layout::mu_act`: the index of a control coefficient's μ in the backward
//! vector, `k(n + n_p) + (j n_u + ch) n_active + a`. Every other test has one control
//! channel and one objective per backward pass (n_u = 1, j = 0), where `j n_u + ch` is 0
//! however it is mutated; two channels and three objectives in one pass make every column
//! and channel index count (also `gu[j n_u + ch]` in `AdjointRhs::eval`), and the VJP
//! buffers (`k n_u` entries, which `vjp_multi` slices) too small if their length is
//! mutated to `k + n_u`.

use crate::common;

use common::assert_close;
use hybridopt::control::{Basis, ControlGrid};
use hybridopt::cost::{EventGuard, Objective, Quantity, Term};
use hybridopt::integrate::Method;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::BouncingBall;
use hybridopt::systems::SwitchedLinear;
use hybridopt::testing::adjoint_gradients;
use hybridopt::{Dims, HybridSystem, ModelError, Scalar};

/// The bouncing ball with two thrust channels entering differently:
/// `v̇ = −g − c v + u₀ + (0.5 + 0.2 y) u₁`. Parameters (g, e, c, y0, v0).
#[derive(Debug, Clone, Copy, Default)]
struct TwoChannelBall;

impl HybridSystem for TwoChannelBall {
    fn dims(&self) -> Dims {
        let mut d = BouncingBall.dims().controls(["thrust", "side"]);
        d.outputs.extend(["thrust", "side"].map(String::from));
        d
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        BouncingBall.initial_state(p)
    }
    fn flow<D: Scalar>(
        &self, m: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        BouncingBall.flow(m, t, x, u, p, dx)?;
        dx[1] += u[0] + (x[0] * 0.2 + 0.5) * u[1];
        Ok(())
    }
    fn guard<D: Scalar>(&self, m: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        BouncingBall.guard(m, k, t, x, u, p)
    }
    fn reset<D: Scalar>(
        &self, m: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        BouncingBall.reset(m, k, t, x, p)
    }
    fn outputs<D: Scalar>(
        &self, m: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        BouncingBall.outputs(m, t, x, u, p, &mut out[..3])?;
        out[3] = u[0];
        out[4] = u[1];
        Ok(())
    }
}

/// Components are compared relative to max(|b_i|, FLOOR · max|b|).
const FLOOR: f64 = 1e-3;

/// Three objectives in one backward pass (columns j = 0, 1, 2) on a two-channel control: the
/// adjoint's gradients of both against central finite differences, per component. The
/// cubic B-spline (4 active coefficients per channel) also makes the backward vector's
/// length `k(n + n_p + n_u n_active)` count (with 2 active, n_u n_active = n_u + n_active).
fn two_channels_three_objectives(basis: Basis, tol: f64) {
    let sys = TwoChannelBall;
    let grid = ControlGrid {
        basis,
        t0: 0.0,
        t1: 2.0,
        intervals: 4,
        channels: 2,
    };
    let mixed = Objective::new(
        "mixed",
        vec![
            Term::Effort { weight: 0.05 },
            Term::squared(
                Quantity::EventTime {
                    guard: EventGuard::Guard(0),
                    occurrence: 1,
                },
                1.0,
                1.0,
            ),
            Term::squared(Quantity::Terminal { output: 0 }, 0.3, 1.0),
        ],
    );
    let velocity = Objective::new(
        "velocity",
        vec![
            Term::Effort { weight: 0.2 },
            Term::squared(Quantity::Terminal { output: 1 }, -1.0, 1.0),
        ],
    );
    let effort = Objective::new("effort", vec![Term::Effort { weight: 1.0 }]);
    let mut s = Setup::new(&sys, 0.0, 2.0, Some(grid), vec![mixed, velocity, effort]);
    s = s.to_builder().tolerances(1e-10, 1e-10).build();
    let mut theta = vec![9.81, 0.8, 0.1, 1.0, 0.0];
    theta.extend((0..s.nc()).map(|k| 1.5 * (0.7 * k as f64 + 0.3).sin()));
    let traj = s.simulate(&theta).unwrap();
    assert!(traj.events.len() >= 2, "{} impacts", traj.events.len());
    let adj = evaluate(&s, &theta, GradientMethod::Adjoint).unwrap();
    let fd = evaluate(&s, &theta, GradientMethod::Fd).unwrap();
    assert_eq!(adj.gradients.len(), 3);
    for (j, name) in ["mixed", "velocity", "effort"].iter().enumerate() {
        println!(
            "{name}: ψ = {}\n adjoint {:?}\n fd      {:?}",
            adj.values[j], adj.gradients[j], fd.gradients[j]
        );
        assert_close(
            &format!("{basis:?} {name}: adjoint vs fd"),
            &adj.gradients[j],
            &fd.gradients[j],
            tol,
            FLOOR,
        );
    }
}

#[test]
fn adjoint_with_two_channels_and_three_objectives_piecewise_linear() {
    // adjoint vs central FD, worst component over the three objectives: measured 3.3e-7
    // (velocity, d/dθ_11; 2026-12-02), margin 30×
    two_channels_three_objectives(Basis::PiecewiseLinear, 1e-5);
}

#[test]
fn adjoint_with_two_channels_and_three_objectives_cubic_bspline() {
    // adjoint vs central FD, worst component over the three objectives: measured 3.4e-8
    // (effort, d/dy0 = 0 exactly: FD noise against the floor 1e-3·max|g|; 2026-12-02),
    // margin 29×
    two_channels_three_objectives(Basis::CubicBspline, 1e-6);
}

/// `AdjointRhs::newton_jacobian` (`block: −F_Xᵀ`) only steers SDIRK3's Newton iteration:
/// with the sign dropped the adjoint still converges to the same gradient (measured
/// 1.6e-13 relative change) but Newton needs far more right-hand sides (188,023 → 307,705
/// on this problem, before the adjoint's column scaling; 178,267 with it). The backward pass's counts are pinned exactly (deterministic
/// arithmetic; update them deliberately when the integrator changes).
#[test]
fn sdirk3_adjoint_step_counts_are_pinned() {
    let sys = SwitchedLinear;
    let obj = Objective::new(
        "psi",
        vec![Term::squared(Quantity::Terminal { output: 1 }, 0.2, 1.0)],
    );
    let mut s = Setup::new(&sys, 0.0, 6.0, None, vec![obj]);
    s = s
        .to_builder()
        .method(Method::Sdirk3)
        .tolerances(1e-10, 1e-10)
        .build();
    let p = SwitchedLinear::default_params();
    let traj = s.simulate(&p).unwrap();
    let (_, st) = adjoint_gradients(&s, &traj, &p).unwrap();
    println!("adjoint SDIRK3 stats: {st:?}");
    // measured 2026-12-05: exact counts (15,662, 6, 188,023 before the adjoint's column
    // scale max(1, rms λ), sensitivity/adjoint/segment.rs; 14,848, 7, 178,267 before the implicit
    // methods' predictive step-size controller, integrate/controller.rs)
    assert_eq!(
        (st.steps, st.rejected, st.rhs_evals),
        (11_596, 8, 139_255),
        "adjoint SDIRK3 (steps, rejected, rhs_evals)"
    );
}

/// `adjoint_with_history` (μ_p(t), the seed's λ_Γ(t) behind `adjoint_mu_*.csv`) was not
/// called by any test: an empty result survived. Its gradients are the ordinary adjoint's
/// (the same pass, bit for bit) and its history runs from t_f down to t0, one per objective.
#[test]
fn adjoint_history_spans_the_horizon_for_every_objective() {
    let sys = BouncingBall;
    let obj = hybridopt::systems::shipped_objective();
    let mut s = Setup::new(&sys, 0.0, 3.0, None, vec![obj]);
    s = s.to_builder().tolerances(1e-10, 1e-10).build();
    let p = [9.81, 0.8, 0.1, 1.0, 0.0];
    let traj = s.simulate(&p).unwrap();
    let (g, _) = adjoint_gradients(&s, &traj, &p).unwrap();
    let (gh, hist) = hybridopt::testing::adjoint_with_history(&s, &traj, &p).unwrap();
    assert_eq!(gh, g, "gradients of the recording pass");
    assert_eq!(hist.len(), 1, "one history per objective");
    let h = &hist[0];
    assert!(h.len() > 10, "{} recorded points", h.len());
    assert_eq!(h.first().unwrap().0, 3.0, "history starts at t_f");
    assert_eq!(h.last().unwrap().0, 0.0, "history ends at t0");
    assert!(h.iter().all(|(_, m)| m.len() == 5), "μ_p has n_p entries");
}
