//! The five-bar mechanism of seed 000 §4, with the numbers of reference-models.md §2.
//!
//! Ground pivots A = (−0.5, 0) and B = (0.5, 0); moving points P1, P2, P3 with natural
//! coordinates `q = (x1, y1, x2, y2, x3, y3)`, state `x = (q, v)` (12 states). Four uniform
//! bars A–P1, P1–P2, P2–P3, P3–B (masses m1..m4) held at their initial lengths by distance
//! constraints; springs k1 (B–P1, natural length L1) and k2 (B–P2, natural length L2);
//! gravity 9.81 m/s² along −y. Point 2 bounces on the ground `y2 = ground`: guard
//! `ground` = `y2 − ground` (falling), reset = kinematic reversal `ẏ2⁺ = −ẏ2⁻`, `ẋ2⁺ = ẋ2⁻`,
//! dependent velocities (points 1 and 3) from `Φ_q v = 0` (theory.md §5 item 1; seed 000
//! (38)–(39)).
//!
//! The equations of motion are assembled by [`crate::multibody`] (index-1 with Baumgarte
//! stabilization, penalty or GGL index 2, per [`FiveBarConfig::formulation`]); nothing is
//! hand-written.

use super::build_error::BuildError;
use super::kind::BuiltinSystem;
use crate::error::ModelError;
use crate::model::{c, Dims, Direction, GuardInfo, Scalar};
use crate::multibody::constraints::max_abs;
use crate::multibody::{
    kinematic_reversal, mechanism_state, rest_state, Accel, Dynamics, Formulation, Mechanism,
    MultibodySystem, ParamRef,
};

/// Parameter names, in the order of `p`.
pub const PARAM_NAMES: [&str; 8] = ["k1", "k2", "L1", "L2", "m1", "m2", "m3", "m4"];

/// Output names, in the order of the outputs.
pub const OUTPUT_NAMES: [&str; 11] = [
    "x2",
    "y2",
    "vx2",
    "vy2",
    "ax2",
    "ay2",
    "phi_pos_max",
    "phi_vel_max",
    "kinetic",
    "potential",
    "energy",
];

/// Ground pivot A (reference-models.md §2).
pub const PIVOT_A: [f64; 2] = [-0.5, 0.0];
/// Ground pivot B (reference-models.md §2).
pub const PIVOT_B: [f64; 2] = [0.5, 0.0];
/// Moving points P1, P2, P3 at t0 (reference-models.md §2).
pub const INITIAL_POINTS: [[f64; 2]; 3] = [[-1.5, -1.0], [0.0, -2.0], [1.5, -1.0]];
/// Gravitational acceleration (m/s², along −y; reference-models.md §2).
pub const GRAVITY: f64 = 9.81;

/// Indices of the points in [`FiveBar::mechanism`].
const A: usize = 0;
const B: usize = 1;
const P1: usize = 2;
const P2: usize = 3;
const P3: usize = 4;

/// The coordinates `q` by name, in order.
pub const COORDINATES: [&str; 6] = ["x1", "y1", "x2", "y2", "x3", "y3"];

/// Configuration of the five-bar (the `[system]` table of a problem file).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FiveBarConfig {
    /// `"index1"` (default), `"penalty"` or `"index2"` (GGL, `crate::multibody::dynamics::ggl_velocity`).
    pub formulation: Formulation,
    /// Baumgarte damping ratio ξ; default 1.0 (reference-models.md §2).
    pub xi: f64,
    /// Baumgarte natural frequency ω (rad/s); default 10.0 (reference-models.md §2).
    pub omega: f64,
    /// Penalty factor α (penalty formulation only); default 1e7, chosen here (not in the
    /// references): the penalty accelerations then agree with the index-1 ones to ~1e-7 m/s²
    /// (tests/multibody.rs) while `M + αΦ_qᵀΦ_q` stays well conditioned (~1e8).
    pub alpha: f64,
    /// Height of the ground line (m); default −2.35 (reference-models.md §2). Must be below
    /// the initial height −2 of point 2.
    pub ground: f64,
    /// Actuated coordinates by name (of the six point coordinates x1, y1, …, y3): each a control channel
    /// `force_<name>`, a generalized force on that coordinate (multibody/actuators.rs);
    /// default none (the passive mechanism).
    pub actuators: Vec<String>,
}

