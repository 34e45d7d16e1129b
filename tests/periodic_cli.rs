//! `hybridopt periodic` end to end: every shipped periodic problem through the command
//! (the JSON contract of issue 12 and the results folder), a continuation, and bad input
//! (a clear message naming the key, non-zero exit, no results folder).

use crate::common;
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
    common::scratch("periodic", tag, false)
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

fn periodic_problems() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "toml")
                && std::fs::read_to_string(p)
                    .unwrap()
                    .lines()
                    .any(|l| l.trim() == "[periodic]")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_periodic_problem_solves_with_the_json_contract() {
    let problems = periodic_problems();
    assert!(problems.len() >= 3, "{problems:?}");
    for p in problems {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let out = tmpdir(&stem);
        let o = run(&[
            "periodic",
            p.to_str().unwrap(),
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]);
        let v = json(&o);
        let fixed = v["fixed_point"].as_object().unwrap();
        assert!(!fixed.is_empty());
        assert!(v["period"].as_f64().unwrap() > 0.0);
        for key in ["multipliers", "monodromy_multipliers"] {
            for m in v[key].as_array().unwrap() {
                assert_eq!(m.as_array().unwrap().len(), 2, "{stem}: {key}");
            }
        }
        assert!(v["residual"].as_f64().unwrap() <= 1e-12, "{stem}");
        assert!(v["newton_iterations"].as_u64().unwrap() >= 1);
        assert!(v["stable"].is_boolean());
        let ev = v["events"].as_array().unwrap();
        assert!(ev[0]["t"].is_number() && ev[0]["guard"].is_string());
        let s = &v["sensitivities"];
        for key in ["period", "spectral_radius"] {
            assert!(!s[key].as_object().unwrap().is_empty(), "{stem}: {key}");
        }
        for (state, row) in s["fixed_point"].as_object().unwrap() {
            assert!(fixed.contains_key(state));
            assert!(!row.as_object().unwrap().is_empty());
        }
        for f in [
            "orbit.json",
            "cycle.csv",
            "limit_cycle.png",
            "limit_cycle.svg",
            "multipliers.png",
            "multipliers.svg",
        ] {
            assert!(out.join(f).exists(), "{stem}: {f} missing");
        }
    }
}

