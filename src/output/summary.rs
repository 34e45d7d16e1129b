//! The fields every optimization's `summary.json` has, declared once ([`CommonSummary`]):
//! an optimize run's summary ([`super::optimize::OptimizeSummary`]) and a gait's
//! ([`super::periodic::GaitSummary`]) each flatten it into theirs, so that a script reads
//! every results folder the same way.

use crate::optimize::Outcome;
use serde::Serialize;
use std::collections::BTreeMap;

/// The common fields of every optimization's `summary.json`, in the order a gait's summary
/// writes them (a contract: add, never rename or drop).
#[derive(Debug, Clone, Serialize)]
pub struct CommonSummary {
    pub problem: String,
    /// The solver (`lbfgs`, `sqp`, …).
    pub solver: &'static str,
    /// How the gradient is computed.
    pub gradient: &'static str,
    pub outcome: Outcome,
    pub initial_cost: f64,
    pub final_cost: f64,
    /// Every parameter (an optimize run: θ) by name at the start and at the end.
    pub parameters_initial: BTreeMap<String, f64>,
    pub parameters_final: BTreeMap<String, f64>,
    /// The names of the optimized entries.
    pub optimized: Vec<String>,
    /// `|∇|` of the objective at the end.
    pub final_gradient_norm: f64,
}
