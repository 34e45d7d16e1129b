//! Resolving a `[[cost]]` or `[[constraint]]` table's names (outputs, guards, parameters)
//! against the system, each error pointing at the table's key.

use super::document::{key, Document, Seg};
use super::guard_spec::GuardSpec;
use crate::cost::EventGuard;
use crate::error::Error;
use crate::model::Dims;
use crate::optimize::ThetaEntry;

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
        self.entry("output", o, &self.dims.outputs)
    }

    /// The index of `name` among `list`, the entries key `k` names (`output`, `state`):
    /// an unknown name is an error at `k` listing the valid ones.
    pub fn entry(&self, k: &str, name: &str, list: &[String]) -> Result<usize, Error> {
        list.iter().position(|o| o == name).ok_or_else(|| {
            self.err(
                k,
                format!("{k} `{name}` is unknown; valid {k}s: {}", list.join(", ")),
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
}

/// The guards' names, for messages.
pub(super) fn guard_names(dims: &Dims) -> String {
    dims.guards
        .iter()
        .map(|g| g.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
