//! A gait optimization's `summary.json`: the gait optimizer's own record ([`GaitOptimum`]:
//! `names`, `initial`, `last`, the re-solved check, the history) and, beside it, the fields
//! every optimization's summary has (`problem`, `solver`, `outcome`, `initial_cost`,
//! `final_cost`, `parameters_initial`, `parameters_final`, `optimized`,
//! `final_gradient_norm`), so that a script reads every results folder the same way.

use crate::optimize::Outcome;
use crate::periodic::GaitOptimum;
use crate::problem::Problem;
use serde::Serialize;
use std::collections::BTreeMap;

/// The fields of a gait's `summary.json` (a contract: add, never rename or drop).
#[derive(Debug, Clone, Serialize)]
pub struct GaitSummary<'a> {
    pub problem: String,
    /// The quasi-Newton solver on the orbit's objective.
    pub solver: &'static str,
    /// How the gradient is computed: the orbit's direct (implicit) sensitivities.
    pub gradient: &'static str,
    pub outcome: Outcome,
    pub initial_cost: f64,
    pub final_cost: f64,
    /// Every parameter by name at the start and at the end.
    pub parameters_initial: BTreeMap<String, f64>,
    pub parameters_final: BTreeMap<String, f64>,
    /// The names of the optimized parameters.
    pub optimized: Vec<String>,
    /// `|∇|` (the largest component) of the objective at the end.
    pub final_gradient_norm: f64,
    #[serde(flatten)]
    pub gait: &'a GaitOptimum,
}

impl<'a> GaitSummary<'a> {
    /// The summary of `r`, a gait optimization of `p` (its parameters by name, the
    /// optimized ones from `r`).
    pub fn new(p: &Problem, r: &'a GaitOptimum) -> Self {
        let np = p.dims.np();
        let at = |values: &[f64]| -> BTreeMap<String, f64> {
            let mut m: BTreeMap<String, f64> = p.dims.params[..np]
                .iter()
                .cloned()
                .zip(p.theta_values())
                .collect();
            for (name, v) in r.names.iter().zip(values) {
                m.insert(name.clone(), *v);
            }
            m
        };
        GaitSummary {
            problem: p.name.clone(),
            solver: "lbfgs",
            gradient: "direct",
            outcome: r.outcome,
            initial_cost: r.initial.value,
            final_cost: r.last.value,
            parameters_initial: at(&r.initial.params),
            parameters_final: at(&r.last.params),
            optimized: r.names.clone(),
            final_gradient_norm: r.last.gradient.iter().fold(0.0, |m, g| m.max(g.abs())),
            gait: r,
        }
    }
}
