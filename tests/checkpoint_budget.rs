//! Memory flat in the horizon (issue 47): the direct method keeps nothing a step, and the
//! adjoint's forward run keeps its interpolants within a budget, replaying the rest from
//! checkpoints, with the same gradients as a run that keeps everything — on the five-bar,
//! whose contacts make events (9 in its 5 s, 90 in 50 s).

use hybridopt::integrate::{Checkpointing, Trajectory};
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::Builtin;
use std::path::Path;

fn five_bar_seed(t_end: f64) -> Problem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/five_bar_seed.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("t_end = 5.0"));
    let text = text.replace("t_end = 5.0", &format!("t_end = {t_end:.1}"));
    Problem::parse(&text, &path).unwrap()
}

/// Bytes of interpolants a run holds.
fn dense_bytes(traj: &Trajectory) -> usize {
    traj.segments.iter().map(|s| s.dense_bytes()).sum()
}

/// Steps a run holds as interpolants, and as checkpointed (replayable) steps.
fn held_steps(traj: &Trajectory) -> (usize, usize) {
    let dense = traj.segments.iter().map(|s| s.steps.len()).sum();
    let windowed = traj
        .segments
        .iter()
        .flat_map(|s| &s.windows)
        .map(|w| w.h.len())
        .sum();
    (dense, windowed)
}

fn with_keep<'a>(setup: &Setup<'a, Builtin>, keep: Checkpointing) -> Setup<'a, Builtin> {
    setup.to_builder().checkpointing(keep).build()
}

#[test]
fn the_direct_method_keeps_nothing_a_step_and_its_gradient_is_unchanged() {
    for t_end in [5.0, 50.0] {
        let prob = five_bar_seed(t_end);
        let setup = prob.setup().unwrap();
        let theta = prob.theta_values();
        let ev = evaluate(&setup, &theta, GradientMethod::Direct).unwrap();
        let traj = &ev.trajectory;
        assert!(traj.events.len() >= 9, "{t_end}: events");
        // no interpolant and no checkpointed step: each segment keeps its starting state
        assert_eq!(held_steps(traj), (0, 0), "t_end {t_end}");
        assert!(traj.segments.iter().all(|s| s.windows.len() == 1));
        assert!(!traj.is_replayable());
        // the same run as the one keeping its dense output: the same gradient, bit for bit
        let dense = hybridopt::testing::forward_sensitivity(&setup, &theta).unwrap();
        assert!(dense.trajectory.is_dense());
        assert_eq!(ev.gradients, dense.gradients, "t_end {t_end}");
        assert_eq!(ev.values, dense.values, "t_end {t_end}");
        let tau: Vec<_> = ev.tau.as_ref().unwrap().iter().map(|e| &e.tau).collect();
        let tau_dense: Vec<_> = dense.events.iter().map(|e| &e.tau).collect();
        assert_eq!(tau, tau_dense, "t_end {t_end}: τ");
    }
}

