//! `hybridopt feedback` end to end: the shipped gait problem through the command (the
//! results folder, the JSON contract, the closed-loop multipliers against the return map,
//! the torque limit held, a few robustness trials), a time-varying design on a problem
//! without a period, and bad `[feedback]` tables (a message naming the file, key and line
//! and what is valid; non-zero exit and no results folder).

use crate::common;
use hybridopt::problem::Problem;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("runs")
}

fn tmpdir(tag: &str) -> PathBuf {
    common::scratch("feedback_cli", tag, false)
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

const GAIT: &str = "problems/compass_gait_feedback.toml";

#[test]
fn feedback_stabilizes_the_shipped_gait_and_writes_its_folder() {
    let out = tmpdir("gait");
    let s = json(&run(&[
        "feedback",
        GAIT,
        "--trials",
        "10",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    for f in [
        "summary.json",
        "gains.csv",
        "gains.png",
        "gains.svg",
        "robustness.png",
        "robustness.svg",
        "animation.gif",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(file["closed_loop"], s["closed_loop"]);
    assert_eq!(s["design"], "periodic_lqr");
    assert_eq!(s["clock"], "extend");
    assert_eq!(s["guard"], "heel_strike");
    assert_eq!(s["nominal"]["source"], "optimized");
    assert_eq!(s["neutral_states"], serde_json::json!(["foot_x"]));
    let radius = |k: &str, f: &str| s[k][f].as_f64().unwrap();
    // the gait's own multiplier, as the shooting closure reports it: 1.5479611650 (the
    // optimized gait of compass_gait_periodic_walk), measured 1.5479611650248
    let e = (radius("open_loop", "spectral_radius") - 1.5479611650140574).abs();
    common::assert_within("open-loop radius vs the shooting closure", e, 1e-7);
    // the target 0.5: measured 0.2876
    let closed = radius("closed_loop", "spectral_radius");
    common::assert_within("closed-loop radius", closed, 0.5);
    // the Riccati side against the return map of the closed loop (K tabulated on 2,401
    // points): measured 1.7e-5 relative (0.2876174 / 0.2876222)
    let rm = radius("closed_loop", "return_map_spectral_radius");
    common::assert_within(
        "closed-loop radius: Riccati vs return map",
        (rm - closed).abs() / closed,
        5e-4,
    );
    let rob = &s["robustness"];
    assert_eq!(rob["trials"], 10);
    assert_eq!(rob["size"], 0.1);
    assert_eq!(rob["steps"], 20);
    let (open, closed_walks) = (
        rob["walked_open"].as_u64().unwrap(),
        rob["walked_closed"].as_u64().unwrap(),
    );
    println!("10 pushes: open loop walked {open}, closed loop {closed_walks}");
    // measured 0 / 10 open, 10 / 10 closed (the bench's 100: 0 and 98)
    assert!(open <= 2 && closed_walks >= 8, "{rob}");
    // the torque limit ±40 N·m held along the drawn closed-loop run
    let a = &s["animation"];
    let umax = a["max_abs_control_closed"][0].as_f64().unwrap();
    assert!(umax <= 40.0, "|u| = {umax}");
    // gains.csv: t, mode, 5 x_ref, 1 u_nom, 5 gains; 201 rows
    let csv = std::fs::read_to_string(out.join("gains.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.len(), 2 + 5 + 1 + 5, "{header:?}");
    assert_eq!(header[0], "t");
    assert!(header.contains(&"K_hip_theta_s") && header.contains(&"u_nom_hip"));
    assert_eq!(lines.count(), 201);
}

#[test]
fn feedback_without_a_period_designs_time_varying_gains() {
    let text = std::fs::read_to_string("problems/thrust_control.toml").unwrap()
        + "\n[feedback]\nq = [1.0, 1.0]\nr = { thrust = 0.1 }\ngrid = 51\n";
    let dir = tmpdir("tv");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("thrust_feedback.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    let s = json(&run(&[
        "feedback",
        file.to_str().unwrap(),
        "--no-optimize",
        "--trials",
        "4",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(s["design"], "tvlqr");
    assert_eq!(s["nominal"]["source"], "file");
    assert!(s["closed_loop"].is_null() && s["robustness"].is_null());
    // five impacts of the ball over 2.5 s; |K| measured 66.2
    assert_eq!(s["nominal"]["events"], 5);
    let k = s["gains"]["max_abs"].as_f64().unwrap();
    assert!(k > 1.0 && k < 1e4, "max |K| {k}");
    let csv = std::fs::read_to_string(out.join("gains.csv")).unwrap();
    assert_eq!(csv.lines().count(), 52);
    assert!(out.join("gains.png").exists());
    // the closed loop along the run: its trials and figure, the ball drawn open against
    // closed loop
    assert_eq!(s["tracking"]["trials"], 4);
    assert!(out.join("robustness.png").exists() && out.join("animation.gif").exists());
}

/// The shipped gait's text with its `[feedback]` table replaced by `table`.
fn with_feedback(table: &str) -> String {
    let text = std::fs::read_to_string(GAIT).unwrap();
    let cut = text
        .find("\n# u = u_nom")
        .expect("the shipped file's [feedback] comment");
    format!("{}\n{table}", &text[..cut])
}

#[test]
fn bad_feedback_tables_name_the_key_line_and_what_is_valid() {
    let cases: &[(&str, &str)] = &[
        (
            "[feedback]\nq = { theta_z = 1.0 }\nr = { hip = 0.1 }\n",
            "feedback.q.theta_z: `theta_z` is not a state; the states: theta_ns, theta_s",
        ),
        (
            "[feedback]\nq = [1.0, 2.0]\nr = { hip = 0.1 }\n",
            "feedback.q: 2 values for 5 states: give one per state",
        ),
        (
            "[feedback]\nq = { theta_s = -1.0 }\nr = { hip = 0.1 }\n",
            "feedback.q.theta_s: the weight of state `theta_s` is -1: a weight is a finite number ≥ 0",
        ),
        (
            "[feedback]\nq = { theta_s = 1.0 }\nr = { hip = 0.0 }\n",
            "feedback.r: the weight of control `hip` is 0: every control weight must be > 0",
        ),
        (
            "[feedback]\nq = { theta_s = 1.0 }\nr = { hip = 0.1 }\nclock = \"late\"\n",
            "feedback.clock = \"late\" is unknown; valid: reset, extend",
        ),
        (
            "[feedback]\nq = { theta_s = 1.0 }\nr = { hip = 0.1 }\nguard = \"toe\"\n",
            "feedback.guard: `toe` is not a guard of the system; its guards: heel_strike",
        ),
        (
            "[feedback]\nq = { theta_s = 1.0 }\nr = { hip = 0.1 }\ngrid = 1\n",
            "feedback.grid: grid = 1: the gains table needs between 2 and 100000 points",
        ),
        (
            "[feedback]\nq = { theta_s = 1.0 }\nr = { hip = 0.1 }\n[feedback.robustness]\nstates = [\"knee\"]\n",
            "feedback.robustness.states: `knee` is not a state",
        ),
        (
            "[feedback]\nq = { theta_s = 1.0 }\nr = { hip = 0.1 }\n[feedback.robustness]\nsize = 0.0\n",
            "feedback.robustness.size: size = 0: the perturbation's half-width must be a finite number > 0",
        ),
        (
            "[feedback]\nq = { theta_s = 1.0 }\nr = { hip = 0.1 }\nweights = 2\n",
            "feedback.weights: unknown field `weights`",
        ),
        ("[feedback]\nr = { hip = 0.1 }\n", "feedback: missing field `q`"),
    ];
    for (table, want) in cases {
        let text = with_feedback(table);
        let e = Problem::parse(&text, Path::new("gait.toml"))
            .err()
            .unwrap_or_else(|| panic!("accepted:\n{table}"))
            .to_string();
        assert!(e.starts_with("gait.toml: "), "{e}");
        assert!(e.contains(want), "{table}\n→ {e}\n(wanted: {want})");
        assert!(e.contains("(line "), "no line: {e}");
    }
    // a file without [feedback]: a clear error, non-zero exit, no results folder
    let out = tmpdir("none");
    let o = run(&[
        "feedback",
        "problems/compass_gait_periodic_walk.toml",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("has no [feedback] table"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists());
    // a system without controls
    let ball = std::fs::read_to_string("problems/bouncing_ball.toml").unwrap()
        + "\n[feedback]\nq = [1.0, 1.0]\nr = []\n";
    let e = Problem::parse(&ball, Path::new("ball.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no control channel"), "{e}");
}
