//! A double pendulum whose tip locks onto a horizontal stop line: the inelastic impact with
//! a change of constraint set of theory.md §5 item 2 (seed 000 (40)).
//!
//! Two uniform bars O–P1 (mass m1, length l1) and P1–P2 (mass m2, length l2), pivot O fixed at
//! the origin, natural coordinates `q = (x1, y1, x2, y2)`, state `x = (q, v)` (8 states),
//! gravity 9.81 m/s² along −y, and a linear spring (stiffness k, natural length L0) from a
//! fixed anchor to P1.
//!
//! - Mode `free`: constraints `|P1 − O|² = l1²`, `|P2 − P1|² = l2²`. Guard `stop` =
//!   `y2 − y_stop`, falling.
//! - At `stop` the tip hits the line and locks onto it (perfectly inelastic, frictionless):
//!   `v⁺` solves `[[M, Φ⁺_qᵀ], [Φ⁺_q, 0]] [v⁺; δμ] = [M v⁻; 0]` with `Φ⁺` = the two distances
//!   plus `y2 − y_stop` (seed 000 (40a)); positions do not jump.
//! - Mode `sliding`: the three constraints, P2 slides frictionlessly along the line (a
//!   slider-crank with one degree of freedom). The lock is bilateral and this mode has no
//!   guards (no lift-off): the line may pull as well as push; the output `stop_force` (the
//!   line's force on P2 along +y) shows when a unilateral stop would have released.
//!
//! Design parameters `m1, m2, k, L0`: all four change the impact (the velocity at impact and
//! the impulse).

use super::build_error::BuildError;
use super::kind::BuiltinSystem;
use crate::error::ModelError;
use crate::model::{c, Dims, Direction, GuardInfo, Scalar};
use crate::multibody::constraints::max_abs;
use crate::multibody::{
    inelastic_impact, mechanism_state, rest_state, Accel, Constraint, Dynamics, Formulation,
    Mechanism, MultibodySystem, ParamRef,
};

/// Parameter names, in the order of `p`.
pub const PARAM_NAMES: [&str; 4] = ["m1", "m2", "k", "L0"];

/// Output names, in the order of the outputs.
pub const OUTPUT_NAMES: [&str; 14] = [
    "x1",
    "y1",
    "x2",
    "y2",
    "vx1",
    "vy1",
    "vx2",
    "vy2",
    "kinetic",
    "potential",
    "energy",
    "phi_pos_max",
    "phi_vel_max",
    "stop_force",
];

/// Mode indices.
pub const MODE_FREE: usize = 0;
pub const MODE_SLIDING: usize = 1;

/// Gravitational acceleration (m/s², along −y).
pub const GRAVITY: f64 = 9.81;

const O: usize = 0;
const P1: usize = 1;
const P2: usize = 2;
const ANCHOR: usize = 3;

/// Configuration of the locking pendulum (the `[system]` table of a problem file). The
/// defaults are this model's own choices (no reference gives numbers).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LockingPendulumConfig {
    /// `"index1"` (default), `"penalty"` or `"index2"` (GGL, `crate::multibody::dynamics::ggl_velocity`).
    pub formulation: Formulation,
    /// Baumgarte damping ratio ξ; default 1.0 (as for the five-bar, reference-models.md §2).
    pub xi: f64,
    /// Baumgarte natural frequency ω (rad/s); default 10.0 (as for the five-bar).
    pub omega: f64,
    /// Penalty factor α (penalty formulation only); default 1e7 (as for the five-bar).
    pub alpha: f64,
    /// Length of bar O–P1 (m); default 1.0.
    pub l1: f64,
    /// Length of bar P1–P2 (m); default 1.0.
    pub l2: f64,
    /// Initial angle of bar O–P1 from the downward vertical (rad, counter-clockwise);
    /// default π/3.
    pub theta1: f64,
    /// Initial angle of bar P1–P2 from the downward vertical (rad); default π/3.
    pub theta2: f64,
    /// Height of the stop line (m); default −1.6. Must lie below the initial height of P2
    /// (−1.0 with the defaults) and above its lowest reach −(l1 + l2).
    pub y_stop: f64,
    /// Fixed anchor of the spring to P1 (m); default (1.5, 0.5), out of P1's reach so that
    /// the spring never has zero length.
    pub anchor: [f64; 2],
}

