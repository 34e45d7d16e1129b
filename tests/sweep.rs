//! `hybridopt sweep`, `merge` and `optimize --starts` end to end: an unsharded sweep and
//! the merge of its 3 shards write byte-equal files (grid and starts), the files do not
//! depend on `--jobs`, a failing point is recorded with its error while the others run,
//! the grid's gradient columns match `hybridopt gradient` at the same point, the best of
//! several starts is the single-start optimization from that start, and bad flags give a
//! clear error and write nothing.

use crate::common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hybridopt-sweep-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn problem(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(name)
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("runs")
}

fn ok(args: &[&str]) -> Output {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every file of a folder: name → bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn assert_same_files(a: &Path, b: &Path) {
    let (fa, fb) = (files(a), files(b));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "{} vs {}",
        a.display(),
        b.display()
    );
    for (name, bytes) in &fa {
        assert!(
            bytes == &fb[name],
            "{name} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Runs the sweep `args` unsharded and as 3 shards, merges the shards, and checks the
/// merged folder equals the unsharded one file by file.
fn sharded_equals_unsharded(tag: &str, args: &[&str], expect: &[&str]) {
    let d = tmpdir(tag);
    let whole = d.join("whole");
    let mut a: Vec<&str> = args.to_vec();
    let w = whole.display().to_string();
    a.extend(["--out", &w, "--jobs", "2"]);
    ok(&a);
    let mut shard_dirs = Vec::new();
    // given to merge out of order
    for i in [3, 1, 2] {
        let dir = d.join(format!("s{i}")).display().to_string();
        let spec = format!("{i}/3");
        let mut a: Vec<&str> = args.to_vec();
        a.extend(["--out", &dir, "--shard", &spec, "--jobs", "1"]);
        ok(&a);
        let f = json_file(&Path::new(&dir).join("sweep.json"));
        assert_eq!(f["shard"]["index"], i);
        shard_dirs.push(dir);
    }
    let merged = d.join("merged").display().to_string();
    let mut m = vec!["merge"];
    m.extend(shard_dirs.iter().map(String::as_str));
    m.extend(["--out", &merged]);
    ok(&m);
    let names = files(&whole);
    for e in expect {
        assert!(names.contains_key(*e), "{tag}: {e} missing");
    }
    assert_same_files(&whole, Path::new(&merged));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn grid_shards_merge_to_the_unsharded_files() {
    let p = problem("ball_identify.toml");
    sharded_equals_unsharded(
        "grid",
        &[
            "sweep",
            &p,
            "--grid",
            "e=0.75:0.98:5",
            "--grid",
            "c=0.05:0.5:4",
        ],
        &["sweep.json", "sweep.csv", "sweep.png", "sweep.svg"],
    );
}

#[test]
fn start_shards_merge_to_the_unsharded_files() {
    let p = problem("ball_identify.toml");
    sharded_equals_unsharded(
        "starts",
        &[
            "sweep",
            &p,
            "--starts",
            "5",
            "--seed",
            "11",
            "--max-iters",
            "15",
        ],
        &[
            "sweep.json",
            "sweep.csv",
            "sweep.png",
            "best_trajectory.csv",
            "best_trajectory.png",
        ],
    );
}

#[test]
fn files_do_not_depend_on_the_number_of_threads() {
    let d = tmpdir("jobs");
    let p = problem("ball_identify.toml");
    for (args, tag) in [
        (
            vec!["--grid", "e=0.75:0.98:6", "--grid", "c=0.1:0.4:3"],
            "grid",
        ),
        (
            vec!["--starts", "4", "--seed", "5", "--max-iters", "10"],
            "starts",
        ),
    ] {
        let mut outs = Vec::new();
        for jobs in ["1", "2", "3"] {
            let out = d.join(format!("{tag}-{jobs}")).display().to_string();
            let mut a = vec!["sweep", &p, "--out", &out, "--jobs", jobs];
            a.extend(args.iter().copied());
            ok(&a);
            outs.push(out);
        }
        assert_same_files(Path::new(&outs[0]), Path::new(&outs[1]));
        assert_same_files(Path::new(&outs[0]), Path::new(&outs[2]));
    }
    // a different seed gives different starts
    let a = json_file(&d.join("starts-1/sweep.json"));
    let out = d.join("seed6").display().to_string();
    ok(&[
        "sweep",
        &p,
        "--starts",
        "4",
        "--seed",
        "6",
        "--max-iters",
        "10",
        "--out",
        &out,
    ]);
    let b = json_file(&Path::new(&out).join("sweep.json"));
    assert_ne!(a["points"][0]["parameters"], b["points"][0]["parameters"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// The ball's third impact must come by t = 2 s: dropped from high up it does not, and
/// those points fail with `missing_event` while the others are evaluated.
#[test]
fn a_failing_point_is_recorded_and_the_sweep_goes_on() {
    let d = tmpdir("fail");
    let file = d.join("late_ball.toml");
    std::fs::write(
        &file,
        r#"name = "late_ball"
[system]
kind = "bouncing_ball"
[simulation]
t_end = 2.0
rtol = 1e-10
atol = 1e-10
[parameters]
g  = { value = 9.81 }
e  = { value = 0.8 }
c  = { value = 0.0 }
y0 = { value = 1.0, lower = 0.0 }
v0 = { value = 0.0, optimize = true }
[[cost]]
kind = "event_time_squared"
guard = "ground"
occurrence = 3
target = 1.5
"#,
    )
    .unwrap();
    let out = d.join("out");
    ok(&[
        "sweep",
        file.to_str().unwrap(),
        "--grid",
        "y0=0.5:8:6",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let f = json_file(&out.join("sweep.json"));
    let pts = f["points"].as_array().unwrap();
    assert_eq!(pts.len(), 6);
    let failed: Vec<&serde_json::Value> = pts.iter().filter(|p| p["outcome"] == "failed").collect();
    assert!(!failed.is_empty() && failed.len() < 6, "{failed:?}");
    assert_eq!(f["counts"]["failed"], failed.len());
    for p in &failed {
        assert_eq!(p["error"]["kind"], "missing_event");
        let msg = p["error"]["message"].as_str().unwrap();
        assert!(msg.contains("occurrence 3 of guard 'ground'"), "{msg}");
        assert!(p["cost"].is_null() && p["gradient_norm"].is_null());
    }
    // the low drops come first and succeed; the failures are the highest
    assert_eq!(pts[0]["outcome"], "evaluated");
    assert_eq!(pts[5]["outcome"], "failed");
    assert!(pts[0]["cost"].as_f64().unwrap() >= 0.0);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let last = csv.lines().last().unwrap();
    assert!(last.starts_with("5,8,,,,failed,,missing_event,"), "{last}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The grid's cost and gradient columns are `hybridopt gradient`'s at that point (the
/// axes' names map to the right columns), and the direct method agrees with the adjoint.
#[test]
fn grid_gradients_match_the_gradient_command() {
    let d = tmpdir("grad");
    let p = problem("ball_identify.toml");
    let mut cols = Vec::new();
    for m in ["adjoint", "direct"] {
        let out = d.join(m).display().to_string();
        ok(&[
            "sweep",
            &p,
            "--grid",
            "e=0.8:0.9:3",
            "--grid",
            "c=0.1:0.3:2",
            "--gradient",
            m,
            "--out",
            &out,
        ]);
        cols.push(json_file(&Path::new(&out).join("sweep.json")));
    }
    // point 3 = (e index 1, c index 1) = (0.85, 0.3)
    let pt = &cols[0]["points"][3];
    let e = pt["parameters"]["e"].as_f64().unwrap();
    let c = pt["parameters"]["c"].as_f64().unwrap();
    assert!((e - 0.85).abs() < 1e-15 && c == 0.3, "{e} {c}");
    let g = ok(&[
        "gradient",
        &p,
        "--param",
        &format!("e={e}"),
        "--param",
        &format!("c={c}"),
        "--json",
        "--no-tau",
    ]);
    let g: serde_json::Value = serde_json::from_slice(&g.stdout).unwrap();
    assert_eq!(pt["cost"], g["cost"]);
    for n in ["e", "c"] {
        assert_eq!(pt["gradient"][n], g["gradient"][n], "{n}");
    }
    let ge = pt["gradient"]["e"].as_f64().unwrap();
    let gc = pt["gradient"]["c"].as_f64().unwrap();
    let norm = (ge * ge + gc * gc).sqrt();
    assert!((pt["gradient_norm"].as_f64().unwrap() - norm).abs() <= 1e-15 * norm);
    // the direct witness, every point: |adjoint − direct| relative to max(|g|, 1e-3)
    let mut worst = 0.0f64;
    for (a, b) in cols[0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(cols[1]["points"].as_array().unwrap())
    {
        for n in ["e", "c"] {
            let (x, y) = (
                a["gradient"][n].as_f64().unwrap(),
                b["gradient"][n].as_f64().unwrap(),
            );
            worst = worst.max((x - y).abs() / x.abs().max(1e-3));
        }
    }
    // measured 3.0e-11
    common::assert_within("sweep: direct vs adjoint at every point", worst, 7e-10);
    let _ = std::fs::remove_dir_all(&d);
}

/// `optimize --starts N` keeps the best start, and that result is exactly the
/// single-start optimization from its start point.
#[test]
fn optimize_starts_keeps_the_best_start() {
    let d = tmpdir("ostarts");
    let p = problem("impact_timing.toml");
    let out = d.join("multi").display().to_string();
    let o = ok(&[
        "optimize", &p, "--starts", "4", "--seed", "2", "--range", "v0=0.1:3", "--out", &out,
        "--json", "--quiet",
    ]);
    let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ms = &m["multi_start"];
    assert_eq!(ms["starts"], 4);
    let costs: Vec<f64> = ms["final_costs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_f64())
        .collect();
    assert_eq!(costs.len(), 4);
    let min = costs.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(m["final_cost"].as_f64().unwrap(), min);
    assert_eq!(costs[ms["best_start"].as_u64().unwrap() as usize], min);
    let v0 = m["parameters_initial"]["v0"].as_f64().unwrap();
    assert!(v0 > 0.1 && v0 < 3.0);
    let single = d.join("single").display().to_string();
    let o = ok(&[
        "optimize",
        &p,
        "--param",
        &format!("v0={v0}"),
        "--out",
        &single,
        "--json",
        "--quiet",
    ]);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["final_cost"], m["final_cost"]);
    assert_eq!(s["parameters_final"], m["parameters_final"]);
    assert!(s.get("multi_start").is_none());
    let _ = std::fs::remove_dir_all(&d);
}

/// Bad flags: a non-zero exit, a message naming the flag, the value and what is valid,
/// and no output folder.
#[test]
fn bad_flags_are_clear_errors() {
    let d = tmpdir("bad");
    let p = problem("ball_identify.toml");
    let stiff = problem("five_bar_stiffness.toml");
    let out = d.join("out").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["sweep", &p, "--grid", "e=0.8:0.9"], "--grid e=0.8:0.9: expected NAME=LO:HI:N"),
        (vec!["sweep", &p, "--grid", "x=0.8:0.9:3"], "`x` is not a parameter; valid: g, e, c, y0, v0"),
        (vec!["sweep", &p, "--grid", "e=0.5:0.9:3"], "strictly inside the bounds of `e`"),
        (vec!["sweep", &p, "--grid", "e=0.8:0.9:1"], "N ≥ 2"),
        (vec!["sweep", &p, "--grid", "e=0.8:0.9:3", "--grid", "e=0.8:0.9:3"], "given twice"),
        (vec!["sweep", &p, "--starts", "0"], "--starts 0: the number of starts must be between 1"),
        (vec!["sweep", &p, "--starts", "3", "--jobs", "0"], "--jobs 0: the number of worker threads must be at least 1"),
        (vec!["sweep", &p, "--starts", "3", "--jobs", "5000"], "--jobs 5000: the number of worker threads must be at least 1 and at most 1024"),
        (vec!["sweep", &p, "--starts", "3", "--shard", "4/3"], "--shard 4/3: shard 4 of 3"),
        (vec!["sweep", &p, "--starts", "3", "--shard", "two"], "--shard two: expected I/N"),
        (vec!["sweep", &p, "--starts", "3", "--range", "g=1:2"], "`g` is not an optimized parameter; valid: e, c"),
        (vec!["sweep", &p, "--starts", "3", "--range", "e=0.5:0.9"], "within the bounds of `e`"),
        (vec!["sweep", &stiff, "--starts", "3"], "`k1` has no upper bound in the problem file, so its starts need a sampling interval: add --range k1=LO:HI"),
        (vec!["sweep", &p, "--grid", "e=0.8:0.9:3", "--starts", "3"], "cannot be used with"),
        (vec!["sweep", &p], "required"),
        (vec!["sweep", &p, "--grid", "e=0.8:0.9:3", "--seed", "3"], "--seed 3: applies to multi-start only: add --starts N"),
        (vec!["optimize", &p, "--range", "e=0.8:0.9"], "--range e=0.8:0.9: applies to multi-start only"),
        (vec!["optimize", &stiff, "--starts", "2", "--range", "k1=-5:10"], "--range k1=-5:10: [-5, 10] must lie within the bounds of `k1`"),
    ];
    for (mut args, expect) in cases {
        args.extend(["--out", &out]);
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(expect), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!Path::new(&out).exists(), "{args:?} wrote {out}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// merge refuses an incomplete or mixed set of shards, and writes nothing.
#[test]
fn merge_refuses_incomplete_or_mixed_shards() {
    let d = tmpdir("mergebad");
    let p = problem("ball_identify.toml");
    let shard = |tag: &str, spec: &str, grid: &str| -> String {
        let dir = d.join(tag).display().to_string();
        ok(&["sweep", &p, "--grid", grid, "--shard", spec, "--out", &dir]);
        dir
    };
    let a1 = shard("a1", "1/2", "e=0.8:0.9:4");
    let a2 = shard("a2", "2/2", "e=0.8:0.9:4");
    let b2 = shard("b2", "2/2", "e=0.8:0.95:4");
    let c3 = shard("c3", "3/3", "e=0.8:0.9:4");
    let whole = d.join("whole").display().to_string();
    ok(&["sweep", &p, "--grid", "e=0.8:0.9:4", "--out", &whole]);
    let out = d.join("merged").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![&a1], "shard(s) 2/2 missing"),
        (vec![&a1, &a1], "given twice"),
        (vec![&a1, &b2], "comes from another sweep"),
        (vec![&a1, &c3], "is one of 2 shards"),
        (vec![&whole], "not a shard"),
        (vec![&a1, "/nonexistent/dir"], "sweep.json"),
    ];
    for (dirs, expect) in cases {
        let mut args = vec!["merge"];
        args.extend(dirs.iter().copied());
        args.extend(["--out", &out]);
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(expect), "{args:?}: {err}");
        assert!(!Path::new(&out).exists());
    }
    ok(&["merge", &a2, &a1, "--out", &out]);
    assert_same_files(Path::new(&whole), Path::new(&out));
    let _ = std::fs::remove_dir_all(&d);
}

/// Ctrl-C (SIGINT) during a sweep, after an earlier sweep into the same `--out`: exit
/// code 130, no staging folder left, and the earlier files unchanged (the points already
/// computed are not written: the sweep's files are all or nothing).
#[cfg(unix)]
#[test]
fn ctrl_c_during_a_sweep_keeps_the_earlier_result() {
    use std::process::Stdio;
    use std::time::Duration;
    let d = tmpdir("sigint");
    let out = d.join("res");
    let o = out.display().to_string();
    let p = problem("five_bar_stiffness.toml");
    ok(&["sweep", &p, "--grid", "k1=90:110:2", "--out", &o]);
    let before = files(&out);
    let child = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args([
            "sweep",
            &p,
            "--grid",
            "k1=60:140:40",
            "--grid",
            "k2=60:140:40",
        ])
        .args(["--jobs", "2", "--quiet", "--out", &o])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // 1600 points of about 25 ms of CPU each: inside the sweep and far from done after
    // 1 s of the child's CPU time, however loaded the machine is
    common::wait_for_cpu(child.id(), 1.0, Duration::from_secs(120));
    // SAFETY: kill(2) on the pid of our own child, which has not been waited for yet.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0, "kill failed");
    // the timeout only bounds a hang (the whole sweep takes about 40 s of CPU)
    let r = common::wait_with_timeout(child, Duration::from_secs(300));
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(130), "status {:?}: {err}", r.status);
    assert!(
        err.contains("interrupted") && !err.contains("panicked"),
        "{err}"
    );
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["res".to_string()]);
    assert!(files(&out) == before, "the earlier result changed");
    let _ = std::fs::remove_dir_all(&d);
}
