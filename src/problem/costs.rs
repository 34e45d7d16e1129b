//! `[[cost]]` and `[reference]`: the cost terms, their names (outputs, guards, parameters)
//! resolved against the system, grouped into objectives.

use super::data::Frame;
use super::document::{key, Document, Seg};
use super::schema::{CostKindSpec, CostSpec, GuardSpec, ReferenceSpec};
use super::simulation::guard_names;
use crate::cost::{EventGuard, Samples, Term};
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

/// Resolves the names of entry #i of the array of tables `table` (`cost`, `constraint`),
/// its errors pointing at its keys.
pub(super) struct Resolver<'r, 'a> {
    pub table: &'static str,
    pub i: usize,
    pub dims: &'r Dims,
    pub doc: &'r Document<'a>,
}

impl Resolver<'_, '_> {
    pub fn err(&self, k: &str, message: String) -> Error {
        let mut path = vec![key(self.table), Seg::Entry(self.i)];
        if !k.is_empty() {
            path.push(key(k));
        }
        self.doc.error(&path, message)
    }

    pub fn output(&self, o: &str) -> Result<usize, Error> {
        self.dims.output_index(o).ok_or_else(|| {
            self.err(
                "output",
                format!(
                    "output `{o}` is unknown; valid outputs: {}",
                    self.dims.outputs.join(", ")
                ),
            )
        })
    }

    /// The guard's index and the occurrence (counted from 1).
    pub fn event(&self, g: &GuardSpec, occurrence: usize) -> Result<(EventGuard, usize), Error> {
        let guard = match g {
            GuardSpec::Any => EventGuard::Any,
            GuardSpec::Named(g) => EventGuard::Guard(
                self.dims
                    .guards
                    .iter()
                    .position(|x| x.name == *g)
                    .ok_or_else(|| {
                        self.err(
                            "guard",
                            format!(
                                "guard `{g}` is unknown; valid guards: {}, or \"any\" (any guard)",
                                guard_names(self.dims)
                            ),
                        )
                    })?,
            ),
        };
        if occurrence == 0 {
            return Err(self.err("occurrence", "occurrence counts from 1".into()));
        }
        if self.dims.guards.is_empty() {
            return Err(self.err(
                "kind",
                "the system has no guards, so it has no events to refer to".into(),
            ));
        }
        Ok((guard, occurrence))
    }

    pub fn finite(&self, k: &str, v: f64) -> Result<f64, Error> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(self.err(k, format!("{k} {v} is not finite")))
        }
    }

    /// The index in θ of a parameter (or a control coefficient, `thrust[3]`).
    pub fn param(&self, param: &str, theta: &[ThetaEntry]) -> Result<usize, Error> {
        theta.iter().position(|e| e.name == param).ok_or_else(|| {
            self.err(
                "param",
                format!(
                    "param `{param}` is unknown; valid: {}",
                    self.dims.params.join(", ")
                ),
            )
        })
    }

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
