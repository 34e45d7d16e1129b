//! `hybridopt animate` end to end and the strobe picture of `optimize`: every shipped
//! mechanical problem animates (small frames), the results appear atomically, and bad
//! input gets a clear message, a non-zero exit and no results folder.

use crate::common;
use hybridopt::systems::SwitchedLinear;
use hybridopt::HybridSystem;
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
    common::scratch("animcli", tag, true)
}

fn problem(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn ok(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null)
}

/// Fails with a message containing every one of `needles`, and writes nothing into `parent`.
fn fails(o: &Output, needles: &[&str], parent: &Path) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    assert_eq!(std::fs::read_dir(parent).unwrap().count(), 0, "{err}");
}

/// (width, height) from a PNG's IHDR.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[1..4], b"PNG", "{}", path.display());
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn every_shipped_problem_animates() {
    let parent = tmpdir("all");
    let mut names: Vec<_> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("problems"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
    names.sort();
    assert!(names.len() >= 10);
    for p in &names {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        let out = parent.join(&stem);
        let o = run(&[
            "animate",
            p.to_str().unwrap(),
            "--fps",
            "4",
            "--duration",
            "0.5",
            "--width",
            "64",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]);
        let j = ok(&o);
        assert_eq!(
            j["animation"]["frames"], 3,
            "{stem}: round(0.5 s × 4 fps) + 1"
        );
        assert_eq!(j["animation"]["width"], 64, "{stem}");
        for f in [
            "animation.gif",
            "strobe.png",
            "strobe.svg",
            "animation.json",
        ] {
            assert!(out.join(f).exists(), "{stem}: {f} missing");
        }
        assert_eq!(png_size(&out.join("strobe.png")).0, 480, "{stem}");
        let svg = std::fs::read_to_string(out.join("strobe.svg")).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{stem}"
        );
        assert!(
            svg.contains("earlier paler"),
            "{stem}: the caption is in the SVG"
        );
    }
    // only the results folders: no staging or temporary files left
    assert_eq!(std::fs::read_dir(&parent).unwrap().count(), names.len());
}

#[test]
fn optimize_writes_the_strobe_and_animate_compares_with_it() {
    let parent = tmpdir("opt");
    let res = parent.join("res");
    let p = problem("five_bar_stiffness.toml");
    ok(&run(&[
        "optimize",
        &p,
        "--quiet",
        "--out",
        res.to_str().unwrap(),
    ]));
    // initial and optimized side by side, 560 px each
    assert_eq!(png_size(&res.join("strobe.png")).0, 1120);
    assert!(res.join("strobe.svg").exists());
    let anim = parent.join("anim");
    let summary = res.join("summary.json");
    let j = ok(&run(&[
        "animate",
        &p,
        "--compare-initial",
        "--summary",
        summary.to_str().unwrap(),
        "--fps",
        "2",
        "--duration",
        "1",
        "--width",
        "80",
        "--json",
        "--out",
        anim.to_str().unwrap(),
    ]));
    assert_eq!(j["animation"]["frames"], 3);
    assert_eq!(j["animation"]["width"], 160, "two panels of 80 px");
    assert_eq!(
        j["events"].as_array().unwrap().len(),
        2,
        "initial and optimized"
    );
    let names: Vec<_> = std::fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A system without a geometry of its own is drawn from its outputs by `[plot.geometry]`.
#[test]
fn plot_geometry_draws_a_system_from_its_outputs() {
    let dir = tmpdir("plotgeom");
    let file = dir.join("sw.toml");
    std::fs::write(&file, switched_problem("[plot]\noutputs = [\"x1\"]\n[plot.geometry]\npoints = { o = [0.0, 0.0], tip = [\"x1\", \"x2\"] }\nbars = [[\"o\", \"tip\"]]\nground = -1.0\n")).unwrap();
    let out = dir.join("res");
    let j = ok(&run(&[
        "animate",
        file.to_str().unwrap(),
        "--fps",
        "5",
        "--width",
        "64",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(j["animation"]["frames"], 6, "1 s at 5 fps");
    assert!(out.join("strobe.png").exists() && out.join("animation.gif").exists());
}

/// A problem file for the switched linear system (no geometry of its own), with `extra`
/// appended.
fn switched_problem(extra: &str) -> String {
    let params: Vec<String> = SwitchedLinear
        .dims()
        .params
        .iter()
        .zip(SwitchedLinear::default_params())
        .map(|(n, v)| format!("{n} = {{ value = {v:?} }}"))
        .collect();
    format!(
        "name = \"sw\"\n[system]\nkind = \"switched_linear\"\n[simulation]\nt_end = 1.0\n\
         [parameters]\n{}\n[[cost]]\nkind = \"terminal_squared\"\noutput = \"{}\"\ntarget = 0.0\n{extra}",
        params.join("\n"),
        SwitchedLinear.dims().outputs[0]
    )
}

#[test]
fn bad_input_is_named_and_writes_nothing() {
    let dir = tmpdir("bad");
    let parent = dir.join("out");
    std::fs::create_dir_all(&parent).unwrap();
    let out = parent.join("x");
    let out = out.to_str().unwrap();
    // a system without geometry
    let file = dir.join("switched.toml");
    std::fs::write(&file, switched_problem("")).unwrap();
    let o = run(&["animate", file.to_str().unwrap(), "--out", out]);
    fails(
        &o,
        &["'switched_linear' has no geometry", "animate::Geometry"],
        &parent,
    );
    let p = problem("bouncing_ball.toml");
    for (args, needle) in [
        (vec!["--fps", "0"], "--fps 0"),
        (vec!["--fps", "500"], "--fps 500"),
        (vec!["--duration=-1"], "--duration -1"),
        (vec!["--width", "10"], "--width 10"),
        (vec!["--param", "e"], "--param e"),
    ] {
        let mut a = vec!["animate", p.as_str(), "--out", out];
        a.extend(args);
        fails(&run(&a), &[needle], &parent);
    }
    // --compare-initial without a summary, and with another problem's
    let missing = dir.join("nope.json");
    let o = run(&[
        "animate",
        &p,
        "--compare-initial",
        "--summary",
        missing.to_str().unwrap(),
        "--out",
        out,
    ]);
    fails(&o, &["nope.json", "hybridopt optimize"], &parent);
    let other = dir.join("other.json");
    std::fs::write(&other, r#"{"problem": "five_bar_stiffness"}"#).unwrap();
    let o = run(&[
        "animate",
        &p,
        "--compare-initial",
        "--summary",
        other.to_str().unwrap(),
        "--out",
        out,
    ]);
    fails(&o, &["key `problem`", "bouncing_ball"], &parent);
    let wrong = dir.join("wrong.json");
    std::fs::write(
        &wrong,
        r#"{"problem": "bouncing_ball", "parameters_initial": {"v0": 0.0}, "parameters_final": {"w": 1.0}}"#,
    )
    .unwrap();
    let o = run(&[
        "animate",
        &p,
        "--compare-initial",
        "--summary",
        wrong.to_str().unwrap(),
        "--out",
        out,
    ]);
    fails(&o, &["`parameters_final.w` is not a parameter"], &parent);
}
