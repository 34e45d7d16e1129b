//! The constrained solver on the shipped problems, against CasADi + IPOPT in the same run
//! when a Python with casadi is available (`HYBRIDOPT_PEER_PYTHON`, else
//! `/tmp/peer-venv/bin/python`; `benches/peers/README.md` says how to make one).
//!
//! Prints, per problem: the optimum, the KKT residual, iterations, evaluations and the
//! median time to solution over the rounds; the constraint Jacobian's cost in forward runs
//! (2 constraints + the cost, 60 controls; claim ≤ 4); and for the thrust problems the
//! peer's optimum on the same impact sequence with the relative difference of the optima
//! (claim ≤ 1e-7), the time ratio ours / IPOPT's construction plus solve when IPOPT has to
//! search the impacts' control intervals as we do not (claim < 1), and the ratio with the
//! intervals given by hand (information); and the two-impact references reached
//! from IPOPT's optimum perturbed (claim ≤ 1e-7). Exits non-zero when a claim fails.
//!
//! `cargo bench --bench constrained [-- --quick]`. A full run writes its tables into
//! docs/benchmarks.md (`common::publish`, the blocks `constrained-al`, `constrained`,
//! `constrained-two-impacts` and `constrained-claims`); `--quick` leaves the page alone.

#[path = "common/mod.rs"]
mod common;

use hybridopt::prelude::*;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

struct Ours {
    cost: f64,
    kkt: f64,
    iterations: u64,
    evaluations: usize,
    seconds: f64,
}

