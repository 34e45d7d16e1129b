//! The parameter adjoint's history μ_p(t) (`adjoint_with_history`) at interior times
//! against an independent witness: μ_p(t*) is the part of dψ/dp that [t*, t_f] contributes
//! (theory §3), i.e. the derivative of ψ when p changes on [t*, t_f] only. For the
//! separable cost ψ = ∫ y² dt that is the gradient, in the parameters x0 does not depend on
//! (g, e, c of the ball), of the run restarted at t* from the state x(t*) — by central
//! finite differences on that restarted run.

use crate::common;
use hybridopt::cost::{Objective, Quantity, Term};
use hybridopt::sensitivity::fd_gradients;
use hybridopt::setup::Setup;
use hybridopt::systems::BouncingBall;
use hybridopt::testing::adjoint_with_history;

fn int_y2() -> Objective {
    Objective::new(
        "int_y2",
        vec![Term::squared(Quantity::Integral { output: 0 }, 0.0, 1.0)],
    )
}

fn setup(t0: f64, t1: f64) -> Setup<'static, BouncingBall> {
    let mut s = Setup::new(&BouncingBall, t0, t1, None, vec![int_y2()]);
    s = s.to_builder().tolerances(1e-12, 1e-12).build();
    s
}

#[test]
fn mu_at_interior_times_is_the_restarted_runs_gradient() {
    let theta = BouncingBall::default_params();
    let s = setup(0.0, 3.0);
    let traj = s.simulate_for_adjoint(&theta).unwrap();
    let (_, hist) = adjoint_with_history(&s, &traj, &theta).unwrap();
    let h = &hist[0];
    let impacts: Vec<f64> = traj.events.iter().map(|e| e.t).collect();
    assert!(impacts.len() >= 3, "{impacts:?}");
    let mut checked = 0;
    // recorded points near these times, at least 0.02 s from an impact
    for target in [0.3, 1.1, 1.7, 2.4] {
        let (t, mu) = h
            .iter()
            .filter(|(t, _)| impacts.iter().all(|e| (t - e).abs() > 0.02))
            .min_by(|a, b| (a.0 - target).abs().total_cmp(&(b.0 - target).abs()))
            .unwrap();
        // the state at t* (the ball's y, v), then the run from t* with x(t*) as its start
        let x = setup(0.0, *t).simulate(&theta).unwrap().y_final;
        let mut th = theta.clone();
        (th[3], th[4]) = (x[0], x[1]);
        let fd = fd_gradients(&setup(*t, 3.0), &th, Default::default()).unwrap();
        let w = common::assert_close(
            &format!("μ_(g,e,c)({t:.3}) vs FD of the run restarted there"),
            &mu[..3],
            &fd[0][..3],
            // measured worst 6.0e-11 over the four times (at t* = 2.398)
            1.5e-9,
            1e-3,
        );
        assert!(w.is_finite());
        checked += 1;
    }
    assert_eq!(checked, 4);
}
