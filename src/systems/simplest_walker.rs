//! The simplest walking model (Garcia, Chatterjee, Ruina, Coleman, "The simplest walking
//! model: stability, complexity, and scaling", J. Biomech. Eng. 120, 1998; reference-models
//! §10): two massless legs, a point mass at the hip, infinitesimal feet, on a slope γ, in
//! nondimensional time.
//!
//! - States `(theta, phi, dtheta, dphi)`: stance-leg angle θ from the slope normal, angle φ
//!   between the legs.
//! - Flow: `θ̈ = sin(θ − γ)`, `φ̈ = sin φ (θ̇² − cos(θ − γ)) + sin(θ − γ)`.
//! - Heel strike: `φ − 2θ = 0` crossed rising (from below). The foot-scuffing zero in
//!   mid-swing is a falling crossing and is not an event.
//! - Transition (legs swap, plastic collision): `θ⁺ = −θ⁻`, `φ⁺ = −2θ⁻`,
//!   `θ̇⁺ = cos(2θ⁻) θ̇⁻`, `φ̇⁺ = cos(2θ⁻)(1 − cos(2θ⁻)) θ̇⁻`.
//! - Parameters: the slope `gamma`, and the start state `theta0, phi0, dtheta0, dphi0`
//!   (for plain simulations; the periodic solver sets the start state itself).
//! - Outputs: the states, the energy, and `step_length = 2 sin(φ/2)` (the distance
//!   between the feet in leg lengths).

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, NoSettings};
use crate::error::ModelError;
use crate::model::{Dims, Direction, GuardInfo, HybridSystem, Scalar};

#[derive(Debug, Clone, Copy, Default)]
pub struct SimplestWalker;

impl SimplestWalker {
    /// γ = 0.009 (Garcia et al.'s reference slope) and the stable gait's start, rounded,
    /// on the section (`φ = 2θ`, `φ̇ = (1 − cos 2θ) θ̇` after the transition).
    pub fn default_params() -> Vec<f64> {
        let (th, dth): (f64, f64) = (0.2, -0.2);
        let c = (2.0 * th).cos();
        vec![0.009, th, 2.0 * th, dth, (1.0 - c) * dth]
    }

    /// Total mechanical energy per unit `M g l`: with the hip at `(−sin θ, cos θ)` in the
    /// slope frame, `E = θ̇²/2 + cos(θ − γ)` (the swing foot is massless and carries none).
    pub fn energy<D: Scalar>(x: &[D], gamma: D) -> D {
        x[2] * x[2] * 0.5 + (x[0] - gamma).cos()
    }
}

/// The picture in the stance foot's frame (the foot at the origin; the slope falls to the
/// right at γ): the hip at `(−sin θ, cos θ)` in slope coordinates, the swing foot at the
/// hip minus the swing leg's foot→hip vector `(−sin(θ − φ), cos(θ − φ))`; legs of
/// length 1.
impl crate::animate::Geometry for SimplestWalker {
    fn shapes(
        &self, _mode: usize, _t: f64, x: &[f64], _u: &[f64], p: &[f64],
    ) -> Result<Vec<crate::animate::Shape>, ModelError> {
        use crate::animate::Shape;
        let g = p[0];
        let world = |v: [f64; 2]| {
            [
                v[0] * g.cos() + v[1] * g.sin(),
                -v[0] * g.sin() + v[1] * g.cos(),
            ]
        };
        let hip = [-x[0].sin(), x[0].cos()];
        let a = x[0] - x[1];
        let foot = [hip[0] + a.sin(), hip[1] - a.cos()];
        let (hip, foot) = (world(hip), world(foot));
        Ok(vec![
            Shape::Bar {
                a: [0.0, 0.0],
                b: hip,
            },
            Shape::Bar { a: hip, b: foot },
            Shape::Mass {
                at: hip,
                mass: 1.0,
                name: "hip".into(),
            },
        ])
    }
    fn scene(&self, p: &[f64], _x_range: (f64, f64)) -> Vec<crate::animate::SceneItem> {
        vec![crate::animate::SceneItem::Slope {
            through: [0.0, 0.0],
            angle: -p[0],
        }]
    }
}

impl HybridSystem for SimplestWalker {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn dims(&self) -> Dims {
        let params = ["gamma", "theta0", "phi0", "dtheta0", "dphi0"];
        Dims::new(["theta", "phi", "dtheta", "dphi"], params)
            .param_defaults(Self::default_params())
            .guards([GuardInfo::new("heel_strike", Direction::Rising)])
            .outputs(["theta", "phi", "dtheta", "dphi", "energy", "step_length"])
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(p[1..5].to_vec())
    }
    fn flow<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let s = (x[0] - p[0]).sin();
        let c = (x[0] - p[0]).cos();
        dx[0] = x[2];
        dx[1] = x[3];
        dx[2] = s;
        dx[3] = x[1].sin() * (x[2] * x[2] - c) + s;
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[1] - x[0] * 2.0
    }
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, _t: D, x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let c = (x[0] * 2.0).cos();
        Ok((
            m,
            vec![-x[0], x[0] * (-2.0), c * x[2], c * (D::one() - c) * x[2]],
        ))
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[..4].copy_from_slice(&x[..4]);
        out[4] = Self::energy(x, p[0]);
        // the distance between the feet (legs of length 1): 2 sin(φ/2)
        out[5] = (x[1] * 0.5).sin() * 2.0;
        Ok(())
    }
}

impl BuiltinSystem for SimplestWalker {
    type Settings = NoSettings;
    fn build(_: &NoSettings) -> Result<Self, BuildError> {
        Ok(SimplestWalker)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(SimplestWalker::default_params())
    }
}
