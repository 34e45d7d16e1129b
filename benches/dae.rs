//! Hybrid DAEs and systems with memory (reference-models §7–§9): forward and adjoint times
//! of the shipped problems rectifier_capacitor (index 1), pendulum_wall (index 2),
//! steel_identify, hysteretic_design and hysteretic_identify (memory), with the
//! adjoint/forward ratio (goal ≤ 5, as for ODEs: docs/benchmarks.md, "Hybrid DAEs").
//!
//! The forward time is one plain simulation (with the cost quadratures); the adjoint time
//! one `evaluate(…, Adjoint)` (its forward run with checkpoints, the backward pass and the
//! gradient), both at the problem's start values and tolerances. Two clocks: the best
//! wall time of `reps` runs, and the process CPU time (user + system, `/proc/self/stat`)
//! per run over all of them, which other processes on a loaded machine disturb less; the
//! ratio is taken on CPU time where it is available. A ratio above 5 prints "GOAL
//! MISSED" (the benchmark reports; it does not fail).
//!
//! Run: `cargo bench --bench dae` (or `-- --quick`: fewer repetitions). A full run writes
//! its table into docs/benchmarks.md (`common::publish`); `--quick` leaves the page alone.

#[path = "common/mod.rs"]
mod common;

use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use std::path::Path;
use std::time::Instant;

/// The best of `reps` runs of `f`, in seconds.
fn best_time<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The CPU time (user + system) of this process so far, in seconds, from
/// `/proc/self/stat` (fields 14 and 15, in clock ticks of 1/100 s); `None` off Linux.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the fields after the command name, which is in parentheses and may hold spaces
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// The best wall time of `reps` runs of `f` and the mean CPU time per run, in seconds.
fn timed<F: FnMut()>(reps: usize, mut f: F) -> (f64, Option<f64>) {
    let c0 = cpu_seconds();
    let wall = best_time(reps, &mut f);
    let cpu = c0
        .zip(cpu_seconds())
        .map(|(a, b)| (b - a) / reps.max(1) as f64);
    (wall, cpu)
}

/// The adjoint/forward goal of the issue.
const GOAL: f64 = 5.0;

fn main() {
    let quick = common::quick();
    let reps = if quick { 10 } else { 60 };
    let load = common::load();
    println!("hybrid DAEs and systems with memory: best of {reps}; load average {load}");
    let mut md = format!(
        "Best wall time of {reps} runs and CPU time per run (which the load disturbs less; the \
         ratio is on CPU time), at load {load}:\n\n\
         | problem | steps | events | forward wall / CPU | adjoint wall / CPU | adjoint/forward (CPU) |\n\
         |---|---|---|---|---|---|\n"
    );
    println!(
        "  {:<22} {:>6} {:>6} {:>12} {:>12} {:>12} {:>12} {:>8}",
        "problem",
        "steps",
        "events",
        "forward [s]",
        "adjoint [s]",
        "fwd cpu [s]",
        "adj cpu [s]",
        "ratio"
    );
    let mut missed = Vec::new();
    for name in [
        "rectifier_capacitor",
        "pendulum_wall",
        "steel_identify",
        "hysteretic_design",
        "hysteretic_identify",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("problems/{name}.toml"));
        let p = Problem::load(&path).expect("shipped problem");
        let s = p.setup().expect("setup");
        let th = p.theta_values();
        let tr = s.simulate(&th).expect("simulation");
        let (forward, fwd_cpu) = timed(reps, || {
            std::hint::black_box(s.simulate(&th).expect("simulation"));
        });
        let (adjoint, adj_cpu) = timed(reps, || {
            std::hint::black_box(evaluate(&s, &th, GradientMethod::Adjoint).expect("adjoint"));
        });
        let ratio = match (fwd_cpu, adj_cpu) {
            (Some(f), Some(a)) if f > 0.0 => a / f,
            _ => adjoint / forward,
        };
        let show = |v: Option<f64>| v.map_or("-".to_string(), |c| format!("{c:.3e}"));
        println!(
            "  {:<22} {:>6} {:>6} {:>12.3e} {:>12.3e} {:>12} {:>12} {:>7.2}× {}",
            name,
            tr.stats.steps,
            tr.events.len(),
            forward,
            adjoint,
            show(fwd_cpu),
            show(adj_cpu),
            ratio,
            if ratio <= GOAL { "" } else { "GOAL MISSED" }
        );
        if ratio > GOAL {
            missed.push(format!("{name} {ratio:.2}×"));
        }
        let ms = |wall: f64, cpu: Option<f64>| {
            let cpu = cpu.map_or("–".to_string(), |c| format!("{:.1}", c * 1e3));
            format!("{:.1} / {cpu} ms", wall * 1e3)
        };
        let label = match name {
            "rectifier_capacitor" => "`rectifier_capacitor` (Radau IIA)".to_string(),
            "hysteretic_identify" => "`hysteretic_identify` (1e-12)".to_string(),
            n => format!("`{n}`"),
        };
        md += &format!(
            "| {label} | {} | {} | {} | {} | {ratio:.1}× |\n",
            tr.stats.steps,
            tr.events.len(),
            ms(forward, fwd_cpu),
            ms(adjoint, adj_cpu)
        );
    }
    common::publish("dae", &md);
    // a claim, like benches/gradients.rs's: a ratio above the goal fails the bench
    if !missed.is_empty() {
        eprintln!("adjoint/forward above {GOAL}: {}", missed.join(", "));
        std::process::exit(1);
    }
}
