//! A gait optimization's `summary.json`: the gait optimizer's own record ([`GaitOptimum`]:
//! `names`, `initial`, `last`, the re-solved check, the history) and, before it, the fields
//! every optimization's summary has ([`CommonSummary`]), so that a script reads every results
//! folder the same way.

use crate::output::summary::CommonSummary;
use crate::periodic::GaitOptimum;
use crate::problem::Problem;
use serde::Serialize;
use std::collections::BTreeMap;

/// The fields of a gait's `summary.json` (a contract: add, never rename or drop).
#[derive(Debug, Clone, Serialize)]
pub struct GaitSummary<'a> {
    /// The common fields (the solver: `lbfgs` on the orbit's objective; the gradient: the
    /// orbit's direct, implicit, sensitivities).
    #[serde(flatten)]
    pub common: CommonSummary,
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
            common: CommonSummary {
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
            },
            gait: r,
        }
    }
}
