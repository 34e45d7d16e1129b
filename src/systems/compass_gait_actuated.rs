//! The actuated compass-gait walker (`kind = "compass_gait_actuated"`): the passive
//! [`CompassGait`] of Goswami, Espiau and Keramane (ICRA 1996; reference-models §10) with a
//! motor at the hip, for optimal-control problems. The mass matrix, the gravity and
//! velocity terms, the heel-strike guard, the plastic impact with the leg swap and the
//! drawing are [`CompassGait`]'s own functions, called here; this file adds the motor's
//! generalized forces, the foot's position along the ground, the charted start and the
//! outputs.
//!
//! **Hip torque and its sign.** The coordinates are the compass gait's absolute leg angles
//! `q = (θ_ns, θ_s)` from the vertical, both measured in the same sense: increasing an
//! angle turns its leg about the hip (swing leg) or the foot (stance leg) so that the hip
//! moves toward +x (downhill). The motor between the legs applies the torque `u` (the
//! control channel `hip`) to the swing leg and the reaction `−u` to the stance leg, both
//! counted positive in that same sense. The virtual work of the pair is
//! `δW = u δθ_ns − u δθ_s`, so the generalized forces are `Q = (Q_ns, Q_s) = (u, −u)`
//! (the principle of virtual work; e.g. Goldstein, *Classical Mechanics*, §1.4) and the
//! motor's power is `P = u (θ̇_ns − θ̇_s)`: along a swing, `dE/dt = P` exactly. As the swing
//! foot sits at `x_hip − l sin θ_ns`, a **negative** `u` swings the swing foot forward
//! (θ_ns decreasing) and, through the reaction, tips the stance leg forward (θ_s
//! increasing).
//!
//! There is one control channel, `hip`; no ankle torque (`Q = (0, τ_a)`) is modelled.
//! Every control channel of a problem is optimized ([`crate::control`]), so a second channel
//! would add free coefficients to every problem on this system, including those that mean
//! to walk with the hip motor alone.
//!
//! **Parameters** `(m_h, m, a, b, g, slope, theta_s0, dtheta_ns0, dtheta_s0)`: the compass
//! gait's six, then the start state charted on the heel-strike section. The start is
//! `x0 = (2·slope − θ_s0, θ_s0, θ̇_ns0, θ̇_s0, 0)`: the swing-leg angle is computed, so that
//! `x0` lies exactly on the guard's surface `θ_s + θ_ns − 2·slope = 0`, and a run starts
//! just after a heel strike (the free coordinates are the section's three). With
//! `θ_s0 < slope` the new swing foot is behind, on the ground; the guard, crossed
//! rising only, fires at the next heel strike, not at the start.
//!
//! **Defaults** ([`ActuatedCompassGait::default_params`]): Goswami et al.'s masses and
//! lengths on **flat ground** (`slope = 0`), starting from the post-impact state
//! `θ_s0 = −0.22`, `θ̇_ns0 = −0.4`, `θ̇_s0 = 1.2` (the compass gait's default start turned to
//! level ground). Passive walking is impossible there: each heel strike is a plastic
//! impact that loses kinetic energy, and on level ground gravity does no net work over a
//! step to restore it, so without the hip torque the gait slows down step after step until
//! the walker falls back. The hip motor must supply the lost energy.
//!
//! **States** `(theta_ns, theta_s, dtheta_ns, dtheta_s, foot_x)`: the compass gait's four
//! and `foot_x`, the horizontal position of the current stance foot from the first one
//! (`ẋ_foot = 0` in flight; it moves by the step length at each heel strike).
//!
//! **Outputs** (formulas in [`ActuatedCompassGait`]'s `outputs`): the five states;
//! `hip_x = l sin θ_s`, the hip's horizontal position from the stance foot (it jumps back
//! by the step length at each strike); `progress = foot_x + l sin θ_s`, the hip's
//! horizontal position from the first stance foot, continuous across strikes (the hip does
//! not move at an impact) and smooth within each step; `step_length = l (sin θ_s − sin θ_ns)`,
//! the swing foot's horizontal position from the stance foot (at a heel strike, the step
//! just taken: `2 l cos(slope) sin(θ_s − slope)`); `energy`, kinetic plus potential with
//! heights above the first stance foot; `hip_torque = u`; `power = u (θ̇_ns − θ̇_s)`.

