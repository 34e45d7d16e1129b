//! Define your own hybrid system and optimize it with the library: the program of
//! docs/guide/library.md, "Write your own system" (the guide's copy runs as a doctest;
//! `tests/readme.rs` keeps the two equal).
//!
//! A cart on a spring hits a wall at x = 0 and rebounds with restitution e. Choose the
//! spring stiffness k so that the cart's second impact on the wall happens at t = 2 s.
//!
//! Run: `cargo run --release --example custom_system`

use hybridopt::prelude::*;

/// A cart on a spring, ẍ = −k (x − 1), hits a wall at x = 0 and rebounds: v⁺ = −e v⁻.
struct WallCart;

impl HybridSystem for WallCart {
    fn dims(&self) -> Dims {
        Dims::new(["x", "v"], ["k", "e", "x0"])
            .guards([GuardInfo::new("wall", Direction::Falling)])
            .outputs(["x", "v"])
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![p[2], c(-3.0)])
    }
    fn flow<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = x[1];
        dx[1] = -p[0] * (x[0] - 1.0);
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0]
    }
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((m, vec![x[0], -p[1] * x[1]]))
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], y: &mut [D],
    ) -> Result<(), ModelError> {
        y.copy_from_slice(x);
        Ok(())
    }
}

fn main() -> Result<(), hybridopt::Error> {
    // ψ = (t₂ − 2)²: the second impact at t = 2 s (the second event of any guard)
    let cost = Objective::new(
        "timing",
        vec![Term::squared(
            Quantity::EventTime {
                guard: EventGuard::Any,
                occurrence: 2,
            },
            2.0,
            1.0,
        )],
    );
    let setup = Setup::builder(&WallCart)
        .horizon(0.0, 4.0)
        .objective(cost)
        .tolerances(1e-10, 1e-10)
        .build();

    // ψ and dψ/dθ by the adjoint, with two witnesses and τ = dt_e/dθ of every impact
    let options = EvaluateOptions::new(GradientMethod::Adjoint)
        .witnesses(&[GradientMethod::Direct, GradientMethod::Fd])
        .fd_step(1e-4)
        .with_tau();
    let ev = evaluate_with(&setup, &[2.0, 0.9, 0.5], &options)?;
    println!(
        "ψ = {:.6e}, dψ/d(k, e, x0) = {:.6?}",
        ev.values[0], ev.gradients[0]
    );
    for w in &ev.witnesses {
        println!(
            "  {} differs by {:.1e}",
            w.method.name(),
            w.max_relative_difference
        );
        assert!(w.max_relative_difference < 1e-6);
    }
    println!(
        "τ of the 2nd impact = {:.6?}",
        ev.tau.as_ref().expect("asked for")[1].tau
    );

    // L-BFGS on k > 0 (the bound is honoured); e and x0 stay fixed
    let theta = [
        ThetaEntry::free("k", 2.0).with_bounds(Some(0.0), None),
        ThetaEntry::fixed("e", 0.9),
        ThetaEntry::fixed("x0", 0.5),
    ];
    let r = optimize(&setup, &theta, &OptimizerSettings::default(), None)?;
    println!("{r}");
    println!(
        "k = {:.10}, second impact at t = {:.12}",
        r.theta_final[0], r.last.trajectory.events[1].t
    );
    assert_eq!(r.outcome, Outcome::Converged);
    Ok(())
}
