//! The command line, end to end: every shipped problem through `optimize` (both solvers)
//! and `gradient --method all`, the JSON shapes, and bad input (clear message, non-zero
//! exit, no panic, no results written).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hybridopt"))
}

fn tmpdir(tag: &str) -> PathBuf {
    common::scratch("cli", tag, true)
}

fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn problems() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("problems"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            // periodic-orbit problems have no cost to optimize: tests/periodic_cli.rs
            // runs each of them through `hybridopt periodic`
            .filter(|p| {
                !std::fs::read_to_string(p)
                    .unwrap()
                    .lines()
                    .any(|l| l.trim() == "[periodic]")
            })
            .collect();
    v.sort();
    v
}

/// Per shipped problem: the tolerances of the exact witnesses (direct, dual) and of FD
/// against the adjoint, per component relative to max(|g_i|, 1e-3·max|g|), from the worst
/// component measured (margin 20–30×, re-based for issue 49; FD with its default step
/// rule), and GD's expected outcome: whether it converges within its iteration limit,
/// |ψ_GD − ψ_L-BFGS| and the final gradient norm (each 20–30× its measured value).
struct Expect {
    exact: f64,
    fd: f64,
    gd_converges: bool,
    gd_gap: f64,
    gd_grad: f64,
}

fn expect(stem: &str) -> Expect {
    let e = |exact, fd, gd_converges, gd_gap, gd_grad| Expect {
        exact,
        fd,
        gd_converges,
        gd_gap,
        gd_grad,
    };
    match stem {
        // measured 2026-12-07 (`cargo test --release --test suite cli::every_shipped --
        // --nocapture`); the comment keeps the bound each one replaced where it moved.
        // exact 5.6e-11, fd 5.4e-9; GD stops at 100 iterations: gap 5.8e-5, |g| 2.2e-3
        // (were 1e-9, 1e-7, 2e-4, 1e-2)
        "ball_identify" => e(1.4e-9, 1.3e-7, false, 1.4e-3, 5.5e-2),
        // exact 5.0e-8 (dual), fd 5.7e-8; GD: gap 2.7e-15, |g| 1.3e-9 (were 3e-7, 1.5e-6,
        // 1e-14, 2e-8)
        "biped_damping" => e(1.2e-6, 1.4e-6, true, 6.5e-14, 3e-8),
        // direct 2.7e-8 (a kink: dual and FD are not compared); GD at the kink stops at 100
        // iterations: gap 2.3e-4, |g| 3.0e-4 (the min-norm element need not vanish) (were
        // 2e-7, 6e-4, 1e-3)
        "biped_damping_symmetric" => e(6.5e-7, f64::NAN, false, 5.5e-3, 7.5e-3),
        // exact 1.3e-11, fd 1.3e-10; GD: gap 3.3e-16, |g| 1.2e-8 (were 1e-14, 1e-7)
        "bouncing_ball" => e(3e-10, 3e-9, true, 8e-15, 2.8e-7),
        // the same system as expressions: the same figures
        "custom_ball" => e(3e-10, 3e-9, true, 8e-15, 2.8e-7),
        // exact 7.4e-11, fd 4.3e-10 (large higher derivatives in the thresholds: a fixed
        // step 1e-4·max(1, |θ|) gave 3.5e-7); GD: gap 8.9e-15, |g| 5.2e-7 (were 2e-9,
        // 3e-14, 5e-6)
        "custom_thermostat" => e(1.8e-9, 1e-8, true, 2.2e-13, 1.3e-5),
        // exact 7.6e-9, fd 8.5e-9; GD: gap 8.7e-15, |g| 1.5e-10 (were 2e-7, 3e-14, 5e-9)
        "five_bar_identify" => e(1.8e-7, 2e-7, true, 2.2e-13, 3.6e-9),
        // exact 5.6e-8, fd 4.0e-9; GD: gap 2.8e-14, |g| 2.8e-8 (were 1e-6, 1e-13, 5e-7)
        "five_bar_seed" => e(1.4e-6, 1e-7, true, 6.5e-13, 6.5e-7),
        // exact 2.0e-8, fd 1.8e-8; GD stops at 100 iterations but at the optimum: gap
        // 5.2e-14, |g| 4.7e-10 (were 2e-13, 1e-8)
        "five_bar_stiffness" => e(5e-7, 4.5e-7, false, 1.3e-12, 1.2e-8),
        // the actuated five-bar (k1 and the 11 force coefficients): exact 3.3e-9 (direct
        // 1.1e-9), fd 3.0e-8; GD stops at 100 iterations: gap 5.1e-4, |g| 1.9e-4 (were
        // 1.5e-3, 4e-3)
        "five_bar_actuated" => e(8e-8, 7.5e-7, false, 1.2e-2, 4.5e-3),
        // exact 4.7e-15, fd 8.8e-12; GD: gap 5.8e-21, |g| exactly 0 (GD stops where the
        // computed gradient vanishes; the bound is ψ's round-off scale) (were 1e-13, 2e-10,
        // 2e-20)
        "impact_timing" => e(1.1e-13, 2.2e-10, true, 1.4e-19, 1e-14),
        // exact 7.2e-11, fd 2.0e-11; GD: gap 2.2e-21, |g| 3.1e-13 (were 2e-9, 1e-20, 1e-11)
        "locking_pendulum" => e(1.8e-9, 5e-10, true, 5.5e-20, 7.5e-12),
        // exact 1.0e-11, fd 3.9e-8 (a fixed step 1e-4·max(1, |θ|): 3.4e-9); GD stops at
        // 500 iterations: gap 1.9e-3, |g| 5.9e-4 (were 3e-10, 5e-3, 2e-3)
        "thrust_control" => e(2.5e-10, 1e-6, false, 4.5e-2, 1.4e-2),
        // the same problem with a [feedback] table (tests/feedback_track.rs, feedback_cli.rs)
        "thrust_feedback" => e(2.5e-10, 1e-6, false, 4.5e-2, 1.4e-2),
        // index-2 DAE with an implicit transition: exact 1.9e-10, fd 1.0e-9; GD: gap
        // 1.8e-13, |g| 6.3e-7 (were 5e-9, 3e-8, 5e-13, 2e-6)
        "pendulum_wall" => e(4.5e-9, 2.5e-8, true, 4.5e-12, 1.5e-5),
        // index-1 DAE, stiff, Radau IIA: exact 5.0e-8 (the dual), fd 3.7e-8; GD stops at 50
        // iterations: gap 3.3e-7 (DOPRI5), |g| 1.0e-4 (were 3e-6, 2e-7, 1e-6, 1e-3)
        "rectifier_capacitor" => e(1.2e-6, 9e-7, false, 8e-6, 2.5e-3),
        // exact 8.5e-10, fd 2.9e-7 (dψ/dε_b; the simulation's noise at rtol 1e-10 bounds
        // every step: fixed steps do no better than ~1e-7 on all entries at once). The FD
        // bound is 10×: a fixed step 1e-4·max(1, |θ|), 5 % of ε_a = 0.002, gave 5.8e-6 and
        // must fail it. GD stops at 100 iterations: gap 1.0e-4, |g| 7.8e-2 (were 1e-8,
        // 3e-4, 0.3)
        "steel_identify" => e(2e-8, 3e-6, false, 2.5e-3, 1.9),
        // exact 6.8e-10, fd 2.4e-9; GD: gap 8.9e-14, |g| 1.3e-6 (were 1e-8, 5e-8, 1e-12,
        // 2e-5)
        "hysteretic_design" => e(1.7e-8, 6e-8, true, 2.2e-12, 3.3e-5),
        // the file at 1e-12: exact 9.8e-12, fd 5.6e-11; GD stops at 100 iterations: gap
        // 6.7e-4, |g| 3.6e-2 (at 1e-10) (were 1e-8, 1.5e-9, 2e-3, 0.15)
        "hysteretic_identify" => e(2.4e-10, 1.4e-9, false, 1.7e-2, 0.9),
        // 5 storeys, 16 parameters, 45 events: exact 4.9e-10, fd 2.9e-9; GD stops at 100
        // iterations: gap 3.1e-5, |g| 4.0e-2 (were 1e-8, 7e-8, 1e-4, 0.5)
        "shear_frame_design" => e(1.2e-8, 7e-8, false, 7.5e-4, 1.0),
        // constrained problems (SQP; the GD fields are not used): the cost ∫u² (thrust)
        // or t_end (min time) has a zero θ-gradient at the start, so the witnesses agree
        // exactly there (the zero-gradient check below); tests/constrained.rs witnesses
        // their constraint Jacobians
        "thrust_constrained" | "thrust_path" | "thrust_min_time" => e(1e-12, 1e-12, true, 0.0, 0.0),
        // exact 3.3e-8, fd 3.3e-8 (were 1e-6)
        "five_bar_constrained" => e(8e-7, 8e-7, true, 0.0, 0.0),
        // multiple shooting (the GD fields are not used); its single-shooting gradient over
        // 30 s of chaotic motion: direct 5.5e-8, dual 3.2e-8 (was 2e-7); central
        // differences at the rule's step land in other impact sequences on 4 of 8 entries
        // (errors 0.79–0.94: the rugged cost single shooting cannot descend), so FD is not
        // a witness here
        "impact_pendulum_identify" => e(1.4e-6, f64::NAN, true, 0.0, 0.0),
        // multiple shooting, periodic: the effort's gradient is zero at u = 0 (the
        // witnesses agree exactly there, FD 7e-23)
        "compass_gait_periodic_walk" => e(1e-12, 1e-12, true, 0.0, 0.0),
        // the same gait with a [feedback] table (tests/feedback_cli.rs runs `feedback`)
        "compass_gait_feedback" => e(1e-12, 1e-12, true, 0.0, 0.0),
        // data fits (Gauss–Newton; the GD fields are not used): direct 1.4e-15, dual
        // 4.9e-15, fd 3.0e-11 (were 1e-12, 3e-9)
        "vibrating_table_short" => e(1.2e-13, 7.5e-10, true, 0.0, 0.0),
        // the first experiment's gradient: direct 1.9e-15, dual 3.7e-15, fd 3.3e-11 (were
        // 1e-12, 3e-9)
        "vibrating_table_two_experiments" => e(9e-14, 8e-10, true, 0.0, 0.0),
        // multiple shooting on the data; its single-shooting gradient over 14 s of chaotic
        // motion (25 impacts, entries up to 6e15): dual vs adjoint 1.0e-8 (the run's
        // round-off amplified by the chaos; direct 1.1e-12); central differences land in
        // other impact sequences (the FD column was off by orders of magnitude), so FD is
        // no witness (was 3e-7)
        "vibrating_table_identify" => e(2.5e-7, f64::NAN, true, 0.0, 0.0),
        other => panic!("{other}: a new shipped problem: measure its witnesses and add it here"),
    }
}