fn ours(file: &str, rounds: usize) -> Ours {
    let p = Problem::load(Path::new(file)).expect("problem");
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..rounds {
        let t = Instant::now();
        let setup = p.setup().expect("setup");
        let r = p
            .optimize_trajectory(&setup, &p.theta, None)
            .expect("optimize");
        times.push(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    let r = last.expect("a round");
    let c = r.constrained.as_ref().expect("constrained");
    assert!(r.converged(), "{file}: {r}");
    Ours {
        cost: r.final_cost,
        kkt: c.kkt_residual,
        iterations: r.iterations,
        evaluations: r.evaluations,
        seconds: median(times),
    }
}

/// The peer's run: (J, total seconds of construction and solve), or None without casadi.
fn peer(args: &[&str]) -> Option<(f64, f64)> {
    peer_json(args).and_then(|v| Some((v["J"].as_f64()?, v["total_s"].as_f64()?)))
}

/// The peer's JSON output, or None without casadi.
fn peer_json(args: &[&str]) -> Option<serde_json::Value> {
    let python = std::env::var("HYBRIDOPT_PEER_PYTHON")
        .unwrap_or_else(|_| "/tmp/peer-venv/bin/python".to_string());
    if !Path::new(&python).exists() {
        return None;
    }
    let out = Command::new(&python)
        .arg("benches/peers/thrust_ipopt.py")
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("peer failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// The references (two impacts before t = 2.5; J* = 15.0404051671 and, with
/// y ≤ 1.2, 16.0614601665): our SQP started from IPOPT's optimal thrust perturbed by
/// 0.05·sin(k) converges back to the same optimum. Returns (ours, IPOPT's) J.
fn from_peer_start(variant: &str) -> Option<(f64, f64, f64)> {
    let v = peer_json(&["--variant", variant, "--repeat", "1"])?;
    let u: Vec<f64> = v["u"]
        .as_array()?
        .iter()
        .filter_map(|x| x.as_f64())
        .collect();
    let mut p = Problem::load(Path::new("problems/thrust_path.toml")).ok()?;
    if variant == "base" {
        p.constraints.list.retain(|c| c.name != "ceiling");
    } else {
        for c in &mut p.constraints.list {
            if c.name == "ceiling" {
                c.bounds = ConstraintBounds::Range {
                    lower: None,
                    upper: Some(1.2),
                };
            }
        }
    }
    for (k, e) in p.theta.iter_mut().skip(5).enumerate() {
        e.value = (u[k] + 0.05 * (k as f64).sin()).clamp(-15.0, 15.0);
    }
    let setup = p.setup().ok()?;
    let t = Instant::now();
    let r = p.optimize_trajectory(&setup, &p.theta, None).ok()?;
    let s = t.elapsed().as_secs_f64();
    let c = r.constrained.as_ref()?;
    println!(
        "{variant} from IPOPT's optimum perturbed: {} after {} iterations, J = {:.12}, KKT {:.2e}, {:.1} ms",
        r.outcome,
        r.iterations,
        r.final_cost,
        c.kkt_residual,
        1e3 * s
    );
    Some((r.final_cost, v["J"].as_f64()?, c.kkt_residual))
}

/// The alternative the solver was chosen against: an augmented-Lagrangian outer loop
/// around the unconstrained L-BFGS (the constraints c = (t₂ − 1.6, y(2.5) − 0.5) enter as
/// `λᵀc + ½ρ‖c‖²`, expressible with the cost terms; λ ← λ + ρc after each inner solve).
/// Returns (J, largest violation, outer iterations, evaluations, seconds).
fn augmented_lagrangian(rho: f64, max_outer: usize) -> (f64, f64, usize, usize, f64) {
    let p = Problem::load(Path::new("problems/thrust_constrained.toml")).expect("problem");
    let base = p.setup().expect("setup");
    let effort = base.objectives()[0].terms.clone();
    let mut lam = [0.0f64; 2];
    let mut theta = p.theta.clone();
    let settings = OptimizerSettings {
        max_iters: 500,
        ..p.optimizer.clone()
    };
    let ground = EventGuard::Guard(0);
    let start = Instant::now();
    let (mut evaluations, mut outer, mut j, mut viol) = (0, 0, f64::NAN, f64::NAN);
    while outer < max_outer {
        outer += 1;
        let mut terms = effort.clone();
        terms.extend([
            Term::plain(
                Quantity::EventTime {
                    guard: ground,
                    occurrence: 2,
                },
                lam[0],
            ),
            Term::squared(
                Quantity::EventTime {
                    guard: ground,
                    occurrence: 2,
                },
                1.6,
                0.5 * rho,
            ),
            Term::plain(Quantity::Terminal { output: 0 }, lam[1]),
            Term::squared(Quantity::Terminal { output: 0 }, 0.5, 0.5 * rho),
        ]);
        let setup = base.with_objectives(vec![Objective::new("al", terms)]);
        let Ok(r) = optimize(&setup, &theta, &settings, None) else {
            break;
        };
        evaluations += r.evaluations;
        for (e, &v) in theta.iter_mut().zip(&r.theta_final) {
            // the unconstrained solver's bounds are open: keep the values strictly inside
            e.value = match (e.lower, e.upper) {
                (Some(l), Some(u)) => v.clamp(l + 1e-12 * (u - l), u - 1e-12 * (u - l)),
                _ => v,
            };
        }
        let Ok(pt) = constrained_point(&base, &theta, &p.constraints, GradientMethod::Adjoint)
        else {
            break;
        };
        j = pt.cost;
        let c = [pt.rows[0].value - 1.6, pt.rows[1].value - 0.5];
        viol = c[0].abs().max(c[1].abs());
        lam[0] += rho * c[0];
        lam[1] += rho * c[1];
        if viol <= 1e-8 {
            break;
        }
    }
    (j, viol, outer, evaluations, start.elapsed().as_secs_f64())
}

/// `problems/NAME.toml` → `NAME`.
fn stem(file: &str) -> &str {
    file.trim_start_matches("problems/")
        .trim_end_matches(".toml")
}

/// A time in seconds as µs, ms or s.
fn ms(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", 1e6 * s)
    } else if s < 1.0 {
        format!("{:.1} ms", 1e3 * s)
    } else {
        format!("{s:.2} s")
    }
}

fn main() {
    let quick = common::quick();
    let rounds = if quick { 3 } else { 11 };
    let mut failed = false;
    // every claim checked, with what it measured, for the page
    let mut claims_md = String::from("| claim (measured) | |\n|---|---|\n");
    let mut claim = |what: String, ok: bool| {
        println!("claim {what} {}", if ok { "ok" } else { "FAILED" });
        claims_md += &format!("| {what} | {} |\n", if ok { "holds" } else { "**FAILED**" });
        failed |= !ok;
    };
    println!(
        "| problem | J | KKT residual | iterations | evaluations | time (median of {rounds}) |"
    );
    println!("|---|---|---|---|---|---|");
    let mut results = Vec::new();
    for file in [
        "problems/thrust_constrained.toml",
        "problems/thrust_path.toml",
        "problems/thrust_min_time.toml",
        "problems/five_bar_constrained.toml",
    ] {
        let o = ours(file, rounds);
        println!(
            "| {file} | {:.12} | {:.2e} | {} | {} | {:.1} ms |",
            o.cost,
            o.kkt,
            o.iterations,
            o.evaluations,
            1e3 * o.seconds
        );
        claim(
            format!("`{}`: KKT residual {:.2e} ≤ 1e-8", stem(file), o.kkt),
            o.kkt <= 1e-8,
        );
        results.push((file, o));
    }

    // the constraint Jacobian's cost in forward runs
    let p = Problem::load(Path::new("problems/thrust_constrained.toml")).expect("problem");
    let setup = p.setup().expect("setup");
    let theta = p.theta_values();
    let n = if quick { 21 } else { 101 };
    let mut fwd = Vec::new();
    let mut jac = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        std::hint::black_box(setup.simulate(&theta).expect("simulate"));
        fwd.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::hint::black_box(
            constrained_point(&setup, &p.theta, &p.constraints, GradientMethod::Adjoint)
                .expect("point"),
        );
        jac.push(t.elapsed().as_secs_f64());
    }
    let (jac, fwd) = (median(jac), median(fwd));
    let ratio = jac / fwd;
    println!(
        "constraint Jacobian (2 constraints + cost, 60 controls): {:.1} µs = {ratio:.2} forward runs ({:.1} µs)",
        1e6 * jac,
        1e6 * fwd
    );
    claim(
        format!("`thrust_constrained`: constraint Jacobian / forward run {ratio:.2} ≤ 4"),
        ratio <= 4.0,
    );

    // the peer on the impact sequence our solver converges to: as a user without the
    // sequence runs it (the script searches the first impact's control interval; the claim)
    // and with the sequence's control intervals given by hand (information)
    let mut peer_cells = Vec::new();
    for (file, variant) in [
        ("problems/thrust_constrained.toml", "base"),
        ("problems/thrust_path.toml", "path"),
    ] {
        let o = &results.iter().find(|r| r.0 == file).expect("ran").1;
        let mut search = vec!["--variant", variant, "--after", "1", "--repeat", "3"];
        let mut by_hand = vec![
            "--variant",
            variant,
            "--intervals",
            "11,37,53",
            "--repeat",
            "3",
        ];
        if variant == "path" {
            search.extend(["--ceiling", "1.1"]);
            by_hand.extend(["--ceiling", "1.1"]);
        }
        let (Some((j, s)), Some((jh, sh))) = (peer(&search), peer(&by_hand)) else {
            println!("{variant}: the peer (CasADi + IPOPT) is not available; see benches/peers/README.md");
            peer_cells.push((file, None));
            continue;
        };
        // the same local optimum: IPOPT on our impact sequence (its search may end in
        // another interval's optimum, printed for information)
        let rel = (o.cost - jh).abs() / jh.abs();
        println!(
            "{variant}: ours J = {:.12} in {:.1} ms; IPOPT searching the impact intervals J = {j:.12} in {:.1} ms (ratio {:.2}); IPOPT with the intervals given by hand J = {jh:.12} in {:.1} ms (ratio {:.2})",
            o.cost,
            1e3 * o.seconds,
            1e3 * s,
            o.seconds / s,
            1e3 * sh,
            o.seconds / sh
        );
        claim(
            format!(
                "`{}`: optimum within {rel:.2e} ≤ 1e-7 of IPOPT's on the same impact sequence",
                stem(file)
            ),
            rel <= 1e-7,
        );
        claim(
            format!(
                "`{}`: time / IPOPT's searching the impact intervals {:.2} < 1",
                stem(file),
                o.seconds / s
            ),
            o.seconds < s,
        );
        // which optimum IPOPT's search found, relative to ours
        let found = (j - o.cost) / o.cost.abs();
        let which = if found.abs() <= 1e-9 {
            "the same optimum"
        } else if found < 0.0 {
            "a lower local optimum"
        } else {
            "a higher local optimum"
        };
        peer_cells.push((
            file,
            Some(format!(
                "{jh:.12} ({rel:.1e}), {} | {j:.12} ({which}), {} | {:.2}",
                ms(sh),
                ms(s),
                o.seconds / s
            )),
        ));
    }

    let mut two_impacts = String::from(
        "| problem | the issue's reference | IPOPT | ours, from IPOPT's optimum perturbed | relative difference | KKT residual |\n\
         |---|---|---|---|---|---|\n",
    );
    for (variant, reference) in [("base", 15.0404051671), ("path", 16.0614601665)] {
        let label = match variant {
            "base" => "`thrust_constrained`",
            _ => "`thrust_path` with y ≤ 1.2",
        };
        match from_peer_start(variant) {
            Some((ours, ipopt, kkt)) => {
                let rel = (ours - ipopt).abs() / ipopt;
                println!(
                    "{variant}: the issue's reference {reference}; IPOPT {ipopt:.12}; ours {ours:.12} (relative {rel:.2e})"
                );
                claim(
                    format!("{label} (2 impacts): within {rel:.2e} ≤ 1e-7 of IPOPT's optimum"),
                    rel <= 1e-7,
                );
                claim(
                    format!("{label} (2 impacts): KKT residual {kkt:.2e} ≤ 1e-8"),
                    kkt <= 1e-8,
                );
                two_impacts += &format!(
                    "| {label} | {reference} | {ipopt:.12} | {ours:.12} | {rel:.1e} | {kkt:.1e} |\n"
                );
            }
            None => {
                println!("{variant}: the peer is not available; see benches/peers/README.md");
                two_impacts += &format!("| {label} | {reference} | no peer | | | |\n");
            }
        }
    }

    let sqp = &results[0].1;
    let max_outer = if quick { 6 } else { 20 };
    let mut al = format!(
        "At load {}; the augmented Lagrangian's outer loop stops at {max_outer} iterations \
         or a violation of 1e-8:\n\n\
         | method | J | largest violation (KKT residual) | outer iterations | evaluations | time |\n\
         |---|---|---|---|---|---|\n",
        common::load()
    );
    for rho in [10.0, 100.0, 1000.0] {
        let (j, viol, outer, evals, secs) = augmented_lagrangian(rho, max_outer);
        println!(
            "augmented Lagrangian around L-BFGS (ρ = {rho}), thrust_constrained: J = {j:.12}, largest violation {viol:.2e} after {outer} outer iterations, {evals} evaluations, {:.1} ms; the SQP: J = {:.12}, KKT {:.2e}, {} evaluations, {:.1} ms",
            1e3 * secs,
            sqp.cost,
            sqp.kkt,
            sqp.evaluations,
            1e3 * sqp.seconds
        );
        al += &format!(
            "| augmented Lagrangian, ρ = {rho} | {j:.6} | {viol:.1e} | {outer} | {} | {} |\n",
            common::thousands(evals),
            ms(secs)
        );
    }
    al += &format!(
        "| SQP (median of {rounds}) | {:.6} | ({:.1e}) | – | {} | {} |\n",
        sqp.cost,
        sqp.kkt,
        sqp.evaluations,
        ms(sqp.seconds)
    );

    let mut table = format!(
        "Our times are medians of {rounds} solves, IPOPT's the best of 3 (construction and \
         solve), at load {}; in parentheses after IPOPT's optimum on our impact sequence its \
         relative difference from ours:\n\n\
         | problem | J (ours) | KKT residual | iterations (evaluations) | ours | IPOPT, impact intervals given by hand | IPOPT searching the intervals | ours / IPOPT searching |\n\
         |---|---|---|---|---|---|---|---|\n",
        common::load()
    );
    for (file, o) in &results {
        let peers = match peer_cells.iter().find(|c| c.0 == *file) {
            Some((_, Some(cells))) => cells.clone(),
            Some((_, None)) => "no peer | no peer | –".to_string(),
            None => "– | – | –".to_string(),
        };
        let label = match stem(file) {
            "thrust_path" => "`thrust_path` (y ≤ 1.1)".to_string(),
            "thrust_min_time" => "`thrust_min_time` (J = T)".to_string(),
            s => format!("`{s}`"),
        };
        table += &format!(
            "| {label} | {:.12} | {:.1e} | {} ({}) | {} | {peers} |\n",
            o.cost,
            o.kkt,
            o.iterations,
            o.evaluations,
            ms(o.seconds)
        );
    }
    table += &format!(
        "\nThe constraint Jacobian of `thrust_constrained` (2 constraints and the cost over 60 \
         controls, by the adjoint) costs **{ratio:.2}** forward runs: {} against {} (medians \
         of {n}).\n",
        ms(jac),
        ms(fwd)
    );
    common::publish("constrained-al", &al);
    common::publish("constrained", &table);
    common::publish("constrained-two-impacts", &two_impacts);
    common::publish("constrained-claims", &claims_md);
    if failed {
        std::process::exit(1);
    }
}
