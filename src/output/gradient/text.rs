//! The terminal report of `hybridopt gradient` (without `--json`).

use super::run::GradientRun;
use super::GradientReport;
use std::fmt::Write;

/// The relative difference |a − b| / |b| (|a − b| when b = 0).
pub fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    if den == 0.0 {
        num
    } else {
        num / den
    }
}

/// The report for problem `name`: ψ, the gradients of every method by parameter (in θ's
/// order, `names`), their relative differences, the timings, the simultaneous-event
/// verdict and the events with τ.
pub fn gradient_text(
    name: &str, names: &[String], objective_names: &[String], run: &GradientRun,
    report: &GradientReport,
) -> String {
    let mut o = String::new();
    let main = &run.main().evaluation;
    let s = &run.trajectory.stats;
    let _ = writeln!(
        o,
        "{name}: ψ = {:.15e}  ({} steps, {} events)",
        main.values[0], s.steps, s.events
    );
    for (i, n) in objective_names.iter().enumerate().skip(1) {
        let _ = writeln!(o, "  objective {n}: {:.15e}", main.values[i]);
    }
    gradient_table(&mut o, names, run);
    timing_lines(&mut o, run, report);
    if let Some(ns) = &run.nonsmooth {
        let _ = writeln!(
            o,
            "  simultaneous events: ψ is {} here (crossing orders' gradients differ by {:.3e}); one-sided derivatives in the JSON output",
            if ns.nonsmooth { "NONSMOOTH" } else { "smooth" },
            ns.max_relative_difference
        );
    }
    event_lines(&mut o, names, run, report);
    o
}

fn gradient_table(o: &mut String, names: &[String], run: &GradientRun) {
    let w = names.iter().map(|n| n.len()).max().unwrap_or(4).max(9);
    let _ = write!(o, "  {:w$}", "parameter");
    for r in &run.runs {
        let _ = write!(o, "  {:>22}", r.method.name());
    }
    let _ = writeln!(o);
    for (j, n) in names.iter().enumerate() {
        let _ = write!(o, "  {n:w$}");
        for r in &run.runs {
            let _ = write!(o, "  {:>22.15e}", r.evaluation.gradients[0][j]);
        }
        let _ = writeln!(o);
    }
    if run.runs.len() > 1 {
        let reference = &run.runs[0].evaluation.gradients[0];
        let _ = writeln!(o, "  relative difference to {}:", run.runs[0].method.name());
        for r in run.runs.iter().skip(1) {
            let d = rel_diff(&r.evaluation.gradients[0], reference);
            let _ = writeln!(o, "    {:8} {:.3e}", r.method.name(), d);
        }
    }
    if let Some(est) = run
        .runs
        .iter()
        .find_map(|r| r.evaluation.fd.as_ref()?.error_estimates.as_ref())
    {
        // the FD witness's own error estimate, relative as the differences above are
        let fd = run.runs.iter().find(|r| r.evaluation.fd.is_some());
        let g = &fd.map_or(&run.runs[0], |r| r).evaluation.gradients[0];
        let scale = g.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
        let worst = est[0].iter().fold(0.0f64, |m, v| m.max(*v)) / scale;
        let _ = writeln!(
            o,
            "  fd error estimate (Richardson, relative to max|g|): {worst:.3e}"
        );
    }
}

fn timing_lines(o: &mut String, run: &GradientRun, report: &GradientReport) {
    let t = &report.timing;
    let _ = writeln!(
        o,
        "  timing (median of {}): forward {:.3e} s (from {})",
        t.repeat, t.forward_s, t.forward_from
    );
    for r in &run.runs {
        let m = t.methods.get(r.method.name()).copied().unwrap_or(0.0);
        let _ = writeln!(
            o,
            "    {:8} {:.3e} s  ({:.2}× forward)",
            r.method.name(),
            m,
            m / t.forward_s
        );
    }
    if let Some(s) = t.tau_s {
        let _ = writeln!(
            o,
            "    τ: one direct pass, {s:.3e} s (not timed above; asked for by --tau)"
        );
    }
    let _ = writeln!(o, "    wall {:.3e} s", t.wall_s);
}

fn event_lines(o: &mut String, names: &[String], run: &GradientRun, report: &GradientReport) {
    match (run.tau_events(), report.tau_from) {
        (Some(evs), Some(from)) => {
            let _ = writeln!(o, "  events (τ from {}):", from.describe());
            for (e, r) in evs.iter().zip(&report.events) {
                let tau: Vec<String> = names
                    .iter()
                    .zip(&e.tau)
                    .take(8)
                    .map(|(n, v)| format!("{n}: {v:.6e}"))
                    .collect();
                let _ = writeln!(
                    o,
                    "    t = {:.12}  {}  dt/dθ = {{{}}}",
                    e.t,
                    r.event.guard,
                    tau.join(", ")
                );
            }
        }
        _ => {
            let _ = writeln!(o, "  events:");
            for e in &report.events {
                let _ = writeln!(o, "    t = {:.12}  {}", e.event.t, e.event.guard);
            }
        }
    }
}
