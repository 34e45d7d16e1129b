//! `[plot]`: the outputs to plot and the geometry for pictures of the motion.

use super::document::{key, Document};
use super::schema::PlotSpec;
use crate::animate::GeometrySpec;
use crate::error::Error;
use crate::model::Dims;

/// The outputs' indices (default: the first six) and the geometry, if any.
pub(super) fn read(
    spec: Option<&PlotSpec>,
    dims: &Dims,
    doc: &Document<'_>,
) -> Result<(Vec<usize>, Option<GeometrySpec>), Error> {
    let Some(p) = spec else {
        return Ok(((0..dims.outputs.len().min(6)).collect(), None));
    };
    let outputs = p
        .outputs
        .iter()
        .map(|o| {
            dims.output_index(o).ok_or_else(|| {
                doc.error(
                    &[key("plot"), key("outputs")],
                    format!(
                        "output `{o}` is unknown; valid outputs: {}",
                        dims.outputs.join(", ")
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let geometry = match &p.geometry {
        Some(v) => Some(GeometrySpec::parse(v.clone(), &dims.outputs).map_err(|e| {
            let line = doc
                .line_of_text(&e.key)
                .map_or(String::new(), |l| format!(" (line {l})"));
            doc.problem(format!("[plot.geometry] {}{line}", e.message))
        })?),
        None => None,
    };
    Ok((outputs, geometry))
}
