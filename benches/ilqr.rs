//! Hybrid iLQR benchmark (issue 46, deliverable 5): iterations and time of the hybrid
//! iLQR (`solver = "ilqr"`, src/optimize/ilqr/) against the SQP and L-BFGS on each
//! shipped problem with controls, and the distance between their optima.
//!
//! The iLQR takes a cost over a fixed horizon without constraints: of the shipped control
//! problems, `thrust_control` (two event and terminal penalty targets and the effort,
//! piecewise linear thrust on 59 intervals); it is also run with the same thrust on the
//! two other bases (piecewise constant, cubic B-spline) to exercise the stages' carried
//! coefficients. The others are listed with the typed refusal the iLQR gives them.
//! Solvers: the DDP (`ddp`: second-order terms by differences) and the Gauss–Newton iLQR
//! (`ilqr`) at `tol_grad = 1e-12`; L-BFGS at `tol_grad = 1e-12`, restarted once from its
//! end (its first run stops on the cost change, |∇ψ| ≈ 1e-7); the SQP with its defaults
//! (`tol_kkt = 1e-8`) and up to 2000 iterations. Claims (thrust_control): the DDP
//! converges, and its θ agrees with L-BFGS's to ≤ 1e-6 relative (max |Δθ| / max |θ|) at
//! a cost no higher. The other rows are reported as measured (docs/benchmarks.md says
//! what they show).
//!
//! Run: `cargo bench --bench ilqr` (or `-- --quick`: one timing repetition, nothing
//! written). A full run writes its table into docs/benchmarks.md.

#[path = "common/mod.rs"]
mod common;

use hybridopt::optimize::{optimize, optimize_constrained, OptimizeResult};
use hybridopt::problem::Problem;
use hybridopt::{Constraints, Error};
use std::path::PathBuf;
use std::time::Instant;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped problems with controls, and the variants of thrust_control on other bases.
fn cases() -> Vec<(String, String)> {
    let mut out = vec![];
    for name in [
        "thrust_control",
        "thrust_constrained",
        "thrust_path",
        "thrust_min_time",
        "compass_gait_four_steps",
        "compass_gait_periodic_walk",
    ] {
        let text = std::fs::read_to_string(root().join(format!("problems/{name}.toml"))).unwrap();
        out.push((name.to_string(), text));
    }
    let base = out[0].1.clone();
    for (basis, n) in [("piecewise_constant", 60), ("cubic_bspline", 57)] {
        let t = base
            .replace("\"piecewise_linear\"", &format!("\"{basis}\""))
            .replace("intervals = 59", &format!("intervals = {n}"));
        out.push((format!("thrust_control ({basis}, {n})"), t));
    }
    out
}

