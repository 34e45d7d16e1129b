//! Multiple shooting on measured data (optimize/shooting/fit/): the residuals' and the
//! continuity gaps' exact Jacobians against central differences, and a fit that recovers
//! the parameters of an independently generated record — the ball on the vibrating table
//! of problems/vibrating_table_identify.toml (exact heights from mpmath,
//! problems/data/vibrating_table.py), over its first 2 s (4 impacts) with 8 segments.

use crate::common::{assert_close, scratch};
use hybridopt::optimize::{optimize_shooting_fit, shooting_fit_point, FitRun};
use hybridopt::prelude::*;
use std::path::Path;

/// The vibrating table over [0, 2] with the record's first 201 rows, starting from
/// e = 0.80, A = 0.14 (truth 0.85, 0.13), 8 even segments.
fn table_problem(dir: &Path) -> Problem {
    let data = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/data/vibrating_table.csv"),
    )
    .unwrap();
    let head: Vec<&str> = data.lines().take(202).collect();
    std::fs::write(dir.join("table.csv"), head.join("\n") + "\n").unwrap();
    let text = r#"
name = "table_fit"
[system]
kind = "custom"
states = ["y", "v"]
parameters = ["g", "e", "A", "omega", "y0", "v0"]
initial = { y = "y0", v = "v0" }
outputs = [{ name = "y", expr = "y" }]
[[system.modes]]
name = "flight"
flow = { y = "v", v = "-g" }
guards = [
  { name = "table", expr = "y - A*sin(omega*t)", direction = "falling", reset = { v = "(1 + e)*A*omega*cos(omega*t) - e*v" } },
]
[simulation]
t_end = 2.0
rtol = 1e-12
atol = 1e-12
h_max = 0.02
[parameters]
g     = { value = 9.81 }
e     = { value = 0.80, optimize = true, lower = 0.5, upper = 0.99 }
A     = { value = 0.14, optimize = true, lower = 0.05, upper = 0.3 }
omega = { value = 12.5 }
y0    = { value = 0.2 }
v0    = { value = 0.0 }
[[cost]]
kind = "data"
file = "table.csv"
sigma = { y = 1e-3 }
[shooting]
segments = 8
"#;
    Problem::parse(text, &dir.join("table_fit.toml")).unwrap()
}

/// J = ∂r/∂w and C = ∂c/∂w at the start (θ off, the node states from the data, gaps
/// open) against central differences of r and c, column by column.
#[test]
fn shooting_fit_jacobians_against_central_differences() {
    let dir = scratch("shooting_fit", "jacobian", true);
    let p = table_problem(&dir);
    let setup = p.setup().unwrap();
    let runs = [FitRun {
        name: "table".into(),
        setup: setup.clone(),
        theta: p.theta_values(),
    }];
    let shooting = p.shooting.clone().unwrap();
    let (names, w, lin) = shooting_fit_point(&runs, &p.theta, &shooting, None, true).unwrap();
    // e, A and 7 interior nodes of (y, v)
    assert_eq!(names.len(), 2 + 7 * 2, "{names:?}");
    let (jr, jc) = (lin.jr.unwrap(), lin.jc.unwrap());
    assert_eq!(jc.nrows(), 7 * 2);
    assert_eq!(jr.nrows(), 201);
    for k in 0..w.len() {
        let h = 1e-6 * w[k].abs().max(0.1);
        let at = |s: f64| {
            let mut x = w.clone();
            x[k] += s * h;
            shooting_fit_point(&runs, &p.theta, &shooting, Some(&x), false)
                .unwrap()
                .2
        };
        let (plus, minus) = (at(1.0), at(-1.0));
        let fd_r = (&plus.r - &minus.r) / (2.0 * h);
        let fd_c = (&plus.c - &minus.c) / (2.0 * h);
        // measured ≤ 1.4e-8 (residual columns) and ≤ 7.4e-9 (gap columns) on the first 10
        // columns; a gap entry that is exactly 0 came out of central differences as 1.3e-8
        // (the runs' noise over h): the gap columns (entries of order 1, ±1 on the nodes'
        // own states) are compared relative to their largest entry (floor 1)
        assert_close(
            &format!("∂r/∂{}", names[k]),
            jr.column(k).as_slice(),
            fd_r.as_slice(),
            1e-6,
            1e-3,
        );
        assert_close(
            &format!("∂c/∂{}", names[k]),
            jc.column(k).as_slice(),
            fd_c.as_slice(),
            1e-6,
            1.0,
        );
    }
}

/// The fit recovers e and A from the exact record (−5.9 % and +7.7 % off at the start)
/// with the gaps closed.
#[test]
fn shooting_fit_recovers_the_table() {
    let dir = scratch("shooting_fit", "fit", true);
    let p = table_problem(&dir);
    let setup = p.setup().unwrap();
    let runs = [FitRun {
        name: "table".into(),
        setup: setup.clone(),
        theta: p.theta_values(),
    }];
    let shooting = p.shooting.clone().unwrap();
    let r = optimize_shooting_fit(&runs, &p.theta, &shooting, &p.optimizer).unwrap();
    assert!(r.converged(), "{r}");
    let (e, a) = (r.theta_final[1], r.theta_final[2]);
    let gap = r.shooting.as_ref().unwrap().max_defect;
    println!(
        "measured: {} iterations, e − 0.85 = {:.2e}, A − 0.13 = {:.2e}, gap {gap:.2e}",
        r.iterations,
        e - 0.85,
        a - 0.13
    );
    // measured 4 iterations, |Δe|/e 2.0e-15, |ΔA|/A 8.5e-16, gap 1.2e-14 (the record is
    // noise-free: the truth is the exact fit); bounds 25× (were 20 iterations, 1e-7, 1e-7,
    // 1e-9), the iterations 2×
    assert!(r.iterations <= 8, "{} iterations", r.iterations);
    assert!((e / 0.85 - 1.0).abs() < 5e-14, "e = {e}");
    assert!((a / 0.13 - 1.0).abs() < 2.5e-14, "A = {a}");
    assert!(gap < 3e-13, "gap {gap:e}");
    let stats = r
        .least_squares
        .as_ref()
        .unwrap()
        .statistics
        .as_ref()
        .unwrap();
    assert_eq!(stats.parameters.len(), 2);
}
