//! The GGL-stabilized index-2 formulation of the multibody module (issue 9 deliverable 5):
//! its flow keeps `Φ` and `Φ_q v` invariant (checked by differentiating them along the
//! flow in dual numbers, at inconsistent points), it reproduces index 1 on consistent data,
//! and on the five-bar and the locking pendulum its gradients agree with index 1's and
//! across adjoint, direct and central FD; the constraint drift of a run is reported.

use hybridopt::model::HybridSystem;
use hybridopt::multibody::{Formulation, MultibodySystem};
use hybridopt::output::artifacts::trajectory_table;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::sensitivity::{fd_gradients, FdOptions};
use hybridopt::systems::{FiveBar, FiveBarConfig};
use hybridopt::systems::{LockingPendulum, LockingPendulumConfig};
use hybridopt::testing::{MODE_FREE, MODE_SLIDING};
use num_dual::Dual64;
use std::path::Path;

/// A problem file with its formulation replaced and every listed parameter optimized.
fn problem(file: &str, formulation: &str, free: &[(&str, &str)]) -> Problem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(file);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text = text.replace(
        "formulation = \"index1\"",
        &format!("formulation = \"{formulation}\""),
    );
    for (from, to) in free {
        assert!(text.contains(from), "{file}: no {from}");
        text = text.replace(from, to);
    }
    Problem::parse(&text, &path).unwrap()
}

/// five_bar_seed.toml (3 objectives) with all 8 parameters optimized.
fn five_bar(formulation: &str) -> Problem {
    problem(
        "five_bar_seed.toml",
        formulation,
        &[
            (
                "L1 = { value = 2.24 }",
                "L1 = { value = 2.24, optimize = true }",
            ),
            (
                "L2 = { value = 2.06 }",
                "L2 = { value = 2.06, optimize = true }",
            ),
            (
                "m1 = { value = 1.0 }",
                "m1 = { value = 1.0, optimize = true }",
            ),
            (
                "m2 = { value = 1.5 }",
                "m2 = { value = 1.5, optimize = true }",
            ),
            (
                "m3 = { value = 1.5 }",
                "m3 = { value = 1.5, optimize = true }",
            ),
            (
                "m4 = { value = 1.0 }",
                "m4 = { value = 1.0, optimize = true }",
            ),
        ],
    )
}

/// locking_pendulum.toml with all 4 parameters optimized.
fn locking(formulation: &str) -> Problem {
    problem(
        "locking_pendulum.toml",
        formulation,
        &[
            (
                "m1 = { value = 1.0 }",
                "m1 = { value = 1.0, optimize = true }",
            ),
            (
                "m2 = { value = 1.0 }",
                "m2 = { value = 1.0, optimize = true }",
            ),
            (
                "L0 = { value = 1.0 }",
                "L0 = { value = 1.0, optimize = true }",
            ),
        ],
    )
}

