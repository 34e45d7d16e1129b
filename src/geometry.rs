//! The geometry of a system: what a picture of it shows. A system that has one maps a
//! state to drawable [`Shape`]s (mass points, rigid bars, springs, dampers, ground pivots)
//! and describes its static scene ([`SceneItem`]: ground lines and curves, walls, slopes,
//! stop lines). The renderer ([`crate::animate`]) draws them; it knows nothing about any
//! particular system. This module is below both: the model interface names a system's
//! geometry ([`crate::model::HybridSystem::geometry`]) without depending on the drawing.
//!
//! A system provides its geometry through [`crate::model::HybridSystem::geometry`] (one
//! `impl Geometry for MySystem` and `fn geometry(&self) -> Option<&dyn Geometry> {
//! Some(self) }`). Mechanisms built from [`crate::multibody::Mechanism`] get their shapes
//! from [`crate::animate::mechanism_shapes`].

use crate::error::ModelError;

/// A point of the plane `(x, y)` in metres (y up).
pub type Pt = [f64; 2];

/// One drawable primitive at one instant. Positions are in the system's own coordinates
/// (metres, y up); the renderer keeps the aspect ratio.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A mass point: a disc whose area is proportional to `mass` (kg) relative to the
    /// heaviest mass of the picture. `name` labels it in the picture when not empty.
    Mass { at: Pt, mass: f64, name: String },
    /// A rigid (massless or uniform) bar between two points.
    Bar { a: Pt, b: Pt },
    /// A spring, drawn as a zigzag between two points.
    Spring { a: Pt, b: Pt },
    /// A damper (dashpot) between two points.
    Damper { a: Pt, b: Pt },
    /// A fixed ground pivot.
    Pivot { at: Pt },
}

impl Shape {
    /// The points that the shape's drawing spans (for the picture's extent).
    pub fn points(&self) -> Vec<Pt> {
        match self {
            Shape::Mass { at, .. } | Shape::Pivot { at } => vec![*at],
            Shape::Bar { a, b } | Shape::Spring { a, b } | Shape::Damper { a, b } => {
                vec![*a, *b]
            }
        }
    }
}

impl Shape {
    /// The shape moved right by `dx`.
    pub fn shifted(&self, dx: f64) -> Shape {
        self.translated([dx, 0.0])
    }

    /// The shape moved by the vector `d`.
    pub fn translated(&self, d: Pt) -> Shape {
        let m = |p: &Pt| [p[0] + d[0], p[1] + d[1]];
        match self {
            Shape::Mass { at, mass, name } => Shape::Mass {
                at: m(at),
                mass: *mass,
                name: name.clone(),
            },
            Shape::Pivot { at } => Shape::Pivot { at: m(at) },
            Shape::Bar { a, b } => Shape::Bar { a: m(a), b: m(b) },
            Shape::Spring { a, b } => Shape::Spring { a: m(a), b: m(b) },
            Shape::Damper { a, b } => Shape::Damper { a: m(a), b: m(b) },
        }
    }
}

/// Which side of a wall is solid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Solid for x below the wall (the motion is to its right).
    Left,
    /// Solid for x above the wall.
    Right,
}

/// A static part of the scene, drawn under the moving shapes of every frame.
#[derive(Debug, Clone, PartialEq)]
pub enum SceneItem {
    /// Horizontal ground `y = y` across the picture, hatched below.
    Ground { y: f64 },
    /// A ground curve through the given points (in x order), hatched below.
    GroundCurve { points: Vec<Pt> },
    /// A slope of inclination `angle` (rad, positive = rising to the right) through
    /// `through`, across the picture, hatched below.
    Slope { through: Pt, angle: f64 },
    /// A vertical wall `x = x`, hatched on its solid side.
    Wall { x: f64, solid: Side },
    /// A horizontal stop line `y = y` (dashed), with a label.
    StopLine { y: f64, label: String },
    /// A fixed segment (e.g. a stop at an angle), with a label.
    Segment { a: Pt, b: Pt, label: String },
}

/// The geometry of a system: an optional part of the model interface
/// ([`crate::model::HybridSystem::geometry`]).
pub trait Geometry: Sync {
    /// The shapes at time `t` and state `x` (the system's own states, without
    /// quadratures) in `mode`, with controls `u` and parameters `p` (the arguments of
    /// [`crate::model::HybridSystem::outputs`]). The number and order of [`Shape::Mass`]
    /// entries must not depend on the state (the renderer traces each mass's path by its
    /// position in the list).
    fn shapes(
        &self, mode: usize, t: f64, x: &[f64], u: &[f64], p: &[f64],
    ) -> Result<Vec<Shape>, ModelError>;

    /// The static scene for parameters `p`. `x_range` is the horizontal extent of the
    /// picture (for curves, which the system samples over it).
    fn scene(&self, p: &[f64], x_range: (f64, f64)) -> Vec<SceneItem>;
}
