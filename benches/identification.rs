//! Identification benchmark (issue 45).
//!
//! 1. **Coverage of the 95 % intervals**: 1,000 replicates (ten blocks of the 100)
//!    of the vibrating table's 3.7 s record (problems/vibrating_table_short.toml, exact data
//!    from problems/data/vibrating_table.py) with seeded Gaussian noise of σ = 1 mm added to
//!    the heights, each fitted by Gauss–Newton from the file's start. Claims: the intervals
//!    (Student t, σ̂² estimated) cover the truth (e = 0.85, A = 0.13) in ≥ 93 % of the
//!    replicates for each parameter, and the mean standard error is within 20 % of the
//!    replicates' standard deviation. Why 1,000: a correct 95 % interval covers ≥ 90 of 100
//!    with probability 98.9 %, so one block of 100 fails one seed in ~90 — the first block
//!    of this stream is such a draw (89 of 100) while the 1,000 cover 94–95 %; the table
//!    prints every block's count so that the 100-replicate figure is there too.
//! 2. **The shipped identification problems refitted to data files**: each problem's
//!    `track` term against its `[reference]` run replaced by a `data` term on
//!    problems/data/<name>_samples.csv (the reference run sampled, problems/data/
//!    refit_samples.py), fitted by Gauss–Newton; against the shipped file's own solver
//!    (L-BFGS, or the SQP of multiple shooting, on the tracking integral) in the same run. Claims: Gauss–Newton in ≤ 10
//!    iterations each, at the reference parameters to 1e-6 relative.
//!
//! Run: `cargo bench --bench identification` (or `-- --quick`: the same replicates, fewer
//! timing repetitions). A full run writes its tables into docs/benchmarks.md.

#[path = "common/mod.rs"]
mod common;

