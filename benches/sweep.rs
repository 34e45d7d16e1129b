//! Sweep scaling: a 64-point grid (8 × 8 over the spring stiffnesses k1, k2) of
//! `five_bar_stiffness`, cost and adjoint gradient at every point, on 1 and on 2 worker
//! threads: the wall time of each (median of N) and the speedup `t(1)/t(2)`. Every run must
//! give identical points (the sweep is deterministic whatever the thread count).
//!
//! The target is 1.8× (docs/benchmarks.md, "Sweeps"). What a 2-vCPU machine gives two
//! threads is not the sweep's to decide: its cores may be one core's two hyperthreads, a
//! single busy core runs faster than two (a 1-thread median of 0.60 s against the usual
//! 0.85 s once made a CI run's CPU-time ratio 1.70), other work takes cores away. So the
//! claims compare the 2-thread sweep with the **machine's own parallel reference in the
//! same run**: the same 64 points as two independent 1-thread sweeps of the halves
//! (`--shard 1/2`, `--shard 2/2`) started together — the same work with no sharing at
//! all, the best two threads can do here. The three runs alternate, so a slow spell meets
//! all of them. The checks (CLAIM FAILED, non-zero exit): the 2-thread sweep uses at most
//! 1.15× the reference's CPU time (repeated work or lock contention would show as 1.5×
//! and more) and its wall time is at most 1.2× the reference's (it keeps ≥ 83 % of the
//! machine's parallel speedup; a pool that serialised the points would take ~2×).
//!
//! A missed timing claim is measured once more before it fails.
//!
//! Run: `cargo bench --bench sweep` (or `-- --quick`: median of 4 runs each instead of 7). A
//! full run writes its table into docs/benchmarks.md (`common::publish`); `--quick` does not.

#[path = "common/mod.rs"]
mod common;

use hybridopt::problem::Problem;
use hybridopt::sweep::{self, Axis, Plan, PointRecord, RunOptions, Shard};
use std::path::Path;
use std::time::Instant;

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// One timed arrangement: the 1-thread sweep, the 2-thread sweep, or the reference (two
/// 1-thread sweeps of the halves, on two threads started together).
#[derive(Clone, Copy)]
enum Run {
    Jobs(usize),
    Halves,
}

impl Run {
    const ALL: [Run; 3] = [Run::Jobs(1), Run::Jobs(2), Run::Halves];

    fn label(self) -> &'static str {
        match self {
            Run::Jobs(1) => "`--jobs 1`",
            Run::Jobs(_) => "`--jobs 2`",
            Run::Halves => "reference: 2 × `--shard k/2 --jobs 1` at once",
        }
    }

    /// Runs the arrangement once: its points (in index order) and (wall, CPU) seconds.
    fn time(self, problem: &Problem, plan: &Plan) -> (Vec<PointRecord>, (f64, f64)) {
        let opts = |jobs, shard| RunOptions {
            jobs,
            shard,
            progress: false,
        };
        let (t, c) = (Instant::now(), common::cpu_seconds());
        let points = match self {
            Run::Jobs(jobs) => {
                sweep::sweep(problem, plan, &opts(jobs, None))
                    .expect("the sweep runs")
                    .file
                    .points
            }
            Run::Halves => {
                let half = |index| {
                    let shard = Some(Shard { index, count: 2 });
                    sweep::sweep(problem, plan, &opts(1, shard))
                        .expect("the sweep runs")
                        .file
                        .points
                };
                let (a, b) = std::thread::scope(|s| {
                    let a = s.spawn(|| half(1));
                    let b = half(2);
                    (a.join().expect("the first half's thread"), b)
                });
                let mut all: Vec<PointRecord> = a.into_iter().chain(b).collect();
                all.sort_by_key(|p| p.index);
                all
            }
        };
        let timed = (t.elapsed().as_secs_f64(), common::cpu_seconds() - c);
        (points, timed)
    }
}

