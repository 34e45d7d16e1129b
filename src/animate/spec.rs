//! A geometry declared in a problem file, `[plot.geometry]`: named points whose coordinates
//! are outputs of the system (or constants), and bars, springs and dampers between them.
//! It lets a system without a geometry of its own (one written in the problem file, when
//! that exists, or any built-in one) be drawn:
//!
//! ```toml
//! [plot.geometry]
//! points = { pivot = [0.0, 0.0], tip = ["x2", "y2"] }   # [x, y]: output names or numbers
//! bars = [["pivot", "tip"]]
//! springs = []                                          # and dampers = [...]
//! masses = { tip = 1.0 }        # drawn masses (kg); default 1 for every moving point
//! ground = -2.35                # optional ground line y
//! ```
//!
//! A point whose two coordinates are numbers is a ground pivot where something is attached.

use super::geometry::{Geometry, Pt, SceneItem, Shape};
use crate::error::ModelError;
use crate::model::HybridSystem;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One coordinate as written: an output's name or a number.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
enum CoordSpec {
    Output(String),
    Value(f64),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableSpec {
    points: BTreeMap<String, [CoordSpec; 2]>,
    #[serde(default)]
    bars: Vec<[String; 2]>,
    #[serde(default)]
    springs: Vec<[String; 2]>,
    #[serde(default)]
    dampers: Vec<[String; 2]>,
    #[serde(default)]
    masses: BTreeMap<String, f64>,
    ground: Option<f64>,
}

/// One coordinate, resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Coord {
    /// Output number i.
    Output(usize),
    Value(f64),
}

/// What kind of link joins two points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Bar,
    Spring,
    Damper,
}

/// A validated `[plot.geometry]` table (outputs resolved to their indices).
#[derive(Debug, Clone, PartialEq)]
pub struct GeometrySpec {
    names: Vec<String>,
    points: Vec<[Coord; 2]>,
    links: Vec<(Link, usize, usize)>,
    /// Drawn mass of each point (moving points only).
    masses: Vec<Option<f64>>,
    ground: Option<f64>,
}

/// A `[plot.geometry]` error: the key it concerns (for the line) and the message.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    pub key: String,
    pub message: String,
}

fn err(key: &str, message: String) -> SpecError {
    SpecError {
        key: key.to_string(),
        message,
    }
}

impl GeometrySpec {
    /// Reads and checks the table against the system's `outputs`: every output named must
    /// exist, every link must join two declared points, masses must be positive numbers.
    pub fn parse(value: toml::Value, outputs: &[String]) -> Result<GeometrySpec, SpecError> {
        let t: TableSpec = value
            .try_into()
            .map_err(|e: toml::de::Error| err("geometry", e.message().to_string()))?;
        if t.points.is_empty() {
            return Err(err("points", "`points` declares no point".into()));
        }
        let names: Vec<String> = t.points.keys().cloned().collect();
        let mut points = Vec::new();
        for (name, xy) in &t.points {
            let mut c = [Coord::Value(0.0); 2];
            for (k, spec) in xy.iter().enumerate() {
                c[k] = match spec {
                    CoordSpec::Value(v) if v.is_finite() => Coord::Value(*v),
                    CoordSpec::Value(v) => {
                        return Err(err(
                            name,
                            format!("points.{name}: {v} is not a finite number"),
                        ))
                    }
                    CoordSpec::Output(o) => match outputs.iter().position(|n| n == o) {
                        Some(i) => Coord::Output(i),
                        None => {
                            return Err(err(
                                name,
                                format!(
                                    "points.{name}: output `{o}` is unknown; valid outputs: {}",
                                    outputs.join(", ")
                                ),
                            ))
                        }
                    },
                };
            }
            points.push(c);
        }
        let index = |key: &str, n: &str| {
            names.iter().position(|m| m == n).ok_or_else(|| {
                err(
                    key,
                    format!(
                        "{key}: point `{n}` is not declared in `points` ({})",
                        names.join(", ")
                    ),
                )
            })
        };
        let mut links = Vec::new();
        for (key, kind, list) in [
            ("bars", Link::Bar, &t.bars),
            ("springs", Link::Spring, &t.springs),
            ("dampers", Link::Damper, &t.dampers),
        ] {
            for [a, b] in list {
                links.push((kind, index(key, a)?, index(key, b)?));
            }
        }
        let mut masses = vec![None; names.len()];
        for (n, m) in &t.masses {
            let i = index("masses", n)?;
            if !(m.is_finite() && *m >= 0.0) {
                return Err(err(
                    "masses",
                    format!("masses.{n} = {m} must be a mass ≥ 0"),
                ));
            }
            masses[i] = Some(*m);
        }
        if let Some(g) = t.ground.filter(|g| !g.is_finite()) {
            return Err(err(
                "ground",
                format!("ground = {g} must be a finite height"),
            ));
        }
        Ok(GeometrySpec {
            names,
            points,
            links,
            masses,
            ground: t.ground,
        })
    }
}

