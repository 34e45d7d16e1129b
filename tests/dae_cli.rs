//! Bad DAE input through the command line (issue 9): inconsistent initial algebraic values
//! (`[system] initial_algebraic`), a singular `k_z` (the rectifier at r = 0) and a singular
//! `k_y f_z` (the pendulum at L = 0) each end `simulate`, `gradient` and `optimize` with
//! the typed error's message — time, mode and the residual or pivot — exit code 1, and no
//! results folder. A transition whose Newton iteration fails has no built-in system to
//! reach it from a problem file; `tests/dae.rs` checks its typed error through the library.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmpdir(tag: &str) -> PathBuf {
    common::scratch("dae-cli", tag, true)
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("problems/{name}.toml"))
}

/// The rectifier's problem file with `initial_algebraic = { … }` in its `[system]` table.
fn rectifier_with(dir: &Path, z0: &str) -> PathBuf {
    let text = std::fs::read_to_string(shipped("rectifier_capacitor")).unwrap();
    let text = text.replacen(
        "kind = \"rectifier\"",
        &format!("kind = \"rectifier\"\ninitial_algebraic = {z0}"),
        1,
    );
    let path = dir.join("rectifier_z0.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `command problem extra… --out DIR` and checks exit 1, the message's parts and that
/// DIR was not written.
fn fails(dir: &Path, command: &str, problem: &Path, extra: &[&str], needles: &[&str]) {
    let out = dir.join(format!("out-{command}-{}", extra.join("_")));
    let mut args = vec![command, problem.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", out.to_str().unwrap()]);
    if command == "optimize" {
        args.push("--quiet");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(&args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{args:?}: {err}");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{args:?}: exit code; stderr {err}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` missing from: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(!out.exists(), "{args:?}: {} was written", out.display());
}

#[test]
fn bad_dae_input_exits_1_with_time_mode_and_residual_and_writes_nothing() {
    let dir = tmpdir("bad");
    // i_D(0) = V sin φ0 / r = 29.552…: 5 leaves k = r i_D − (v_s − v_C) = −0.2455
    let bad = rectifier_with(&dir, "{ iD = 5.0 }");
    for command in ["simulate", "gradient", "optimize"] {
        fails(
            &dir,
            command,
            &bad,
            &[],
            &[
                "inconsistent initial values in mode 'on' at t = 0",
                "residual 2.455",
            ],
        );
        fails(
            &dir,
            command,
            &shipped("rectifier_capacitor"),
            &["--param", "r=0"],
            &["k_z", "singular in mode 'on' at t = 0", "pivot"],
        );
        fails(
            &dir,
            command,
            &shipped("pendulum_wall"),
            &["--param", "L=0"],
            &["k_y f_z", "singular in mode 'default' at t = 0", "pivot"],
        );
    }
    // a name the system does not have: the file, the key and the valid names
    let unknown = rectifier_with(&dir, "{ i = 5.0 }");
    fails(
        &dir,
        "simulate",
        &unknown,
        &[],
        &[
            "system.initial_algebraic",
            "`i` is not an algebraic state; valid: iD",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn consistent_initial_algebraic_values_are_accepted() {
    let dir = tmpdir("good");
    let z0 = 0.3f64.sin() / 0.01;
    let good = rectifier_with(&dir, &format!("{{ iD = {z0:.17} }}"));
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(["simulate", good.to_str().unwrap(), "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("simulation.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

fn simulate_json(name: &str) -> serde_json::Value {
    let dir = tmpdir(&format!("sim-{name}"));
    let o = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args([
            "simulate",
            shipped(name).to_str().unwrap(),
            "--json",
            "--out",
        ])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn simulate_json_lists_algebraic_states_constraints_and_mode_changes() {
    // index 1: the diode current among the outputs, transitions on ⇄ off, no constraints
    let r = simulate_json("rectifier_capacitor");
    assert!(r["final"]["outputs"]["iD"].is_number(), "{}", r["final"]);
    assert!(r.get("constraints").is_none());
    let events = r["events"].as_array().unwrap();
    assert_eq!(events.len(), 10);
    for (i, e) in events.iter().enumerate() {
        let (before, after, guard) = if i % 2 == 0 {
            ("on", "off", "diode_off")
        } else {
            ("off", "on", "diode_on")
        };
        assert_eq!(
            (e["mode_before"].as_str(), e["mode_after"].as_str()),
            (Some(before), Some(after)),
            "event {i}: {e}"
        );
        assert_eq!(e["guard"], guard);
    }
    // index 2: the multiplier among the outputs and the drift of both constraint levels
    let p = simulate_json("pendulum_wall");
    assert!(
        p["final"]["outputs"]["lambda"].is_number(),
        "{}",
        p["final"]
    );
    let c = &p["constraints"];
    let (pos, vel) = (
        c["position_max"].as_f64().unwrap(),
        c["velocity_max"].as_f64().unwrap(),
    );
    println!("pendulum_wall at the file's 1e-10: position drift {pos:.2e}, velocity {vel:.2e}");
    assert!(pos <= 1e-8 && vel <= 1e-8, "{c}");
    let events = p["events"].as_array().unwrap();
    assert!(events.len() >= 3, "impacts: {events:?}");
    assert!(events.iter().all(|e| e["guard"] == "wall"
        && e["mode_before"] == "default"
        && e["mode_after"] == "default"));
}