#[test]
fn the_adjoint_under_tiny_budgets_equals_the_adjoint_on_kept_dense_output() {
    let prob = five_bar_seed(5.0);
    let setup = prob.setup().unwrap();
    let theta = prob.theta_values();
    let never = with_keep(&setup, Checkpointing::Never);
    let dense = never.simulate_for_adjoint(&theta).unwrap();
    let (g_dense, st_dense) =
        hybridopt::testing::adjoint_gradients(&never, &dense, &theta).unwrap();
    let all = dense_bytes(&dense);
    for keep in [
        Checkpointing::budget_mb(0.0).unwrap(),
        Checkpointing::Budget {
            budget_bytes: 20_000,
            every: 4,
        },
        Checkpointing::Budget {
            budget_bytes: all / 3,
            every: 32,
        },
        Checkpointing::Budget {
            budget_bytes: all / 3,
            every: 5,
        },
    ] {
        let s = with_keep(&setup, keep);
        let traj = s.simulate_for_adjoint(&theta).unwrap();
        assert_eq!(traj.stats, dense.stats, "{keep:?}: the same forward run");
        let (kept, windowed) = held_steps(&traj);
        assert_eq!(kept + windowed, dense.stats.steps, "{keep:?}");
        let Checkpointing::Budget { budget_bytes, .. } = keep else {
            unreachable!()
        };
        // the interpolants held stay within the budget (the checkpoints' bytes come out
        // of it too)
        assert!(
            dense_bytes(&traj) <= budget_bytes,
            "{keep:?}: {} bytes of interpolants",
            dense_bytes(&traj)
        );
        let (g, st) = hybridopt::testing::adjoint_gradients(&s, &traj, &theta).unwrap();
        println!(
            "{keep:?}: {kept} interpolants kept of {} steps ({} of {all} bytes), {} replayed",
            dense.stats.steps,
            dense_bytes(&traj),
            st.replayed_steps
        );
        assert!(st.replayed_steps >= windowed && windowed > 0, "{keep:?}");
        assert_eq!(
            st.steps, st_dense.steps,
            "{keep:?}: the same backward steps"
        );
        // replay reproduces the forward run's interpolants bit for bit: the gradients are
        // the same numbers (measured difference 0, 2026-12-07; kept 0, 0, 251 and 258 of
        // the 1,016 steps, replayed 1,016, 1,016, 765 and 758)
        assert_eq!(g, g_dense, "{keep:?}");
    }
}

/// The interpolants held by the adjoint's forward run do not grow with the horizon past
/// the budget: 1 MiB holds the 5 s run whole and caps the 20 s and 50 s runs (measured
/// 2026-12-07: 1,016 of 1,016 steps kept, 715,264 bytes; 1,348 of 4,042, 948,992 bytes;
/// 1,092 of 10,099, 768,768 bytes: the checkpoints of the longer run take the room).
#[test]
fn the_adjoint_runs_memory_is_flat_in_the_horizon() {
    let budget = 1 << 20;
    let keep = Checkpointing::Budget {
        budget_bytes: budget,
        every: 32,
    };
    let mut held = Vec::new();
    for t_end in [5.0, 20.0, 50.0] {
        let prob = five_bar_seed(t_end);
        let setup = with_keep(&prob.setup().unwrap(), keep);
        let traj = setup.simulate_for_adjoint(&prob.theta_values()).unwrap();
        let (kept, windowed) = held_steps(&traj);
        let bytes = dense_bytes(&traj);
        println!(
            "t_end {t_end}: {} steps, {kept} kept ({bytes} bytes), {windowed} checkpointed",
            traj.stats.steps
        );
        assert!(bytes <= budget, "t_end {t_end}: {bytes} bytes");
        held.push((traj.stats.steps, bytes, windowed));
    }
    assert_eq!(held[0].2, 0, "the 5 s run fits: nothing to replay");
    // past the budget the interpolants held shrink as the checkpoints grow: the 50 s
    // run (≈10,000 steps) holds no more than the 20 s run (≈4,000)
    assert!(held[2].0 > 2 * held[1].0);
    assert!(held[2].1 <= held[1].1, "{held:?}");
}

#[test]
fn memory_budget_flag_takes_megabytes_and_rejects_what_is_not_one() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/five_bar_seed.toml");
    let run = |budget: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hybridopt"))
            .arg("gradient")
            .arg(&file)
            .args(["--json", "--no-tau", &format!("--memory-budget={budget}")])
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap()
    };
    for bad in ["-1", "NaN", "1e7", "inf"] {
        let out = run(bad);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--memory-budget {bad} accepted");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains("--memory-budget")
                && err.contains("a number of megabytes in [0, 1000000]"),
            "--memory-budget {bad}: {err}"
        );
    }
    let gradient = |budget: &str| {
        let out = run(budget);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v["gradient"].clone(),
            v["work"]["adjoint"]["replayed_steps"].as_u64().unwrap(),
        )
    };
    let (g_none, replayed_none) = gradient("0");
    let (g_all, replayed_all) = gradient("16");
    assert_eq!(replayed_all, 0, "16 MB holds the 5 s run");
    assert!(
        replayed_none > 1000,
        "0 MB replays every step: {replayed_none}"
    );
    assert_eq!(g_none, g_all, "the same gradient");
}
