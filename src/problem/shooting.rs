//! `[shooting]`: multiple shooting's nodes, guess and periodic closing, resolved against
//! the system (docs/guide/shooting.md). A guess file's path is relative to the problem
//! file's folder.

use super::document::{key, Document};
use super::schema::ShootingSpec;
use crate::error::Error;
use crate::model::Dims;
use crate::optimize::{Closure, Guess, GuessTable, NodeTimes, Shooting};
use std::path::Path;

/// The settings of a `[shooting]` table.
pub(super) fn read(
    spec: &ShootingSpec, dims: &Dims, doc: &Document<'_>,
) -> Result<Shooting, Error> {
    let at = |k: &str| [key("shooting"), key(k)];
    let nodes = match (spec.segments, &spec.nodes) {
        (Some(k), None) if k >= 2 => NodeTimes::Segments(k),
        (Some(k), None) => {
            return Err(doc.error(&at("segments"), format!("segments = {k}: give at least 2")))
        }
        (None, Some(t)) if !t.is_empty() => NodeTimes::Times(t.clone()),
        (None, Some(_)) => {
            return Err(doc.error(
                &at("nodes"),
                "nodes = []: give the interior node times, at least one",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(doc.error(
                &at("nodes"),
                "give either `segments` (equal segments) or `nodes` (the interior node times), not both",
            ))
        }
        (None, None) => {
            return Err(doc.error(
                &[key("shooting")],
                "give `segments = K` (K ≥ 2 equal segments) or `nodes = [t_1, …]` (the interior node times)",
            ))
        }
    };
    let guess = match spec.guess.as_deref() {
        None | Some("single_shooting") => Guess::SingleShooting,
        Some(file) => {
            let base = doc.file.parent().unwrap_or(Path::new("."));
            let path = base.join(file);
            Guess::Table(GuessTable::read_csv(&path, dims).map_err(|e| doc.error(&at("guess"), e))?)
        }
    };
    let closure = match &spec.periodic {
        None => None,
        Some(c) => {
            let guard = dims
                .guards
                .iter()
                .position(|g| g.name == c.guard)
                .ok_or_else(|| {
                    doc.error(
                        &[key("shooting"), key("periodic"), key("guard")],
                        format!(
                            "`{}` is not a guard of the system; its guards: {}",
                            c.guard,
                            dims.guards
                                .iter()
                                .map(|g| g.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })?;
            let states = match &c.states {
                None => (0..dims.states.len()).collect(),
                Some(names) => names
                    .iter()
                    .map(|n| {
                        dims.states.iter().position(|s| s == n).ok_or_else(|| {
                            doc.error(
                                &[key("shooting"), key("periodic"), key("states")],
                                format!(
                                    "`{n}` is not a state; the states: {}",
                                    dims.states.join(", ")
                                ),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            };
            if states.is_empty() {
                return Err(doc.error(
                    &[key("shooting"), key("periodic"), key("states")],
                    "states = []: name the states that must return (leave the key out for all)",
                ));
            }
            Some(Closure { guard, states })
        }
    };
    Ok(Shooting {
        nodes,
        guess,
        closure,
    })
}
