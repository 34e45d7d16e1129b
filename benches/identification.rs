//! Identification benchmark (issue 45).
//!
//! 1. **Coverage of the 95 % intervals**: 100 replicates of the vibrating table's 3.7 s
//!    record (problems/vibrating_table_short.toml, exact data from
//!    problems/data/vibrating_table.py) with seeded Gaussian noise of σ = 1 mm added to the
//!    heights, each fitted by Gauss–Newton from the file's start. Claims: the intervals
//!    (Student t, σ̂² estimated) cover the truth (e = 0.85, A = 0.13) in ≥ 90 of 100
//!    replicates for each parameter, and the mean standard error is within 20 % of the
//!    replicates' standard deviation.
//! 2. **The shipped identification problems refitted to data files**: each problem's
//!    `track` term against its `[reference]` run replaced by a `data` term on
//!    problems/data/<name>_samples.csv (the reference run sampled, problems/data/
//!    refit_samples.py), fitted by Gauss–Newton; against the shipped file's own solver
//!    (L-BFGS on the tracking integral) in the same run. Claims: Gauss–Newton in ≤ 10
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
    let r = p.optimize(&setup, &p.theta, None).expect("the fit runs");
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

/// The coverage study: returns its markdown and pushes failed claims.
fn coverage(replicates: usize, failures: &mut Vec<String>) -> String {
    let dir = std::env::temp_dir().join(format!("hybridopt-bench-ident-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = std::fs::read_to_string(root().join("problems/vibrating_table_short.toml")).unwrap();
    let exact =
        std::fs::read_to_string(root().join("problems/data/vibrating_table_3p7s.csv")).unwrap();
    let truth = [0.85, 0.13];
    let sigma = 1e-3;
    let mut noise = Normal(2026);
    let mut est: Vec<Vec<f64>> = vec![vec![]; 2];
    let mut se: Vec<Vec<f64>> = vec![vec![]; 2];
    let mut covered = [0usize; 2];
    let mut iterations = vec![];
    let t0 = Instant::now();
    for k in 0..replicates {
        let mut csv = String::from("t,y\n");
        for line in exact.lines().skip(1) {
            let (t, y) = line.split_once(',').unwrap();
            let y: f64 = y.parse().unwrap();
            csv += &format!("{t},{:.17e}\n", y + sigma * noise.next());
        }
        let file = dir.join(format!("noisy_{k}.csv"));
        std::fs::write(&file, csv).unwrap();
        let text = base.replace("data/vibrating_table_3p7s.csv", file.to_str().unwrap());
        let (e, s, ci, it, _) = fit(&text, &dir.join("p.toml"), &["e", "A"]);
        iterations.push(it);
        for i in 0..2 {
            est[i].push(e[i]);
            se[i].push(s[i]);
            if ci[i].0 <= truth[i] && truth[i] <= ci[i].1 {
                covered[i] += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let secs = t0.elapsed().as_secs_f64();
    let mut md = format!(
        "{replicates} replicates of the 3.7 s record with σ = 1 mm noise, fitted in {secs:.1} s \
         (iterations {}–{}):\n\n\
         | parameter | truth | mean estimate | replicates' std | mean standard error | SE / std | intervals covering the truth |\n\
         |---|---|---|---|---|---|---|\n",
        iterations.iter().min().unwrap(),
        iterations.iter().max().unwrap()
    );
    for (i, name) in ["e", "A"].iter().enumerate() {
        let n = est[i].len() as f64;
        let mean = est[i].iter().sum::<f64>() / n;
        let sd = (est[i].iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let mse = se[i].iter().sum::<f64>() / n;
        let ratio = mse / sd;
        println!(
            "  {name}: mean {mean:.10}, replicates' std {sd:.3e}, mean SE {mse:.3e} (ratio {ratio:.3}), covered {}/{replicates}",
            covered[i]
        );
        md += &format!(
            "| {name} | {} | {mean:.10} | {sd:.3e} | {mse:.3e} | {ratio:.3} | {} / {replicates} |\n",
            truth[i], covered[i]
        );
        if (covered[i] as f64) < 0.9 * replicates as f64 {
            failures.push(format!(
                "{name}: the 95 % intervals cover the truth in {} of {replicates}",
                covered[i]
            ));
        }
        if !(0.8..=1.2).contains(&ratio) {
            failures.push(format!(
                "{name}: mean SE / replicates' std = {ratio:.3}, not within 20 %"
            ));
        }
    }
    md
}

/// The shipped identification problems that fit a reference run by single shooting.
const REFITS: &[&str] = &[
    "ball_identify",
    "five_bar_identify",
    "hysteretic_identify",
    "steel_identify",
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
        "| problem | Gauss–Newton on the data: iterations / time | worst relative error vs the reference | L-BFGS on the tracking integral: iterations / time |\n|---|---|---|---|\n",
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
            let r = shipped.optimize(&setup, &shipped.theta, None).unwrap();
            lb = lb.min(t.elapsed().as_secs_f64());
            lit = r.iterations;
        }
        println!("  {name}: Gauss–Newton {it} iterations {:.3} s, error {err:.1e}; L-BFGS {lit} iterations {lb:.3} s", best);
        md += &format!(
            "| {name} | {it} / {:.3} s | {err:.1e} | {lit} / {lb:.3} s |\n",
            best
        );
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
    let cov = coverage(100, &mut failures);
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
