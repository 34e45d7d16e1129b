//! Sweep scaling: a 64-point grid (8 × 8 over the spring stiffnesses k1, k2) of
//! `five_bar_stiffness`, cost and adjoint gradient at every point, on 1 and on 2 worker
//! threads: the wall time of each (median of N) and the speedup `t(1)/t(2)`. Both runs must
//! give identical points (the sweep is deterministic whatever the thread count).
//!
//! The speedup needs two idle cores: on a shared machine other work takes cores away from
//! the 2-thread run, so the run prints the load average (from /proc/loadavg) and the cores
//! it kept busy (its CPU time over its wall time, getrusage) next to it.
//! The target is 1.8× (docs/benchmarks.md, "Sweeps"); the checks below (CLAIM FAILED,
//! non-zero exit): the 2-thread run uses at most 1.25× the CPU time of the 1-thread run (no
//! parallel overhead: repeated work or lock contention would show as 1.5× and more; five
//! fresh-clone CI runs on this 2-vCPU machine measured 1.04–1.16, the two threads sharing
//! caches and memory bandwidth), and, when it had its 2 cores (≥ 1.8 cores busy), a speedup of at
//! least 1.5× (headroom for a moderately busy machine).
//!
//! A missed timing claim is measured once more before it fails (a passing load can miss
//! one round).
//!
//! Run: `cargo bench --bench sweep` (or `-- --quick`: median of 4 runs each instead of 7). A
//! full run writes its table into docs/benchmarks.md (`common::publish`); `--quick` does not.

#[path = "common/mod.rs"]
mod common;

use hybridopt::problem::Problem;
use hybridopt::sweep::{self, Axis, Plan, RunOptions};
use std::path::Path;
use std::time::Instant;

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The 1- and 2-thread runs, `reps` of each: (wall, CPU) medians per thread count and the
/// sweep files of every run.
fn measure(
    problem: &Problem, plan: &Plan, reps: usize,
) -> (Vec<(f64, f64)>, Vec<hybridopt::sweep::SweepFile>) {
    // The 1- and 2-thread runs alternate, so a slow spell of the machine meets both; each
    // keeps the median of its wall times and of its CPU times. This machine's cores run
    // ~1.5× faster while only one is busy (a 1-thread run once took 0.58 s against the usual
    // 0.90 s): the best of a few runs picked that spell and failed both claims (CPU ratio
    // 1.68, speedup 1.18), the median is robust to one such run.
    let mut walls = [Vec::new(), Vec::new()];
    let mut cpus = [Vec::new(), Vec::new()];
    let mut results = Vec::new();
    for _ in 0..reps {
        for (slot, jobs) in [1, 2].into_iter().enumerate() {
            let opts = RunOptions {
                jobs,
                shard: None,
                progress: false,
            };
            let (t, c) = (Instant::now(), common::cpu_seconds());
            let r = sweep::sweep(problem, plan, &opts).expect("the sweep runs");
            let wall = t.elapsed().as_secs_f64();
            walls[slot].push(wall);
            cpus[slot].push(common::cpu_seconds() - c);
            results.push(r.file);
        }
    }
    let mut times = Vec::new();
    for (slot, jobs) in [1, 2].into_iter().enumerate() {
        let (best, cpu_best) = (
            common::median(&mut walls[slot]),
            common::median(&mut cpus[slot]),
        );
        // cores busy = CPU time / wall time: below `jobs`, other work took the cores
        println!(
            "  --jobs {jobs}: {best:.3} s (median of {reps}), {:.1} ms per point; CPU {cpu_best:.3} s (median), {:.2} cores busy; load average after: {}",
            best / 64.0 * 1e3,
            cpu_best / best,
            load_average()
        );
        times.push((best, cpu_best));
    }
    (times, results)
}

/// The timing claims: the 2-thread run uses at most 1.25× the 1-thread run's CPU time (no
/// parallel overhead), and, where it had its 2 cores (≥ 1.8 busy), is at least 1.5× faster.
fn timing_misses(times: &[(f64, f64)], cores: usize) -> Vec<String> {
    let mut misses = Vec::new();
    let cpu_ratio = times[1].1 / times[0].1;
    if cpu_ratio > 1.25 {
        misses.push(format!("CPU time ratio {cpu_ratio:.3} > 1.25"));
    }
    let speedup = times[0].0 / times[1].0;
    if cores >= 2 && times[1].1 / times[1].0 >= 1.8 && speedup < 1.5 {
        misses.push(format!("speedup {speedup:.2} < 1.5"));
    }
    misses
}

fn main() {
    let quick = common::quick();
    let reps = if quick { 4 } else { 7 };
    let load_before = common::load();
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
    let (mut times, mut results) = measure(&problem, &plan, reps);
    // A timing claim missed under a passing load (another process, a frequency spell) is
    // measured once more; only a miss in both rounds fails (a fresh-clone CI run once
    // measured a CPU ratio of 1.265, its rerun on the same commit 1.109).
    let mut missed = timing_misses(&times, cores);
    if !missed.is_empty() {
        println!(
            "  timing claim missed ({}); measuring once more",
            missed.join("; ")
        );
        let (again, more) = measure(&problem, &plan, reps);
        times = again;
        results.extend(more);
        missed = timing_misses(&times, cores);
    }
    let failed = results[0].counts.failed;
    let same = results.iter().all(|f| f.points == results[0].points);
    let speedup = times[0].0 / times[1].0;
    let cpu_ratio = times[1].1 / times[0].1;
    let busy = times[1].1 / times[1].0;
    println!("  speedup --jobs 2 vs --jobs 1: {speedup:.2}× (target 1.8×); CPU time --jobs 2 / --jobs 1: {cpu_ratio:.3}; {failed} of 64 points failed; identical points in every run: {same}");
    let row = |jobs: usize, (wall, cpu): (f64, f64)| {
        format!(
            "| `--jobs {jobs}` | {wall:.3} s | {:.1} ms | {cpu:.3} s | {:.2} |\n",
            wall / 64.0 * 1e3,
            cpu / wall
        )
    };
    common::publish(
        "sweep",
        &format!(
            "Median of {reps} at load {load_before} (before the runs):\n\n\
             | run | wall | per point | CPU | cores busy |\n|---|---|---|---|---|\n{}{}\n\
             Speedup **{speedup:.2}×**; CPU time of the 2-thread run / the 1-thread run \
             {cpu_ratio:.2}; identical points: {same}.",
            row(1, times[0]),
            row(2, times[1])
        ),
    );
    let mut failures = missed;
    if !same {
        failures.push("the runs gave different points".to_string());
    }
    if cores < 2 || times[1].1 / times[1].0 < 1.8 {
        println!("  (speedup not checked: the --jobs 2 run had {busy:.2} of its 2 cores; other work had the rest)");
    }
    if !failures.is_empty() {
        eprintln!("CLAIM FAILED: {}", failures.join("; "));
        std::process::exit(1);
    }
}
