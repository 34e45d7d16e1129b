//! Hybrid iLQR benchmark (issue 46, deliverable 5): iterations and time of the hybrid
//! iLQR (`solver = "ilqr"`, src/optimize/ilqr/) against the SQP and L-BFGS on each
//! shipped problem with controls, and the distance between their optima.
//!
//! The shipped control problems: `thrust_control` (two event and terminal penalty targets
//! and the effort, piecewise linear thrust on 59 intervals; also run with the same thrust on
//! the two other bases, piecewise constant and cubic B-spline, to exercise the stages'
//! carried coefficients), `thrust_constrained` and `thrust_path` (the augmented Lagrangian),
//! `thrust_min_time` (a free final time, the last stage's decision; also from T₀ = 1.5);
//! `compass_gait_periodic_walk` (a periodic problem: the start's parameters stage 0's
//! decisions, the closing rows augmented terms; its SQP by multiple shooting, as the file
//! says, its θ gaps over the parameters and the coefficients up to the closing strike, the
//! later ones moving nothing); `compass_gait_four_steps` is listed with the typed refusal
//! the DDP gives it. With a free final time the θ gap includes the coefficients past T,
//! which no solver's cost sees.
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

use hybridopt::optimize::{optimize, optimize_constrained, optimize_shooting, OptimizeResult};
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
    // the minimum-time problem from a shorter first T, where the DDP finds a lower KKT point
    let short = out[3]
        .1
        .replace("t_end = { value = 2.5", "t_end = { value = 1.5");
    out.push(("thrust_min_time (T₀ = 1.5)".to_string(), short));
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

/// max |a − b| / max |b| over θ's entries `at`.
fn theta_gap(a: &[f64], b: &[f64], at: &[usize]) -> f64 {
    let d = at.iter().map(|&i| (a[i] - b[i]).abs()).fold(0.0, f64::max);
    d / at.iter().map(|&i| b[i].abs()).fold(0.0, f64::max)
}

/// The entries of θ the gaps are taken over: all of them, or for a periodic problem the
/// parameters and the coefficients whose node lies before the reference's closing event
/// (a later one moves nothing: the run has ended; coefficient j of a channel taken at node
/// j, as the piecewise-linear basis places it).
fn compared(
    setup: &hybridopt::Setup<'_, hybridopt::systems::Builtin>, r: &OptimizeResult,
) -> Vec<usize> {
    let n = r.theta_final.len();
    let period = r
        .shooting
        .as_ref()
        .filter(|s| s.closure.is_some())
        .map(|s| s.t_end);
    match (period, setup.controls()) {
        (Some(t), Some(grid)) => {
            let np = setup.np();
            let nodes = grid.nodes();
            let nc = grid.n_coef();
            (0..n)
                .filter(|&i| i < np || nodes[((i - np) % nc).min(nodes.len() - 1)] <= t)
                .collect()
        }
        _ => (0..n).collect(),
    }
}

/// Largest relative gap between the two runs' constraint multipliers (0 without constraints).
fn multiplier_gap(a: &OptimizeResult, b: &OptimizeResult) -> f64 {
    match (&a.constrained, &b.constrained) {
        (Some(x), Some(y)) => x
            .constraints
            .iter()
            .zip(&y.constraints)
            .map(|(c, d)| (c.multiplier - d.multiplier).abs() / d.multiplier.abs().max(1e-300))
            .fold(0.0, f64::max),
        _ => 0.0,
    }
}

/// The SQP on `p` (constrained or on the bounds alone) at `tol_kkt`, up to 2000 iterations.
fn sqp(
    p: &Problem, setup: &hybridopt::Setup<'_, hybridopt::systems::Builtin>, tol_kkt: f64,
) -> Result<OptimizeResult, Error> {
    let mut s = p.optimizer.clone();
    s.max_iters = 2000;
    s.tol_kkt = tol_kkt;
    s.solver = hybridopt::SolverKind::Lbfgs;
    let none = Constraints::default();
    let c = if p.constraints.is_empty() {
        &none
    } else {
        &p.constraints
    };
    match &p.shooting {
        Some(shooting) => optimize_shooting(setup, &p.theta, c, shooting, &s, None),
        None => optimize_constrained(setup, &p.theta, c, &s, None),
    }
}

