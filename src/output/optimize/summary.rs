//! The optimization summary (`summary.json` of `hybridopt optimize`) as a typed,
//! serializable struct, and the event list of a trajectory by name: one source for the
//! command line and the Python package. Also its terminal report, and reading θ back
//! from a summary file (`animate --compare-initial`).

use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::optimize::{ConstraintReport, Globalization, KinkReport, OptimizeResult};
use crate::output::summary::CommonSummary;
use crate::problem::Problem;
use crate::setup::Setup;
use crate::sweep::{starts::Range, MultiStart, PointOutcome};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// One event by name: `{t, guard, mode_before, mode_after}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventSummary {
    pub t: f64,
    pub guard: String,
    pub mode_before: String,
    pub mode_after: String,
}

impl EventSummary {
    /// The events of `traj`, named through the setup's dimensions.
    pub fn list<S: HybridSystem>(setup: &Setup<'_, S>, traj: &Trajectory) -> Vec<EventSummary> {
        traj.events
            .iter()
            .map(|e| EventSummary {
                t: e.t,
                guard: setup.dims.guard_name(e.guard),
                mode_before: setup.dims.mode_name(e.mode_before()),
                mode_after: setup.dims.mode_name(e.mode_after()),
            })
            .collect()
    }
}

/// The fields of `summary.json` (a contract: add, never rename or drop).
#[derive(Debug, Clone, Serialize)]
pub struct OptimizeSummary {
    /// The fields every optimization's summary has (the file's keys are sorted: it is
    /// written through a [`serde_json::Value`]).
    #[serde(flatten)]
    pub common: CommonSummary,
    /// The solver's termination text.
    pub termination: String,
    pub converged: bool,
    pub iterations: u64,
    pub evaluations: usize,
    pub cost_evaluations: u64,
    pub gradient_evaluations: u64,
    pub restarts: Vec<String>,
    pub kinks_met: usize,
    /// The final point's kink, if it is one.
    pub final_kink: Option<KinkReport>,
    pub wall_time_s: f64,
    /// The events of the final trajectory.
    pub events: Vec<EventSummary>,
    /// `optimize --starts N`: the starts and the best of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multi_start: Option<MultiStartSummary>,
    /// A constrained problem: every constraint's value, bounds, violation and multiplier
    /// (`final_cost` stays the objective's value, never a merit function).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Vec<ConstraintReport>>,
    /// A constrained problem: the KKT residual at the final point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kkt_residual: Option<f64>,
    /// A constrained problem: how the SQP accepted its steps (`line_search`,
    /// `trust_region`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub globalization: Option<Globalization>,
    /// A constrained problem: the largest constraint violation at the final point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_violation: Option<f64>,
    /// A free final time: t_end at the start and at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_end_initial: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_end_final: Option<f64>,
    /// Multiple shooting's nodes (times, modes, states at the start and the end), the
    /// continuity gaps and a periodic problem's closing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shooting: Option<crate::optimize::ShootingReport>,
    /// A data fit (`solver = "gauss_newton"`): the least-squares solver's run, each
    /// experiment's share and the statistics at the optimum (σ̂², covariance, standard
    /// errors, correlations, 95 % intervals).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub least_squares: Option<crate::optimize::FitReport>,
}

/// `"multi_start"` of `optimize --starts N`.
#[derive(Debug, Clone, Serialize)]
pub struct MultiStartSummary {
    /// N.
    pub starts: usize,
    /// The seed of the start points.
    pub seed: u64,
    /// The sampling interval of each optimized entry.
    pub ranges: Vec<Range>,
    /// The index of the start kept (the lowest final cost).
    pub best_start: usize,
    /// How many starts failed.
    pub failed: usize,
    /// Each start's final cost (null for a failed start).
    pub final_costs: Vec<Option<f64>>,
    /// Each start's outcome.
    pub outcomes: Vec<PointOutcome>,
}