/// A [`GeometrySpec`] drawn from a system's outputs.
pub struct OutputGeometry<'a, S> {
    sys: &'a S,
    spec: &'a GeometrySpec,
    /// The number of the system's outputs.
    ny: usize,
}

impl<'a, S: HybridSystem> OutputGeometry<'a, S> {
    pub fn new(sys: &'a S, spec: &'a GeometrySpec) -> Self {
        let ny = sys.dims().outputs.len();
        OutputGeometry { sys, spec, ny }
    }
}

impl<S: HybridSystem> Geometry for OutputGeometry<'_, S> {
    /// The declared points at the outputs `h_m(t, x, u, p)`; links in the order springs,
    /// dampers, bars; pivots where a fixed point is attached; every moving point a mass.
    fn shapes(
        &self, mode: usize, t: f64, x: &[f64], u: &[f64], p: &[f64],
    ) -> Result<Vec<Shape>, ModelError> {
        let mut y = vec![0.0; self.ny];
        self.sys.outputs(mode, t, x, u, p, &mut y)?;
        let at = |c: Coord| match c {
            Coord::Output(i) => y[i],
            Coord::Value(v) => v,
        };
        let pos: Vec<Pt> = self
            .spec
            .points
            .iter()
            .map(|c| [at(c[0]), at(c[1])])
            .collect();
        let moving = |i: usize| {
            self.spec.points[i]
                .iter()
                .any(|c| matches!(c, Coord::Output(_)))
        };
        let mut out = Vec::new();
        let mut attached = vec![false; pos.len()];
        for &(_, a, b) in &self.spec.links {
            attached[a] = true;
            attached[b] = true;
        }
        for (i, p) in pos.iter().enumerate() {
            if attached[i] && !moving(i) {
                out.push(Shape::Pivot { at: *p });
            }
        }
        for kind in [Link::Spring, Link::Damper, Link::Bar] {
            for &(k, a, b) in self.spec.links.iter().filter(|l| l.0 == kind) {
                let (a, b) = (pos[a], pos[b]);
                out.push(match k {
                    Link::Spring => Shape::Spring { a, b },
                    Link::Damper => Shape::Damper { a, b },
                    Link::Bar => Shape::Bar { a, b },
                });
            }
        }
        for (i, p) in pos.iter().enumerate() {
            if moving(i) {
                out.push(Shape::Mass {
                    at: *p,
                    mass: self.spec.masses[i].unwrap_or(1.0),
                    name: self.spec.names[i].clone(),
                });
            }
        }
        Ok(out)
    }

    fn scene(&self, _p: &[f64], _x_range: (f64, f64)) -> Vec<SceneItem> {
        self.spec
            .ground
            .map(|y| vec![SceneItem::Ground { y }])
            .unwrap_or_default()
    }
}