use super::build_error::BuildError;
use super::compass_gait::{CompassGait, G, M, MH, P2, SLOPE};
use super::kind::{BuiltinSystem, NoSettings};
use crate::error::ModelError;
use crate::model::{Dims, HybridSystem, Scalar};

#[derive(Debug, Clone, Copy, Default)]
pub struct ActuatedCompassGait;

/// Index of each charted start parameter (after the compass gait's six).
const THETA_S0: usize = 6;
const DTHETA_NS0: usize = 7;
const DTHETA_S0: usize = 8;
/// Index of the stance foot's position in the state.
const FOOT_X: usize = 4;

impl ActuatedCompassGait {
    /// Goswami et al.'s masses and lengths (m_h = 10, m = 5, a = b = 0.5, g = 9.81) on flat
    /// ground (slope 0), with the post-impact start θ_s0 = −0.22, θ̇_ns0 = −0.4,
    /// θ̇_s0 = 1.2 (θ_ns0 = 0.22 follows).
    pub fn default_params() -> Vec<f64> {
        vec![10.0, 5.0, 0.5, 0.5, 9.81, 0.0, -0.22, -0.4, 1.2]
    }

    /// The hip motor's generalized forces `Q = (u, −u)` in `(θ_ns, θ_s)`: the torque `u` on
    /// the swing leg and its reaction `−u` on the stance leg, both positive in the sense of
    /// increasing angles (virtual work `δW = u (δθ_ns − δθ_s)`; the module doc).
    pub fn hip_forces<D: Scalar>(u: D) -> P2<D> {
        [u, -u]
    }

    /// The hip motor's power `P = Q · q̇ = u (θ̇_ns − θ̇_s)` at state `x`.
    pub fn power<D: Scalar>(x: &[D], u: D) -> D {
        u * (x[2] - x[3])
    }

    /// The swing foot's horizontal position from the stance foot,
    /// `l (sin θ_s − sin θ_ns)` (the compass gait's kinematics, `CompassGait::points`).
    pub fn step_length<D: Scalar>(p: &[D], x: &[D]) -> D {
        let zero = [D::zero(), D::zero()];
        CompassGait::points(p, [x[0], x[1]], zero).pos[3][0]
    }

    /// The hip's horizontal position from the stance foot, `l sin θ_s`.
    pub fn hip_x<D: Scalar>(p: &[D], x: &[D]) -> D {
        let zero = [D::zero(), D::zero()];
        CompassGait::points(p, [x[0], x[1]], zero).pos[0][0]
    }

    /// The height of the stance foot above the first one, `−foot_x tan(slope)` (the feet
    /// are on the slope, which descends toward +x).
    fn foot_height<D: Scalar>(p: &[D], x: &[D]) -> D {
        -(x[FOOT_X] * p[SLOPE].tan())
    }

    /// Total energy `T + V` with heights above the first stance foot:
    /// [`CompassGait::energy`] (heights above the stance foot) plus
    /// `(m_h + 2m) g y_foot`, `y_foot` the stance foot's height. Along a swing
    /// `dE/dt = u (θ̇_ns − θ̇_s)` ([`Self::power`]); at a heel strike it drops by the impact's
    /// loss only (the hip does not move and the datum is fixed).
    pub fn energy<D: Scalar>(p: &[D], x: &[D]) -> D {
        let total_mass = p[MH] + p[M] * 2.0;
        CompassGait::energy(p, x) + total_mass * p[G] * Self::foot_height(p, x)
    }
}