impl MultiStartSummary {
    /// The summary of `ms`, `count` starts of `seed` in `ranges`.
    pub fn new(count: usize, seed: u64, ranges: Vec<Range>, ms: &MultiStart) -> Self {
        MultiStartSummary {
            starts: count,
            seed,
            ranges,
            best_start: ms.best_index,
            failed: ms
                .records
                .iter()
                .filter(|r| r.outcome == PointOutcome::Failed)
                .count(),
            final_costs: ms.records.iter().map(|r| r.cost).collect(),
            outcomes: ms.records.iter().map(|r| r.outcome).collect(),
        }
    }
}

impl OptimizeSummary {
    /// The summary of `r`, a run of [`crate::optimize::optimize`] on `setup` (built from
    /// `p`) with `p.optimizer`.
    pub fn new(p: &Problem, setup: &Setup<'_, impl HybridSystem>, r: &OptimizeResult) -> Self {
        let names = setup.theta_names();
        let by_name = |v: &[f64]| -> BTreeMap<String, f64> {
            names.iter().cloned().zip(v.iter().copied()).collect()
        };
        let c = r.constrained.as_ref();
        OptimizeSummary {
            common: CommonSummary {
                problem: p.name.clone(),
                solver: match c {
                    Some(_) => "sqp",
                    None => p.optimizer.solver.name(),
                },
                gradient: p.optimizer.gradient.name(),
                outcome: r.outcome,
                initial_cost: r.initial_cost,
                final_cost: r.final_cost,
                parameters_initial: by_name(&r.theta_initial),
                parameters_final: by_name(&r.theta_final),
                optimized: p.free_indices().iter().map(|&i| names[i].clone()).collect(),
                final_gradient_norm: r.final_grad_norm,
            },
            termination: r.termination.clone(),
            converged: r.converged(),
            iterations: r.iterations,
            evaluations: r.evaluations,
            cost_evaluations: r.cost_calls,
            gradient_evaluations: r.gradient_calls,
            restarts: r.restarts.clone(),
            kinks_met: r.kinks.len(),
            final_kink: r.kinks.last().filter(|k| k.theta == r.theta_final).cloned(),
            wall_time_s: r.wall_time_s,
            events: EventSummary::list(setup, &r.last.trajectory),
            multi_start: None,
            constraints: c.map(|c| c.constraints.clone()),
            kkt_residual: c.map(|c| c.kkt_residual),
            globalization: c.map(|_| p.optimizer.globalization),
            max_violation: c.map(|c| c.max_violation),
            t_end_initial: c.and_then(|c| c.t_end_initial),
            t_end_final: c.and_then(|c| c.t_end_final),
            shooting: r.shooting.clone(),
            least_squares: r.least_squares.as_deref().cloned(),
        }
    }

