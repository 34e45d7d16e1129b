//! `[[experiment]]`: several records fitted together (docs/guide/identification.md). The
//! experiments share the optimized parameters; each has its own record (read for every
//! `data` cost term without a `file`, with that term's σ), its own values of parameters
//! that are not optimized (initial state, inputs, settings of the rig) and its own horizon.

use super::costs::{read_data, CostEntry, CostTerm};
use super::document::{key, Document, Seg};
use super::schema::ExperimentSpec;
use crate::cost::Samples;
use crate::error::Error;
use crate::model::Dims;
use crate::optimize::ThetaEntry;
use std::sync::Arc;

/// One experiment, its names resolved.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub name: String,
    /// `(index in θ, value)` of the parameters it fixes.
    pub parameters: Vec<(usize, f64)>,
    pub t_end: f64,
    /// The record of each file-less `data` cost term, in the order of the costs.
    pub records: Vec<Arc<Samples>>,
}

impl Experiment {
    /// θ of this experiment: `theta` with its fixed parameters set.
    pub fn theta(&self, theta: &[f64]) -> Vec<f64> {
        let mut th = theta.to_vec();
        for &(i, v) in &self.parameters {
            th[i] = v;
        }
        th
    }
}

/// The experiments of the file; a file-less `data` cost needs them, and they need one.
pub(super) fn read(
    specs: &[ExperimentSpec], costs: &[CostEntry], dims: &Dims, theta: &[ThetaEntry],
    (t0, t_end): (f64, f64), doc: &Document<'_>,
) -> Result<Vec<Experiment>, Error> {
    let fileless: Vec<&CostEntry> = costs
        .iter()
        .filter(|c| matches!(c.term, CostTerm::ExperimentData { .. }))
        .collect();
    if specs.is_empty() {
        if !fileless.is_empty() {
            return Err(doc.problem(
                "a `data` cost term has no `file`: give it `file = \"…csv\"`, or add [[experiment]] tables with `data = \"…csv\"`".into(),
            ));
        }
        return Ok(vec![]);
    }
    if fileless.is_empty() {
        return Err(doc.error(
            &[key("experiment")],
            "[[experiment]] tables give the records of `data` cost terms without `file`; the file has none",
        ));
    }
    let mut out: Vec<Experiment> = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let at = |k: &str| vec![key("experiment"), Seg::Entry(i), key(k)];
        if out.iter().any(|e| e.name == spec.name) {
            return Err(doc.error(
                &at("name"),
                format!("a second experiment named {:?}", spec.name),
            ));
        }
        let mut parameters = Vec::new();
        for (name, &v) in &spec.parameters {
            let Some(k) = dims.param_index(name) else {
                return Err(doc.error(
                    &at("parameters"),
                    format!(
                        "`{name}` is not a parameter; valid: {}",
                        dims.params.join(", ")
                    ),
                ));
            };
            if theta[k].optimize {
                return Err(doc.error(
                    &at("parameters"),
                    format!("`{name}` is optimized, so the experiments share it; an experiment sets only parameters that are not optimized"),
                ));
            }
            if !v.is_finite() {
                return Err(doc.error(&at("parameters"), format!("`{name}` = {v} is not finite")));
            }
            parameters.push((k, v));
        }
        let end = spec.t_end.unwrap_or(t_end);
        if !(end.is_finite() && end > t0) {
            return Err(doc.error(
                &at("t_end"),
                format!("t_end = {end} must be a finite time after t0 = {t0}"),
            ));
        }
        let records = fileless
            .iter()
            .map(|c| match &c.term {
                CostTerm::ExperimentData { sigma, .. } => {
                    read_data(doc, &at("data"), &spec.data, sigma, dims, (t0, end)).map(Arc::new)
                }
                _ => unreachable!("filtered above"),
            })
            .collect::<Result<_, _>>()?;
        out.push(Experiment {
            name: spec.name.clone(),
            parameters,
            t_end: end,
            records,
        });
    }
    Ok(out)
}