/// The compass gait's picture ([`CompassGait`]'s geometry), moved to the current stance
/// foot `(foot_x, −foot_x tan(slope))` on the same slope, so that the walker advances
/// across the frame.
impl crate::animate::Geometry for ActuatedCompassGait {
    fn shapes(
        &self, mode: usize, t: f64, x: &[f64], u: &[f64], p: &[f64],
    ) -> Result<Vec<crate::animate::Shape>, ModelError> {
        let foot = [x[FOOT_X], Self::foot_height(p, x)];
        Ok(CompassGait
            .shapes(mode, t, &x[..FOOT_X], u, p)?
            .iter()
            .map(|s| s.translated(foot))
            .collect())
    }
    fn scene(&self, p: &[f64], x_range: (f64, f64)) -> Vec<crate::animate::SceneItem> {
        CompassGait.scene(p, x_range)
    }
}

impl HybridSystem for ActuatedCompassGait {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn dims(&self) -> Dims {
        let mut d = CompassGait.dims();
        d.states.push("foot_x".into());
        d.params.truncate(THETA_S0);
        d.params
            .extend(["theta_s0", "dtheta_ns0", "dtheta_s0"].map(String::from));
        let outputs = [
            "hip_x",
            "progress",
            "step_length",
            "energy",
            "hip_torque",
            "power",
        ];
        d.outputs = d
            .states
            .iter()
            .cloned()
            .chain(outputs.map(String::from))
            .collect();
        d.param_defaults(Self::default_params()).controls(["hip"])
    }
    /// `x0 = (2·slope − θ_s0, θ_s0, θ̇_ns0, θ̇_s0, 0)`: on the heel-strike surface.
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        let theta_s = p[THETA_S0];
        Ok(vec![
            p[SLOPE] * 2.0 - theta_s,
            theta_s,
            p[DTHETA_NS0],
            p[DTHETA_S0],
            D::zero(),
        ])
    }
    /// `q̈ = M⁻¹ (−h − ∂V/∂q + Q)` with `Q = (u, −u)`
    /// (`CompassGait::forced_accelerations`, [`Self::hip_forces`]); `ẋ_foot = 0`. A run
    /// without controls (an empty `u`) is the passive walker.
    fn flow<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let torque = u.first().copied().unwrap_or_else(D::zero);
        let acc = CompassGait::forced_accelerations(
            p,
            [x[0], x[1]],
            [x[2], x[3]],
            Self::hip_forces(torque),
        )?;
        dx[0] = x[2];
        dx[1] = x[3];
        dx[2] = acc[0];
        dx[3] = acc[1];
        dx[FOOT_X] = D::zero();
        Ok(())
    }
    /// The compass gait's heel strike, `θ_s + θ_ns − 2·slope` crossed rising.
    fn guard<D: Scalar>(&self, m: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        CompassGait.guard(m, k, t, &x[..FOOT_X], u, p)
    }
    /// The compass gait's impact ([`CompassGait::impact`]: leg swap, both angular momenta
    /// conserved; the motor's torque is finite, so it does not act during the instant), and
    /// `foot_x⁺ = foot_x⁻ + l (sin θ_s⁻ − sin θ_ns⁻)`: the swing foot becomes the stance foot.
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let mut next = CompassGait::impact(p, &x[..FOOT_X])?;
        next.push(x[FOOT_X] + Self::step_length(p, x));
        Ok((m, next))
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let torque = u.first().copied().unwrap_or_else(D::zero);
        out[..5].copy_from_slice(&x[..5]);
        let hip_x = Self::hip_x(p, x);
        out[5] = hip_x;
        out[6] = x[FOOT_X] + hip_x;
        out[7] = Self::step_length(p, x);
        out[8] = Self::energy(p, x);
        out[9] = torque;
        out[10] = Self::power(x, torque);
        Ok(())
    }
}

impl BuiltinSystem for ActuatedCompassGait {
    type Settings = NoSettings;
    fn build(_: &NoSettings) -> Result<Self, BuildError> {
        Ok(ActuatedCompassGait)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(ActuatedCompassGait::default_params())
    }
}
