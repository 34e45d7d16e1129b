//! `[parameters]`: θ's physical entries, each given (value, whether it is optimized,
//! bounds) or, when left out, fixed at the system's default.

use super::document::{key, Document, Seg};
use super::schema::ParamSpec;
use crate::error::Error;
use crate::model::Dims;
use crate::optimize::ThetaEntry;
use crate::systems::builtin::Builtin;
use std::collections::BTreeMap;

/// The entries of θ for the system's parameters, in the engine's order.
pub(super) fn entries(
    given: &BTreeMap<String, ParamSpec>, system: &Builtin, dims: &Dims, doc: &Document<'_>,
) -> Result<Vec<ThetaEntry>, Error> {
    let kind = system.kind();
    for name in given.keys() {
        if !dims.params.contains(name) {
            return Err(doc.error(
                &[key("parameters"), key(name)],
                format!(
                    "`{name}` is not a parameter of system \"{kind}\"; its parameters are: {}",
                    dims.params.join(", ")
                ),
            ));
        }
    }
    let defaults = system.defaults();
    let mut theta = Vec::with_capacity(dims.params.len());
    for name in &dims.params {
        let spec = match (given.get(name), defaults.iter().find(|(n, _)| n == name)) {
            (Some(ps), _) => ps.clone(),
            (None, Some((_, v))) => ParamSpec {
                value: *v,
                optimize: false,
                lower: None,
                upper: None,
            },
            (None, None) => {
                return Err(doc.error(
                    &[key("parameters")],
                    format!(
                        "is missing `{name}`; system \"{kind}\" needs all of: {} (a custom \
                         system's file may give defaults in [system] defaults)",
                        dims.params.join(", ")
                    ),
                ))
            }
        };
        theta.push(entry(name, &spec, &[key("parameters"), key(name)], doc)?);
    }
    Ok(theta)
}

/// A checked entry: a finite value strictly inside finite, ordered bounds.
pub(super) fn entry(
    name: &str, ps: &ParamSpec, path: &[Seg], doc: &Document<'_>,
) -> Result<ThetaEntry, Error> {
    let bad = |m: String| doc.error(path, format!("parameter `{name}`: {m}"));
    if !ps.value.is_finite() {
        return Err(bad(format!("value {} is not finite", ps.value)));
    }
    if let (Some(l), Some(u)) = (ps.lower, ps.upper) {
        if !(l < u) {
            return Err(bad(format!(
                "bounds are inverted or empty: lower = {l} must be below upper = {u}"
            )));
        }
    }
    for (which, b) in [("lower", ps.lower), ("upper", ps.upper)] {
        if let Some(b) = b.filter(|b| !b.is_finite()) {
            return Err(bad(format!(
                "{which} bound {b} is not finite (omit it for no bound)"
            )));
        }
    }
    if let Some(l) = ps.lower.filter(|l| !(ps.value > *l)) {
        return Err(bad(format!(
            "initial value {} is outside its bounds: it must be strictly above lower = {l}",
            ps.value
        )));
    }
    if let Some(u) = ps.upper.filter(|u| !(ps.value < *u)) {
        return Err(bad(format!(
            "initial value {} is outside its bounds: it must be strictly below upper = {u}",
            ps.value
        )));
    }
    Ok(ThetaEntry {
        name: name.to_string(),
        value: ps.value,
        optimize: ps.optimize,
        lower: ps.lower,
        upper: ps.upper,
    })
}