    /// The terminal report of `hybridopt optimize`: outcome, costs, restarts, a final
    /// kink's one-sided derivatives, the first 12 optimized entries, and the folder.
    pub fn text(&self, dir: &Path) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{}: {} ({}), {} iterations, {} evaluations, cost {:.6e} → {:.6e}, |grad| {:.3e}, {:.2} s",
            self.common.problem,
            if self.converged { "converged" } else { "NOT converged" },
            self.termination,
            self.iterations,
            self.evaluations,
            self.common.initial_cost,
            self.common.final_cost,
            self.common.final_gradient_norm,
            self.wall_time_s
        );
        for r in &self.restarts {
            let _ = writeln!(o, "  restarted the line search {r}");
        }
        self.constraints_text(&mut o);
        if let (Some(a), Some(b)) = (self.t_end_initial, self.t_end_final) {
            let _ = writeln!(o, "  {:>12} {a:.10e} → {b:.10e}", "t_end");
        }
        self.shooting_text(&mut o);
        if let Some(ls) = &self.least_squares {
            fit_text(&mut o, ls);
        }
        if let Some(k) = &self.final_kink {
            let _ = writeln!(o, "  the final point is a kink (simultaneous event at t = {:?}): ψ has no gradient there", k.times);
            for (n, plus, minus) in &k.one_sided {
                let _ = writeln!(
                    o,
                    "    one-sided derivatives along ±{n}: {plus:+.6e} / {minus:+.6e}"
                );
            }
        }
        for n in self.common.optimized.iter().take(12) {
            let a = self
                .common
                .parameters_initial
                .get(n)
                .copied()
                .unwrap_or(f64::NAN);
            let b = self
                .common
                .parameters_final
                .get(n)
                .copied()
                .unwrap_or(f64::NAN);
            let _ = writeln!(o, "  {n:>12} {a:.10e} → {b:.10e}");
        }
        if self.common.optimized.len() > 12 {
            let _ = writeln!(
                o,
                "  … ({} optimized entries in all; see summary.json)",
                self.common.optimized.len()
            );
        }
        let _ = writeln!(o, "  wrote {}", dir.display());
        o
    }

    /// The report's constraint lines (a constrained run's): KKT residual, largest violation,
    /// each constraint's value, bounds, violation and multiplier.
    fn constraints_text(&self, o: &mut String) {
        let (Some(list), Some(kkt), Some(viol)) =
            (&self.constraints, self.kkt_residual, self.max_violation)
        else {
            return;
        };
        let _ = writeln!(
            o,
            "  KKT residual {kkt:.3e}, largest violation {viol:.3e}; constraints (λ: multiplier):"
        );
        for c in list {
            let bounds = match (c.lower, c.upper) {
                (Some(l), Some(u)) if l == u => format!("= {l}"),
                (Some(l), Some(u)) => format!("in [{l}, {u}]"),
                (Some(l), None) => format!("≥ {l}"),
                (None, Some(u)) => format!("≤ {u}"),
                (None, None) => String::new(),
            };
            let _ = writeln!(
                o,
                "    {:<24} {:.10e} {bounds:<16} violation {:.2e}  λ {:+.6e}{}",
                c.name,
                c.value,
                c.violation,
                c.multiplier,
                if c.active { "  active" } else { "" }
            );
        }
    }

    /// The report's multiple-shooting lines: segments, continuity gaps, a periodic closure.
    fn shooting_text(&self, o: &mut String) {
        let Some(sh) = &self.shooting else {
            return;
        };
        let _ = writeln!(
            o,
            "  multiple shooting: {} segments on {} thread(s), largest continuity gap {:.2e} → {:.2e}",
            sh.segments, sh.threads, sh.max_defect_initial, sh.max_defect
        );
        if let Some(c) = &sh.closure {
            let _ = writeln!(
                o,
                "  periodic: after `{}` at t = {:.10e} the states {} return to the start within {:.2e}; Floquet multipliers (|λ|): {}",
                c.guard,
                sh.t_end,
                c.states.join(", "),
                c.residual,
                c.multipliers
                    .iter()
                    .map(|z| format!("{:.6}", z[0].hypot(z[1])))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }

    /// As a JSON value, its keys in the order `summary.json` is written in.
    pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }
}

/// θ at the start and at the end of an optimization, read from its `summary.json` at
/// `path` (`parameters_initial` and `parameters_final` over the problem's values; the
/// summary must be of the same problem). `names` are θ's names.
pub fn summary_thetas(
    p: &Problem, names: &[String], path: &Path,
) -> Result<(Vec<f64>, Vec<f64>), crate::Error> {
    let err = |message: String| crate::Error::Problem {
        file: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        err(format!(
            "cannot read optimize's summary ({e}): run `hybridopt optimize` first, or give --summary"
        ))
    })?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| err(format!("not a JSON summary: {e}")))?;
    if v["problem"].as_str() != Some(p.name.as_str()) {
        return Err(err(format!(
            "key `problem` = {} but the problem file is `{}`",
            v["problem"], p.name
        )));
    }
    let read = |key: &str| -> Result<Vec<f64>, crate::Error> {
        let mut theta = p.theta_values();
        let Some(map) = v[key].as_object() else {
            return Err(err(format!("key `{key}` is missing or not a table")));
        };
        for (name, x) in map {
            let Some(i) = names.iter().position(|n| n == name) else {
                return Err(err(format!(
                    "`{key}.{name}` is not a parameter of problem `{}`",
                    p.name
                )));
            };
            theta[i] = x
                .as_f64()
                .ok_or_else(|| err(format!("`{key}.{name}` = {x} is not a number")))?;
        }
        Ok(theta)
    };
    Ok((read("parameters_initial")?, read("parameters_final")?))
}