/// The three arrangements, `reps` of each, alternating: (wall, CPU) medians per arrangement
/// and whether every run gave the same points.
fn measure(problem: &Problem, plan: &Plan, reps: usize) -> ([(f64, f64); 3], bool) {
    let mut walls = [Vec::new(), Vec::new(), Vec::new()];
    let mut cpus = [Vec::new(), Vec::new(), Vec::new()];
    let mut first: Option<Vec<PointRecord>> = None;
    let mut same = true;
    for _ in 0..reps {
        for (slot, run) in Run::ALL.into_iter().enumerate() {
            let (points, (wall, cpu)) = run.time(problem, plan);
            walls[slot].push(wall);
            cpus[slot].push(cpu);
            match &first {
                None => first = Some(points),
                Some(f) => same &= *f == points,
            }
        }
    }
    let mut times = [(0.0, 0.0); 3];
    for (slot, run) in Run::ALL.into_iter().enumerate() {
        let (wall, cpu) = (
            common::median(&mut walls[slot]),
            common::median(&mut cpus[slot]),
        );
        // cores busy = CPU time / wall time: below 2 for a 2-thread run, other work (or the
        // machine) took the second core
        println!(
            "  {}: {wall:.3} s (median of {reps}), {:.1} ms per point; CPU {cpu:.3} s (median), {:.2} cores busy; load average after: {}",
            run.label(),
            wall / 64.0 * 1e3,
            cpu / wall,
            load_average()
        );
        times[slot] = (wall, cpu);
    }
    (times, same)
}

/// The timing claims against the same run's reference: the 2-thread sweep's CPU time at
/// most 1.15× the reference's, its wall time at most 1.2× the reference's.
fn timing_misses(times: &[(f64, f64); 3]) -> Vec<String> {
    let [_, two, halves] = *times;
    let mut misses = Vec::new();
    let cpu_ratio = two.1 / halves.1;
    if cpu_ratio > 1.15 {
        misses.push(format!("CPU time / the reference's {cpu_ratio:.3} > 1.15"));
    }
    let wall_ratio = two.0 / halves.0;
    if wall_ratio > 1.2 {
        misses.push(format!("wall time / the reference's {wall_ratio:.3} > 1.2"));
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
    let (mut times, mut same) = measure(&problem, &plan, reps);
    // A timing claim missed under a passing load (another process, a frequency spell that
    // met one arrangement more than the others) is measured once more; only a miss in both
    // rounds fails.
    let mut missed = timing_misses(&times);
    if !missed.is_empty() {
        println!(
            "  timing claim missed ({}); measuring once more",
            missed.join("; ")
        );
        let (again, same_again) = measure(&problem, &plan, reps);
        times = again;
        same &= same_again;
        missed = timing_misses(&times);
    }
    let [one, two, halves] = times;
    let speedup = one.0 / two.0;
    let reference = one.0 / halves.0;
    let (cpu_ratio, wall_ratio) = (two.1 / halves.1, two.0 / halves.0);
    println!(
        "  speedup --jobs 2 vs --jobs 1: {speedup:.2}× (target 1.8× on two idle cores); the reference's: {reference:.2}×; \
         --jobs 2 / the reference: CPU time {cpu_ratio:.3} (≤ 1.15), wall time {wall_ratio:.3} (≤ 1.2); identical points in every run: {same}"
    );
    let row = |run: Run, (wall, cpu): (f64, f64)| {
        format!(
            "| {} | {wall:.3} s | {:.1} ms | {cpu:.3} s | {:.2} |\n",
            run.label(),
            wall / 64.0 * 1e3,
            cpu / wall
        )
    };
    common::publish(
        "sweep",
        &format!(
            "Median of {reps} at load {load_before} (before the runs):\n\n\
             | run | wall | per point | CPU | cores busy |\n|---|---|---|---|---|\n{}{}{}\n\
             Speedup **{speedup:.2}×** (the reference's {reference:.2}×); the 2-thread sweep / \
             the reference: CPU time {cpu_ratio:.2}, wall time {wall_ratio:.2}; identical points: {same}.",
            row(Run::Jobs(1), one),
            row(Run::Jobs(2), two),
            row(Run::Halves, halves)
        ),
    );
    let mut failures = missed;
    if !same {
        failures.push("the runs gave different points".to_string());
    }
    if !failures.is_empty() {
        eprintln!("CLAIM FAILED: {}", failures.join("; "));
        std::process::exit(1);
    }
}