#[test]
fn walker_json_names_its_states_and_slope() {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/problems/simplest_walker.toml");
    let out = tmpdir("walker");
    let v = json(&run(&[
        "periodic",
        p,
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    for s in ["theta", "phi", "dtheta", "dphi"] {
        assert!(v["fixed_point"][s].is_number(), "{s}");
        assert!(
            v["sensitivities"]["fixed_point"][s]["gamma"].is_number(),
            "{s}"
        );
    }
    assert!(v["sensitivities"]["period"]["gamma"].is_number());
    assert!(v["sensitivities"]["spectral_radius"]["gamma"].is_number());
    assert_eq!(v["stable"], true);
    assert_eq!(v["multipliers"].as_array().unwrap().len(), 2);
    assert_eq!(v["monodromy_multipliers"].as_array().unwrap().len(), 4);
}

#[test]
fn continuation_through_the_command_line() {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/problems/simplest_walker.toml");
    let out = tmpdir("continuation");
    let v = json(&run(&[
        "periodic",
        p,
        "--json",
        "--continue",
        "gamma=0.012:0.016:5",
        "--out",
        out.to_str().unwrap(),
    ]));
    let c = &v["continuation"];
    assert_eq!(c["points"], 5);
    let b = c["bifurcations"].as_array().unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0]["kind"], "period_doubling");
    for f in [
        "continuation.json",
        "continuation.csv",
        "continuation.png",
        "continuation.svg",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let csv = std::fs::read_to_string(out.join("continuation.csv")).unwrap();
    assert!(csv.starts_with("gamma,theta,phi,dtheta,dphi,period,spectral_radius,stable,re_1,im_1"));
    assert_eq!(csv.lines().count(), 6);
}

const WALKER: &str = r#"
name = "w"
[system]
kind = "simplest_walker"
[simulation]
t_end = 12.0
rtol = 1e-12
atol = 1e-12
[parameters]
gamma = { value = 0.009 }
theta0 = { value = 0.2 }
phi0 = { value = 0.4 }
dtheta0 = { value = -0.2 }
dphi0 = { value = -0.01578780119942298 }
[periodic]
guard = "heel_strike"
free = ["theta", "dtheta"]
guess = { theta = 0.2, phi = 0.4, dtheta = -0.2, dphi = -0.01578780119942298 }
t_max = 20.0
"#;

#[test]
fn bad_periodic_input_is_rejected_clearly_and_writes_nothing() {
    let dir = tmpdir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [(&str, &str, &str, &[&str]); 7] = [
        (
            "guard",
            "guard = \"heel_strike\"",
            "guard = \"toe\"",
            &["guard = \"toe\" is unknown", "heel_strike"],
        ),
        (
            "free",
            "free = [\"theta\", \"dtheta\"]",
            "free = [\"theta\", \"x\"]",
            &["free: state `x` is unknown", "dphi"],
        ),
        (
            "guess",
            ", dphi = -0.01578780119942298 }\nt_max",
            " }\nt_max",
            &["guess: state `dphi` is missing"],
        ),
        ("count", "free = [", "count = 0\nfree = [", &["count = 0"]),
        (
            "key",
            "t_max = 20.0",
            "t_max = 20.0\nsteps = 3",
            &["unknown field `steps`"],
        ),
        (
            "off",
            "guess = { theta = 0.2, phi = 0.4,",
            "guess = { theta = 0.2, phi = 0.3,",
            &["not on the section", "heel_strike"],
        ),
        (
            "chart",
            "free = [\"theta\", \"dtheta\"]",
            "free = [\"theta\"]",
            &["do not chart the section", "rank 2"],
        ),
    ];
    for (tag, from, to, needles) in cases {
        let text = WALKER.replacen(from, to, 1);
        assert_ne!(text, WALKER, "{tag}: the edit did not apply");
        let file = dir.join(format!("{tag}.toml"));
        std::fs::write(&file, text).unwrap();
        let out = dir.join(format!("out-{tag}"));
        let o = run(&[
            "periodic",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{tag} succeeded");
        assert!(!err.contains("panicked"), "{tag}: {err}");
        for n in needles {
            assert!(err.contains(n), "{tag}: {err:?} lacks {n:?}");
        }
        assert!(!out.exists(), "{tag}: results written");
    }
    // --continue: a bad range names what would be valid
    let good = dir.join("good.toml");
    std::fs::write(&good, WALKER).unwrap();
    for (arg, needle) in [
        ("slope=0:1:3", "parameter `slope` is unknown"),
        ("gamma=0.009:0.01", "has 2 field(s)"),
        ("gamma=0.009:0.01:1", "N must be at least 2"),
        ("gamma=a:0.01:3", "`a` is not a finite number"),
    ] {
        let out = dir.join("out-continue");
        let o = run(&[
            "periodic",
            good.to_str().unwrap(),
            "--continue",
            arg,
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(needle), "{arg}: {err}");
        assert!(!out.exists());
    }
    // a problem without [periodic]
    let plain = concat!(env!("CARGO_MANIFEST_DIR"), "/problems/bouncing_ball.toml");
    let o = run(&["periodic", plain]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no [periodic] table"));
}

#[test]
fn gait_stability_optimization_converges_and_is_verified() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/problems/compass_gait_stability.toml"
    );
    let out = tmpdir("stability");
    let v = json(&run(&[
        "optimize",
        p,
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(v["converged"], true, "{}", v["termination"]);
    let (r0, r1) = (
        v["initial"]["spectral_radius"].as_f64().unwrap(),
        v["last"]["spectral_radius"].as_f64().unwrap(),
    );
    // measured 0.57995 → 0.51149 (m_h 10 → 20, its upper bound: a heavier hip steadies
    // the gait)
    assert!(r1 < r0 - 0.05, "{r0} → {r1}");
    assert_eq!(v["last"]["value"], v["last"]["spectral_radius"]);
    // re-solved at the final parameters from the problem's own guess: the same orbit
    let check = v["verified_spectral_radius"].as_f64().unwrap();
    assert!((check - r1).abs() <= 1e-9, "{check} vs {r1}");
    let m_h = v["last"]["params"][0].as_f64().unwrap();
    assert!(m_h > 19.9 && m_h < 20.0, "{m_h}");
    // the vocabulary of every optimization's summary, beside the gait's own fields, in
    // the printed report and in summary.json alike
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for w in [&v, &file] {
        assert_eq!(w["problem"], "compass_gait_stability");
        assert_eq!(w["outcome"], "converged");
        assert_eq!(w["optimized"], serde_json::json!(["m_h"]));
        assert_eq!(w["initial_cost"], w["initial"]["value"]);
        assert_eq!(w["final_cost"], w["last"]["value"]);
        assert_eq!(w["parameters_initial"]["m_h"], w["initial"]["params"][0]);
        assert_eq!(w["parameters_final"]["m_h"], w["last"]["params"][0]);
        // a fixed parameter keeps its value in both
        assert_eq!(w["parameters_final"]["m"], w["parameters_initial"]["m"]);
        let g = w["last"]["gradient"][0].as_f64().unwrap().abs();
        assert_eq!(w["final_gradient_norm"].as_f64().unwrap(), g);
        assert_eq!(w["iterations"], v["iterations"]);
    }
    // the exact gradient at the start against central differences of the re-solved orbit
    let g0 = v["initial"]["gradient"][0].as_f64().unwrap();
    let rho = |mh: f64| -> f64 {
        let o = run(&[
            "periodic",
            p,
            "--json",
            "--param",
            &format!("m_h={mh}"),
            "--out",
            out.join("fd").to_str().unwrap(),
        ]);
        json(&o)["spectral_radius"].as_f64().unwrap()
    };
    let h = 1e-4;
    let fd = (rho(10.0 + h) - rho(10.0 - h)) / (2.0 * h);
    assert!(
        (g0 - fd).abs() <= 1e-6 * g0.abs().max(1e-3) + 1e-8,
        "{g0} vs {fd}"
    );
    for f in [
        "summary.json",
        "history.csv",
        "orbit.json",
        "limit_cycle.png",
        "multipliers.png",
        // the convergence figure every optimization writes (issue 31: a gait's was missing)
        "convergence.png",
        "convergence.svg",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
}

#[test]
fn gradient_of_a_periodic_problem_without_cost_is_a_clear_error() {
    // a [periodic] problem has no [[cost]]: `gradient` says what to use instead (it panicked
    // in the adjoint's assembly of zero objectives before)
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/simplest_walker.toml");
    for method in ["adjoint", "direct", "fd", "dual"] {
        let out = run(&["gradient", f.to_str().unwrap(), "--method", method]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{method}: {err}");
        assert!(
            err.contains("no objective to differentiate"),
            "{method}: {err}"
        );
        assert!(err.contains("hybridopt periodic"), "{method}: {err}");
        assert!(!err.contains("panicked"), "{method}: {err}");
    }
}

#[test]
fn midstance_hyperplane_through_the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mid = dir.join("simplest_walker_midstance.toml");
    let out = tmpdir("midstance");
    let v = json(&run(&[
        "periodic",
        mid.to_str().unwrap(),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    let w = json(&run(&[
        "periodic",
        dir.join("simplest_walker.toml").to_str().unwrap(),
        "--json",
        "--out",
        tmpdir("midstance-ref").to_str().unwrap(),
    ]));
    // the same gait: period and spectral radius (section-independent)
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap();
    assert!((f(&v, "period") - f(&w, "period")).abs() <= 1e-10);
    assert!((f(&v, "spectral_radius") - f(&w, "spectral_radius")).abs() <= 1e-8);
    assert_eq!(v["section"]["kind"], "hyperplane");
    assert_eq!(v["section"]["dependent"], "theta");
    assert_eq!(w["section"]["kind"], "after_reset");
    assert_eq!(v["free"], serde_json::json!(["phi", "dtheta", "dphi"]));
    assert_eq!(v["multipliers"].as_array().unwrap().len(), 3);
    let guards: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["guard"].as_str().unwrap())
        .collect();
    assert_eq!(guards, ["heel_strike", "hyperplane"]);

    // bad hyperplanes: exit 1, the file and key named, nothing written
    let text = std::fs::read_to_string(&mid).unwrap();
    let hp = "hyperplane = { normal = { theta = 1.0 }, offset = 0.0, direction = \"falling\" }";
    let bad = tmpdir("bad-hyperplane");
    std::fs::create_dir_all(&bad).unwrap();
    for (tag, to, needles) in [
        (
            "state",
            hp.replace("theta = 1.0", "knee = 1.0"),
            &[
                "periodic.hyperplane.normal",
                "`knee` is unknown",
                "theta, phi, dtheta, dphi",
            ][..],
        ),
        (
            "zero",
            hp.replace("theta = 1.0", "theta = 0.0"),
            &["periodic.hyperplane.normal", "the normal is zero"][..],
        ),
        (
            "both",
            format!("guard = \"heel_strike\"\n{hp}"),
            &["periodic: guard and hyperplane are both given"][..],
        ),
        (
            "neither",
            String::new(),
            &["periodic: neither guard nor hyperplane is given"][..],
        ),
    ] {
        let file = bad.join(format!("{tag}.toml"));
        let edited = text.replacen(hp, &to, 1);
        assert_ne!(edited, text, "{tag}: the edit did not apply");
        std::fs::write(&file, edited).unwrap();
        let o_dir = bad.join(format!("out-{tag}"));
        let o = run(&[
            "periodic",
            file.to_str().unwrap(),
            "--out",
            o_dir.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{tag}: {err}");
        assert!(!err.contains("panicked"), "{tag}: {err}");
        assert!(err.contains(&format!("{tag}.toml")), "{tag}: {err}");
        for n in needles {
            assert!(err.contains(n), "{tag}: {err:?} lacks {n:?}");
        }
        assert!(!o_dir.exists(), "{tag}: results written");
    }
}
