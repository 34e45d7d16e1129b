//! The geometry ([`Geometry`]) of the built-in mechanical systems: what their pictures and
//! animations show. Positions are the models' own (reference-models.md §1–§3); the
//! drawing adds nothing to the dynamics.

use super::biped::{Biped, MODE_FOOT1, MODE_FOOT2};
use super::bouncing_ball::{BouncingBall, ThrustBall};
use super::five_bar::FiveBar;
use super::impact_pendulum::ImpactPendulum;
use super::locking_pendulum::LockingPendulum;
use crate::animate::mechanism::mechanism_shapes;
use crate::error::ModelError;
use crate::geometry::{Geometry, SceneItem, Shape};

/// Fails unless the state has at least `n` entries and the parameters at least `np`.
fn need(what: &str, x: &[f64], n: usize, p: &[f64], np: usize) -> Result<(), ModelError> {
    if x.len() < n || p.len() < np {
        return Err(ModelError::SizeMismatch {
            what: format!("{what} geometry"),
            expected: format!("{n} states and {np} parameters"),
            found: format!("{} and {}", x.len(), p.len()),
        });
    }
    Ok(())
}

/// The ball at height `y` above the ground `y = 0`, at x = 0 (its mass is not a model
/// parameter: drawn as 1 kg).
fn ball_shapes(x: &[f64]) -> Result<Vec<Shape>, ModelError> {
    need("ball", x, 2, &[], 0)?;
    Ok(vec![Shape::Mass {
        at: [0.0, x[0]],
        mass: 1.0,
        name: String::new(),
    }])
}

/// The one geometry of the ball models (state `(y, v)`): the ball of [`ball_shapes`] over
/// the ground `y = 0`. A macro, as the same trait impl is written for each model type.
macro_rules! ball_geometry {
    ($($ball:ty),+) => {$(
        impl Geometry for $ball {
            fn shapes(
                &self, _mode: usize, _t: f64, x: &[f64], _u: &[f64], _p: &[f64],
            ) -> Result<Vec<Shape>, ModelError> {
                ball_shapes(x)
            }
            fn scene(&self, _p: &[f64], _x_range: (f64, f64)) -> Vec<SceneItem> {
                vec![SceneItem::Ground { y: 0.0 }]
            }
        }
    )+};
}

ball_geometry!(BouncingBall, ThrustBall);

/// Radius at which the impact pendulum's bob is drawn (the model has only g/l).
const PENDULUM_LENGTH: f64 = 1.0;

impl Geometry for ImpactPendulum {
    /// Pivot at the origin, bob at `l (sin q, −cos q)` with l = 1 (the model knows only
    /// g/l, so the picture is to the scale of l).
    fn shapes(
        &self, _mode: usize, _t: f64, x: &[f64], _u: &[f64], p: &[f64],
    ) -> Result<Vec<Shape>, ModelError> {
        need("impact pendulum", x, 2, p, 8)?;
        let bob = [PENDULUM_LENGTH * x[0].sin(), -PENDULUM_LENGTH * x[0].cos()];
        Ok(vec![
            Shape::Pivot { at: [0.0, 0.0] },
            Shape::Bar {
                a: [0.0, 0.0],
                b: bob,
            },
            Shape::Mass {
                at: bob,
                mass: 1.0,
                name: String::new(),
            },
        ])
    }
    /// The wall: a radial stop at the angle `q_w` (parameter 5), drawn 0.05 l beyond it (on
    /// the side of larger q) so that it does not hide the rod that strikes it.
    fn scene(&self, p: &[f64], _x_range: (f64, f64)) -> Vec<SceneItem> {
        let qw = p.get(5).copied().unwrap_or(0.0);
        let off = 0.05 * PENDULUM_LENGTH;
        let at = |r: f64| {
            [
                r * qw.sin() + off * qw.cos(),
                -r * qw.cos() + off * qw.sin(),
            ]
        };
        vec![SceneItem::Segment {
            a: at(0.2 * PENDULUM_LENGTH),
            b: at(1.3 * PENDULUM_LENGTH),
            label: "wall".into(),
        }]
    }
}

impl Geometry for FiveBar {
    /// The mechanism's points A, B (pivots), P1, P2, P3, its four bars and two springs.
    fn shapes(
        &self, _mode: usize, _t: f64, x: &[f64], _u: &[f64], p: &[f64],
    ) -> Result<Vec<Shape>, ModelError> {
        need("five-bar", x, 12, p, 8)?;
        mechanism_shapes(self.mechanism(), &x[..6], p, &["A", "B", "P1", "P2", "P3"])
    }
    fn scene(&self, _p: &[f64], _x_range: (f64, f64)) -> Vec<SceneItem> {
        vec![SceneItem::Ground {
            y: self.config().ground,
        }]
    }
}

impl Geometry for LockingPendulum {
    /// Pivot O, points P1, P2, the spring's anchor; the stop line the tip locks onto.
    fn shapes(
        &self, _mode: usize, _t: f64, x: &[f64], _u: &[f64], p: &[f64],
    ) -> Result<Vec<Shape>, ModelError> {
        need("locking pendulum", x, 8, p, 4)?;
        mechanism_shapes(self.mechanism(), &x[..4], p, &["O", "P1", "P2", "anchor"])
    }
    fn scene(&self, _p: &[f64], _x_range: (f64, f64)) -> Vec<SceneItem> {
        vec![SceneItem::StopLine {
            y: self.config().y_stop,
            label: "stop".into(),
        }]
    }
}

/// Points of the biped's ground curve `y = −x²` drawn over the picture.
const GROUND_SAMPLES: usize = 120;

impl Geometry for Biped {
    /// The body (a mass at (x, y) with a trunk marking θ), the two massless legs to the
    /// feet, and each foot in contact (bit set in the mode) as a spring-damper down to the
    /// ground point below it (the penetration is vertical: `a = −y_f − x_f²`).
    fn shapes(
        &self, mode: usize, _t: f64, x: &[f64], _u: &[f64], _p: &[f64],
    ) -> Result<Vec<Shape>, ModelError> {
        need("biped", x, 3, &[], 0)?;
        let cfg = self.config();
        let body = [x[0], x[1]];
        let th = x[2];
        let s = 0.5 * cfg.leg_length;
        let trunk = [body[0] - s * th.sin(), body[1] + s * th.cos()];
        let feet = self.foot_positions(&x[..3]);
        let mut out = Vec::new();
        for (j, bit) in [MODE_FOOT1, MODE_FOOT2].into_iter().enumerate() {
            if mode & bit != 0 {
                let f = feet[j];
                let ground = [f[0], -f[0] * f[0]];
                out.push(Shape::Spring { a: ground, b: f });
            }
        }
        out.push(Shape::Bar { a: body, b: trunk });
        for f in feet {
            out.push(Shape::Bar { a: body, b: f });
        }
        out.push(Shape::Mass {
            at: body,
            mass: cfg.mass,
            name: String::new(),
        });
        for (j, f) in feet.into_iter().enumerate() {
            out.push(Shape::Mass {
                at: f,
                mass: 0.0,
                name: format!("foot{}", j + 1),
            });
        }
        Ok(out)
    }
    /// The ground `y = −x²` sampled across the picture.
    fn scene(&self, _p: &[f64], x_range: (f64, f64)) -> Vec<SceneItem> {
        let (a, b) = x_range;
        let points = (0..=GROUND_SAMPLES)
            .map(|i| {
                let x = a + (b - a) * i as f64 / GROUND_SAMPLES as f64;
                [x, -x * x]
            })
            .collect();
        vec![SceneItem::GroundCurve { points }]
    }
}
