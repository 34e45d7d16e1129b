//! Define your own hybrid system and optimize it with the library, in a few lines.
//!
//! A cart on a spring hits a wall at x = 0 and rebounds with restitution e. Choose the
//! spring stiffness k so that the cart's second impact on the wall happens at t = 2 s.
//!
//! Run: `cargo run --release --example custom_system`

use hybridopt::cost::{Objective, Term};
use hybridopt::optimize::optimize;
use hybridopt::optimize::{OptimizerSettings, ThetaEntry, Transform};
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::{c, Direction, GuardInfo, HybridSystem, ModelError, Scalar};

/// State (x, v); parameters (k, e, x0); ẍ = −k (x − 1) pulls the cart to x = 1; the wall
/// is at x = 0 (guard x, falling) and the reset is v⁺ = −e v⁻.
struct WallCart;

impl HybridSystem for WallCart {
    fn state_names(&self) -> Vec<String> {
        vec!["x".into(), "v".into()]
    }
    fn param_names(&self) -> Vec<String> {
        vec!["k".into(), "e".into(), "x0".into()]
    }
    fn guards(&self) -> Vec<GuardInfo> {
        vec![GuardInfo::new("wall", Direction::Falling)]
    }
    fn output_names(&self) -> Vec<String> {
        vec!["x".into(), "v".into()]
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![p[2], c(-3.0)])
    }
    fn flow<D: Scalar>(
        &self,
        _m: usize,
        _t: D,
        x: &[D],
        _u: &[D],
        p: &[D],
        dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = x[1];
        dx[1] = -p[0] * (x[0] - 1.0);
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0]
    }
    fn reset<D: Scalar>(
        &self,
        m: usize,
        _k: usize,
        _t: D,
        x: &[D],
        p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((m, vec![x[0], -p[1] * x[1]]))
    }
    fn outputs<D: Scalar>(
        &self,
        _m: usize,
        _t: D,
        x: &[D],
        _u: &[D],
        _p: &[D],
        out: &mut [D],
    ) -> Result<(), ModelError> {
        out.copy_from_slice(x);
        Ok(())
    }
}

fn main() -> Result<(), hybridopt::Error> {
    let sys = WallCart;
    // ψ = (t₂ − 2)²: the second impact on the wall at t = 2 s
    let cost = Objective::new(
        "timing",
        vec![Term::EventTimeSquared {
            guard: 0,
            occurrence: 2,
            target: 2.0,
            weight: 1.0,
        }],
    );
    let mut setup = Setup::new(&sys, 0.0, 4.0, None, vec![cost]);
    setup.solver.rtol = 1e-10;
    setup.solver.atol = 1e-10;

    let theta = [2.0, 0.9, 0.5];
    let ev = evaluate(&setup, &theta, GradientMethod::Adjoint)?;
    println!(
        "ψ = {:.6e}, dψ/d(k, e, x0) = {:?}",
        ev.values[0], ev.gradients[0]
    );

    // optimize k > 0 (log transform); e and x0 stay fixed
    let entry = |name: &str, value: f64, optimize: bool, lower: Option<f64>| ThetaEntry {
        name: name.into(),
        value,
        optimize,
        lower,
        upper: None,
        transform: Transform::from_bounds(lower, None, value),
    };
    let entries = [
        entry("k", 2.0, true, Some(0.0)),
        entry("e", 0.9, false, None),
        entry("x0", 0.5, false, None),
    ];
    let r = optimize(&setup, &entries, &OptimizerSettings::default(), None)?;
    println!(
        "{:?} after {} iterations: k = {:.10}, ψ = {:.3e}, second impact at t = {:.12}",
        r.outcome, r.iterations, r.theta_final[0], r.final_cost, r.last.trajectory.events[1].t
    );
    Ok(())
}
