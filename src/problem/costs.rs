//! `[[cost]]` and `[reference]`: the cost terms, their names (outputs, guards, parameters)
//! resolved against the system, grouped into objectives.

use super::data::Frame;
use super::document::{key, Document, Seg};
use super::resolver::Resolver;
use super::schema::{CostKindSpec, CostSpec, ReferenceSpec};
use crate::cost::{Samples, Term};
use crate::error::Error;
use crate::model::Dims;
use crate::optimize::ThetaEntry;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// A validated cost term: the engine's [`Term`], except that a tracking term's reference
/// run is made when the setup is built.
#[derive(Debug, Clone)]
pub enum CostTerm {
    Term(Term),
    Track {
        output: usize,
        weight: f64,
    },
    /// A data term without a file: each `[[experiment]]` gives its record, read with these
    /// σ (problem/experiments.rs).
    ExperimentData {
        sigma: BTreeMap<String, f64>,
        weight: f64,
    },
}

/// A cost term of the file, its names resolved against the system.
#[derive(Debug, Clone)]
pub struct CostEntry {
    pub term: CostTerm,
    pub objective: String,
}

impl CostEntry {
    /// Whether it tracks a reference run.
    pub fn is_track(&self) -> bool {
        matches!(self.term, CostTerm::Track { .. })
    }

    /// Whether it fits a measured record.
    pub fn is_data(&self) -> bool {
        matches!(
            self.term,
            CostTerm::ExperimentData { .. } | CostTerm::Term(Term::Data { .. })
        )
    }

    /// Whether it is a `parameter_squared` term (a least-squares fit's prior).
    pub fn is_parameter_squared(&self) -> bool {
        matches!(&self.term, CostTerm::Term(t) if t.is_parameter_squared())
    }
}

/// The terms in file order (a data term's file is read here, its samples checked against
/// the horizon `(t0, t_end)`).
pub(super) fn entries(
    specs: &[CostSpec], dims: &Dims, theta: &[ThetaEntry], horizon: (f64, f64), doc: &Document<'_>,
) -> Result<Vec<CostEntry>, Error> {
    specs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let r = Resolver {
                table: "cost",
                i,
                dims,
                doc,
            };
            let objective = c.objective();
            if let Some(why) = super::file_names::unusable(&objective) {
                return Err(r.err(
                    "objective",
                    format!(
                        "{objective:?} cannot name the objective's files: {why}; use {}",
                        super::file_names::VALID
                    ),
                ));
            }
            let term = r.term(c, theta, horizon)?;
            Ok(CostEntry { term, objective })
        })
        .collect()
}

/// A data file's record, its path relative to the problem file.
pub(super) fn read_data(
    doc: &Document<'_>, at: &[Seg], file: &str, sigma: &BTreeMap<String, f64>, dims: &Dims,
    (t0, t_end): (f64, f64),
) -> Result<Samples, Error> {
    let base = doc.file.parent().unwrap_or(Path::new("."));
    let frame = Frame {
        dims,
        t0,
        t_end,
        sigma,
    };
    super::data::read(&base.join(file), &frame).map_err(|e| doc.error(at, e))
}

impl Resolver<'_, '_> {
    /// The term of entry #i, its names resolved (a data term's file read, its samples
    /// checked against the horizon).
    fn term(
        &self, c: &CostSpec, theta: &[ThetaEntry], horizon: (f64, f64),
    ) -> Result<CostTerm, Error> {
        let weight = self.finite("weight", c.weight)?;
        Ok(CostTerm::Term(match &c.what {
            CostKindSpec::Weighed { quantity, target } => {
                let quantity = quantity.resolve(self, theta)?;
                match target {
                    None => Term::plain(quantity, weight),
                    Some(t) => Term::squared(quantity, self.finite("target", *t)?, weight),
                }
            }
            CostKindSpec::Track { output } => {
                return Ok(CostTerm::Track {
                    output: self.output(output)?,
                    weight,
                })
            }
            CostKindSpec::Effort if self.dims.controls.is_empty() => {
                return Err(self.err("kind", "the system has no controls".into()))
            }
            CostKindSpec::Effort => Term::Effort { weight },
            CostKindSpec::Data { file: None, sigma } => {
                return Ok(CostTerm::ExperimentData {
                    sigma: sigma.clone(),
                    weight,
                })
            }
            CostKindSpec::Data {
                file: Some(f),
                sigma,
            } => Term::Data {
                samples: Arc::new(read_data(
                    self.doc,
                    &[key("cost"), Seg::Entry(self.i), key("file")],
                    f,
                    sigma,
                    self.dims,
                    horizon,
                )?),
                weight,
            },
        }))
    }
}

/// `[reference.params]` (needed by, and only by, a tracking term).
pub(super) fn reference(
    spec: Option<&ReferenceSpec>, costs: &[CostEntry], dims: &Dims, doc: &Document<'_>,
) -> Result<Option<BTreeMap<String, f64>>, Error> {
    let Some(r) = spec else {
        if costs.iter().any(CostEntry::is_track) {
            return Err(doc.problem(
                "a `track` cost term needs a [reference] table with the parameters that generate the reference run".into(),
            ));
        }
        return Ok(None);
    };
    for name in r.params.keys() {
        if !dims.params.contains(name) {
            return Err(doc.error(
                &[key("reference"), key("params"), key(name)],
                format!(
                    "`{name}` is not a parameter; valid: {}",
                    dims.params.join(", ")
                ),
            ));
        }
    }
    Ok(Some(r.params.clone()))
}
