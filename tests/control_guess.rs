//! `[controls] guess`: control coefficients started from a CSV column (Schoenberg's
//! variation-diminishing fit at the Greville abscissae, `ControlGrid::greville`), checked
//! against a previous run's coefficients (reproduced exactly on the same grid), against
//! the fit's linear precision on every basis, and its errors.

use crate::common;
use hybridopt::control::{Basis, ControlGrid};
use hybridopt::prelude::*;
use std::path::{Path, PathBuf};

fn tmpdir(name: &str) -> PathBuf {
    common::scratch("control-guess", name, true)
}

/// The thrust problem (one control channel `thrust`) on `basis` with 10 intervals over its
/// horizon, its controls started from `table` (written beside the problem file).
fn thrust_with_guess(basis: &str, table: &str, dir: &Path) -> Result<Problem, Error> {
    let path = Path::new("problems/thrust_control.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let at = text.find("[controls]").expect("a [controls] table");
    let end = at + text[at..].find("\n\n").unwrap_or(text.len() - at);
    let controls = format!(
        "[controls]\nbasis = \"{basis}\"\nintervals = 10\nguess = \"guess.csv\"\n\
         channels = {{ thrust = {{ initial = 0.0, lower = -50.0, upper = 50.0 }} }}"
    );
    let text = format!("{}{controls}{}", &text[..at], &text[end..]);
    std::fs::write(dir.join("guess.csv"), table).unwrap();
    let file = dir.join("problem.toml");
    std::fs::write(&file, &text).unwrap();
    Problem::parse(&text, &file)
}

/// The coefficients of the problem's control channel and its grid.
fn coefficients(p: &Problem) -> (Vec<f64>, ControlGrid) {
    let grid = p
        .setup()
        .unwrap()
        .controls()
        .cloned()
        .expect("a control grid");
    let c = p
        .theta
        .iter()
        .filter(|e| e.name.starts_with("thrust["))
        .map(|e| e.value)
        .collect();
    (c, grid)
}

/// A straight column v(t) = 3 + 2t is fitted exactly away from the ends on every basis:
/// the control u(t) = Σ c_k φ_k(t) equals it (piecewise linear and cubic B-spline:
/// everywhere their Greville abscissae are not clamped; piecewise constant: at the
/// interval midpoints).
#[test]
fn a_straight_column_is_fitted_exactly() {
    let dir = tmpdir("line");
    let mut table = String::from("t,thrust\n");
    for i in 0..=400 {
        let t = -0.5 + 0.01 * i as f64;
        table.push_str(&format!("{t},{}\n", 3.0 + 2.0 * t));
    }
    for basis in ["piecewise_constant", "piecewise_linear", "cubic_bspline"] {
        let p = thrust_with_guess(basis, &table, &dir).unwrap();
        let (c, grid) = coefficients(&p);
        let h = (grid.t1 - grid.t0) / grid.intervals as f64;
        let mut worst: f64 = 0.0;
        for i in 0..grid.intervals {
            // the cubic B-spline's first and last coefficients sit at clamped abscissae:
            // its two outer intervals on each side are not a straight line
            if basis == "cubic_bspline" && (i < 2 || i + 2 >= grid.intervals) {
                continue;
            }
            for s in [0.25, 0.5, 0.75] {
                if basis == "piecewise_constant" && s != 0.5 {
                    continue;
                }
                let t = grid.t0 + h * (i as f64 + s);
                let mut u = [0.0];
                grid.values(i, t, &c, &mut u);
                worst = worst.max((u[0] - (3.0 + 2.0 * t)).abs());
            }
        }
        eprintln!(
            "{basis}: {} coefficients, worst |u − v| {worst:.1e}",
            c.len()
        );
        assert!(worst <= 1e-12, "{basis}: {worst}");
    }
}

/// The four-step walk's torque starts as the shipped periodic gait's, step after step: on
/// the same 0.05 s grid the fit returns the gait's optimized coefficients (from its
/// `results/…/summary.json`) to the table's 12 digits, those on the bound −40 moved
/// 10⁻⁹ of the range inside it.
#[test]
fn a_previous_runs_torque_is_reproduced_on_the_same_grid() {
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("results/compass_gait_periodic_walk/summary.json").unwrap(),
    )
    .unwrap();
    let gait = |k: usize| {
        summary["parameters_final"][format!("hip[{k}]")]
            .as_f64()
            .unwrap()
    };
    let path = Path::new("problems/compass_gait_four_steps.toml");
    let p = Problem::parse(&std::fs::read_to_string(path).unwrap(), path).unwrap();
    let hip: Vec<f64> = p
        .theta
        .iter()
        .filter(|e| e.name.starts_with("hip["))
        .map(|e| e.value)
        .collect();
    assert_eq!(hip.len(), 65);
    let mut worst: f64 = 0.0;
    for (k, &c) in hip.iter().enumerate() {
        // 15 intervals a step of 0.75 s; the walk's t = 3.2 is 4 intervals into step 5
        let want = gait(k % 15).clamp(-40.0 + 80e-9, 40.0 - 80e-9);
        worst = worst.max((c - want).abs());
    }
    eprintln!("four-step torque vs the gait's coefficients: worst {worst:.1e}");
    assert!(worst <= 1e-9, "{worst}");
    assert!(
        hip.iter().any(|&c| c == -40.0 + 80e-9),
        "a coefficient on the bound"
    );
}

/// Errors name the file, the key and what would be valid.
#[test]
fn a_bad_control_guess_is_an_error_naming_the_file() {
    let dir = tmpdir("bad");
    let cases = [
        ("t,thrust\n0,1\n", "must cover the control grid"),
        (
            "t,push\n0,1\n10,1\n",
            "no column named after a control channel (thrust)",
        ),
        ("t,thrust\n0,1\n5,x\n10,1\n", "line 3, column `thrust`"),
        ("t,thrust\n0,1\n10,600\n", "is above the upper bound 50"),
        ("t,thrust\n5,1\n0,1\n", "goes back in time"),
        ("thrust\n1\n", "no column `t`"),
        // a header alone (this panicked before the table checked its rows)
        ("t,thrust\n", "no rows below the header"),
    ];
    for (table, needle) in cases {
        let e = thrust_with_guess("piecewise_linear", table, &dir)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(needle) && e.contains("guess.csv") && e.contains("guess"),
            "{table:?}: {e}"
        );
    }
    let p = thrust_with_guess("piecewise_linear", "t,thrust\n0,1\n10,1\n", &dir).unwrap();
    assert!(coefficients(&p).0.iter().all(|&c| c == 1.0));
    // the basis is the grid's
    assert_eq!(coefficients(&p).1.basis, Basis::PiecewiseLinear);
}