impl Default for LockingPendulumConfig {
    fn default() -> Self {
        let d = Dynamics::default();
        LockingPendulumConfig {
            formulation: d.formulation,
            xi: d.xi,
            omega: d.omega,
            alpha: d.alpha,
            l1: 1.0,
            l2: 1.0,
            theta1: std::f64::consts::FRAC_PI_3,
            theta2: std::f64::consts::FRAC_PI_3,
            y_stop: -1.6,
            anchor: [1.5, 0.5],
        }
    }
}

/// The locking double pendulum as a [`HybridSystem`](crate::HybridSystem).
#[derive(Debug, Clone)]
pub struct LockingPendulum {
    config: LockingPendulumConfig,
    dynamics: Dynamics,
    mech: Mechanism,
    /// The constraint set of mode `sliding`: the mechanism's two distances and `y2 = y_stop`.
    sliding: Vec<Constraint>,
    q0: [f64; 4],
}

impl Default for LockingPendulum {
    fn default() -> Self {
        LockingPendulum::new(LockingPendulumConfig::default())
            .expect("the default locking-pendulum configuration is valid")
    }
}

impl LockingPendulum {
    /// Builds the model; fails on an invalid configuration.
    pub fn new(config: LockingPendulumConfig) -> Result<Self, ModelError> {
        let dynamics = Dynamics::new(config.formulation, config.xi, config.omega, config.alpha)?;
        let cf = &config;
        if !(cf.l1 > 0.0 && cf.l2 > 0.0 && cf.l1.is_finite() && cf.l2.is_finite()) {
            return Err(ModelError::ParameterOutOfRange {
                system: "locking pendulum".into(),
                values: vec![("l1".into(), cf.l1), ("l2".into(), cf.l2)],
                valid: "bar lengths must be positive".into(),
            });
        }
        let p1 = [cf.l1 * cf.theta1.sin(), -cf.l1 * cf.theta1.cos()];
        let p2 = [
            p1[0] + cf.l2 * cf.theta2.sin(),
            p1[1] - cf.l2 * cf.theta2.cos(),
        ];
        let lowest = -(cf.l1 + cf.l2);
        if !(cf.y_stop < p2[1] && cf.y_stop > lowest) {
            return Err(ModelError::ParameterOutOfRange {
                system: "locking pendulum".into(),
                values: vec![("y_stop".into(), cf.y_stop)],
                valid: format!(
                    "y_stop must lie below the initial height {} of P2 and above its lowest \
                     reach {lowest}",
                    p2[1]
                ),
            });
        }
        let da = (cf.anchor[0].powi(2) + cf.anchor[1].powi(2)).sqrt();
        if da.is_nan() || da <= cf.l1 {
            return Err(ModelError::ParameterOutOfRange {
                system: "locking pendulum".into(),
                values: vec![
                    ("anchor[0]".into(), cf.anchor[0]),
                    ("anchor[1]".into(), cf.anchor[1]),
                ],
                valid: format!(
                    "the spring anchor must lie out of P1's reach l1 = {}",
                    cf.l1
                ),
            });
        }
        let mut mech = Mechanism::new(4);
        mech.gravity = ParamRef::Const(GRAVITY);
        assert_eq!(mech.fixed_point(0.0, 0.0), O);
        assert_eq!(mech.moving_point(0), P1);
        assert_eq!(mech.moving_point(2), P2);
        assert_eq!(mech.fixed_point(cf.anchor[0], cf.anchor[1]), ANCHOR);
        mech.bar(O, P1, ParamRef::Param(0));
        mech.bar(P1, P2, ParamRef::Param(1));
        mech.spring(ANCHOR, P1, ParamRef::Param(2), ParamRef::Param(3));
        mech.distance(O, P1, ParamRef::Const(cf.l1));
        mech.distance(P1, P2, ParamRef::Const(cf.l2));
        mech.validate(PARAM_NAMES.len())?;
        let mut sliding = mech.constraints.clone();
        sliding.push(Constraint::HorizontalLine {
            a: P2,
            y: ParamRef::Const(cf.y_stop),
        });
        mech.validate_constraints(&sliding, PARAM_NAMES.len())?;
        Ok(LockingPendulum {
            config,
            dynamics,
            mech,
            sliding,
            q0: [p1[0], p1[1], p2[0], p2[1]],
        })
    }

    /// Default parameters `m1, m2, k, L0` = `1.0 kg, 1.0 kg, 10 N/m, 1.0 m` (this model's
    /// own choice).
    pub fn default_params() -> Vec<f64> {
        vec![1.0, 1.0, 10.0, 1.0]
    }

    /// The initial coordinates `(x1, y1, x2, y2)` from the configured lengths and angles.
    pub fn initial_positions(&self) -> [f64; 4] {
        self.q0
    }

