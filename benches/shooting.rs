//! Multiple shooting's constraint Jacobian on 1 and 2 threads: one evaluation of the cost
//! and every row with exact gradients (`ShootingEvaluator::point`: each segment's direct pass, then
//! the block-bidiagonal assembly) for two shipped problems — the chaotic impact pendulum
//! with 100 segments (1 parameter, 2 states) and the thrust problem with 4 segments (60
//! control coefficients) — timed in rayon pools of 1 and 2 threads, alternating, median
//! of N each (docs/benchmarks.md, "Multiple shooting"). The two runs give identical rows
//! (each segment's run does not depend on the thread that runs it).
//!
//! The target is `--jobs 2` ≥ 1.7× faster than `--jobs 1` on a quiet machine. A full run
//! checks it (CLAIM FAILED, non-zero exit) on the 100-segment problem when the 2-thread
//! runs had their two cores (≥ 1.8 cores busy); the 4 segments of the thrust problem do
//! unequal work (their impacts and steps differ), so the longest bounds the 2-thread time
//! and its speedup is printed, not claimed. `--quick` prints the ratios only (CI's machine
//! shares its cores).
//!
//! Run: `cargo bench --bench shooting` (or `-- --quick`: median of 3 instead of 9). A full
//! run writes its table into docs/benchmarks.md; `--quick` does not.

#[path = "common/mod.rs"]
mod common;

use hybridopt::optimize::ShootingEvaluator;
use hybridopt::problem::Problem;
use std::path::Path;
use std::time::Instant;

/// The problem file's text with `extra` appended.
fn problem(file: &str, extra: &str) -> Problem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("the problem file");
    Problem::parse(&format!("{text}{extra}"), &path).expect("the problem parses")
}

fn main() {
    let quick = common::quick();
    let reps = if quick { 3 } else { 9 };
    let load_before = common::load();
    let cases = [
        (
            "impact_pendulum_identify (100 segments)",
            problem("impact_pendulum_identify.toml", ""),
            // evaluations per timed run
            4,
            // the claim: 100 segments balance over 2 threads
            true,
        ),
        (
            "thrust_constrained (4 segments, 60 controls)",
            problem("thrust_constrained.toml", "\n[shooting]\nsegments = 4\n"),
            8,
            // 4 segments of unequal work: the longest bounds the 2-thread time (printed,
            // not claimed)
            false,
        ),
    ];
    let pools: Vec<rayon::ThreadPool> = [1, 2]
        .iter()
        .map(|&j| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(j)
                .build()
                .expect("a pool")
        })
        .collect();
    let mut rows = String::new();
    let mut failures = Vec::new();
    println!(
        "shooting: the constraint Jacobian on 1 and 2 threads; load average before: {load_before}"
    );
    for (name, p, per_run, claim) in &cases {
        let setup = p.setup().expect("the setup");
        let shooting = p.shooting.as_ref().expect("a [shooting] table");
        let evaluator = ShootingEvaluator::new(&setup, &p.theta, &p.constraints, shooting)
            .expect("the problem builds");
        let eval = || evaluator.point(None).unwrap();
        let reference = pools[0].install(eval);
        let mut walls = [Vec::new(), Vec::new()];
        let mut cpus = [Vec::new(), Vec::new()];
        let mut same = true;
        for _ in 0..reps {
            for (slot, pool) in pools.iter().enumerate() {
                let (t, c) = (Instant::now(), common::cpu_seconds());
                for _ in 0..*per_run {
                    let q = pool.install(eval);
                    same &= q == reference;
                }
                walls[slot].push(t.elapsed().as_secs_f64() / *per_run as f64);
                cpus[slot].push((common::cpu_seconds() - c) / *per_run as f64);
            }
        }
        let (w1, w2) = (common::median(&mut walls[0]), common::median(&mut walls[1]));
        let (c1, c2) = (common::median(&mut cpus[0]), common::median(&mut cpus[1]));
        let speedup = w1 / w2;
        let busy = c2 / w2;
        let variables = reference.variables.len();
        let nrows = reference.rows.len();
        println!(
            "  {name}: {variables} variables, {nrows} rows; 1 thread {:.1} ms, 2 threads {:.1} ms (medians of {reps}): speedup {speedup:.2}× (target 1.7×), {busy:.2} cores busy; identical rows: {same}",
            w1 * 1e3,
            w2 * 1e3
        );
        rows.push_str(&format!(
            "| {name} | {variables} | {nrows} | {:.1} ms | {:.1} ms | **{speedup:.2}×** | {busy:.2} |\n",
            w1 * 1e3,
            w2 * 1e3
        ));
        if !same {
            failures.push(format!("{name}: the 1- and 2-thread rows differ"));
        }
        let _ = c1;
        if *claim && !quick && busy >= 1.8 && speedup < 1.7 {
            failures.push(format!(
                "{name}: speedup {speedup:.2}× below 1.7× with {busy:.2} cores busy"
            ));
        }
    }
    common::publish(
        "shooting",
        &format!(
            "Median of {reps} at load {load_before} (before the runs):\n\n\
             | problem | variables | rows | 1 thread | 2 threads | speedup | cores busy (2 threads) |\n\
             |---|---|---|---|---|---|---|\n{rows}"
        ),
    );
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("CLAIM FAILED: {f}");
        }
        std::process::exit(1);
    }
}
