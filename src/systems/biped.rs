//! The vertical-plane biped with two massless legs of seed 003 §3.2
//! (`docs/reference-models.md` §3): a rigid body falling onto a curved ground on two rigid
//! massless legs whose feet are spring-dampers while they penetrate the ground. The vector
//! field is discontinuous where a foot touches or leaves the ground (the resets are the
//! identity); when both feet touch at once the flow is only piecewise differentiable, and the
//! two crossing orders give different saltation matrices unless the single-support damping
//! equals the double-support damping (seed 003 (3.9); see [`crate::sensitivity::simultaneous`]).
//!
//! # Model
//!
//! - Configuration `q = (x, y, θ)`, state `(x, y, θ, ẋ, ẏ, θ̇)`, `M = diag(m, m, J)`,
//!   gravity force `(0, −m g, 0)`.
//! - Legs of length ℓ at angles ±ψ from the vertical. Feet:
//!   foot 1 at `(x + ℓ cos(θ − ψ), y + ℓ sin(θ − ψ))`,
//!   foot 2 at `(x − ℓ cos(θ + ψ), y − ℓ sin(θ + ψ))`.
//! - Ground `y = −x²`. Penetrations (positive = below the ground):
//!   `a1 = −y − (x + ℓ cos(θ − ψ))² − ℓ sin(θ − ψ)`,
//!   `a2 = −y − (x − ℓ cos(θ + ψ))² + ℓ sin(θ + ψ)`
//!   (the version of the authors' code; the seed's printed a2 has two flipped signs).
//! - Each foot j in the contact set adds the generalized force
//!   `−(κ a_j + β_j ∇a_j·q̇) ∇a_j`, with `β_j = β` when both feet are in contact and
//!   `β_j = β_s` when only foot j is.
//!
//! # Modes, guards, resets
//!
//! The modes are the contact sets; the mode index is a bit mask (bit 0: foot 1, bit 1:
//! foot 2): `none` = 0, `foot1` = 1, `foot2` = 2, `both` = 3. The guards are
//!
//! | k | name     | function | direction | watched when         |
//! |---|----------|----------|-----------|----------------------|
//! | 0 | `touch1` | a1       | rising    | foot 1 not in contact |
//! | 1 | `lift1`  | a1       | falling   | foot 1 in contact     |
//! | 2 | `touch2` | a2       | rising    | foot 2 not in contact |
//! | 3 | `lift2`  | a2       | falling   | foot 2 in contact     |
//!
//! and every reset is the identity on the state with the foot's bit set (touch) or cleared
//! (lift). The guard functions do not depend on the mode, and the mode reached after several
//! events does not depend on their order, as the simultaneous-event analysis requires.
//!
//! # Parameters (θ, in this order)
//!
//! `beta` (β, double-support damping, default 1), `beta_s` (β_s, single-support damping,
//! default 0.5 = β/2 as in the authors' code), `kappa` (κ, contact stiffness, default 1),
//! `x0, y0, theta0` (start configuration, default (0, 1, 0)) and `xdot0, ydot0, thetadot0`
//! (start velocities, default 0): see [`Biped::default_params`]. The start mode is the set of
//! feet with `a_j > 0` at the start.
//!
//! The body's mass, inertia, gravity and leg geometry are fixed per model in
//! [`BipedConfig`] (the `[system]` table of a problem file).
//!
//! # Check
//!
//! With `θ = x = 0` both feet touch at the same instant, at body height
//! `y = ℓ sin ψ − ℓ² cos² ψ` (≈ 0.228553 with the defaults): [`Biped::symmetric_touchdown_height`].

use super::build_error::BuildError;
use super::kind::BuiltinSystem;
use crate::error::ModelError;
use crate::model::{c, Dims, Direction, GuardInfo, HybridSystem, Scalar};

/// Parameter names, in the order of `p`.
pub const PARAM_NAMES: [&str; 9] = [
    "beta",
    "beta_s",
    "kappa",
    "x0",
    "y0",
    "theta0",
    "xdot0",
    "ydot0",
    "thetadot0",
];