    pub fn config(&self) -> &LockingPendulumConfig {
        &self.config
    }

    pub fn dynamics(&self) -> &Dynamics {
        &self.dynamics
    }

    /// The assembled mechanism (points O, P1, P2, anchor at indices 0..4); its own
    /// constraints are those of mode `free`.
    pub fn mechanism(&self) -> &Mechanism {
        &self.mech
    }

    /// The constraint set of a mode.
    pub fn constraints(&self, mode: usize) -> &[Constraint] {
        if mode == MODE_SLIDING {
            &self.sliding
        } else {
            &self.mech.constraints
        }
    }

    /// Accelerations, multipliers and residuals in `mode` at `x = (q, v)`.
    pub fn acceleration<D: Scalar>(
        &self, mode: usize, x: &[D], p: &[D],
    ) -> Result<Accel<D>, ModelError> {
        self.accelerations(mode, x, p)
    }
}

impl MultibodySystem for LockingPendulum {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn mechanism(&self) -> &Mechanism {
        &self.mech
    }

    fn dynamics(&self) -> &Dynamics {
        &self.dynamics
    }

    /// Mode `free`: the mechanism's own constraints; `sliding`: with the stop line.
    fn constraints(&self, mode: usize) -> &[Constraint] {
        LockingPendulum::constraints(self, mode)
    }

    fn check<D: Scalar>(&self, mode: usize, x: &[D], p: &[D]) -> Result<(), ModelError> {
        if x.len() != 8 || p.len() != PARAM_NAMES.len() || mode > MODE_SLIDING {
            return Err(ModelError::SizeMismatch {
                what: "locking pendulum".into(),
                expected: "8 states, 4 parameters and mode 0 or 1".into(),
                found: format!("{}, {} and {mode}", x.len(), p.len()),
            });
        }
        Ok(())
    }

    fn dims(&self) -> Dims {
        Dims::new(
            ["x1", "y1", "x2", "y2", "vx1", "vy1", "vx2", "vy2"],
            PARAM_NAMES,
        )
        .param_defaults(Self::default_params())
        .modes(["free", "sliding"])
        .guards([GuardInfo::new("stop", Direction::Falling)])
        .outputs(OUTPUT_NAMES)
    }

    /// `stop` is watched in mode `free` only.
    fn guard_active(&self, mode: usize, _k: usize) -> bool {
        mode == MODE_FREE
    }

    /// At rest in the configured angles (consistent: the bar lengths hold exactly).
    fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(rest_state(&self.q0))
    }

    /// `g = y2 − y_stop`.
    fn guard<D: Scalar>(&self, _mode: usize, _k: usize, _t: D, x: &[D], _p: &[D]) -> D {
        x[3] - c::<D>(self.config.y_stop)
    }

    /// From `free`: the inelastic impact (seed 000 (40a)) onto the `sliding` constraint set,
    /// next mode `sliding`. From `sliding` (no guard is active there): the identity.
    fn reset<D: Scalar>(
        &self, mode: usize, _k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        self.check(mode, x, p)?;
        if mode != MODE_FREE {
            return Ok((mode, x.to_vec()));
        }
        let (q, v) = x.split_at(4);
        let mass = self.mech.mass_matrix(p)?;
        let ev = self.mech.evaluate(&self.sliding, q, v, p)?;
        let (vp, _dmu) = inelastic_impact(&mass, &ev.jac, ev.m, v, None)?;
        Ok((MODE_SLIDING, mechanism_state(q, vp)))
    }

    fn outputs_with<D: Scalar>(
        &self, mode: usize, _t: D, q: &[D], v: &[D], acc: &Accel<D>, p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let kin = self.mech.kinetic_energy(v, p)?;
        let pot = self.mech.potential_energy(q, p)?;
        out[..4].copy_from_slice(q);
        out[4..8].copy_from_slice(v);
        out[8] = kin;
        out[9] = pot;
        out[10] = kin + pot;
        out[11] = max_abs(&acc.phi);
        out[12] = max_abs(&acc.phidot);
        // Constraint force on the coordinates is −Φ_qᵀμ; the line's row is e_{y2}ᵀ.
        out[13] = if mode == MODE_SLIDING {
            -acc.mu[2]
        } else {
            D::zero()
        };
        Ok(())
    }
}

impl BuiltinSystem for LockingPendulum {
    type Settings = LockingPendulumConfig;
    fn build(settings: &LockingPendulumConfig) -> Result<Self, BuildError> {
        Ok(LockingPendulum::new(*settings)?)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(LockingPendulum::default_params())
    }
}
