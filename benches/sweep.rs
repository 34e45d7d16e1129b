//! Sweep scaling: a 64-point grid (8 × 8 over the spring stiffnesses k1, k2) of
//! `five_bar_stiffness`, cost and adjoint gradient at every point, on 1 and on 2 worker
//! threads: the wall time of each (best of N) and the speedup `t(1)/t(2)`. Both runs must
//! give identical points (the sweep is deterministic whatever the thread count).
//!
//! The speedup needs two idle cores: on a shared machine other work takes cores away from
//! the 2-thread run, so the run prints the load average (from /proc/loadavg) next to it.
//! The README's target is 1.8×; the check below (CLAIM FAILED, non-zero exit) uses 1.5×
//! as headroom for a moderately busy machine.
//!
//! Run: `cargo bench --bench sweep` (or `-- --quick`: best of 3 runs each instead of 7).

use hybridopt::problem::Problem;
use hybridopt::sweep::{self, Axis, Plan, RunOptions};
use std::path::Path;
use std::time::Instant;

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let reps = if quick { 3 } else { 7 };
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/five_bar_stiffness.toml");
    let problem = Problem::load(&file).expect("five_bar_stiffness.toml loads");
    let axis = |name: &str| Axis {
        name: name.into(),
        lo: 80.0,
        hi: 120.0,
        n: 8,
    };
    let plan = Plan::Grid {
        axes: vec![axis("k1"), axis("k2")],
    };
    let cores = sweep::run::default_jobs();
    println!(
        "sweep: five_bar_stiffness, 64-point grid k1 × k2 ∈ [80, 120]², cost + adjoint gradient; {cores} cores; load average before: {}",
        load_average()
    );
    let mut times = Vec::new();
    let mut results = Vec::new();
    for jobs in [1, 2] {
        let opts = RunOptions {
            jobs,
            shard: None,
            progress: false,
        };
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            let t = Instant::now();
            let r = sweep::sweep(&problem, &plan, &opts).expect("the sweep runs");
            best = best.min(t.elapsed().as_secs_f64());
            results.push(r.file);
        }
        println!(
            "  --jobs {jobs}: {best:.3} s (best of {reps}), {:.1} ms per point; load average after: {}",
            best / 64.0 * 1e3,
            load_average()
        );
        times.push(best);
    }
    let failed = results[0].counts.failed;
    let same = results.iter().all(|f| f.points == results[0].points);
    let speedup = times[0] / times[1];
    println!("  speedup --jobs 2 vs --jobs 1: {speedup:.2}× (target 1.8×); {failed} of 64 points failed; identical points in every run: {same}");
    let mut failures = Vec::new();
    if !same {
        failures.push("the runs gave different points".to_string());
    }
    if cores >= 2 && speedup < 1.5 {
        failures.push(format!("speedup {speedup:.2} < 1.5"));
    }
    if !failures.is_empty() {
        eprintln!("CLAIM FAILED: {}", failures.join("; "));
        std::process::exit(1);
    }
}