/// Indices of the parameters.
pub const P_BETA: usize = 0;
pub const P_BETA_S: usize = 1;
pub const P_KAPPA: usize = 2;
pub const P_X0: usize = 3;
pub const P_Y0: usize = 4;
pub const P_THETA0: usize = 5;
pub const P_XDOT0: usize = 6;
pub const P_YDOT0: usize = 7;
pub const P_THETADOT0: usize = 8;

/// State names, in the order of `x`.
pub const STATE_NAMES: [&str; 6] = ["x", "y", "theta", "xdot", "ydot", "thetadot"];

/// Output names, in the order of the outputs.
pub const OUTPUT_NAMES: [&str; 13] = [
    "x",
    "y",
    "theta",
    "xdot",
    "ydot",
    "thetadot",
    "a1",
    "a2",
    "pitch_energy",
    "vertical_energy",
    "kinetic",
    "potential",
    "energy",
];

/// Mode names; the index is the contact bit mask (bit 0: foot 1, bit 1: foot 2).
pub const MODE_NAMES: [&str; 4] = ["none", "foot1", "foot2", "both"];
pub const MODE_NONE: usize = 0;
pub const MODE_FOOT1: usize = 1;
pub const MODE_FOOT2: usize = 2;
pub const MODE_BOTH: usize = 3;

/// Guard indices.
pub const G_TOUCH1: usize = 0;
pub const G_LIFT1: usize = 1;
pub const G_TOUCH2: usize = 2;
pub const G_LIFT2: usize = 3;

/// Configuration of the biped (the `[system]` table of a problem file). The defaults are
/// those of seed 003 §3.2 and `docs/reference-models.md` §3.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BipedConfig {
    /// Body mass m (kg); default 1.
    pub mass: f64,
    /// Body moment of inertia J (kg m²); default 1.
    pub inertia: f64,
    /// Gravitational acceleration g (m/s², along −y); default 9.8.
    pub gravity: f64,
    /// Leg length ℓ (m); default 0.5.
    pub leg_length: f64,
    /// Leg angle ψ from the vertical (rad); default π/4.
    pub leg_angle: f64,
}

impl Default for BipedConfig {
    fn default() -> Self {
        BipedConfig {
            mass: 1.0,
            inertia: 1.0,
            gravity: 9.8,
            leg_length: 0.5,
            leg_angle: std::f64::consts::FRAC_PI_4,
        }
    }
}

/// The biped as a [`HybridSystem`].
#[derive(Debug, Clone, PartialEq)]
pub struct Biped {
    config: BipedConfig,
}

impl Default for Biped {
    fn default() -> Self {
        Biped::new(BipedConfig::default()).expect("the default biped configuration is valid")
    }
}

/// Penetration of one foot and its gradient with respect to `q = (x, y, θ)`.
struct Foot<D> {
    a: D,
    grad: [D; 3],
}