/// Whether two events of different guards fall at the same time (within 1e-10) in the
/// reported event list: a simultaneous crossing, the only place a kink can be. Among the
/// shipped problems this is the symmetric biped drop (level, at x0 = 0), which the test
/// asserts by name as well.
fn has_simultaneous_events(g: &serde_json::Value) -> bool {
    let ev = g["events"].as_array().unwrap();
    ev.iter().enumerate().any(|(i, a)| {
        ev[i + 1..].iter().any(|b| {
            a["guard"] != b["guard"]
                && (a["t"].as_f64().unwrap() - b["t"].as_f64().unwrap()).abs() <= 1e-10
        })
    })
}

#[test]
fn every_shipped_problem_optimizes_and_gradients_agree() {
    let problems = problems();
    assert!(problems.len() >= 4, "shipped problems: {problems:?}");
    for p in problems {
        let ps = p.to_str().unwrap();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        if single_shooting_fails_at_start(&stem) {
            // its start θ walks one step only, so a single run cannot evaluate the
            // constraints: `gradient` must say which firing is missing (tests/shooting.rs
            // witnesses the multiple-shooting Jacobian at this start)
            expect_failure(
                &["gradient", ps, "--json"],
                "occurrence 2 of guard 'heel_strike'",
            );
            shooting_problem_optimizes(&p, &stem);
            continue;
        }
        let want = expect(&stem);
        // gradient --method all: adjoint, direct and dual agree; FD to FD accuracy
        let g = json(&run(&["gradient", ps, "--method", "all", "--json"]));
        let adj = g["witnesses"]["adjoint"].as_object().unwrap();
        // At a kink (a simultaneous event whose crossing orders' gradients differ) no
        // gradient exists: adjoint and direct agree on the recorded order's piece, and the
        // report must say so and give one-sided derivatives; dual and FD differences are
        // not gradients there (tests/simultaneous.rs checks the one-sided derivatives).
        // The flag is not trusted to switch the witnesses off: it must be raised exactly
        // where the event list shows a simultaneous crossing, which among the shipped
        // problems is the symmetric drop only (the others' dampings are not symmetric or
        // their crossings are single).
        let kink = g["nonsmooth"] == true;
        let simultaneous = has_simultaneous_events(&g);
        assert_eq!(
            kink, simultaneous,
            "{ps}: nonsmooth flag vs coincident events"
        );
        assert_eq!(
            simultaneous,
            stem == "biped_damping_symmetric",
            "{ps}: only the symmetric drop has simultaneous events"
        );
        if kink {
            assert!(
                g["one_sided"].as_object().is_some_and(|o| !o.is_empty()),
                "{ps}: no one-sided derivatives"
            );
            assert!(g["events"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["saltations"].as_array().is_some_and(|a| a.len() >= 2)));
        }
        let witnesses: &[&str] = if kink {
            &["direct"]
        } else if want.fd.is_nan() {
            &["direct", "dual"]
        } else {
            &["direct", "dual", "fd"]
        };
        let names: Vec<&String> = adj.keys().collect();
        let a: Vec<f64> = names.iter().map(|k| adj[*k].as_f64().unwrap()).collect();
        for &m in witnesses {
            let w = g["witnesses"][m].as_object().unwrap();
            let b: Vec<f64> = names.iter().map(|k| w[*k].as_f64().unwrap()).collect();
            let tol = if m == "fd" { want.fd } else { want.exact };
            if a.iter().all(|&v| v == 0.0) {
                // a gradient that is zero at the start (the constrained thrust problems'
                // ∫u² at u = 0, a final-time cost): the witnesses' absolute values
                // measured at most 1.0e-22 (FD; direct and dual exactly 0) (2026-12-07; the
                // bound was 1e-15)
                let worst = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                common::assert_within(&format!("{stem}: {m} of a zero gradient"), worst, 2.5e-21);
                continue;
            }
            // tolerances: see `expect`
            common::assert_close(&format!("{stem}: {m} vs adjoint"), &b, &a, tol, 1e-3);
        }
        assert!(g["timing"]["forward_s"].as_f64().unwrap() > 0.0);
        assert!(g["stats"]["steps"].as_u64().unwrap() > 0);
        if stem.starts_with("vibrating_table") {
            data_fit_optimizes(&p, &stem);
            continue;
        }
        if std::fs::read_to_string(&p)
            .unwrap()
            .lines()
            .any(|l| l.trim() == "[shooting]")
        {
            shooting_problem_optimizes(&p, &stem);
            continue;
        }
        if g.get("constraints").is_some() {
            constrained_problem_optimizes(&p, &stem);
            continue;
        }
        let mut lbfgs_cost = f64::NAN;
        for solver in ["lbfgs", "gd"] {
            let out = tmpdir(&format!(
                "{}-{solver}",
                p.file_stem().unwrap().to_string_lossy()
            ));
            let o = run(&[
                "optimize",
                ps,
                "--solver",
                solver,
                "--quiet",
                "--json",
                "--out",
                out.to_str().unwrap(),
            ]);
            let s = json(&o);
            // structural: a descent method never ends above its start (1e-12 relative
            // round-off of ψ)
            assert!(
                s["final_cost"].as_f64().unwrap()
                    <= s["initial_cost"].as_f64().unwrap() * (1.0 + 1e-12),
                "{ps} {solver}: cost rose"
            );
            for f in [
                "summary.json",
                "history.csv",
                "trajectory.csv",
                "trajectory_initial.csv",
                "convergence.png",
                "convergence.svg",
                "trajectory.png",
                "trajectory.svg",
            ] {
                assert!(out.join(f).exists(), "{ps} {solver}: {f} missing");
            }
            let cost = s["final_cost"].as_f64().unwrap();
            if solver == "lbfgs" {
                assert_eq!(
                    s["converged"], true,
                    "{ps}: L-BFGS did not converge: {}",
                    s["termination"]
                );
                lbfgs_cost = cost;
            } else {
                // GD is held to its measured outcome: converged or not as pinned, its
                // cost within the measured gap of L-BFGS's optimum, its gradient norm
                // below the measured value with margin (see `expect`)
                let gnorm = s["final_gradient_norm"].as_f64().unwrap();
                let gap = (cost - lbfgs_cost).abs();
                println!("{stem} gd: gap to L-BFGS {gap:.2e}, |g| {gnorm:.2e}");
                assert_eq!(
                    s["converged"] == true,
                    want.gd_converges,
                    "{ps}: GD: {}",
                    s["termination"]
                );
                assert!(
                    gap <= want.gd_gap,
                    "{ps}: GD ends {gap:e} from L-BFGS's optimum"
                );
                assert!(
                    gnorm <= want.gd_grad,
                    "{ps}: GD's final gradient norm {gnorm:e}"
                );
            }
        }
    }
}