use hybridopt::problem::Problem;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// SplitMix64 and Box–Muller: seeded standard normal numbers.
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn next(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Fits `text` (a problem file's text whose data paths are absolute) and returns
/// (estimates by name, standard errors, interval bounds, iterations, seconds).
fn fit(text: &str, at: &Path, names: &[&str]) -> (Vec<f64>, Vec<f64>, Vec<(f64, f64)>, u64, f64) {
    let p = Problem::parse(text, at).expect("the problem parses");
    let setup = p.setup().expect("setup");
    let t = Instant::now();
    let r = p
        .optimize_trajectory(&setup, &p.theta, None)
        .expect("the fit runs");
    let secs = t.elapsed().as_secs_f64();
    let ls = r.least_squares.as_ref().expect("a data fit");
    let st = ls.statistics.as_ref().expect("statistics");
    let mut est = vec![];
    let mut se = vec![];
    let mut ci = vec![];
    for n in names {
        let q = st
            .parameters
            .iter()
            .find(|q| q.name == *n)
            .expect("a fitted parameter");
        est.push(q.estimate);
        se.push(q.standard_error);
        ci.push((q.ci_low, q.ci_high));
    }
    (est, se, ci, r.iterations, secs)
}

/// Replicates per block: the "100 replicates".
const BLOCK: usize = 100;
/// Blocks: 1,000 replicates in all, so that the coverage is measured to ±0.7 % (one
/// binomial standard deviation at 95 %); a single block of 100 has ±2.2 %.
const BLOCKS: usize = 10;
/// The noise's standard deviation on the heights (m); the problem's `sigma` is the same.
const SIGMA: f64 = 1e-3;
/// The vibrating table's true e and A (problems/data/vibrating_table.py).
const TRUTH: [f64; 2] = [0.85, 0.13];

/// One replicate's fit: estimates, standard errors, whether each interval covers the truth,
/// and the iterations.
struct Replicate {
    est: [f64; 2],
    se: [f64; 2],
    covers: [bool; 2],
    iterations: u64,
}

/// Replicate `k`: the exact record plus `SIGMA`·N(0, 1) noise on each height, written to
/// `dir` and fitted from the problem file's start.
fn replicate(k: usize, base: &str, exact: &str, dir: &Path, noise: &mut Normal) -> Replicate {
    let mut csv = String::from("t,y\n");
    for line in exact.lines().skip(1) {
        let (t, y) = line.split_once(',').unwrap();
        let y: f64 = y.parse().unwrap();
        csv += &format!("{t},{:.17e}\n", y + SIGMA * noise.next());
    }
    let file = dir.join(format!("noisy_{k}.csv"));
    std::fs::write(&file, csv).unwrap();
    let text = base.replace("data/vibrating_table_3p7s.csv", file.to_str().unwrap());
    let (e, s, ci, iterations, _) = fit(&text, &dir.join("p.toml"), &["e", "A"]);
    let covers = [0, 1].map(|i| ci[i].0 <= TRUTH[i] && TRUTH[i] <= ci[i].1);
    Replicate {
        est: [e[0], e[1]],
        se: [s[0], s[1]],
        covers,
        iterations,
    }
}

/// The coverage study: `BLOCKS` × `BLOCK` noisy replicates of the 3.7 s record. Returns
/// its markdown and pushes failed claims: over all replicates, coverage ≥ 93 % (the
/// 99.9 % binomial lower limit of a true 95 % at n = 1,000 is 92.9 %) and the mean
/// standard error within 20 % of the replicates' standard deviation.
fn coverage(failures: &mut Vec<String>) -> String {
    let dir = std::env::temp_dir().join(format!("hybridopt-bench-ident-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = std::fs::read_to_string(root().join("problems/vibrating_table_short.toml")).unwrap();
    let exact =
        std::fs::read_to_string(root().join("problems/data/vibrating_table_3p7s.csv")).unwrap();
    let mut noise = Normal(2026);
    let t0 = Instant::now();
    let runs: Vec<Replicate> = (0..BLOCKS * BLOCK)
        .map(|k| replicate(k, &base, &exact, &dir, &mut noise))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    let secs = t0.elapsed().as_secs_f64();
    let its = runs.iter().map(|r| r.iterations);
    let mut md = format!(
        "{} replicates ({BLOCKS} blocks of {BLOCK}, one seeded stream) of the 3.7 s record \
         with σ = 1 mm noise on the heights, fitted in {secs:.1} s (iterations {}–{}):\n\n\
         | parameter | truth | mean estimate | replicates' std | mean standard error | SE / std \
         | intervals covering the truth (all) | per block of 100: first, min–max |\n\
         |---|---|---|---|---|---|---|---|\n",
        runs.len(),
        its.clone().min().unwrap(),
        its.max().unwrap()
    );
    for (i, name) in ["e", "A"].iter().enumerate() {
        md += &summarize(i, name, &runs, failures);
    }
    md
}

/// Parameter `i`'s row of the coverage table, its claims checked.
fn summarize(i: usize, name: &str, runs: &[Replicate], failures: &mut Vec<String>) -> String {
    let n = runs.len() as f64;
    let mean = runs.iter().map(|r| r.est[i]).sum::<f64>() / n;
    let sd = (runs.iter().map(|r| (r.est[i] - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let mse = runs.iter().map(|r| r.se[i]).sum::<f64>() / n;
    let ratio = mse / sd;
    let covered = runs.iter().filter(|r| r.covers[i]).count();
    let blocks: Vec<usize> = runs
        .chunks(BLOCK)
        .map(|b| b.iter().filter(|r| r.covers[i]).count())
        .collect();
    let (lo, hi) = (blocks.iter().min().unwrap(), blocks.iter().max().unwrap());
    let at_90 = blocks.iter().filter(|&&c| c >= 90).count();
    println!(
        "  {name}: mean {mean:.10}, replicates' std {sd:.3e}, mean SE {mse:.3e} (ratio {ratio:.3}), \
         covered {covered}/{} ; blocks of {BLOCK}: first {}, min {lo}, max {hi}, {at_90}/{} at ≥ 90",
        runs.len(),
        blocks[0],
        blocks.len()
    );
    if (covered as f64) < 0.93 * n {
        failures.push(format!(
            "{name}: the 95 % intervals cover the truth in {covered} of {} (< 93 %)",
            runs.len()
        ));
    }
    if !(0.8..=1.2).contains(&ratio) {
        failures.push(format!(
            "{name}: mean SE / replicates' std = {ratio:.3}, not within 20 %"
        ));
    }
    format!(
        "| {name} | {} | {mean:.10} | {sd:.3e} | {mse:.3e} | {ratio:.3} | {covered} / {} | {}, {lo}–{hi} ({at_90} of {} blocks ≥ 90) |\n",
        TRUTH[i],
        runs.len(),
        blocks[0],
        blocks.len()
    )
}

/// The shipped identification problems that fit a reference run: four by single shooting,
/// the chaotic impact pendulum by multiple shooting (100 segments, its `[shooting]` kept, so
/// its data fit is Bock's generalized Gauss–Newton).
const REFITS: &[&str] = &[
    "ball_identify",
    "five_bar_identify",
    "hysteretic_identify",
    "steel_identify",
    "impact_pendulum_identify",
];

/// The problem's text with its `track` terms, `[reference]` and `[optimizer]` replaced by
/// one data term on its samples file (σ = 1 for every column), and the reference values.
fn as_data_fit(name: &str) -> (String, Vec<(String, f64)>) {
    let text = std::fs::read_to_string(root().join(format!("problems/{name}.toml"))).unwrap();
    let mut doc: toml::Table = toml::from_str(&text).unwrap();
    let reference: Vec<(String, f64)> = doc["reference"]["params"]
        .as_table()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_float().unwrap()))
        .collect();
    doc.remove("reference");
    doc.remove("optimizer");
    let samples = root().join(format!("problems/data/{name}_samples.csv"));
    let mut data = toml::Table::new();
    data.insert("kind".into(), "data".into());
    data.insert("file".into(), samples.display().to_string().into());
    doc.insert(
        "cost".into(),
        toml::Value::Array(vec![toml::Value::Table(data)]),
    );
    (toml::to_string(&doc).unwrap(), reference)
}

fn refits(reps: usize, failures: &mut Vec<String>) -> String {
    let mut md = String::from(
        "| problem | Gauss–Newton on the data: iterations / time | worst relative error vs the reference | the shipped file on its tracking integral: solver, iterations / time |\n|---|---|---|---|\n",
    );
    for name in REFITS {
        let (text, reference) = as_data_fit(name);
        let at = root().join("problems").join(format!("{name}_data.toml"));
        let names: Vec<&str> = reference.iter().map(|(n, _)| n.as_str()).collect();
        let mut best = f64::INFINITY;
        let mut out = None;
        for _ in 0..reps {
            let r = fit(&text, &at, &names);
            best = best.min(r.4);
            out = Some(r);
        }
        let (est, _, _, it, _) = out.unwrap();
        let err = est
            .iter()
            .zip(&reference)
            .map(|(e, (_, v))| ((e - v) / v).abs())
            .fold(0.0f64, f64::max);
        let shipped = Problem::load(&root().join(format!("problems/{name}.toml"))).unwrap();
        let setup = shipped.setup().unwrap();
        let mut lb = f64::INFINITY;
        let mut lit = 0;
        for _ in 0..reps {
            let t = Instant::now();
            let r = shipped
                .optimize_trajectory(&setup, &shipped.theta, None)
                .unwrap();
            lb = lb.min(t.elapsed().as_secs_f64());
            lit = r.iterations;
        }
        let solver = if shipped.shooting.is_some() {
            "SQP (multiple shooting)"
        } else {
            shipped.optimizer.solver.name()
        };
        println!("  {name}: Gauss–Newton {it} iterations {best:.3} s, error {err:.1e}; {solver} {lit} iterations {lb:.3} s");
        md +=
            &format!("| {name} | {it} / {best:.3} s | {err:.1e} | {solver}, {lit} / {lb:.3} s |\n");
        if it > 10 {
            failures.push(format!("{name}: Gauss–Newton took {it} iterations (> 10)"));
        }
        if err > 1e-6 {
            failures.push(format!(
                "{name}: the fit is {err:e} from the reference (> 1e-6)"
            ));
        }
    }
    md
}

fn main() {
    let quick = common::quick();
    let mut failures = Vec::new();
    println!("coverage of the 95 % intervals:");
    let cov = coverage(&mut failures);
    println!("shipped identification problems refitted to data files:");
    let re = refits(if quick { 1 } else { 3 }, &mut failures);
    if !quick {
        common::publish(
            "identification",
            &format!("At load {}:\n\n{cov}\n{re}", common::load()),
        );
    }
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("CLAIM FAILED: {f}");
        }
        std::process::exit(1);
    }
}