impl Biped {
    /// Builds the model; fails unless m, J, ℓ are positive and finite, g is finite and ψ is
    /// finite.
    pub fn new(config: BipedConfig) -> Result<Self, ModelError> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !(positive(config.mass) && positive(config.inertia) && positive(config.leg_length)) {
            return Err(ModelError::ParameterOutOfRange {
                system: "biped".into(),
                values: vec![
                    ("mass".into(), config.mass),
                    ("inertia".into(), config.inertia),
                    ("leg_length".into(), config.leg_length),
                ],
                valid: "mass, inertia and leg_length must be positive and finite".into(),
            });
        }
        if !(config.gravity.is_finite() && config.leg_angle.is_finite()) {
            return Err(ModelError::ParameterOutOfRange {
                system: "biped".into(),
                values: vec![
                    ("gravity".into(), config.gravity),
                    ("leg_angle".into(), config.leg_angle),
                ],
                valid: "gravity and leg_angle must be finite".into(),
            });
        }
        Ok(Biped { config })
    }

    pub fn config(&self) -> &BipedConfig {
        &self.config
    }

    /// Default parameters: β = 1, β_s = 0.5, κ = 1, start (x, y, θ) = (0, 1, 0) at rest
    /// (seed 003 §3.2).
    pub fn default_params() -> Vec<f64> {
        vec![1.0, 0.5, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    }

    /// Body height `ℓ sin ψ − ℓ² cos² ψ` at which both feet touch at once when `x = θ = 0`.
    pub fn symmetric_touchdown_height(&self) -> f64 {
        let (l, psi) = (self.config.leg_length, self.config.leg_angle);
        l * psi.sin() - (l * psi.cos()).powi(2)
    }

    /// Penetrations `(a1, a2)` at the configuration `q = (x, y, θ)`.
    pub fn penetrations<D: Scalar>(&self, q: &[D]) -> [D; 2] {
        let [f1, f2] = self.feet(q);
        [f1.a, f2.a]
    }

    /// Positions of the two feet `[(x1, y1), (x2, y2)]` at `q = (x, y, θ)`.
    pub fn foot_positions<D: Scalar>(&self, q: &[D]) -> [[D; 2]; 2] {
        let l = c::<D>(self.config.leg_length);
        let psi = c::<D>(self.config.leg_angle);
        let (x, y, th) = (q[0], q[1], q[2]);
        let (am, ap) = (th - psi, th + psi);
        [
            [x + l * am.cos(), y + l * am.sin()],
            [x - l * ap.cos(), y - l * ap.sin()],
        ]
    }

    /// Penetrations and their gradients ∇a_j = (∂/∂x, ∂/∂y, ∂/∂θ), written out by hand.
    fn feet<D: Scalar>(&self, q: &[D]) -> [Foot<D>; 2] {
        let l = c::<D>(self.config.leg_length);
        let psi = c::<D>(self.config.leg_angle);
        let two = c::<D>(2.0);
        let (x, y, th) = (q[0], q[1], q[2]);
        let (am, ap) = (th - psi, th + psi);
        let (cm, sm) = (am.cos(), am.sin());
        let (cp, sp) = (ap.cos(), ap.sin());
        // foot 1: a1 = −y − u1² − ℓ sin(θ − ψ), u1 = x + ℓ cos(θ − ψ)
        let u1 = x + l * cm;
        let a1 = -y - u1 * u1 - l * sm;
        let g1 = [-two * u1, -D::one(), two * u1 * l * sm - l * cm];
        // foot 2: a2 = −y − u2² + ℓ sin(θ + ψ), u2 = x − ℓ cos(θ + ψ)
        let u2 = x - l * cp;
        let a2 = -y - u2 * u2 + l * sp;
        let g2 = [-two * u2, -D::one(), -two * u2 * l * sp + l * cp];
        [Foot { a: a1, grad: g1 }, Foot { a: a2, grad: g2 }]
    }

    /// The damping of each foot in a contact set: β in double support, β_s in single support.
    fn damping<D: Scalar>(mode: usize, p: &[D]) -> D {
        if mode == MODE_BOTH {
            p[P_BETA]
        } else {
            p[P_BETA_S]
        }
    }

    fn check<D: Scalar>(&self, mode: usize, x: &[D], p: &[D]) -> Result<(), ModelError> {
        if mode > MODE_BOTH || x.len() != STATE_NAMES.len() || p.len() != PARAM_NAMES.len() {
            return Err(ModelError::SizeMismatch {
                what: "biped".into(),
                expected: "mode 0..=3, 6 states and 9 parameters".into(),
                found: format!("mode {mode}, {} states and {} parameters", x.len(), p.len()),
            });
        }
        Ok(())
    }
}

impl HybridSystem for Biped {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn dims(&self) -> Dims {
        Dims::new(STATE_NAMES, PARAM_NAMES)
            .param_defaults(Self::default_params())
            .modes(MODE_NAMES)
            .guards([
                GuardInfo::new("touch1", Direction::Rising),
                GuardInfo::new("lift1", Direction::Falling),
                GuardInfo::new("touch2", Direction::Rising),
                GuardInfo::new("lift2", Direction::Falling),
            ])
            .outputs(OUTPUT_NAMES)
    }

