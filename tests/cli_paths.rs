//! Failures after a run has begun must leave an earlier result intact: Ctrl-C (SIGINT)
//! during a long optimization ends the program with exit code 130, removes its staging
//! folder and leaves the earlier results byte-identical; an error while plotting, after the
//! results folder was staged, does the same (exit code 1); a commit after an
//! interruption was requested is refused; a run never deletes a file it did not write
//! (the periodic guide's commands in order); and names from the problem file that would
//! make a path outside the results folder are refused before anything is written.

use crate::common;
use hybridopt::output::Staging;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hybridopt"));
    c.env("RUST_BACKTRACE", "0");
    c
}

fn tmpdir(tag: &str) -> PathBuf {
    common::scratch("paths", tag, true)
}

fn problem(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(name)
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every file under `dir` (relative path → bytes).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut m = BTreeMap::new();
    walk(dir, dir, &mut m);
    m
}

/// Names in `parent` other than `keep` (a staging or old folder left behind).
fn leftovers(parent: &Path, keep: &str) -> Vec<String> {
    std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != keep)
        .collect()
}

/// SIGINT during a long optimization (thrust_control, 60 control coefficients, with the FD
/// gradient and an iteration budget of 100000) after an earlier successful run into the
/// same `--out`: exit code 130 (without the handler the child dies of the signal and has no
/// exit code), a message that says so, no staging folder, and every file of the earlier
/// result byte-identical.
#[cfg(unix)]
#[test]
fn ctrl_c_during_optimization_keeps_the_earlier_result() {
    let parent = tmpdir("sigint");
    let out = parent.join("res");
    let p = problem("thrust_control.toml");
    let first = bin()
        .args([
            "optimize",
            p.to_str().unwrap(),
            "--quiet",
            "--max-iters",
            "1",
        ])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    ok(&first);
    let before = snapshot(&out);
    assert!(before.contains_key(Path::new("summary.json")));
    let child = bin()
        .args([
            "optimize",
            p.to_str().unwrap(),
            "--quiet",
            "--gradient",
            "fd",
        ])
        .args(["--max-iters", "100000", "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // inside the optimization: half a second of the child's own CPU time (loading and the
    // first evaluation take a few ms), however loaded the machine is
    common::wait_for_cpu(child.id(), 0.5, Duration::from_secs(120));
    // SAFETY: kill(2) on the pid of our own child, which has not been waited for yet.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0, "kill failed");
    // the budget of 100000 iterations would take hours: an exit at all means the signal
    // stopped it (measured 8–35 ms after the signal); the timeout only bounds a hang
    let o = common::wait_with_timeout(child, Duration::from_secs(300));
    let err = String::from_utf8_lossy(&o.stderr);
    println!("interrupted: {:?}, {err}", o.status);
    // exit code 130 (not killed by the signal: the handler ran and the program cleaned up)
    assert_eq!(o.status.code(), Some(130), "status {:?}: {err}", o.status);
    assert!(err.contains("interrupted"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(leftovers(&parent, "res"), Vec::<String>::new());
    assert!(snapshot(&out) == before, "the earlier result changed");
    let _ = std::fs::remove_dir_all(&parent);
}

/// An error while plotting, after the results folder was staged (`gradient --out` writes
/// `sensitivity.png` and then `seed_<objective>.png`; an objective name of 300 characters
/// makes that file name longer than the file system allows): a plotting error, exit code
/// 1, no staging folder, and the earlier result byte-identical.
#[test]
fn plotting_error_after_staging_keeps_the_earlier_result() {
    let parent = tmpdir("plot");
    let out = parent.join("res");
    let text = std::fs::read_to_string(problem("bouncing_ball.toml")).unwrap();
    let good = parent.join("good.toml");
    std::fs::write(&good, &text).unwrap();
    let long = "o".repeat(300);
    let bad = parent.join("bad.toml");
    std::fs::write(
        &bad,
        text.replace(
            "kind = \"integral_squared\"",
            &format!("kind = \"integral_squared\"\nobjective = \"{long}\""),
        )
        .replace(
            "kind = \"terminal_squared\"",
            &format!("kind = \"terminal_squared\"\nobjective = \"{long}\""),
        ),
    )
    .unwrap();
    let first = bin()
        .args([
            "gradient",
            good.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    ok(&first);
    let before = snapshot(&out);
    assert!(before.contains_key(Path::new("gradient.json")));
    assert!(before.contains_key(Path::new("seed_cost.png")));
    let o = bin()
        .args([
            "gradient",
            bad.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{:?}: {err}", o.status);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // the failure is the plot of the seed figure, i.e. after staging began
    assert!(err.contains("plotting") && err.contains("seed_o"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let names: Vec<String> = leftovers(&parent, "res")
        .into_iter()
        .filter(|n| !n.ends_with(".toml"))
        .collect();
    assert_eq!(names, Vec::<String>::new());
    assert!(snapshot(&out) == before, "the earlier result changed");
    let _ = std::fs::remove_dir_all(&parent);
}

/// A commit after an interruption was requested is refused with `Error::Interrupted`, the
/// staging folder is deleted and the earlier folder is untouched (this covers Ctrl-C that
/// arrives while the results are being written). In-process: this file's other tests run
/// the program as a child, so the process-wide flag does not reach them.
#[test]
fn commit_is_refused_after_an_interruption() {
    let parent = tmpdir("commit");
    let out = parent.join("res");
    let st = Staging::new(&out).unwrap();
    st.write_bytes("a.txt", b"earlier").unwrap();
    st.commit().unwrap();
    let st = Staging::new(&out).unwrap();
    st.write_bytes("a.txt", b"later").unwrap();
    st.write_bytes("b.txt", b"later").unwrap();
    let staged = st.dir().to_path_buf();
    assert!(staged.exists());
    hybridopt::interrupt::request();
    let r = st.commit();
    hybridopt::interrupt::clear();
    assert!(
        matches!(r, Err(hybridopt::Error::Interrupted)),
        "commit after Ctrl-C: {r:?}"
    );
    assert!(!staged.exists(), "the staging folder remains");
    assert_eq!(leftovers(&parent, "res"), Vec::<String>::new());
    assert_eq!(std::fs::read(out.join("a.txt")).unwrap(), b"earlier");
    assert!(!out.join("b.txt").exists());
    // and without a request, a commit goes through
    let st = Staging::new(&out).unwrap();
    st.write_bytes("a.txt", b"later").unwrap();
    st.commit().unwrap();
    assert_eq!(std::fs::read(out.join("a.txt")).unwrap(), b"later");
    let _ = std::fs::remove_dir_all(&parent);
}

/// A commit into an existing folder replaces the files it staged and keeps the others: a
/// file another command wrote survives, a subfolder's file is replaced, and a results
/// path that is a file is refused with the path named.
#[test]
fn a_commit_keeps_the_files_it_did_not_write() {
    let parent = tmpdir("keep");
    let out = parent.join("res");
    let st = Staging::new(&out).unwrap();
    st.write_bytes("a.txt", b"first").unwrap();
    st.write_bytes("sub/b.txt", b"first").unwrap();
    st.commit().unwrap();
    std::fs::write(out.join("other.txt"), b"another command's").unwrap();
    let st = Staging::new(&out).unwrap();
    st.write_bytes("a.txt", b"second").unwrap();
    st.write_bytes("sub/b.txt", b"second").unwrap();
    st.write_bytes("summary.json", b"{}").unwrap();
    st.commit().unwrap();
    let files = snapshot(&out);
    let names: Vec<String> = files.keys().map(|p| p.display().to_string()).collect();
    assert_eq!(names, ["a.txt", "other.txt", "sub/b.txt", "summary.json"]);
    assert_eq!(files[Path::new("a.txt")], b"second");
    assert_eq!(files[Path::new("sub/b.txt")], b"second");
    assert_eq!(files[Path::new("other.txt")], b"another command's");
    assert_eq!(leftovers(&parent, "res"), Vec::<String>::new());
    // a results path that is a file
    let file = parent.join("plain");
    std::fs::write(&file, b"x").unwrap();
    let st = Staging::new(&file).unwrap();
    st.write_bytes("a.txt", b"y").unwrap();
    let e = st.commit().unwrap_err().to_string();
    assert!(e.contains("plain") && e.contains("not a folder"), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    let _ = std::fs::remove_dir_all(&parent);
}

/// The periodic guide's commands in order into one folder: the orbit, its continuation,
/// the orbit again. The second run of the orbit used to swap in a new folder and so
/// deleted the continuation's files (issue 48); they survive, byte for byte.
#[test]
fn the_periodic_guides_commands_keep_each_others_files() {
    let parent = tmpdir("periodic-guide");
    let out = parent.join("simplest_walker");
    let walker = problem("simplest_walker.toml");
    let run = |extra: &[&str]| {
        let mut c = bin();
        c.arg("periodic")
            .arg(&walker)
            .arg("--out")
            .arg(&out)
            .args(extra);
        let o = c.output().unwrap();
        ok(&o);
    };
    run(&[]);
    let orbit = snapshot(&out);
    run(&["--continue", "gamma=0.009:0.012:4"]);
    let continued = snapshot(&out);
    let cont: Vec<&PathBuf> = continued
        .keys()
        .filter(|p| p.to_string_lossy().starts_with("continuation"))
        .collect();
    assert!(
        !cont.is_empty(),
        "no continuation files: {:?}",
        continued.keys()
    );
    run(&[]);
    let again = snapshot(&out);
    for p in cont {
        assert_eq!(
            again.get(p),
            continued.get(p),
            "{} changed or went",
            p.display()
        );
    }
    for p in orbit.keys() {
        assert!(again.contains_key(p), "{} went", p.display());
    }
    let _ = std::fs::remove_dir_all(&parent);
}

#[test]
fn a_missing_problem_file_says_its_os_error_once() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(["simulate", "/nonexistent/hybridopt-missing.toml"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("/nonexistent/hybridopt-missing.toml"), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

/// Names from the problem file become file names: the problem's `name` the results folder
/// (`results/<name>`), an objective's name `seed_<objective>.png` and its CSVs. A `/`, `\\`
/// or a leading `.` would put them outside the folder (before this check, the objective
/// `x/../../../evil` wrote `evil.{png,svg,csv}` beside the results folder, exit code 0).
/// Each is refused when the file is read: exit code 1, the file, key and value named with
/// what is valid, and nothing written anywhere.
#[test]
fn names_that_leave_the_results_folder_are_refused() {
    let parent = tmpdir("names");
    let text = std::fs::read_to_string(problem("bouncing_ball.toml")).unwrap();
    let escape = parent.join("escaped");
    let cases = [
        (
            "objective",
            text.replace(
                "kind = \"integral_squared\"",
                "kind = \"integral_squared\"\nobjective = \"x/../../../escaped\"",
            ),
            vec!["gradient", "--out"],
        ),
        (
            "objective",
            text.replace(
                "kind = \"integral_squared\"",
                "kind = \"integral_squared\"\nobjective = \"..\"",
            ),
            vec!["gradient", "--out"],
        ),
        (
            "name",
            text.replace(
                "name = \"bouncing_ball\"",
                &format!("name = {:?}", escape.to_str().unwrap()),
            ),
            vec!["optimize"],
        ),
        (
            "name",
            text.replace("name = \"bouncing_ball\"", "name = \"..\\\\up\""),
            vec!["simulate"],
        ),
    ];
    for (i, (key, bad, cmd)) in cases.into_iter().enumerate() {
        assert_ne!(bad, text, "case {i}: the replacement did not apply");
        let file = parent.join(format!("bad{i}.toml"));
        std::fs::write(&file, &bad).unwrap();
        let out = parent.join(format!("res{i}"));
        let mut c = bin();
        c.arg(cmd[0]).arg(&file).current_dir(&parent);
        if cmd.len() > 1 {
            c.arg(cmd[1]).arg(&out);
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "case {i}: {err}");
        assert!(
            err.contains(file.to_str().unwrap()) && err.contains(&format!("{key}: ")),
            "case {i}: the file and key are not named: {err}"
        );
        assert!(
            err.contains("without `/`"),
            "case {i}: what is valid: {err}"
        );
        assert!(!err.contains("panicked"), "case {i}: {err}");
    }
    // nothing but the problem files: no results folder, no escaped files
    let mut left = leftovers(&parent, "");
    left.sort();
    assert_eq!(left, ["bad0.toml", "bad1.toml", "bad2.toml", "bad3.toml"]);
    assert!(!escape.exists() && !parent.with_file_name("escaped.png").exists());
    let _ = std::fs::remove_dir_all(&parent);
}
