//! The JSON the command line prints is a contract: these tests pin the field names of
//! `simulate --json`, `gradient --json`, `summary.json` (and `optimize --json`, with
//! `multi_start`), `periodic --json`, `animation.json`, `sweep --json` and `systems --json`. A field may be
//! added (then added here and in docs/guide/results.md), never renamed or dropped.

use crate::common;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn problem(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"))
        .to_string_lossy()
        .into_owned()
}

fn tmpdir(tag: &str) -> PathBuf {
    common::scratch("contract", tag, false)
}

fn run_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

/// The object's keys are exactly `want`.
fn pinned(what: &str, v: &Value, want: &[&str]) {
    let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
    let got = keys(v);
    let dropped: Vec<_> = want.difference(&got).collect();
    let added: Vec<_> = got.difference(&want).collect();
    assert!(
        dropped.is_empty() && added.is_empty(),
        "{what}: dropped {dropped:?}, new (pin and document them) {added:?}"
    );
}

const EVENT: &[&str] = &["t", "guard", "mode_before", "mode_after"];
const STATS: &[&str] = &["steps", "rejected", "events", "rhs_evals"];

#[test]
fn simulate_json_fields() {
    let out = tmpdir("sim");
    let o = out.to_str().unwrap();
    let s = run_json(&["simulate", &problem("bouncing_ball"), "--json", "--out", o]);
    pinned("simulate", &s, &["stats", "events", "final", "costs"]);
    pinned("simulate.stats", &s["stats"], STATS);
    pinned("simulate.events[]", &s["events"][0], EVENT);
    pinned("simulate.final", &s["final"], &["t", "outputs"]);
    pinned("simulate.costs", &s["costs"], &["cost"]);
    // the file is the same report
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("simulation.json")).unwrap())
            .unwrap();
    assert_eq!(file, s);
    let m = run_json(&[
        "simulate",
        &problem("locking_pendulum"),
        "--json",
        "--out",
        o,
    ]);
    pinned(
        "simulate (multibody)",
        &m,
        &["stats", "events", "final", "costs", "constraints"],
    );
    pinned(
        "simulate.constraints",
        &m["constraints"],
        &["position_max", "velocity_max"],
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn gradient_json_fields() {
    let g = run_json(&[
        "gradient",
        &problem("bouncing_ball"),
        "--method",
        "all",
        "--json",
    ]);
    let top = [
        "cost",
        "gradient",
        "witnesses",
        "objectives",
        "events",
        "stats",
        "timing",
        "work",
        "tau_from",
        "tolerances",
        "memory",
        "fd_error_estimate",
        "fd_step",
    ];
    pinned("gradient", &g, &top);
    // FD's error estimate and step by parameter name, as the gradient is
    for f in ["fd_error_estimate", "fd_step"] {
        pinned(
            &format!("gradient.{f}"),
            &g[f],
            &["g", "e", "c", "y0", "v0"],
        );
    }
    pinned(
        "gradient.witnesses",
        &g["witnesses"],
        &["adjoint", "direct", "fd", "dual"],
    );
    pinned(
        "gradient.objectives.cost",
        &g["objectives"]["cost"],
        &["cost", "gradient"],
    );
    let mut ev = EVENT.to_vec();
    ev.push("dt_dp");
    pinned("gradient.events[]", &g["events"][0], &ev);
    pinned("gradient.stats", &g["stats"], STATS);
    pinned(
        "gradient.timing",
        &g["timing"],
        &[
            "forward_s",
            "gradient_s",
            "methods",
            "repeat",
            "forward_from",
            "wall_s",
        ],
    );
    let mut work = STATS.to_vec();
    work.push("replayed_steps");
    pinned("gradient.work.adjoint", &g["work"]["adjoint"], &work);
    pinned("gradient.tolerances", &g["tolerances"], &["rtol", "atol"]);
    assert_eq!(g["tau_from"], "direct");
    // --no-tau at a simultaneous touchdown: no τ, the crossing orders and one-sided
    // derivatives instead
    let s = run_json(&[
        "gradient",
        &problem("biped_damping_symmetric"),
        "--no-tau",
        "--json",
    ]);
    // (the adjoint alone: no FD estimate)
    let mut top: Vec<&str> = top
        .iter()
        .copied()
        .filter(|k| !["tau_from", "fd_error_estimate", "fd_step"].contains(k))
        .collect();
    top.extend(["nonsmooth", "one_sided", "pieces_max_relative_difference"]);
    pinned("gradient (simultaneous)", &s, &top);
    let mut ev = EVENT.to_vec();
    ev.extend(["simultaneous", "saltations"]);
    pinned("gradient.events[] (simultaneous)", &s["events"][0], &ev);
    pinned(
        "gradient.events[].saltations[]",
        &s["events"][0]["saltations"][0],
        &["order", "matrix"],
    );
    pinned(
        "gradient.one_sided.beta",
        &s["one_sided"]["beta"],
        &["plus", "minus"],
    );
    // --method direct alone: τ from its run, forward time from a separate loop; a τ pass
    // after an adjoint (--tau) adds tau_s
    let d = run_json(&[
        "gradient",
        &problem("impact_timing"),
        "--method",
        "direct",
        "--json",
    ]);
    assert_eq!(d["timing"]["forward_from"], "simulate");
    let a = run_json(&["gradient", &problem("impact_timing"), "--tau", "--json"]);
    assert_eq!(a["tau_from"], "direct_pass");
    assert!(a["timing"]["tau_s"].as_f64().is_some_and(|t| t > 0.0));
    // a custom system adds its compilation to machine code (`timing.compile_s`)
    let c = run_json(&["gradient", &problem("custom_ball"), "--json"]);
    assert!(
        c["timing"]["compile_s"].as_f64().is_some_and(|t| t > 0.0),
        "{}",
        c["timing"]
    );
}

const SUMMARY: &[&str] = &[
    "problem",
    "solver",
    "gradient",
    "termination",
    "outcome",
    "converged",
    "iterations",
    "evaluations",
    "cost_evaluations",
    "gradient_evaluations",
    "initial_cost",
    "final_cost",
    "parameters_initial",
    "parameters_final",
    "optimized",
    "final_gradient_norm",
    "restarts",
    "kinks_met",
    "final_kink",
    "wall_time_s",
    "events",
];

#[test]
fn summary_json_fields() {
    let out = tmpdir("opt");
    let o = out.to_str().unwrap();
    let s = run_json(&[
        "optimize",
        &problem("impact_timing"),
        "--quiet",
        "--json",
        "--out",
        o,
    ]);
    pinned("summary", &s, SUMMARY);
    pinned("summary.events[]", &s["events"][0], EVENT);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    pinned("summary.json", &file, SUMMARY);
    let m = run_json(&[
        "optimize",
        &problem("impact_timing"),
        "--quiet",
        "--json",
        "--starts",
        "2",
        "--jobs",
        "1",
        "--range",
        "v0=0:2",
        "--out",
        o,
    ]);
    let mut with = SUMMARY.to_vec();
    with.push("multi_start");
    pinned("summary (--starts)", &m, &with);
    pinned(
        "summary.multi_start",
        &m["multi_start"],
        &[
            "starts",
            "seed",
            "ranges",
            "best_start",
            "failed",
            "final_costs",
            "outcomes",
        ],
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn periodic_animate_and_sweep_json_fields() {
    let out = tmpdir("per");
    let o = out.to_str().unwrap();
    let p = run_json(&[
        "periodic",
        &problem("simplest_walker"),
        "--continue",
        "gamma=0.009:0.011:3",
        "--json",
        "--out",
        o,
    ]);
    pinned(
        "periodic",
        &p,
        &[
            "fixed_point",
            "period",
            "multipliers",
            "monodromy_multipliers",
            "stable",
            "stability",
            "spectral_radius",
            "residual",
            "newton_iterations",
            "residual_history",
            "events",
            "free",
            "section_jacobian",
            "sensitivities",
            "continuation",
            "section",
        ],
    );
    pinned(
        "periodic.continuation",
        &p["continuation"],
        &["param", "points", "bifurcations", "stopped"],
    );
    let a = run_json(&[
        "animate",
        &problem("bouncing_ball"),
        "--fps",
        "5",
        "--json",
        "--out",
        o,
    ]);
    pinned("animate", &a, &["animation", "fps", "events", "wall_s"]);
    pinned(
        "animate.animation",
        &a["animation"],
        &["frames", "width", "height", "delay_cs", "speed"],
    );
    pinned("animate.events[][]", &a["events"][0][0], EVENT);
    let w = run_json(&[
        "sweep",
        &problem("impact_timing"),
        "--grid",
        "v0=0.2:1.0:3",
        "--jobs",
        "1",
        "--quiet",
        "--json",
        "--out",
        o,
    ]);
    pinned(
        "sweep",
        &w,
        &[
            "problem",
            "points",
            "total_points",
            "failed",
            "shard",
            "best",
            "out",
            "jobs",
            "wall_time_s",
        ],
    );
    pinned("sweep.best", &w["best"], &["index", "cost", "parameters"]);
    let _ = std::fs::remove_dir_all(&out);
}

/// `hybridopt systems --json` lists every built-in kind (all of `KINDS` but `custom`) with
/// its interface, and every parameter has its default.
#[test]
fn systems_lists_every_builtin() {
    let v = run_json(&["systems", "--json"]);
    let list = v.as_array().expect("a list");
    let kinds: BTreeSet<String> = list
        .iter()
        .map(|s| s["kind"].as_str().unwrap().to_string())
        .collect();
    let want: BTreeSet<String> = hybridopt::systems::KINDS
        .iter()
        .filter(|k| **k != "custom")
        .map(|k| k.to_string())
        .collect();
    assert_eq!(kinds, want);
    for s in list {
        pinned(
            "systems[]",
            s,
            &[
                "kind",
                "states",
                "parameters",
                "controls",
                "modes",
                "guards",
                "outputs",
            ],
        );
        for p in s["parameters"].as_array().unwrap() {
            pinned("systems[].parameters[]", p, &["name", "default"]);
            assert!(p["default"].is_number(), "{}: {p}", s["kind"]);
        }
        for g in s["guards"].as_array().unwrap() {
            pinned(
                "systems[].guards[]",
                g,
                &["name", "direction", "terminal", "modes"],
            );
            let d = g["direction"].as_str().unwrap();
            assert!(["falling", "rising", "either"].contains(&d), "{d}");
            assert!(!g["modes"].as_array().unwrap().is_empty(), "{g}");
        }
        assert!(!s["states"].as_array().unwrap().is_empty());
    }
    // the defaults are the values of a problem file that lists them: the ball's
    let ball = list.iter().find(|s| s["kind"] == "bouncing_ball").unwrap();
    let d: Vec<f64> = ball["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["default"].as_f64().unwrap())
        .collect();
    assert_eq!(d, [9.81, 0.8, 0.1, 1.0, 0.0]);
    // one kind, and the terminal listing names each guard's direction
    let one = run_json(&["systems", "five_bar", "--json"]);
    assert_eq!(one.as_array().unwrap().len(), 1);
    let text = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .arg("systems")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    for k in &want {
        assert!(text.contains(k.as_str()), "{k}");
    }
    assert!(text.contains("ground (falling"), "{text}");
    let bad = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(["systems", "nope"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("valid kinds"));
}