impl FiveBarConfig {
    /// The indices of the actuated coordinates; the first name that is not a coordinate
    /// is the error.
    pub fn actuator_indices(&self) -> Result<Vec<usize>, String> {
        self.actuators
            .iter()
            .map(|a| COORDINATES.iter().position(|c| c == a).ok_or(a.clone()))
            .collect()
    }
}

impl Default for FiveBarConfig {
    fn default() -> Self {
        let d = Dynamics::default();
        FiveBarConfig {
            formulation: d.formulation,
            xi: d.xi,
            omega: d.omega,
            alpha: d.alpha,
            ground: -2.35,
            actuators: Vec::new(),
        }
    }
}

/// The five-bar mechanism as a [`HybridSystem`](crate::HybridSystem).
#[derive(Debug, Clone)]
pub struct FiveBar {
    config: FiveBarConfig,
    dynamics: Dynamics,
    mech: Mechanism,
}

impl Default for FiveBar {
    fn default() -> Self {
        FiveBar::new(FiveBarConfig::default()).expect("the default five-bar configuration is valid")
    }
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

impl FiveBar {
    /// Builds the mechanism of reference-models.md §2; fails on an invalid configuration.
    pub fn new(config: FiveBarConfig) -> Result<Self, ModelError> {
        let dynamics = Dynamics::new(config.formulation, config.xi, config.omega, config.alpha)?;
        let y2 = INITIAL_POINTS[1][1];
        if !(config.ground.is_finite() && config.ground < y2) {
            return Err(ModelError::ParameterOutOfRange {
                system: "five-bar".into(),
                values: vec![("ground".into(), config.ground)],
                valid: format!("ground must lie below the initial height {y2} of point 2"),
            });
        }
        let [p1, p2, p3] = INITIAL_POINTS;
        let mut mech = Mechanism::new(6);
        mech.gravity = ParamRef::Const(GRAVITY);
        assert_eq!(mech.fixed_point(PIVOT_A[0], PIVOT_A[1]), A);
        assert_eq!(mech.fixed_point(PIVOT_B[0], PIVOT_B[1]), B);
        assert_eq!(mech.moving_point(0), P1);
        assert_eq!(mech.moving_point(2), P2);
        assert_eq!(mech.moving_point(4), P3);
        let links = [
            (A, P1, dist(PIVOT_A, p1)),
            (P1, P2, dist(p1, p2)),
            (P2, P3, dist(p2, p3)),
            (P3, B, dist(p3, PIVOT_B)),
        ];
        for (k, &(i, j, len)) in links.iter().enumerate() {
            mech.bar(i, j, ParamRef::Param(4 + k));
            mech.distance(i, j, ParamRef::Const(len));
        }
        mech.spring(B, P1, ParamRef::Param(0), ParamRef::Param(2));
        mech.spring(B, P2, ParamRef::Param(1), ParamRef::Param(3));
        let coords = config
            .actuator_indices()
            .map_err(|a| ModelError::InvalidMechanism {
                element: format!("actuator `{a}`"),
                problem: format!(
                    "is not a coordinate; the coordinates: {}",
                    COORDINATES.join(", ")
                ),
            })?;
        for c in coords {
            mech.actuator(c)?;
        }
        mech.validate(PARAM_NAMES.len())?;
        Ok(FiveBar {
            config,
            dynamics,
            mech,
        })
    }

    /// Reference parameter values `k1, k2, L1, L2, m1, m2, m3, m4` =
    /// `100, 100, 2.24, 2.06, 1.0, 1.5, 1.5, 1.0` (reference-models.md §2).
    pub fn default_params() -> Vec<f64> {
        vec![100.0, 100.0, 2.24, 2.06, 1.0, 1.5, 1.5, 1.0]
    }

    /// The initial coordinates `q0 = (x1, y1, x2, y2, x3, y3)`.
    pub fn initial_positions() -> [f64; 6] {
        let [p1, p2, p3] = INITIAL_POINTS;
        [p1[0], p1[1], p2[0], p2[1], p3[0], p3[1]]
    }

    /// The configuration.
    pub fn config(&self) -> &FiveBarConfig {
        &self.config
    }

    /// The formulation and its coefficients.
    pub fn dynamics(&self) -> &Dynamics {
        &self.dynamics
    }

    /// The assembled mechanism (points A, B, P1, P2, P3 at indices 0..5).
    pub fn mechanism(&self) -> &Mechanism {
        &self.mech
    }

