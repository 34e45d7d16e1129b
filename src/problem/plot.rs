//! `[plot]`: the outputs to plot, the geometry for pictures of the motion and the x–y
//! loop figures.

use super::document::{key, Document};
use super::schema::PlotSpec;
use crate::animate::GeometrySpec;
use crate::error::Error;
use crate::model::Dims;

/// What `[plot]` asks for.
pub(super) struct PlotSettings {
    /// The outputs' indices (default: the first six).
    pub outputs: Vec<usize>,
    pub geometry: Option<GeometrySpec>,
    /// Pairs (x, y) of output indices (the figures: [`crate::output`]'s `loops`).
    pub loops: Vec<(usize, usize)>,
}

/// The outputs' indices (default: the first six), the geometry and the loops, if any.
pub(super) fn read(
    spec: Option<&PlotSpec>, dims: &Dims, doc: &Document<'_>,
) -> Result<PlotSettings, Error> {
    let Some(p) = spec else {
        return Ok(PlotSettings {
            outputs: (0..dims.outputs.len().min(6)).collect(),
            geometry: None,
            loops: Vec::new(),
        });
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
    let loops = parse_loops(&p.loops, &dims.outputs)
        .map_err(|m| doc.error(&[key("plot"), key("loops")], m))?;
    Ok(PlotSettings {
        outputs,
        geometry,
        loops,
    })
}

/// The `[plot] loops` pairs as output indices; an unknown name is an error naming it and
/// the valid outputs.
fn parse_loops(pairs: &[[String; 2]], outputs: &[String]) -> Result<Vec<(usize, usize)>, String> {
    let index = |name: &String| {
        outputs.iter().position(|o| o == name).ok_or_else(|| {
            format!(
                "[plot] loops: output `{name}` is unknown; valid outputs: {}",
                outputs.join(", ")
            )
        })
    };
    pairs
        .iter()
        .map(|[x, y]| Ok((index(x)?, index(y)?)))
        .collect()
}