/// A multiple-shooting problem: it converges with every gap closed (≤ 1e-9), reports its
/// nodes and writes its results; `--solver` and `--starts` are refused; single shooting
/// from the same start ends at a higher cost (the reason the file uses multiple
/// shooting), or for a periodic problem, the state returns after the closing event.
/// A data fit: Gauss–Newton by default, converged in ≤ 10 iterations (measured 7 and 6;
/// issue 45's criterion) to a zero-residual fit of the exact records (Σr² measured 6.6e-19,
/// 9.6e-21 and, by multiple shooting, 1.8e-20), with its statistics and the fit's files;
/// several experiments refuse another solver.
fn data_fit_optimizes(p: &Path, stem: &str) {
    let ps = p.to_str().unwrap();
    let out = tmpdir(&format!("{stem}-fit"));
    let s = json(&run(&[
        "optimize",
        ps,
        "--quiet",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(s["solver"], "gauss_newton", "{ps}");
    assert_eq!(s["converged"], true, "{ps}: {}", s["termination"]);
    // the chaotic record by multiple shooting: ≤ 20 iterations (measured 5) and gaps ≤ 1e-8
    // (issue 45's criteria; the gap measured 1.1e-13, so 3e-12 caps it)
    let budget = if s.get("shooting").is_some() { 20 } else { 10 };
    assert!(
        s["iterations"].as_u64().unwrap() <= budget,
        "{ps}: {}",
        s["iterations"]
    );
    if let Some(gap) = s["shooting"]["max_defect"].as_f64() {
        assert!(gap <= 3e-12, "{ps}: continuity gap {gap:e}");
    }
    // measured at most 6.6e-19 (2026-12-07; the bound was 1e-12)
    assert!(
        s["final_cost"].as_f64().unwrap() <= 1.6e-17,
        "{ps}: {}",
        s["final_cost"]
    );
    let st = &s["least_squares"]["statistics"];
    assert!(
        st["parameters"].as_array().unwrap().len() == 2,
        "{ps}: {st}"
    );
    for f in ["summary.json", "residuals.csv", "fit.png", "residuals.png"] {
        assert!(out.join(f).exists(), "{ps}: {f} missing");
    }
    if stem.contains("experiments") {
        expect_failure(&["optimize", ps, "--solver", "lbfgs"], "gauss_newton only");
    }
}

fn shooting_problem_optimizes(p: &Path, stem: &str) {
    let ps = p.to_str().unwrap();
    let out = tmpdir(&format!("{stem}-ms"));
    let s = json(&run(&[
        "optimize",
        ps,
        "--quiet",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(s["converged"], true, "{ps}: {}", s["termination"]);
    assert_eq!(s["globalization"], globalization(p), "{ps}");
    let sh = &s["shooting"];
    let gap = sh["max_defect"].as_f64().unwrap();
    // the continuity rows are the SQP's constraints, held to its stop tolerance (measured
    // at most 8.4e-12, the four-step walk; 1.8e-15 the periodic walks)
    assert!(gap <= 1e-9, "{ps}: continuity gap {gap:e}");
    assert!(sh["nodes"].as_array().unwrap().len() >= 2);
    for f in [
        "summary.json",
        "history.csv",
        "trajectory.csv",
        "convergence.png",
    ] {
        assert!(out.join(f).exists(), "{ps}: {f} missing");
    }
    let history = std::fs::read_to_string(out.join("history.csv")).unwrap();
    assert!(history.lines().next().unwrap().ends_with(",defect"));
    expect_failure(&["optimize", ps, "--solver", "lbfgs"], "--solver");
    expect_failure(&["optimize", ps, "--starts", "2"], "--starts");
    if let Some(c) = sh["closure"].as_object() {
        // a periodic problem (single shooting without the closing is another problem):
        // the state after the closing event returns to the start, and the multipliers
        // are reported (measured residual 5.6e-16, 2026-12-07; 2.9e-14 before the trust
        // region's last change; the bound was 1e-10)
        let residual = c["residual"].as_f64().unwrap();
        println!(
            "{stem}: periodicity residual {residual:.1e}, multipliers {}",
            c["multipliers"]
        );
        assert!(
            residual <= 1.5e-14,
            "{ps}: periodicity residual {residual:e}"
        );
        assert!(
            c["multipliers"].as_array().unwrap().len() == sh["states"].as_array().unwrap().len()
        );
        return;
    }
    // the solver's stop tolerance (measured 9.1e-13, the four-step walk; 0 the fit)
    let violation = s["max_violation"].as_f64().unwrap_or(0.0);
    assert!(
        violation <= 1e-9,
        "{ps}: constraint violation {violation:e}"
    );
    if single_shooting_fails_at_start(stem) {
        expect_failure(
            &["optimize", ps, "--single-shooting", "--quiet"],
            "fired 1 time(s)",
        );
        return;
    }
    let single_out = tmpdir(&format!("{stem}-ss"));
    let single = json(&run(&[
        "optimize",
        ps,
        "--single-shooting",
        "--quiet",
        "--json",
        "--out",
        single_out.to_str().unwrap(),
    ]));
    let (ms, ss) = (
        s["final_cost"].as_f64().unwrap(),
        single["final_cost"].as_f64().unwrap(),
    );
    println!("{stem}: multiple shooting ψ {ms:.3e}, single shooting ψ {ss:.3e}");
    assert!(
        ss > ms + 1e-3,
        "{ps}: single shooting {ss} vs multiple {ms}"
    );
    expect_failure(&["optimize", ps, "--solver", "lbfgs"], "--solver");
    expect_failure(&["optimize", ps, "--starts", "2"], "--starts");
}

/// Shipped problems whose start θ single shooting cannot evaluate: the four-step walk
/// (the gait's torques from another start strike once in 3.2 s; its constraints need the
/// second to fourth heel strikes).
fn single_shooting_fails_at_start(stem: &str) -> bool {
    stem == "compass_gait_four_steps"
}

/// The SQP's globalization `summary.json` must report for the problem file `p`.
fn globalization(p: &Path) -> &'static str {
    let text = std::fs::read_to_string(p).unwrap();
    if text.contains("globalization = \"trust_region\"") {
        "trust_region"
    } else {
        "line_search"
    }
}

/// A constrained problem: the SQP converges (KKT residual and violation ≤ 1e-8), writes
/// its results, and `--solver` (the unconstrained solvers' flag) is refused.
fn constrained_problem_optimizes(p: &Path, stem: &str) {
    let ps = p.to_str().unwrap();
    let out = tmpdir(&format!("{stem}-sqp"));
    let s = json(&run(&[
        "optimize",
        ps,
        "--quiet",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(s["solver"], "sqp", "{ps}");
    assert_eq!(s["globalization"], globalization(p), "{ps}");
    assert_eq!(s["converged"], true, "{ps}: {}", s["termination"]);
    let kkt = s["kkt_residual"].as_f64().unwrap();
    let viol = s["max_violation"].as_f64().unwrap();
    println!("{stem}: KKT residual {kkt:.2e}, largest violation {viol:.2e}");
    // the SQP's own stop tolerance (measured at most 6.6e-9 and 7.9e-11, five_bar_constrained)
    assert!(
        kkt <= 1e-8 && viol <= 1e-8,
        "{ps}: KKT {kkt:e}, violation {viol:e}"
    );
    for c in s["constraints"].as_array().unwrap() {
        for k in [
            "name",
            "kind",
            "value",
            "lower",
            "upper",
            "violation",
            "multiplier",
            "active",
        ] {
            assert!(c.get(k).is_some(), "{ps}: constraint without `{k}`");
        }
    }
    for f in [
        "summary.json",
        "history.csv",
        "trajectory.csv",
        "convergence.png",
        "trajectory.png",
    ] {
        assert!(out.join(f).exists(), "{ps}: {f} missing");
    }
    let history = std::fs::read_to_string(out.join("history.csv")).unwrap();
    assert!(
        history.lines().next().unwrap().ends_with(",max_violation"),
        "{ps}"
    );
    let o = run(&["optimize", ps, "--solver", "gd", "--quiet"]);
    assert!(
        !o.status.success(),
        "{ps}: --solver gd on a constrained problem"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--solver") && err.contains("constrain"),
        "{err}"
    );
}

#[test]
fn impact_timing_reaches_the_closed_form() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/impact_timing.toml");
    let closed = |g: f64, e: f64, y0: f64, ts: f64| {
        let k = 1.0 + 2.0 * e + 2.0 * e * e;
        (k * (g * g * ts * ts - 2.0 * g * y0 * (k * k - 1.0)).sqrt() - g * ts) / (k * k - 1.0)
    };
    // the formula against its value computed once: measured 1.1e-15 (the bound was 1e-14)
    assert!((closed(9.81, 0.8, 1.0, 2.0) - 1.4888570341923754).abs() < 3e-14);
    for (e, y0) in [(0.8, 1.0), (0.7, 1.5), (0.9, 0.5)] {
        let out = tmpdir(&format!("impact-{e}-{y0}"));
        let s = json(&run(&[
            "optimize",
            p.to_str().unwrap(),
            "--param",
            &format!("e={e}"),
            "--param",
            &format!("y0={y0}"),
            "--quiet",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]));
        let v0 = s["parameters_final"]["v0"].as_f64().unwrap();
        let want = closed(9.81, e, y0, 2.0);
        // measured 2.2e-10 (e = 0.8, y0 = 1), 1.2e-12, 4.3e-14 (2026-12-02), margin 22×
        assert!(
            ((v0 - want) / want).abs() <= 5e-9,
            "e={e} y0={y0}: {v0} vs {want}"
        );
        assert_eq!(s["converged"], true);
        // pinned (measured 2026-12-02: 5, 7, 4 iterations for the three cases); ±1 allows
        // for a last-digit change in the line search, anything more is a change of the
        // optimizer: look, then update these numbers deliberately
        let want_iters = match (e, y0) {
            (0.8, 1.0) => 5,
            (0.7, 1.5) => 7,
            _ => 4,
        };
        let iters = s["iterations"].as_u64().unwrap() as i64;
        assert!(
            (iters - want_iters).abs() <= 1,
            "e={e} y0={y0}: {iters} iterations, pinned {want_iters}"
        );
    }
}

#[test]
fn identification_recovers_the_true_parameters() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/ball_identify.toml");
    let out = tmpdir("identify");
    let s = json(&run(&[
        "optimize",
        p.to_str().unwrap(),
        "--quiet",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    let e = s["parameters_final"]["e"].as_f64().unwrap();
    let c = s["parameters_final"]["c"].as_f64().unwrap();
    // measured 7.7e-9 (e) and 1.35e-7 (c) relative (2026-12-02), margins 26× and 22×
    assert!(((e - 0.9) / 0.9).abs() <= 2e-7, "e = {e}");
    assert!(((c - 0.2) / 0.2).abs() <= 3e-6, "c = {c}");
}

#[test]
fn adjoint_and_fd_lead_to_the_same_optimum() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/bouncing_ball.toml");
    let mut v = Vec::new();
    for g in ["adjoint", "fd"] {
        let out = tmpdir(&format!("same-{g}"));
        let s = json(&run(&[
            "optimize",
            p.to_str().unwrap(),
            "--gradient",
            g,
            "--quiet",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]));
        v.push(s["parameters_final"]["v0"].as_f64().unwrap());
    }
    // measured 9.3e-11 relative (2026-12-02), margin 21×
    assert!((v[0] - v[1]).abs() <= 2e-9 * v[0].abs(), "{v:?}");
}

#[test]
fn simulate_and_gradient_json_shapes() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/bouncing_ball.toml");
    let out = tmpdir("sim");
    let s = json(&run(&[
        "simulate",
        p.to_str().unwrap(),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(s["stats"]["events"], 7);
    assert_eq!(s["events"].as_array().unwrap().len(), 7);
    assert_eq!(s["events"][0]["guard"], "ground");
    assert!(s["final"]["outputs"]["y"].is_number());
    // structural: the run ends exactly at t_end (measured 0)
    assert!((s["final"]["t"].as_f64().unwrap() - 3.0).abs() < 1e-12);
    assert!(out.join("trajectory.csv").exists() && out.join("trajectory.png").exists());
    let g = json(&run(&[
        "gradient",
        p.to_str().unwrap(),
        "--param",
        "e=0.85",
        "--param",
        "c=0.15",
        "--repeat",
        "3",
        "--tau",
        "--json",
    ]));
    assert!(g["cost"].is_number());
    assert_eq!(g["gradient"].as_object().unwrap().len(), 5);
    assert!(g["events"][0]["dt_dp"]["y0"].is_number());
    assert!(g["timing"]["gradient_s"].as_f64().unwrap() > 0.0);
}

fn expect_failure(args: &[&str], needle: &str) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: message {err:?} lacks {needle:?}"
    );
}

const GOOD: &str = r#"
[system]
kind = "bouncing_ball"
[simulation]
t_end = 3.0
rtol = 1e-8
atol = 1e-8
[parameters]
g  = { value = 9.81 }
e  = { value = 0.8 }
c  = { value = 0.1 }
y0 = { value = 1.0 }
v0 = { value = 0.0, optimize = true }
[[cost]]
kind = "integral_squared"
output = "y"
target = 0.0
"#;

#[test]
fn bad_problem_files_are_rejected_clearly_and_write_nothing() {
    let dir = tmpdir("bad");
    let cases: Vec<(String, &str)> = vec![
        (
            GOOD.replace("[simulation]", "[simulation]\nfoo = 1"),
            "unknown field `foo`",
        ),
        (GOOD.replace("t_end = 3.0", "t_end = \"three\""), "t_end"),
        (GOOD.replace("[[cost]]", "[[cost]"), "line"),
        (
            GOOD.replace("c  = { value = 0.1 }", "c  = { value = \"x\" }"),
            "parameters.c.value: invalid type",
        ),
        (
            GOOD.replace(
                "v0 = { value = 0.0, optimize = true }",
                "v0 = { value = 0.0, optimize = true, lower = 2.0, upper = 1.0 }",
            ),
            "inverted",
        ),
        (
            GOOD.replace(
                "v0 = { value = 0.0, optimize = true }",
                "v0 = { value = 5.0, optimize = true, lower = 0.0, upper = 1.0 }",
            ),
            "outside its bounds",
        ),
        (GOOD.replace("rtol = 1e-8", "rtol = -1e-8"), "rtol"),
        (
            GOOD.replace("output = \"y\"", "output = \"height\""),
            "output `height` is unknown",
        ),
        (GOOD.replace("t_end = 3.0", "t_end = 0.0"), "t_end"),
        (
            format!("{GOOD}\n[optimizer]\nsolver = \"newton\"\n"),
            "solver = \"newton\" is unknown",
        ),
        (
            GOOD.replace("kind = \"bouncing_ball\"", "kind = \"rocket\""),
            "unknown system kind",
        ),
        (
            GOOD.replace(
                "g  = { value = 9.81 }",
                "g  = { value = 9.81 }\nmass = { value = 1.0 }",
            ),
            "`mass` is not a parameter",
        ),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let f = dir.join(format!("bad{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let out = dir.join(format!("out{i}"));
        expect_failure(
            &[
                "optimize",
                f.to_str().unwrap(),
                "--quiet",
                "--out",
                out.to_str().unwrap(),
            ],
            needle,
        );
        expect_failure(
            &[
                "simulate",
                f.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            needle,
        );
        assert!(!out.exists(), "case {i}: results were written");
        // the file is named in the message
        let o = run(&["gradient", f.to_str().unwrap()]);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(&format!("bad{i}.toml")),
            "case {i}: file not named"
        );
    }
    // CLI-level errors
    let good = dir.join("good.toml");
    std::fs::write(&good, GOOD).unwrap();
    expect_failure(
        &["gradient", dir.join("missing.toml").to_str().unwrap()],
        "missing.toml",
    );
    expect_failure(
        &["gradient", good.to_str().unwrap(), "--param", "mass=1"],
        "unknown parameter",
    );
    expect_failure(
        &["gradient", good.to_str().unwrap(), "--param", "e"],
        "NAME=VALUE",
    );
    expect_failure(
        &["gradient", good.to_str().unwrap(), "--param", "e=abc"],
        "not a number",
    );
    expect_failure(
        &["optimize", good.to_str().unwrap(), "--solver", "newton"],
        "newton",
    );
    // an earlier good result survives a failed run
    let out = dir.join("keep");
    let s = run(&[
        "optimize",
        good.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(s.status.success());
    let before = std::fs::read(out.join("summary.json")).unwrap();
    let bad = dir.join("bad0.toml");
    expect_failure(
        &[
            "optimize",
            bad.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
        "foo",
    );
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
}

#[test]
fn help_on_every_command() {
    for c in ["simulate", "gradient", "optimize", "bderiv", "systems"] {
        let o = run(&[c, "--help"]);
        assert!(o.status.success());
        assert!(String::from_utf8_lossy(&o.stdout).contains("Usage"));
    }
}

/// `optimize --starts N` on a constrained problem: every start runs the SQP, the best is the
/// lowest cost among the starts that meet the constraints. The thrust problem's local
/// optima (one per control interval an impact falls in) are found from 4 starts; the
/// lowest equals IPOPT's search over the intervals (benches/peers: 13.625586953240372).
#[test]
fn constrained_multi_start_finds_the_lowest_local_optimum() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/thrust_constrained.toml");
    let out = tmpdir("thrust-starts");
    let s = json(&run(&[
        "optimize",
        p.to_str().unwrap(),
        "--starts",
        "4",
        "--quiet",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(s["solver"], "sqp");
    assert_eq!(s["converged"], true, "{}", s["termination"]);
    let j = s["final_cost"].as_f64().unwrap();
    let ipopt = 13.625586953240372;
    println!(
        "best of 4 starts: {j} (IPOPT {ipopt}, relative {:.2e})",
        (j - ipopt).abs() / ipopt
    );
    // measured 7e-14 relative (the bound was 1e-11)
    assert!((j - ipopt).abs() <= 2e-12 * ipopt, "{j}");
    let costs = s["multi_start"]["final_costs"].as_array().unwrap();
    assert_eq!(costs.len(), 4);
    assert!(costs.iter().all(|c| c.as_f64().unwrap() >= j - 1e-12));
}