/// A data fit's lines: the solver's counts, each experiment's share, σ̂² and each
/// parameter's estimate with its standard error and 95 % interval, and the correlations.
/// A line when the data do not determine the parameters well: the combination they
/// cannot see (docs/theory.md §9, "Statistics at the optimum").
fn identifiability_text(o: &mut String, st: &crate::optimize::Statistics) {
    use crate::optimize::Identifiability as I;
    let (what, condition, direction) = match &st.identifiability {
        I::Identifiable => return,
        I::IllConditioned {
            condition,
            direction,
        } => ("ill-conditioned", condition, direction),
        I::NotIdentifiable {
            condition,
            direction,
        } => ("not identifiable", condition, direction),
    };
    let combo: Vec<String> = st
        .parameters
        .iter()
        .zip(direction)
        .map(|(p, d)| format!("{} {d:+.3}", p.name))
        .collect();
    let _ = writeln!(
        o,
        "  {what} (condition {condition:.1e}): the data barely see the direction ({})",
        combo.join(", ")
    );
}

fn fit_text(o: &mut String, ls: &crate::optimize::FitReport) {
    let _ = writeln!(
        o,
        "  least squares ({}, {}): {} residuals, {} residual and {} Jacobian evaluations, last {} steps undamped Gauss–Newton",
        ls.solver, ls.outcome, ls.residuals, ls.residual_evaluations, ls.jacobian_evaluations,
        ls.final_gauss_newton_steps
    );
    for e in ls.experiments.iter().filter(|_| ls.experiments.len() > 1) {
        let _ = writeln!(
            o,
            "    experiment {}: {} residuals, Σr² {:.6e}",
            e.name, e.residuals, e.sum_of_squares
        );
    }
    let Some(st) = &ls.statistics else {
        let why = ls.statistics_error.as_deref().unwrap_or("unknown");
        let _ = writeln!(o, "  no statistics: {why}");
        return;
    };
    let _ = writeln!(
        o,
        "  σ̂² = {:.6e} (Σr² {:.6e} over {} degrees of freedom; ≈ 1 when the σ given are right), condition {:.3e}",
        st.sigma2, st.residual_sum_of_squares, st.degrees_of_freedom, st.condition
    );
    identifiability_text(o, st);
    let _ = writeln!(
        o,
        "  {:>12} {:>18} {:>12} {:>40}",
        "parameter", "estimate", "std. error", "95 % interval"
    );
    for p in &st.parameters {
        let _ = writeln!(
            o,
            "  {:>12} {:>18.10e} {:>12.3e}   [{:.10e}, {:.10e}]",
            p.name, p.estimate, p.standard_error, p.ci_low, p.ci_high
        );
    }
    if st.parameters.len() > 1 && st.correlation.len() == st.parameters.len() {
        for (i, a) in st.parameters.iter().enumerate() {
            for (j, b) in st.parameters.iter().enumerate().skip(i + 1) {
                let _ = writeln!(
                    o,
                    "  correlation {} ~ {}: {:+.4}",
                    a.name, b.name, st.correlation[i][j]
                );
            }
        }
    }
    for n in &st.excluded {
        let _ = writeln!(o, "  entry {n} is held at a bound: not estimated");
    }
}
