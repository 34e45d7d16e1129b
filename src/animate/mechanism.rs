//! The shapes of a [`Mechanism`] at a configuration: every moving point as a mass, every
//! bar, spring and damper, and every fixed point that something is attached to as a
//! ground pivot. A mechanism-based system's [`super::Geometry`] is this plus its scene.

use super::geometry::{Pt, Shape};
use crate::error::ModelError;
use crate::multibody::{Mechanism, Point};

/// The lumped mass drawn at each point: half the mass of every bar that ends there plus
/// the point masses on it (a uniform bar's mass split between its ends; drawing only,
/// the dynamics use the exact bar mass matrix of `multibody::bodies`). Fixed points get 0.
pub fn lumped_masses(mech: &Mechanism, p: &[f64]) -> Result<Vec<f64>, ModelError> {
    let mut m = vec![0.0; mech.points.len()];
    for b in &mech.bars {
        let half = 0.5 * b.mass.value(p)?;
        m[b.i] += half;
        m[b.j] += half;
    }
    for pm in &mech.point_masses {
        m[pm.point] += pm.mass.value(p)?;
    }
    for (k, pt) in mech.points.iter().enumerate() {
        if matches!(pt, Point::Fixed { .. }) {
            m[k] = 0.0;
        }
    }
    Ok(m)
}

/// The shapes of `mech` at coordinates `q` with parameters `p`, in the order: pivots,
/// springs, dampers, bars, masses (so that the masses are drawn on top). `names[k]`
/// labels point k when given.
pub fn mechanism_shapes(
    mech: &Mechanism, q: &[f64], p: &[f64], names: &[&str],
) -> Result<Vec<Shape>, ModelError> {
    if q.len() < mech.n {
        return Err(ModelError::SizeMismatch {
            what: "geometry".into(),
            expected: format!("the mechanism's {} coordinates", mech.n),
            found: q.len().to_string(),
        });
    }
    let pos = (0..mech.points.len())
        .map(|k| mech.position(k, q, p))
        .collect::<Result<Vec<Pt>, _>>()?;
    let mut attached = vec![false; pos.len()];
    let mut out = Vec::new();
    let mut link = |a: usize, b: usize| {
        attached[a] = true;
        attached[b] = true;
        (pos[a], pos[b])
    };
    let mut lines = Vec::new();
    for s in &mech.springs {
        let (a, b) = link(s.a, s.b);
        lines.push(Shape::Spring { a, b });
    }
    for d in &mech.dampers {
        let (a, b) = link(d.a, d.b);
        lines.push(Shape::Damper { a, b });
    }
    for bar in &mech.bars {
        let (a, b) = link(bar.i, bar.j);
        lines.push(Shape::Bar { a, b });
    }
    for (k, pt) in mech.points.iter().enumerate() {
        if matches!(pt, Point::Fixed { .. }) && attached[k] {
            out.push(Shape::Pivot { at: pos[k] });
        }
    }
    out.extend(lines);
    let masses = lumped_masses(mech, p)?;
    for (k, pt) in mech.points.iter().enumerate() {
        if matches!(pt, Point::Moving { .. }) {
            out.push(Shape::Mass {
                at: pos[k],
                mass: masses[k],
                name: names.get(k).map_or(String::new(), |s| s.to_string()),
            });
        }
    }
    Ok(out)
}