/// `|a − b| / |b|`.
fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// A small deterministic generator (xorshift) for perturbed states.
struct Rng(u64);
impl Rng {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// `(dΦ/dt, d(Φ_q v)/dt)` along the flow at `x`, by one dual pass through the constraint
/// evaluation in the direction `ẋ = f(x)` (independent of the formulation's code).
fn invariant_rates<S: MultibodySystem>(sys: &S, mode: usize, x: &[f64], p: &[f64]) -> (f64, f64) {
    let mut dx = vec![0.0; x.len()];
    HybridSystem::flow(sys, mode, 0.0, x, &[], p, &mut dx).unwrap();
    let xd: Vec<Dual64> = x
        .iter()
        .zip(&dx)
        .map(|(&a, &b)| Dual64::new(a, b))
        .collect();
    let pd: Vec<Dual64> = p.iter().map(|&a| Dual64::from_re(a)).collect();
    let n = sys.mechanism().n;
    let ev = sys
        .mechanism()
        .evaluate(sys.constraints(mode), &xd[..n], &xd[n..], &pd)
        .unwrap();
    let m = |w: &[Dual64]| w.iter().fold(0.0f64, |a, d| a.max(d.eps.abs()));
    (m(&ev.phi), m(&ev.phidot))
}

#[test]
fn index2_flow_keeps_both_constraint_levels_invariant() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let fb = FiveBar::new(FiveBarConfig {
        formulation: Formulation::Index2,
        ..FiveBarConfig::default()
    })
    .unwrap();
    let p = FiveBar::default_params();
    let lp = LockingPendulum::new(LockingPendulumConfig {
        formulation: Formulation::Index2,
        ..LockingPendulumConfig::default()
    })
    .unwrap();
    let pl = LockingPendulum::default_params();
    let mut worst = (0.0f64, 0.0f64);
    let mut baseline = 0.0f64;
    for _ in 0..5 {
        // inconsistent points: Φ ≠ 0, Φ_q v ≠ 0
        let mut x: Vec<f64> = FiveBar::initial_positions()
            .iter()
            .map(|q| q + rng.uniform(-0.02, 0.02))
            .collect();
        let n = x.len();
        x.extend((0..n).map(|_| rng.uniform(-1.0, 1.0)));
        let (dphi, dphidot) = invariant_rates(&fb, 0, &x, &p);
        worst = (worst.0.max(dphi), worst.1.max(dphidot));
        // the same point under index 1 drifts at O(1): the check can fail
        let fb1 = FiveBar::new(FiveBarConfig::default()).unwrap();
        baseline = baseline.max(invariant_rates(&fb1, 0, &x, &p).0);
        for mode in [MODE_FREE, MODE_SLIDING] {
            let mut y: Vec<f64> = lp
                .initial_positions()
                .iter()
                .map(|q| q + rng.uniform(-0.02, 0.02))
                .collect();
            y.extend((0..4).map(|_| rng.uniform(-1.0, 1.0)));
            let (a, b) = invariant_rates(&lp, mode, &y, &pl);
            worst = (worst.0.max(a), worst.1.max(b));
        }
    }
    println!(
        "index 2 at inconsistent points: |dΦ/dt| ≤ {:.2e}, |d(Φ_q v)/dt| ≤ {:.2e}; index 1 |dΦ/dt| up to {baseline:.2e}",
        worst.0, worst.1
    );
    // identities up to round-off: measured 9.2e-16 and 5.3e-15 (2026-12-02; bound was
    // 1e-12), bounds 2.5e-14 and 1.5e-13 (margins 27× and 28×); index 1 measured 6.5 at the
    // same points
    assert!(worst.0 <= 2.5e-14 && worst.1 <= 1.5e-13, "{worst:?}");
    assert!(
        baseline > 1e-3,
        "index 1 should not keep Φ invariant off the manifold"
    );
}

#[test]
fn index2_equals_index1_on_consistent_data() {
    // the five-bar's initial state is consistent (Φ = 0, v = 0), and so is a state of its run
    let fb1 = FiveBar::new(FiveBarConfig::default()).unwrap();
    let fb2 = FiveBar::new(FiveBarConfig {
        formulation: Formulation::Index2,
        ..FiveBarConfig::default()
    })
    .unwrap();
    let pr = five_bar("index1");
    let s = pr.setup().unwrap();
    let th = pr.theta_values();
    let tr = s.simulate(&th).unwrap();
    let p = FiveBar::default_params();
    let x = tr.y_final[..12].to_vec(); // (q, v) of the six coordinates; the rest are cost states
    let (a1, a2) = (
        fb1.acceleration(&x, &p).unwrap(),
        fb2.acceleration(&x, &p).unwrap(),
    );
    let d =
        a1.a.iter()
            .zip(&a2.a)
            .chain(a1.qdot.iter().zip(&a2.qdot))
            .fold(0.0f64, |m, (u, v)| m.max((u - v).abs()));
    println!("five-bar at t_end: |(q̇, a)_index1 − (q̇, a)_index2| = {d:.2e}");
    // the state's own drift (|Φ| ~ 1e-11, |Φ_q v| ~ 1e-10) seen through the Baumgarte
    // gains (ω² = 100, 2ξω = 20) and η: measured 3.5e-11 (2026-12-02), margin 28×
    assert!(d <= 1e-9, "{d:e}");
}

