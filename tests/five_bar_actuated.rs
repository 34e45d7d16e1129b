//! The five-bar with an actuator (`problems/five_bar_actuated.toml`: a generalized force on
//! the coordinate y2, the control channel `force_y2`; multibody/actuators.rs): the control's
//! gradient by the adjoint (the implicit VJP's `−wᵀB`) against the direct method (dual
//! numbers through the flow) and central differences, in every formulation; and the
//! time-varying LQR gains along its run with two ground impacts, at the file's tolerance
//! against a run at rtol 1e-13 (issue 46's target: ≤ 1e-7 relative).

use crate::common::{gradients_by, worst_component};
use hybridopt::feedback::tvlqr;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::GradientMethod::{Adjoint, Direct, Fd};
use nalgebra::DMatrix;
use std::path::Path;

const FILE: &str = "problems/five_bar_actuated.toml";

/// The shipped file with another formulation.
fn with_formulation(f: &str) -> Problem {
    let text = std::fs::read_to_string(FILE).unwrap().replace(
        "formulation = \"index1\"",
        &format!("formulation = \"{f}\""),
    );
    Problem::parse(&text, Path::new(FILE)).unwrap()
}

#[test]
fn the_actuator_force_gradient_adjoint_direct_and_central_differences_agree() {
    // measured worst component (floor 1e-3 of the largest) over the 8 parameters and the
    // 11 coefficients of force_y2: adjoint vs direct 1.1e-9 / 3.8e-9 / 1.1e-8, vs FD
    // 3.0e-8 / 1.9e-7 / 4.5e-6 (index1 / index2 / penalty; the penalty's FD is the least
    // accurate: its stiff term); bounds 25× those
    let bounds = [
        ("index1", 2.8e-8, 7.5e-7),
        ("index2", 9.5e-8, 4.7e-6),
        ("penalty", 2.8e-7, 1.1e-4),
    ];
    for (f, direct_tol, fd_tol) in bounds {
        let p = with_formulation(f);
        assert_eq!(p.dims.controls, ["force_y2"]);
        let setup = p.setup().unwrap();
        let theta = p.theta_values();
        let g = gradients_by(&setup, &theta, &[Adjoint, Direct, Fd]);
        let names = setup.theta_names();
        let first = names.iter().position(|n| n == "force_y2[0]").unwrap();
        // the control's part is not zero: the force moves the end
        let gu = &g[0].2[first..];
        assert!(
            gu.iter().map(|v| v.abs()).fold(0.0, f64::max) > 1e-2,
            "{gu:?}"
        );
        let (d, _) = worst_component(&g[0].2, &g[1].2, 1e-3);
        let (h, _) = worst_component(&g[0].2, &g[2].2, 1e-3);
        println!("{f}: adjoint vs direct {d:.2e}, vs FD {h:.2e}");
        assert!(d <= direct_tol, "{f}: adjoint vs direct {d:.2e}");
        assert!(h <= fd_tol, "{f}: adjoint vs FD {h:.2e}");
    }
}

#[test]
fn five_bar_gains_match_a_run_at_rtol_1e_13() {
    let p = Problem::load(Path::new(FILE)).unwrap();
    let setup = p.setup().unwrap();
    let theta = p.theta_values();
    let w = p.feedback.as_ref().unwrap().weights.clone();
    let coarse = tvlqr(&setup, &theta, &w).unwrap();
    let fine_setup = setup.to_builder().tolerances(1e-13, 1e-13).build();
    let fine = tvlqr(&fine_setup, &theta, &w).unwrap();
    let events = coarse.nominal.events.len();
    assert_eq!(events, 2, "two ground impacts of point 2 in 1.5 s");
    assert_eq!(fine.nominal.events.len(), 2);
    let (t0, t1) = (setup.t0(), setup.t_end());
    let worst = |a: &dyn Fn(f64) -> DMatrix<f64>, b: &dyn Fn(f64) -> DMatrix<f64>| {
        (0..20)
            .map(|i| t0 + (t1 - t0) * (i as f64 + 1.0 / 7.0) / 20.0)
            .map(|t| {
                let (x, y) = (a(t), b(t));
                (x - &y).norm() / y.norm()
            })
            .fold(0.0, f64::max)
    };
    let replay = worst(&|t| coarse.gain_exact(t).unwrap(), &|t| {
        fine.gain_exact(t).unwrap()
    });
    let dense = worst(&|t| coarse.gain_at(t).unwrap(), &|t| {
        fine.gain_exact(t).unwrap()
    });
    println!(
        "five-bar: {events} events; K at rtol {:.0e} vs 1e-13: replay {replay:.1e}, dense {dense:.1e}",
        setup.solver().rtol
    );
    // the target ≤ 1e-7 relative (measured 4.5e-9)
    assert!(replay <= 1e-7, "{replay:.1e} (measured 4.5e-9)");
    // the dense output (cubic between the sweep's steps; measured 3.6e-8)
    assert!(dense <= 9e-7, "{dense:.1e} (measured 3.6e-8)");
}

#[test]
fn an_actuator_on_a_coordinate_the_mechanism_lacks_is_refused_with_the_valid_names() {
    let text = std::fs::read_to_string(FILE)
        .unwrap()
        .replace("actuators = [\"y2\"]", "actuators = [\"theta\"]");
    let e = Problem::parse(&text, Path::new("fb.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("system.actuators: `theta` is not a coordinate of the mechanism; valid: x1, y1, x2, y2, x3, y3"),
        "{e}"
    );
    assert!(e.contains("(line "), "{e}");
}
