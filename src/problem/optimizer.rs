//! `[optimizer]`: the optimizer's settings over their defaults.

use super::document::{key, Document};
use super::schema::OptimizerSpec;
use crate::error::Error;
use crate::optimize::OptimizerSettings;

/// The settings: the file's values over [`OptimizerSettings::default`].
pub(super) fn settings(os: &OptimizerSpec, doc: &Document<'_>) -> Result<OptimizerSettings, Error> {
    let at = |k: &str| [key("optimizer"), key(k)];
    let d = OptimizerSettings::default();
    if os.memory == Some(0) {
        return Err(doc.error(&at("memory"), "memory must be ≥ 1"));
    }
    for (k, v) in [
        ("tol_grad", os.tol_grad),
        ("tol_cost", os.tol_cost),
        ("first_step", os.first_step),
        ("tol_kkt", os.tol_kkt),
    ] {
        if let Some(v) = v.filter(|v| !(*v >= 0.0) || !v.is_finite()) {
            return Err(doc.error(&at(k), format!("{k} = {v} must be a finite number ≥ 0")));
        }
    }
    if os.first_step == Some(0.0) {
        return Err(doc.error(&at("first_step"), "first_step must be > 0"));
    }
    Ok(OptimizerSettings {
        solver: os.solver.unwrap_or(d.solver),
        gradient: os.gradient.unwrap_or(d.gradient),
        max_iters: os.max_iters.unwrap_or(d.max_iters),
        memory: os.memory.unwrap_or(d.memory),
        tol_grad: os.tol_grad.unwrap_or(d.tol_grad),
        tol_cost: os.tol_cost.unwrap_or(d.tol_cost),
        first_step: os.first_step.unwrap_or(d.first_step),
        at_kink: os.at_kink.unwrap_or(d.at_kink),
        tol_kkt: os.tol_kkt.unwrap_or(d.tol_kkt),
        globalization: os.globalization.unwrap_or(d.globalization),
    })
}