/// Adjoint, direct and FD gradients of a problem: the worst relative differences
/// (direct vs adjoint, FD vs adjoint), per component relative to the objective's gradient
/// norm.
fn witnesses(p: &Problem) -> (Vec<Vec<f64>>, f64, f64) {
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let adj = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
    let dir = hybridopt::testing::forward_sensitivity(&s, &th).unwrap();
    let fd = fd_gradients(&s, &th, FdOptions::default()).unwrap();
    let (mut wd, mut wf) = (0.0f64, 0.0f64);
    for (i, g) in adj.gradients.iter().enumerate() {
        let gn = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        for j in 0..th.len() {
            wd = wd.max((dir.gradients[i][j] - g[j]).abs() / gn);
            wf = wf.max((fd[i][j] - g[j]).abs() / gn);
        }
    }
    (adj.gradients, wd, wf)
}

/// The worst relative difference of two gradient sets, per component relative to the
/// first's gradient norm, and per component relative to itself.
fn agreement(a: &[Vec<f64>], b: &[Vec<f64>]) -> (f64, f64) {
    let (mut wn, mut wc) = (0.0f64, 0.0f64);
    for (ga, gb) in a.iter().zip(b) {
        let gn = ga.iter().map(|v| v * v).sum::<f64>().sqrt();
        for (x, y) in ga.iter().zip(gb) {
            wn = wn.max((x - y).abs() / gn);
            wc = wc.max(rel(*y, *x));
        }
    }
    (wn, wc)
}

/// max |Φ| and max |Φ_q v| over a run of a problem.
fn drift(p: &Problem) -> (f64, f64, usize) {
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let tr = s.simulate(&th).unwrap();
    let tab = trajectory_table(&s, &tr, &th).unwrap();
    (
        tab.max_abs("phi_pos_max").unwrap(),
        tab.max_abs("phi_vel_max").unwrap(),
        tr.events.len(),
    )
}

#[test]
fn five_bar_index2_gradients_agree_with_index1_and_across_witnesses() {
    let (p1, p2) = (five_bar("index1"), five_bar("index2"));
    assert_eq!(p2.theta_values().len(), 8);
    let (g2, wd, wf) = witnesses(&p2);
    println!("five-bar index 2 (3 × 8): direct vs adjoint {wd:.2e}, FD vs adjoint {wf:.2e}");
    // at the file's tolerance (1e-10): FD measured 3.7e-9 (its default step rule); the
    // direct and adjoint passes differ by O(tol), measured 6.1e-8, which leaves no margin
    // at this tolerance, so they are held at 1e-12 below
    assert!(wf <= 1e-7, "fd {wf:e}");
    // the same witnesses at 1e-12: measured 6.8e-10 (direct) and 1.3e-10 (FD)
    let mut tight = five_bar("index2");
    (tight.solver.rtol, tight.solver.atol) = (1e-12, 1e-12);
    let (_, wd, wf) = witnesses(&tight);
    println!("five-bar index 2 at 1e-12: direct vs adjoint {wd:.2e}, FD vs adjoint {wf:.2e}");
    assert!(
        wd <= 1.5e-8 && wf <= 3e-9,
        "at 1e-12: direct {wd:e}, fd {wf:e}"
    );
    let s1 = p1.setup().unwrap();
    let g1 = evaluate(&s1, &p1.theta_values(), GradientMethod::Adjoint)
        .unwrap()
        .gradients;
    let (wn, wc) = agreement(&g1, &g2);
    println!("five-bar index 2 vs index 1: {wn:.2e} (of |∇ψ|), {wc:.2e} (per component)");
    // issue 9's bound 1e-6 per component: measured 7.3e-8 (2026-12-02)
    assert!(wc <= 1e-6, "{wc:e}");

    let (d1, d2) = (drift(&p1), drift(&p2));
    println!(
        "five-bar drift: index 1 |Φ| ≤ {:.2e}, |Φ_q v| ≤ {:.2e}; index 2 |Φ| ≤ {:.2e}, |Φ_q v| ≤ {:.2e}",
        d1.0, d1.1, d2.0, d2.1
    );
    assert_eq!(d1.2, d2.2, "same impacts");
    // measured index 2 |Φ| 3.6e-11, |Φ_q v| 2.9e-10 (index 1: 1.9e-11, 3.0e-10) (2026-12-02),
    // margins 14×, 17×
    assert!(d2.0 <= 5e-10 && d2.1 <= 5e-9, "{d2:?}");
}

