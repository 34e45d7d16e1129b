//! Benchmark: Algorithm 2.1 (O(n²d) per direction) against enumerating all n! pieces of the
//! B-derivative (seed 003 (6.4)) and evaluating every piece on the direction, for n = d = 2..8
//! with random piecewise-constant fields (every component in [0.2, 2], identity normals).
//!
//! Run with `cargo bench --bench bderivative` (or `-- --quick`: a tenth of the time budget).
//! Each timing repeats the operation until a time budget is spent and reports the mean per
//! call. A full run writes its table into docs/benchmarks.md (`common::publish`); `--quick`
//! leaves the page alone.

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use hybridopt::sensitivity::corner::{all_pieces, bderivative_value, Corner};
use nalgebra::DVector;

/// splitmix64: a tiny deterministic PRNG.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self, a: f64, b: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        a + (b - a) * u
    }
    fn vector(&mut self, d: usize, a: f64, b: f64) -> DVector<f64> {
        DVector::from_fn(d, |_, _| self.uniform(a, b))
    }
}

/// Mean time per call of `f` in nanoseconds: calls `f` in batches until `budget` has passed
/// (at least `min_calls` calls).
fn time_ns<F: FnMut()>(mut f: F, budget: Duration, min_calls: u64) -> f64 {
    // Warm-up.
    f();
    let mut calls = 0u64;
    let mut batch = 1u64;
    let start = Instant::now();
    loop {
        for _ in 0..batch {
            f();
        }
        calls += batch;
        let elapsed = start.elapsed();
        if elapsed >= budget && calls >= min_calls {
            return elapsed.as_secs_f64() * 1e9 / calls as f64;
        }
        batch = (batch * 2).min(1 << 20);
    }
}

fn fmt_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn main() {
    let total = Instant::now();
    let mut rng = Rng(0xB0B);
    let quick = common::quick();
    let budget = Duration::from_millis(if quick { 30 } else { 300 });
    let mut md = format!(
        "Mean time per call over {} ms of calls each, at load {}:\n\n\
         | n | n! | Algorithm 2.1 | enumeration | enumeration / Algorithm 2.1 |\n\
         |---|---|---|---|---|\n",
        budget.as_millis(),
        common::load()
    );
    println!("B-derivative at a corner with n = d surfaces (random piecewise-constant fields)");
    println!("Algorithm 2.1: bderivative_value (value + crossing order), mean per direction");
    println!("enumeration:   all_pieces (all n! saltation products) + every piece · direction");
    println!();
    println!(
        "{:>2}  {:>6}  {:>14}  {:>14}  {:>12}",
        "n", "n!", "Algorithm 2.1", "enumeration", "ratio"
    );
    for n in 2..=8usize {
        let d = n;
        let fields: Vec<DVector<f64>> = (0..1usize << n).map(|_| rng.vector(d, 0.2, 2.0)).collect();
        let corner = Corner::with_identity_normals(fields).expect("valid random corner");
        let directions: Vec<DVector<f64>> = (0..16).map(|_| rng.vector(d, -1.0, 1.0)).collect();

        // Sanity: the value of Algorithm 2.1 is the enumerated piece of its order applied to
        // the direction.
        let pieces = all_pieces(&corner).expect("n ≤ 8");
        for dir in &directions {
            let (value, order) = bderivative_value(&corner, dir).expect("valid direction");
            let (_, piece) = pieces
                .iter()
                .find(|(o, _)| *o == order)
                .expect("order is a permutation");
            let err = (piece * dir - &value).norm() / value.norm();
            assert!(
                err < 1e-12,
                "n = {n}: piece and Algorithm 2.1 disagree ({err:e})"
            );
        }

        let mut k = 0usize;
        let alg = time_ns(
            || {
                let dir = &directions[k % directions.len()];
                k += 1;
                black_box(bderivative_value(black_box(&corner), black_box(dir)).unwrap());
            },
            budget,
            1000,
        );
        let mut k = 0usize;
        let enumeration = time_ns(
            || {
                let dir = &directions[k % directions.len()];
                k += 1;
                let pieces = all_pieces(black_box(&corner)).unwrap();
                let mut acc = 0.0;
                for (_, piece) in &pieces {
                    acc += (piece * black_box(dir))[0];
                }
                black_box(acc);
            },
            budget,
            3,
        );
        let count: usize = (1..=n).product();
        println!(
            "{:>2}  {:>6}  {:>14}  {:>14}  {:>11.1}x",
            n,
            count,
            fmt_ns(alg),
            fmt_ns(enumeration),
            enumeration / alg
        );
        let ratio = enumeration / alg;
        md += &format!(
            "| {n} | {} | {} | {} | {}× |\n",
            common::thousands(count),
            fmt_ns(alg),
            fmt_ns(enumeration),
            if ratio < 100.0 {
                format!("{ratio:.1}")
            } else {
                format!("{ratio:.0}")
            }
        );
    }
    common::publish("bderivative", &md);
    println!();
    println!(
        "total benchmark time: {:.1} s",
        total.elapsed().as_secs_f64()
    );
}
