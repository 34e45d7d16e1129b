//! Periodic-orbit benchmark (issue 12): one periodic solve of the simplest walker's
//! stable gait at γ = 0.009 (Newton on P(x) − x = 0 to ‖P(x) − x‖∞ ≤ 1e-12 from
//! (θ, θ̇) = (0.2, −0.2), rtol = atol = 1e-12) with the exact DP (one direct-sensitivity
//! pass per iteration) against Newton with a finite-difference DP (central differences
//! along the section's 3 tangent directions: 6 plain runs per iteration), and the same for
//! the compass gait. The best of N runs each (a shared machine only adds time).
//!
//! Claims (CLAIM FAILED, non-zero exit): both Newton iterations converge in the documented
//! number of iterations (4 for the walker, 6 for the compass gait), reach the same fixed
//! point to 3e-12 (measured 1.3e-13), and the FD DP agrees with the exact one to 3e-5
//! relative (measured 1.1e-6 and 7.9e-8: the exact DP is the accurate one). Times are
//! reported, not claimed (the machine's load moves them).
//!
//! Run: `cargo bench --bench periodic` (or `-- --quick`). A full run writes its table into
//! docs/benchmarks.md (`common::publish`); `--quick` does not.

#[path = "common/mod.rs"]
mod common;

use hybridopt::periodic::Section;
use hybridopt::systems::CompassGait;
use hybridopt::systems::SimplestWalker;
use hybridopt::testing::walker::*;
use hybridopt::testing::{fd_monodromy, MapOptions, Stencil};
use hybridopt::testing::{solve, JacobianSource, NewtonOptions, FD_STEP};
use hybridopt::HybridSystem;
use std::time::Instant;

fn best_time<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// One system's solves: prints them, adds a markdown row to `md` and any failed claim to
/// `failures` (`iterations`: the documented count).
#[allow(clippy::too_many_arguments)]
fn row<S: HybridSystem>(
    label: &str, sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x0: &[f64], reps: usize,
    iterations: usize, md: &mut String, failures: &mut Vec<String>,
) {
    let nopt = NewtonOptions::default();
    let mut out = Vec::new();
    for jac in [JacobianSource::Exact, JacobianSource::FiniteDifferences] {
        let fp = solve(sys, sec, opts, &nopt, p, x0, jac).expect("converges");
        let t = best_time(reps, || {
            solve(sys, sec, opts, &nopt, p, x0, jac).expect("converges");
        });
        out.push((jac, t, fp.iterations, fp.residual, fp.x.clone()));
    }
    let (te, tf) = (out[0].1, out[1].1);
    let fp = &out[0].4;
    let fd = fd_monodromy(sys, sec, opts, p, fp.as_slice(), FD_STEP, Stencil::Second).unwrap();
    let exact = solve(
        sys,
        sec,
        opts,
        &nopt,
        p,
        fp.as_slice(),
        JacobianSource::Exact,
    )
    .unwrap();
    let dp_err = (&fd - &exact.ret.monodromy).amax() / exact.ret.monodromy.amax();
    println!("{label}");
    for (jac, t, it, res, _) in &out {
        println!(
            "  {:<20} {:>9.3} ms  {:>2} iterations  residual {:.1e}",
            format!("{jac:?}"),
            t * 1e3,
            it,
            res
        );
    }
    let gap = (&out[0].4 - &out[1].4).amax();
    println!(
        "  FD-Jacobian Newton / exact-DP Newton: {:.2}x time; same fixed point to {gap:.1e}; FD DP relative error {dp_err:.1e}",
        tf / te,
    );
    for (jac, _, it, res, _) in &out {
        if *it != iterations || *res > 1e-12 {
            failures.push(format!(
                "{label}, {jac:?}: {it} iterations (documented {iterations}), residual {res:e}"
            ));
        }
    }
    if gap > 3e-12 {
        failures.push(format!("{label}: fixed points differ by {gap:e} > 3e-12"));
    }
    if dp_err > 3e-5 {
        failures.push(format!("{label}: FD DP relative error {dp_err:e} > 3e-5"));
    }
    *md += &format!(
        "| {label} | {:.2} ms | {:.2} ms | {:.2}× | {} / {} | {gap:.1e} | {dp_err:.1e} |\n",
        te * 1e3,
        tf * 1e3,
        tf / te,
        out[0].2,
        out[1].2
    );
}

fn main() {
    let quick = common::quick();
    let reps = if quick { 3 } else { 11 };
    let opts = walker_options(1e-12);
    let mut md = format!(
        "Best of {reps} at load {}:\n\n\
         | orbit | exact DP | FD DP | FD / exact | iterations (exact / FD) | fixed points differ by | FD DP relative error |\n\
         |---|---|---|---|---|---|---|\n",
        common::load()
    );
    let mut failures = Vec::new();
    row(
        "simplest walker, γ = 0.009, stable gait",
        &SimplestWalker,
        &walker_section(),
        &opts,
        &walker_params(GAMMA),
        &walker_on_section(0.2, -0.2),
        reps,
        4,
        &mut md,
        &mut failures,
    );
    let cg = CompassGait;
    let p = CompassGait::default_params();
    let sec = Section::after_reset(0, 1, 0, vec![1, 2, 3]);
    row(
        "compass gait, 3°",
        &cg,
        &sec,
        &MapOptions { t_max: 5.0, ..opts },
        &p,
        &[0.27236, -0.16764, -0.4, 1.2],
        reps,
        6,
        &mut md,
        &mut failures,
    );
    common::publish("periodic", &md);
    if !failures.is_empty() {
        eprintln!("CLAIM FAILED: {}", failures.join("; "));
        std::process::exit(1);
    }
}
