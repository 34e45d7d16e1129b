//! Systems with memory (reference-models §9): forward and adjoint times of the shipped
//! problems steel_identify, hysteretic_design and hysteretic_identify, with the
//! adjoint/forward ratio (goal ≤ 5, as for ODEs: README "Systems with memory").
//!
//! The forward time is one plain simulation (with the cost quadratures); the adjoint time
//! one `evaluate(…, Adjoint)` (its forward run with checkpoints, the backward pass and the
//! gradient), both at the problem's start values and tolerances. Best of `reps` runs: on a
//! shared machine other work only ever adds time. A ratio above 5 prints "GOAL MISSED"
//! (the benchmark reports; it does not fail).
//!
//! Run: `cargo bench --bench dae` (or `-- --quick`: fewer repetitions).

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

/// The adjoint/forward goal of the issue.
const GOAL: f64 = 5.0;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let reps = if quick { 3 } else { 15 };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "systems with memory: best of {reps}; load average {}",
        load.split_whitespace().next().unwrap_or("?")
    );
    println!(
        "  {:<22} {:>6} {:>6} {:>12} {:>12} {:>8}",
        "problem", "steps", "events", "forward [s]", "adjoint [s]", "ratio"
    );
    for name in ["steel_identify", "hysteretic_design", "hysteretic_identify"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("problems/{name}.toml"));
        let p = Problem::load(&path).expect("shipped problem");
        let s = p.setup().expect("setup");
        let th = p.theta_values();
        let tr = s.simulate(&th).expect("simulation");
        let forward = best_time(reps, || {
            std::hint::black_box(s.simulate(&th).expect("simulation"));
        });
        let adjoint = best_time(reps, || {
            std::hint::black_box(evaluate(&s, &th, GradientMethod::Adjoint).expect("adjoint"));
        });
        let ratio = adjoint / forward;
        println!(
            "  {:<22} {:>6} {:>6} {:>12.3e} {:>12.3e} {:>7.2}× {}",
            name,
            tr.stats.steps,
            tr.events.len(),
            forward,
            adjoint,
            ratio,
            if ratio <= GOAL { "" } else { "GOAL MISSED" }
        );
    }
}