/// One solver's run: (result, median seconds over `reps`).
fn timed(
    reps: usize, f: &dyn Fn() -> Result<OptimizeResult, Error>,
) -> Result<(OptimizeResult, f64), Error> {
    let mut times = vec![];
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        let r = f()?;
        times.push(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    Ok((last.unwrap(), common::median(&mut times)))
}

/// max |a − b| / max |b| over θ.
fn theta_gap(a: &[f64], b: &[f64]) -> f64 {
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    d / b.iter().map(|v| v.abs()).fold(0.0, f64::max)
}

/// The three solvers on one problem: a markdown row, failed claims pushed.
fn row(name: &str, text: &str, reps: usize, failures: &mut Vec<String>) -> String {
    let mut p = Problem::parse(text, &root().join("problems/x.toml")).expect("parses");
    p.optimizer.max_iters = p.optimizer.max_iters.max(500);
    let setup = p.setup().expect("setup");
    let with = |kind| {
        let mut q = p.clone();
        q.optimizer.solver = kind;
        q.optimizer.tol_grad = 1e-12;
        q
    };
    let (ddp_p, ilqr_p) = (
        with(hybridopt::SolverKind::Ddp),
        with(hybridopt::SolverKind::Ilqr),
    );
    let (il, il_t) = match timed(reps, &|| ddp_p.optimize(&setup, &p.theta, None)) {
        Ok(v) => v,
        Err(e) => {
            println!("{name}: refused: {e}");
            return format!("| {name} | refused: {e} | | | | | | | | | | |\n");
        }
    };
    let (gn, gn_t) = timed(reps, &|| ilqr_p.optimize(&setup, &p.theta, None)).expect("iLQR runs");
    let mut lb_s = p.optimizer.clone();
    lb_s.tol_grad = 1e-12;
    // L-BFGS, restarted once from its end (its first run stops on the cost change)
    let (lb, lb_t) = timed(reps, &|| {
        let first = optimize(&setup, &p.theta, &lb_s, None)?;
        let mut again = p.theta.clone();
        for (e, v) in again.iter_mut().zip(&first.theta_final) {
            e.value = *v;
        }
        let mut r = optimize(&setup, &again, &lb_s, None)?;
        r.iterations += first.iterations;
        Ok(r)
    })
    .expect("L-BFGS runs");
    let mut sqp_s = p.optimizer.clone();
    sqp_s.max_iters = 2000;
    let none = Constraints::default();
    let (sq, sq_t) = timed(reps, &|| {
        optimize_constrained(&setup, &p.theta, &none, &sqp_s, None)
    })
    .expect("the SQP runs");
    let gap_sqp = theta_gap(&il.theta_final, &sq.theta_final);
    let gap_lb = theta_gap(&il.theta_final, &lb.theta_final);
    let gap_gn = theta_gap(&gn.theta_final, &sq.theta_final);
    let dpsi = (il.final_cost - sq.final_cost).abs() / sq.final_cost.abs();
    println!(
        "{name}: iLQR (Gauss–Newton) {} it {gn_t:.3} s ({}), ψ {:.10e}, |Δθ| to the SQP {gap_gn:.2e}",
        gn.iterations, gn.outcome, gn.final_cost
    );
    println!(
        "{name}: DDP {} it {:.3} s ({}), SQP {} it {:.3} s ({}), L-BFGS {} it {:.3} s ({}); \
         |Δθ| DDP–SQP {gap_sqp:.2e}, DDP–L-BFGS {gap_lb:.2e}; |Δψ|/ψ {dpsi:.2e}; ψ {:.10e}",
        il.iterations,
        il_t,
        il.outcome,
        sq.iterations,
        sq_t,
        sq.outcome,
        lb.iterations,
        lb_t,
        lb.outcome,
        il.final_cost
    );
    if name == "thrust_control" {
        if !il.converged() {
            failures.push(format!("{name}: the DDP ended {}", il.outcome));
        }
        if gap_lb > 1e-6 || il.final_cost > lb.final_cost * (1.0 + 1e-12) {
            failures.push(format!(
                "{name}: DDP vs L-BFGS |Δθ| {gap_lb:.2e} > 1e-6 or a higher cost"
            ));
        }
    }
    format!(
        "| {name} | {} ({}) | {:.3} | {} ({}) | {gn_t:.3} | {} ({}) | {:.3} | {} ({}) | {:.3} | {gap_sqp:.1e} | {gap_lb:.1e} | {dpsi:.1e} | {gap_gn:.1e} |\n",
        il.iterations, il.outcome, il_t, gn.iterations, gn.outcome, sq.iterations, sq.outcome,
        sq_t, lb.iterations, lb.outcome, lb_t
    )
}

fn main() {
    let reps = if common::quick() { 1 } else { 3 };
    let mut failures = Vec::new();
    let mut md = String::from(
        "| problem | DDP iterations | DDP s | iLQR (GN) iterations | iLQR s | SQP iterations | SQP s | L-BFGS iterations | L-BFGS s | max\\|Δθ\\| DDP–SQP | DDP–L-BFGS | \\|Δψ\\|/ψ DDP–SQP | iLQR–SQP |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, text) in cases() {
        md.push_str(&row(&name, &text, reps, &mut failures));
    }
    println!("{md}");
    common::publish(
        "ilqr",
        &format!(
            "At load {}, median of {reps} runs; θ gaps relative to max |θ|; the iteration counts of L-BFGS are its two runs' sum:\n\n{md}",
            common::load()
        ),
    );
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("CLAIM FAILED: {f}");
        }
        std::process::exit(1);
    }
}