    /// Accelerations, multipliers and constraint residuals at state `x = (q, v)`.
    pub fn acceleration<D: Scalar>(&self, x: &[D], p: &[D]) -> Result<Accel<D>, ModelError> {
        self.accelerations(0, x, p)
    }
}

impl MultibodySystem for FiveBar {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn mechanism(&self) -> &Mechanism {
        &self.mech
    }

    fn dynamics(&self) -> &Dynamics {
        &self.dynamics
    }

    fn check<D: Scalar>(&self, _mode: usize, x: &[D], p: &[D]) -> Result<(), ModelError> {
        if x.len() != 12 || p.len() != PARAM_NAMES.len() {
            return Err(ModelError::SizeMismatch {
                what: "five-bar".into(),
                expected: "12 states and 8 parameters".into(),
                found: format!("{} and {}", x.len(), p.len()),
            });
        }
        Ok(())
    }

    fn dims(&self) -> Dims {
        let states = [
            "x1", "y1", "x2", "y2", "x3", "y3", "vx1", "vy1", "vx2", "vy2", "vx3", "vy3",
        ];
        let controls: Vec<String> = self
            .config
            .actuators
            .iter()
            .map(|a| format!("force_{a}"))
            .collect();
        Dims::new(states, PARAM_NAMES)
            .param_defaults(Self::default_params())
            .controls(controls)
            .guards([GuardInfo::new("ground", Direction::Falling)])
            .outputs(OUTPUT_NAMES)
    }

    /// At rest at the initial points of reference-models.md §2 (which satisfy Φ = 0 exactly
    /// since the bar lengths are taken from them).
    fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(rest_state(&FiveBar::initial_positions()))
    }

    /// `g = y2 − ground`.
    fn guard<D: Scalar>(&self, _mode: usize, _k: usize, _t: D, x: &[D], _p: &[D]) -> D {
        x[3] - c::<D>(self.config.ground)
    }

    /// Kinematic reversal (seed 000 (38)–(39)): `(ẋ2, ẏ2)⁺ = (ẋ2, −ẏ2)⁻`, then
    /// `v_dep⁺ = −Φ_q,dep⁻¹ Φ_q,dof v_dof⁺` for the dependent coordinates (x1, y1, x3, y3).
    fn reset<D: Scalar>(
        &self, mode: usize, _k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        self.check(mode, x, p)?;
        let (q, v) = x.split_at(6);
        let ev = self.mech.evaluate(&self.mech.constraints, q, v, p)?;
        let vp = kinematic_reversal(&ev.jac, ev.m, v, &[2, 3], &[D::one(), -D::one()])?;
        Ok((mode, mechanism_state(q, vp)))
    }

    fn outputs_with<D: Scalar>(
        &self, mode: usize, t: D, q: &[D], v: &[D], acc: &Accel<D>, p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        self.outputs_wanted(mode, t, q, v, acc, p, &[true; 11], out)
    }

    /// The energies (mass matrix and spring energies) only when one of them is wanted.
    fn outputs_wanted<D: Scalar>(
        &self, _mode: usize, _t: D, q: &[D], v: &[D], acc: &Accel<D>, p: &[D], wanted: &[bool],
        out: &mut [D],
    ) -> Result<(), ModelError> {
        let (kin, pot) = if wanted.get(8..11).is_none_or(|w| w.iter().any(|&w| w)) {
            (
                self.mech.kinetic_energy(v, p)?,
                self.mech.potential_energy(q, p)?,
            )
        } else {
            (D::zero(), D::zero())
        };
        out[0] = q[2];
        out[1] = q[3];
        out[2] = v[2];
        out[3] = v[3];
        out[4] = acc.a[2];
        out[5] = acc.a[3];
        out[6] = max_abs(&acc.phi);
        out[7] = max_abs(&acc.phidot);
        out[8] = kin;
        out[9] = pot;
        out[10] = kin + pot;
        Ok(())
    }
}

impl BuiltinSystem for FiveBar {
    type Settings = FiveBarConfig;
    /// The mechanism, after checking that its actuators name its coordinates.
    fn build(settings: &FiveBarConfig) -> Result<Self, BuildError> {
        settings
            .actuator_indices()
            .map_err(|name| BuildError::UnknownActuator {
                name,
                valid: COORDINATES.join(", "),
            })?;
        Ok(FiveBar::new(settings.clone())?)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(FiveBar::default_params())
    }
}