    /// `touch_j` is watched while foot j is not in contact, `lift_j` while it is.
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        let in_contact = mode & (1 << (k / 2)) != 0;
        if k.is_multiple_of(2) {
            !in_contact
        } else {
            in_contact
        }
    }

    /// The feet with `a_j > 0` at the start.
    fn initial_mode(&self, p: &[f64]) -> usize {
        if p.len() != PARAM_NAMES.len() {
            return MODE_NONE;
        }
        let [a1, a2] = self.penetrations(&p[P_X0..P_X0 + 3]);
        usize::from(a1 > 0.0) | (usize::from(a2 > 0.0) << 1)
    }

    /// `(x0, y0, θ0, ẋ0, ẏ0, θ̇0)` from the parameters.
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        if p.len() != PARAM_NAMES.len() {
            return Err(ModelError::SizeMismatch {
                what: "biped".into(),
                expected: "9 parameters".into(),
                found: p.len().to_string(),
            });
        }
        Ok(p[P_X0..P_X0 + 6].to_vec())
    }

    /// `M q̈ = (0, −m g, 0) − Σ_{j in contact} (κ a_j + β_j ∇a_j·q̇) ∇a_j`.
    fn flow<D: Scalar>(
        &self, mode: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        self.check(mode, x, p)?;
        let cf = &self.config;
        let m = c::<D>(cf.mass);
        let (q, v) = x.split_at(3);
        let mut force = [D::zero(), -m * cf.gravity, D::zero()];
        let beta = Self::damping(mode, p);
        let kappa = p[P_KAPPA];
        for (j, foot) in self.feet(q).iter().enumerate() {
            if mode & (1 << j) == 0 {
                continue;
            }
            let rate = foot.grad[0] * v[0] + foot.grad[1] * v[1] + foot.grad[2] * v[2];
            let s = kappa * foot.a + beta * rate;
            for i in 0..3 {
                force[i] -= s * foot.grad[i];
            }
        }
        dx[..3].copy_from_slice(v);
        dx[3] = force[0] / m;
        dx[4] = force[1] / m;
        dx[5] = force[2] / cf.inertia;
        Ok(())
    }

    /// `a1` for `touch1`/`lift1`, `a2` for `touch2`/`lift2` (the same in every mode).
    fn guard<D: Scalar>(&self, _mode: usize, k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        let [a1, a2] = self.penetrations(&x[..3]);
        if k < 2 {
            a1
        } else {
            a2
        }
    }

    /// The identity on the state; `touch_j` adds foot j to the contact set, `lift_j` removes
    /// it.
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        self.check(mode, x, p)?;
        if k > G_LIFT2 {
            return Err(ModelError::SizeMismatch {
                what: "biped".into(),
                expected: format!("guard 0..={G_LIFT2}"),
                found: format!("guard {k}"),
            });
        }
        let bit = 1usize << (k / 2);
        let next = if k.is_multiple_of(2) {
            mode | bit
        } else {
            mode & !bit
        };
        Ok((next, x.to_vec()))
    }

    fn outputs<D: Scalar>(
        &self, mode: usize, _t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        self.check(mode, x, p)?;
        let cf = &self.config;
        let half = c::<D>(0.5);
        let [a1, a2] = self.penetrations(&x[..3]);
        out[..6].copy_from_slice(x);
        out[6] = a1;
        out[7] = a2;
        let pitch = half * x[5] * x[5] * cf.inertia;
        let vertical = half * x[4] * x[4] * cf.mass;
        let kinetic = half * x[3] * x[3] * cf.mass + vertical + pitch;
        let mut potential = x[1] * (cf.mass * cf.gravity);
        for (j, a) in [a1, a2].into_iter().enumerate() {
            if mode & (1 << j) != 0 {
                potential += half * p[P_KAPPA] * a * a;
            }
        }
        out[8] = pitch;
        out[9] = vertical;
        out[10] = kinetic;
        out[11] = potential;
        out[12] = kinetic + potential;
        Ok(())
    }
}

impl BuiltinSystem for Biped {
    type Settings = BipedConfig;
    fn build(settings: &BipedConfig) -> Result<Self, BuildError> {
        Ok(Biped::new(*settings)?)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(Biped::default_params())
    }
}