#[test]
fn locking_pendulum_index2_gradients_agree_with_index1() {
    let (p1, p2) = (locking("index1"), locking("index2"));
    let (g2, wd, wf) = witnesses(&p2);
    println!("locking pendulum index 2: direct vs adjoint {wd:.2e}, FD vs adjoint {wf:.2e}");
    // measured 2.0e-10 and 3.3e-10 (2026-12-02; issue 9's bound was 1e-7), margins 25× and
    // 24×
    assert!(wd <= 5e-9 && wf <= 8e-9, "direct {wd:e}, fd {wf:e}");
    let (g1, ..) = witnesses(&p1);
    let (wn, wc) = agreement(&g1, &g2);
    println!("locking pendulum index 2 vs index 1: {wn:.2e} (of |∇ψ|), {wc:.2e} (per component)");
    let (d1, d2) = (drift(&p1), drift(&p2));
    println!(
        "locking pendulum drift: index 1 |Φ| ≤ {:.2e}, |Φ_q v| ≤ {:.2e}; index 2 |Φ| ≤ {:.2e}, |Φ_q v| ≤ {:.2e}; events {} / {}",
        d1.0, d1.1, d2.0, d2.1, d1.2, d2.2
    );
    assert!(d2.2 >= 1 && d1.2 == d2.2, "the lock happens in both");
    // measured 7.2e-11 per component
    assert!(wc <= 2e-9, "{wc:e}");
    // the drift bound covers the sliding mode after the inelastic lock (whose law puts v⁺
    // on the new set's velocity manifold): measured |Φ| 1.2e-10, |Φ_q v| 7.1e-10
    // (2026-12-02; index 1: 1.6e-11, 2.6e-10), margins 16×, 14×
    assert!(d2.0 <= 2e-9 && d2.1 <= 1e-8, "{d2:?}");
}

#[test]
fn cli_simulates_an_index2_problem_file_and_reports_its_drift() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/five_bar_seed.toml");
    let text = std::fs::read_to_string(&src)
        .unwrap()
        .replace("formulation = \"index1\"", "formulation = \"index2\"");
    assert!(text.contains("formulation = \"index2\""));
    let dir = std::env::temp_dir().join(format!("hybridopt-index2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("five_bar_index2.toml");
    std::fs::write(&file, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .arg("simulate")
        .arg(&file)
        .arg("--json")
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (p, v) = (
        json["constraints"]["position_max"].as_f64().unwrap(),
        json["constraints"]["velocity_max"].as_f64().unwrap(),
    );
    println!("CLI five-bar index 2: position_max {p:.2e}, velocity_max {v:.2e}");
    assert_eq!(json["events"].as_array().unwrap().len(), 9);
    // the same run as five_bar_index2_gradients_agree_with_index1_and_across_witnesses
    assert!(p <= 5e-10 && v <= 5e-9 && p > 0.0, "{p:e} {v:e}");
}
