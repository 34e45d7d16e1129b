//! The library's `OptimizeSummary` (what the Python package returns) is the CLI's
//! `summary.json`, field for field, and `write_optimize_results` writes the CLI's folder.

use hybridopt::optimize::optimize;
use hybridopt::output::optimize::write_optimize_results;
use hybridopt::output::optimize::OptimizeSummary;
use hybridopt::problem::Problem;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hybridopt-summary-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn without_wall_time(mut v: serde_json::Value) -> serde_json::Value {
    let w = v
        .as_object_mut()
        .and_then(|o| o.remove("wall_time_s"))
        .and_then(|w| w.as_f64());
    assert!(w.is_some_and(|w| w > 0.0), "wall_time_s: {w:?}");
    v
}

fn lib_value(s: &OptimizeSummary) -> serde_json::Value {
    let text = serde_json::to_string_pretty(&s.to_value().unwrap()).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// impact_timing (parameters) and thrust_control (controls, 5 iterations): the same
/// summary and the same files as `hybridopt optimize`.
#[test]
fn library_summary_and_folder_equal_the_cli() {
    for (name, iters) in [("impact_timing", None), ("thrust_control", Some(5u64))] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("problems")
            .join(format!("{name}.toml"));
        let dir = tmpdir(name);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hybridopt"));
        cmd.arg("optimize").arg(&file).arg("--quiet").arg("--json");
        cmd.arg("--out").arg(dir.join("cli"));
        if let Some(n) = iters {
            cmd.arg("--max-iters").arg(n.to_string());
        }
        let out = cmd.output().expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cli: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

        let mut p = Problem::load(&file).unwrap();
        if let Some(n) = iters {
            p.optimizer.max_iters = n;
        }
        let setup = p.setup().unwrap();
        let r = optimize(&setup, &p.theta, &p.optimizer, None).unwrap();
        let summary = OptimizeSummary::new(&p, &setup, &r);
        // both through JSON text: serde_json's default float parser is not correctly
        // rounded, so values parsed from text compare with values parsed from text
        let lib = lib_value(&summary);
        assert_eq!(
            without_wall_time(lib),
            without_wall_time(cli.clone()),
            "{name}"
        );

        write_optimize_results(&p, &setup, &r, &summary, &dir.join("lib")).unwrap();
        assert_eq!(
            names_in(&dir.join("lib")),
            names_in(&dir.join("cli")),
            "{name}"
        );
        for csv in ["history.csv", "trajectory.csv", "trajectory_initial.csv"] {
            let a = std::fs::read_to_string(dir.join("lib").join(csv)).unwrap();
            let b = std::fs::read_to_string(dir.join("cli").join(csv)).unwrap();
            assert_eq!(a, b, "{name}: {csv}");
        }
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("lib/summary.json")).unwrap())
                .unwrap();
        assert_eq!(written, lib_value(&summary));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