/// The solvers on one problem: a markdown row, failed claims pushed. The DDP / iLQR at
/// `tol_grad = 1e-12` (unconstrained) or the default `tol_kkt = 1e-8` (the augmented
/// Lagrangian: at 1e-11 its inner solves stall near KKT 1e-6 at ρ = 1e6); the
/// SQP at its default `tol_kkt = 1e-8` (iterations and time) and at `1e-12` (the
/// reference optimum the gaps are taken to).
fn row(name: &str, text: &str, reps: usize, failures: &mut Vec<String>) -> String {
    let mut p = Problem::parse(text, &root().join("problems/x.toml")).expect("parses");
    p.optimizer.max_iters = p.optimizer.max_iters.max(500);
    let setup = p.setup().expect("setup");
    let constrained = !p.constraints.is_empty();
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
    let (il, il_t) = match timed(reps, &|| ddp_p.optimize_trajectory(&setup, &p.theta, None)) {
        Ok(v) => v,
        Err(e) => {
            println!("{name}: refused: {e}");
            return format!("| {name} | refused: {e} | | | | | | | | | | | | |\n");
        }
    };
    let gn =
        timed(reps, &|| ilqr_p.optimize_trajectory(&setup, &p.theta, None)).expect("iLQR runs");
    let (sq, sq_t) = timed(reps, &|| sqp(&p, &setup, 1e-8)).expect("the SQP runs");
    let reference = sqp(&p, &setup, 1e-12).expect("the SQP runs");
    let lb = if constrained {
        None
    } else {
        let mut lb_s = p.optimizer.clone();
        lb_s.tol_grad = 1e-12;
        // L-BFGS, restarted once from its end (its first run stops on the cost change)
        Some(
            timed(reps, &|| {
                let first = optimize(&setup, &p.theta, &lb_s, None)?;
                let mut again = p.theta.clone();
                for (e, v) in again.iter_mut().zip(&first.theta_final) {
                    e.value = *v;
                }
                let mut r = optimize(&setup, &again, &lb_s, None)?;
                r.iterations += first.iterations;
                Ok(r)
            })
            .expect("L-BFGS runs"),
        )
    };
    let at = compared(&setup, &reference);
    let gap = theta_gap(&il.theta_final, &reference.theta_final, &at);
    let gap_gn = theta_gap(&gn.0.theta_final, &reference.theta_final, &at);
    let dlam = multiplier_gap(&il, &reference);
    let dpsi = (il.final_cost - reference.final_cost).abs() / reference.final_cost.abs();
    let viol = il.constrained.as_ref().map_or(0.0, |c| c.max_violation);
    let t_end = |r: &OptimizeResult| r.constrained.as_ref().and_then(|c| c.t_end_final);
    if let (Some(a), Some(b), Some(c)) = (t_end(&il), t_end(&reference), t_end(&sq)) {
        println!(
            "{name}: free final time: DDP T = {a:.10}, SQP T = {c:.10}, reference T = {b:.10}"
        );
    }
    println!(
        "{name}: DDP {} it {il_t:.3} s ({}: {}), iLQR {} it {:.3} s ({}), SQP {} it {sq_t:.3} s ({}), \
         SQP at 1e-12 {} it ({}: {}); DDP vs the reference: max|Δθ| {gap:.2e}, max|Δλ|/|λ| {dlam:.2e}, \
         |Δψ|/ψ {dpsi:.2e}, violation {viol:.1e}; iLQR |Δθ| {gap_gn:.2e}; ψ {:.12e}",
        il.iterations, il.outcome, il.termination, gn.0.iterations, gn.1, gn.0.outcome,
        sq.iterations, sq.outcome, reference.iterations, reference.outcome, reference.termination,
        il.final_cost
    );
    let (lb_it, lb_s) = match &lb {
        Some((r, t)) => {
            println!(
                "{name}: L-BFGS {} it {t:.3} s ({}), |Δθ| to the reference {:.2e}",
                r.iterations,
                r.outcome,
                theta_gap(&r.theta_final, &reference.theta_final, &at)
            );
            (
                format!("{} ({})", r.iterations, r.outcome),
                format!("{t:.3}"),
            )
        }
        None => ("—".into(), "—".into()),
    };
    let claimed = ["thrust_control", "thrust_constrained"];
    if claimed.contains(&name) {
        if !il.converged() || !reference.converged() {
            failures.push(format!(
                "{name}: the DDP ended {}, the reference SQP {}",
                il.outcome, reference.outcome
            ));
        }
        if gap > 1e-7 || dlam > 1e-7 || dpsi > 1e-7 {
            failures.push(format!(
                "{name}: DDP vs SQP at 1e-12: |Δθ| {gap:.2e}, |Δλ|/|λ| {dlam:.2e} or |Δψ|/ψ {dpsi:.2e} > 1e-7"
            ));
        }
    }
    format!(
        "| {name} | {} ({}) | {il_t:.3} | {} ({}) | {:.3} | {} ({}) | {sq_t:.3} | {lb_it} | {lb_s} | {} ({}) | {gap:.1e} | {dlam:.1e} | {dpsi:.1e} | {gap_gn:.1e} |\n",
        il.iterations, il.outcome, gn.0.iterations, gn.0.outcome, gn.1, sq.iterations, sq.outcome,
        reference.iterations, reference.outcome
    )
}

fn main() {
    let reps = if common::quick() { 1 } else { 3 };
    let mut failures = Vec::new();
    let mut md = String::from(
        "| problem | DDP iterations | DDP s | iLQR (GN) iterations | iLQR s | SQP iterations | SQP s | L-BFGS iterations | L-BFGS s | reference: SQP at tol_kkt 1e-12 | max\\|Δθ\\| DDP–ref | max\\|Δλ\\|/\\|λ\\| DDP–ref | \\|Δψ\\|/ψ DDP–ref | max\\|Δθ\\| iLQR–ref |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, text) in cases() {
        md.push_str(&row(&name, &text, reps, &mut failures));
    }
    println!("{md}");
    common::publish(
        "ilqr",
        &format!(
            "At load {}, median of {reps} runs; θ gaps relative to max |θ| of the reference (the SQP at tol_kkt 1e-12); the DDP / iLQR at tol_grad 1e-12 or, with constraints, tol_kkt 1e-8; the iteration counts of L-BFGS are its two runs' sum, of the DDP with constraints the inner iterations' sum:\n\n{md}",
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
