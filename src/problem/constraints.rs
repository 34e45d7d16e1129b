//! `[[constraint]]`: each table's functional (the cost terms' keys: guard, occurrence,
//! output, param) resolved against the system, its bounds checked (`equals`, or `lower`
//! and/or `upper`, finite and ordered), and its name (given, or the kind with its details).

use super::document::Document;
use super::resolver::Resolver;
use super::schema::{ConstraintKindSpec, ConstraintSpec};
use crate::constraint::{Constraint, ConstraintBounds, ConstraintKind, FreeTime};
use crate::cost::Quantity;
use crate::error::Error;
use crate::model::Dims;
use crate::optimize::ThetaEntry;

/// The constraints in file order.
pub(super) fn entries(
    specs: &[ConstraintSpec], dims: &Dims, theta: &[ThetaEntry], free_time: Option<FreeTime>,
    doc: &Document<'_>,
) -> Result<Vec<Constraint>, Error> {
    let mut out: Vec<Constraint> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let r = Resolver {
            table: "constraint",
            i,
            dims,
            doc,
        };
        let (kind, details) = kind(&r, spec, theta)?;
        if kind == ConstraintKind::Quantity(Quantity::FinalTime) && free_time.is_none() {
            return Err(r.err(
                "kind",
                "a `final_time` constraint needs a free final time: write [simulation] t_end = { value = …, optimize = true, lower = …, upper = … }".into(),
            ));
        }
        let bounds = bounds(&r, spec, kind)?;
        let name = match spec.name.as_deref() {
            Some(n) if n.trim().is_empty() => {
                return Err(r.err("name", "a constraint's name cannot be empty".into()))
            }
            Some(n) => n.to_string(),
            None => format!("{}({details})", kind.name()),
        };
        if out.iter().any(|c| c.name == name) {
            return Err(r.err(
                "name",
                format!("another constraint is already named `{name}`; give each its own `name`"),
            ));
        }
        out.push(Constraint { name, kind, bounds });
    }
    Ok(out)
}

/// The functional, and the details its default name shows (`ground#2`, `y`).
fn kind(
    r: &Resolver<'_, '_>, spec: &ConstraintSpec, theta: &[ThetaEntry],
) -> Result<(ConstraintKind, String), Error> {
    Ok(match &spec.what {
        ConstraintKindSpec::Quantity(q) => {
            let quantity = q.resolve(r, theta)?;
            (quantity.into(), q.details(quantity.is_after_event()))
        }
        ConstraintKindSpec::Path { output } => (
            ConstraintKind::Path {
                output: r.output(output)?,
            },
            output.clone(),
        ),
    })
}

/// `equals`, or `lower` and/or `upper`: finite, ordered, not both kinds.
fn bounds(
    r: &Resolver<'_, '_>, spec: &ConstraintSpec, kind: ConstraintKind,
) -> Result<ConstraintBounds, Error> {
    let (equals, lower, upper) = (spec.equals, spec.lower, spec.upper);
    for (k, v) in [("equals", equals), ("lower", lower), ("upper", upper)] {
        if let Some(v) = v {
            r.finite(k, v)?;
        }
    }
    match (equals, lower, upper) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(r.err(
            "equals",
            "give either `equals` or bounds (`lower` and/or `upper`), not both".into(),
        )),
        (Some(_), None, None) if matches!(kind, ConstraintKind::Path { .. }) => Err(r.err(
            "equals",
            "a path constraint bounds the output over the whole run: give `lower` and/or `upper` (an output equal to a constant everywhere is not a path constraint)".into(),
        )),
        (Some(v), None, None) => Ok(ConstraintBounds::Equal(v)),
        (None, None, None) => Err(r.err(
            "kind",
            "a constraint needs `equals`, or `lower` and/or `upper`".into(),
        )),
        (None, Some(l), Some(u)) if l > u => Err(r.err(
            "lower",
            format!("lower = {l} is above upper = {u}; a constraint needs lower ≤ upper"),
        )),
        (None, lower, upper) => Ok(ConstraintBounds::Range { lower, upper }),
    }
}
