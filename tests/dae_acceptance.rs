//! Issue 9's acceptance "adjoint vs direct vs FD ≤ 1e-7 relative at rtol = atol = 1e-10"
//! on every new problem (rectifier_capacitor, pendulum_wall, steel_identify,
//! hysteretic_design, hysteretic_identify), through the library, entry by entry.
//!
//! * Adjoint and direct run at the problem file's tolerances (1e-10).
//! * Central FD (the library's 4th-order stencil, [`fd_gradients_with_steps`]) differences
//!   runs at 1e-12 with a step per entry: its noise is ε_sim/h, so at the file's 1e-10 no
//!   step serves every entry of the steel coupon, whose parameters span E ~ 2e5 to
//!   ε_a ~ 2e-3 (the CLI's rule 1e-4·max(1, |θ|) is 5 % of ε_a: 5.8e-6 there).
//! * Entries are relative to `max(|b_i|, floor·max|b|)`: floor 1e-6 holds every entry to
//!   1e-7 of itself; pendulum_wall's dψ/dm is 0 in exact arithmetic (direct 3e-17, FD's
//!   round-off 1.5e-11), held to 1e-7 of 1e-3 of the largest entry. The rectifier (Radau
//!   IIA) holds every entry, its smallest dψ/dφ0 at 0.2 % of the largest included.

use crate::common;

use common::{assert_close, assert_within, rel_l2};
use hybridopt::problem::Problem;
use hybridopt::sensitivity::fd_gradients_with_steps;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use std::path::Path;

fn problem(name: &str) -> Problem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("problems/{name}.toml"));
    Problem::load(&path).unwrap()
}

/// The FD step of entry j: `rel_j · |θ_j|` (1 for a zero parameter); the rectifier's
/// parameters are O(1) and take `1e-5 · max(1, |θ_j|)`.
fn steps(name: &str, names: &[String], theta: &[f64]) -> Vec<f64> {
    names
        .iter()
        .zip(theta)
        .map(|(n, &v)| {
            let rel = match name {
                // ε_a, ε_b move every reversal time: the larger step keeps noise below
                // truncation (tests/memory.rs)
                "steel_identify" if n.starts_with("eps_") => 1e-2,
                "steel_identify" => 1e-3,
                // ω multiplies t up to 5 (ωt + φ0): ψ's high derivatives in ω make the
                // truncation O(h⁴) 5e-7 at 1e-4
                "rectifier_capacitor" => return 1e-5 * v.abs().max(1.0),
                _ => 1e-4,
            };
            rel * if v == 0.0 { 1.0 } else { v.abs() }
        })
        .collect()
}

#[test]
fn adjoint_direct_and_fd_agree_entry_by_entry_on_every_dae_problem() {
    for name in [
        "rectifier_capacitor",
        "pendulum_wall",
        "steel_identify",
        "hysteretic_design",
        "hysteretic_identify",
    ] {
        // at the rtol = atol = 1e-10 (the files' own, but hysteretic_identify's
        // 1e-12, which its identification needs)
        let mut p = problem(name);
        (p.solver.rtol, p.solver.atol) = (1e-10, 1e-10);
        let s = p.setup().unwrap();
        let th = p.theta_values();
        let adj = evaluate(&s, &th, GradientMethod::Adjoint)
            .unwrap()
            .gradients[0]
            .clone();
        let dir = evaluate(&s, &th, GradientMethod::Direct).unwrap().gradients[0].clone();
        let mut tight = p.clone();
        (tight.solver.rtol, tight.solver.atol) = (1e-12, 1e-12);
        let s_fd = tight.setup().unwrap();
        let h = steps(name, &s.theta_names(), &th);
        let fd = fd_gradients_with_steps(&s_fd, &th, &h, 4).unwrap().0[0].clone();
        let floor = match name {
            // dψ/dm is 0 (m cancels from ẍ = −2xλ/m, λ ∝ m): FD of it is round-off, 1.5e-11
            // = 1e-11 of the largest entry; every other entry is ≥ 6 % of the largest
            "pendulum_wall" => 1e-3,
            _ => 1e-6,
        };
        // (adjoint per entry, FD per entry, adjoint l2, FD l2), measured (2026-12-07):
        // rectifier 2.9e-8, 2.7e-8, 2.3e-10, 3.4e-10; pendulum 1.9e-10, 1.1e-8, 3.7e-11,
        // 1.9e-10; steel 3.5e-10, 3.1e-8, 7.6e-11, 1.2e-8; design 6.8e-10, 4.3e-9, 2.8e-11,
        // 1.5e-10; identify 5.9e-10, 6.2e-10, 1.2e-10, 3.2e-11. The bounds were 1e-7, 1e-7,
        // 1e-8, 1e-7 for all (3.3× to 3,000×); now each 20–30× its own value, but never
        // above issue 9's acceptance, 1e-7 (a requirement, not a margin: the rectifier's
        // per-entry errors and the FD of the pendulum and of the coupon, whose ε_a, ε_b
        // move every reversal time, stay at it).
        let (t_adj, t_fd, t_adj_l2, t_fd_l2) = match name {
            "rectifier_capacitor" => (1e-7, 1e-7, 6e-9, 8e-9),
            "pendulum_wall" => (5e-9, 1e-7, 1e-9, 5e-9),
            "steel_identify" => (8e-9, 1e-7, 2e-9, 1e-7),
            "hysteretic_design" => (1.5e-8, 1e-7, 7e-10, 4e-9),
            _ => (1.5e-8, 1.5e-8, 3e-9, 8e-10),
        };
        assert_close(
            &format!("{name}: adjoint vs direct"),
            &adj,
            &dir,
            t_adj,
            floor,
        );
        assert_close(&format!("{name}: fd vs direct"), &fd, &dir, t_fd, floor);
        assert_within(
            &format!("{name}: ‖adjoint − direct‖/‖direct‖"),
            rel_l2(&adj, &dir),
            t_adj_l2,
        );
        assert_within(
            &format!("{name}: ‖fd − direct‖/‖direct‖"),
            rel_l2(&fd, &dir),
            t_fd_l2,
        );
    }
}
