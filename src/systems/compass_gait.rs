//! The compass-gait walker (Goswami, Espiau, Keramane, "Limit cycles and their
//! stability in a passive bipedal gait", ICRA 1996; reference-models §10): a hip mass
//! `m_h`, two legs of mass `m` at distance `a` from the foot and `b` from the hip
//! (length `l = a + b`), on a slope `slope` (radians, downhill along +x), gravity `g`.
//!
//! Coordinates `q = (theta_ns, theta_s)`: the angles from the vertical of the swing and
//! stance legs' foot→hip vectors, positive leaning downhill (the hip at
//! `l (sin θ_s, cos θ_s)` from the stance foot). Derived by hand from the Lagrangian
//! (the derivation is in the doc comments of [`CompassGait::mass_matrix`] and
//! [`CompassGait::accelerations`]); the tests check energy conservation over a swing and
//! the impact's two angular-momentum balances against independent Cartesian sums.
//!
//! - Heel strike: `g = θ_s + θ_ns − 2·slope` crossed rising (the swing foot reaches the
//!   slope ahead of the stance foot: `cos(θ_s − slope) = cos(θ_ns − slope)` on the branch
//!   `θ_ns − slope = −(θ_s − slope)`; the other branch `θ_ns = θ_s`, foot scuffing at mid
//!   stance, is not on this guard).
//! - Impact (plastic, instantaneous): the legs swap (`θ_ns⁺ = θ_s⁻`, `θ_s⁺ = θ_ns⁻`) and
//!   the velocities follow from conserving the whole system's angular momentum about the
//!   new contact point and the old stance leg's about the hip (Goswami et al. 1996 §3).

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, NoSettings};
use crate::error::ModelError;
use crate::model::{Dims, Direction, GuardInfo, HybridSystem, Scalar};

#[derive(Debug, Clone, Copy, Default)]
pub struct CompassGait;

/// Index of each parameter (shared with [`super::compass_gait_actuated`], whose first six
/// parameters are these).
pub(crate) const MH: usize = 0;
pub(crate) const M: usize = 1;
pub(crate) const A: usize = 2;
pub(crate) const B: usize = 3;
pub(crate) const G: usize = 4;
pub(crate) const SLOPE: usize = 5;

pub(crate) type P2<D> = [D; 2];

fn cross<D: Scalar>(r: P2<D>, v: P2<D>) -> D {
    r[0] * v[1] - r[1] * v[0]
}
fn sub<D: Scalar>(a: P2<D>, b: P2<D>) -> P2<D> {
    [a[0] - b[0], a[1] - b[1]]
}

/// Positions (relative to the stance foot) and velocities of the hip, the stance-leg mass,
/// the swing-leg mass and the swing foot, at `q = (θ_ns, θ_s)`, `q̇`.
pub(crate) struct Points<D> {
    pub(crate) pos: [P2<D>; 4],
    pub(crate) vel: [P2<D>; 4],
}

impl CompassGait {
    /// Goswami et al.'s reference: m_h = 10, m = 5, a = b = 0.5, g = 9.81, slope 3°, and
    /// a start state near its gait (just after heel strike).
    pub fn default_params() -> Vec<f64> {
        let slope = 3f64.to_radians();
        vec![
            10.0,
            5.0,
            0.5,
            0.5,
            9.81,
            slope,
            0.22 + slope,
            -0.22 + slope,
            -0.4,
            1.2,
        ]
    }

    pub(crate) fn points<D: Scalar>(p: &[D], q: P2<D>, dq: P2<D>) -> Points<D> {
        let (a, b) = (p[A], p[B]);
        let l = a + b;
        let (sn, cn) = (q[0].sin(), q[0].cos());
        let (ss, cs) = (q[1].sin(), q[1].cos());
        let hip = [l * ss, l * cs];
        let hip_v = [l * cs * dq[1], -l * ss * dq[1]];
        let m1 = [a * ss, a * cs];
        let m1_v = [a * cs * dq[1], -a * ss * dq[1]];
        let m2 = [hip[0] - b * sn, hip[1] - b * cn];
        let m2_v = [hip_v[0] - b * cn * dq[0], hip_v[1] + b * sn * dq[0]];
        let foot = [hip[0] - l * sn, hip[1] - l * cn];
        let foot_v = [hip_v[0] - l * cn * dq[0], hip_v[1] + l * sn * dq[0]];
        Points {
            pos: [hip, m1, m2, foot],
            vel: [hip_v, m1_v, m2_v, foot_v],
        }
    }

    /// Mass matrix from `T = ½ q̇ᵀ M q̇` with the velocities of `Self::points`:
    /// `M = [[m b², −m l b c], [−m l b c, m_h l² + m a² + m l²]]`, `c = cos(θ_s − θ_ns)`
    /// (Goswami et al. 1996 eq. (1) in these coordinates).
    pub fn mass_matrix<D: Scalar>(p: &[D], q: P2<D>) -> [[D; 2]; 2] {
        let (mh, m, a, b) = (p[MH], p[M], p[A], p[B]);
        let l = a + b;
        let off = -(m * l * b * (q[1] - q[0]).cos());
        [[m * b * b, off], [off, mh * l * l + m * a * a + m * l * l]]
    }

    /// `q̈ = M⁻¹ (−h − ∂V/∂q)` from Lagrange's equations: with `s = sin(θ_s − θ_ns)`,
    /// `h = (m l b s θ̇_s², −m l b s θ̇_ns²)` and
    /// `∂V/∂q = (g m b sin θ_ns, −g (m_h l + m a + m l) sin θ_s)`.
    pub fn accelerations<D: Scalar>(p: &[D], q: P2<D>, dq: P2<D>) -> Result<P2<D>, ModelError> {
        Self::forced_accelerations(p, q, dq, [D::zero(), D::zero()])
    }

    /// `q̈ = M⁻¹ (−h − ∂V/∂q + Q)`: Lagrange's equations `M q̈ + h + ∂V/∂q = Q` with the
    /// generalized forces `Q = (Q_ns, Q_s)` of non-conservative loads (their virtual work
    /// `δW = Q_ns δθ_ns + Q_s δθ_s`), `h` and `∂V/∂q` as in [`Self::accelerations`] (which
    /// is this with `Q = 0`; adding the zero leaves its numbers unchanged).
    pub(crate) fn forced_accelerations<D: Scalar>(
        p: &[D], q: P2<D>, dq: P2<D>, force: P2<D>,
    ) -> Result<P2<D>, ModelError> {
        let (mh, m, a, b, g) = (p[MH], p[M], p[A], p[B], p[G]);
        let l = a + b;
        let s = (q[1] - q[0]).sin();
        let r0 = -(m * l * b * s * dq[1] * dq[1]) - g * m * b * q[0].sin() + force[0];
        let r1 =
            m * l * b * s * dq[0] * dq[0] + g * (mh * l + m * a + m * l) * q[1].sin() + force[1];
        solve2(
            Self::mass_matrix(p, q),
            [r0, r1],
            "the compass gait's mass matrix",
        )
    }

    /// Total energy `T + V`, `V = g ((m_h l + m a + m l) cos θ_s − m b cos θ_ns)`
    /// (heights above the stance foot).
    pub fn energy<D: Scalar>(p: &[D], x: &[D]) -> D {
        let q = [x[0], x[1]];
        let dq = [x[2], x[3]];
        let mm = Self::mass_matrix(p, q);
        let t =
            (mm[0][0] * dq[0] * dq[0] + mm[0][1] * dq[0] * dq[1] * 2.0 + mm[1][1] * dq[1] * dq[1])
                * 0.5;
        let (mh, m, a, b, g) = (p[MH], p[M], p[A], p[B], p[G]);
        let l = a + b;
        t + g * ((mh * l + m * a + m * l) * q[1].cos() - m * b * q[0].cos())
    }

    /// The two angular momenta the impact conserves, at `(q, q̇)`: the whole system's
    /// about the swing foot, and the stance leg's (its mass point) about the hip,
    /// `Σ m_i (r_i − P) × v_i`.
    pub fn pre_impact_momenta<D: Scalar>(p: &[D], x: &[D]) -> P2<D> {
        let pt = Self::points(p, [x[0], x[1]], [x[2], x[3]]);
        let masses = [p[MH], p[M], p[M]];
        let foot = pt.pos[3];
        let mut h1 = D::zero();
        for i in 0..3 {
            h1 += masses[i] * cross(sub(pt.pos[i], foot), pt.vel[i]);
        }
        let h2 = p[M] * cross(sub(pt.pos[1], pt.pos[0]), pt.vel[1]);
        [h1, h2]
    }

    /// The same two momenta after the swap, in the new coordinates: the whole system's
    /// about the (new) stance foot and the (new) swing leg's about the hip.
    pub fn post_impact_momenta<D: Scalar>(p: &[D], x: &[D]) -> P2<D> {
        let pt = Self::points(p, [x[0], x[1]], [x[2], x[3]]);
        let masses = [p[MH], p[M], p[M]];
        let mut h1 = D::zero();
        for i in 0..3 {
            h1 += masses[i] * cross(pt.pos[i], pt.vel[i]);
        }
        let h2 = p[M] * cross(sub(pt.pos[2], pt.pos[0]), pt.vel[2]);
        [h1, h2]
    }

    /// The impact map: `q⁺ = (θ_s⁻, θ_ns⁻)` and `q̇⁺` solving `Q⁺(q⁺) q̇⁺ = h⁻`, where
    /// `h⁻` = [`Self::pre_impact_momenta`] and `Q⁺` the (linear in q̇) map of
    /// [`Self::post_impact_momenta`] (Goswami et al. 1996, eq. (4)).
    pub fn impact<D: Scalar>(p: &[D], x: &[D]) -> Result<Vec<D>, ModelError> {
        let h = Self::pre_impact_momenta(p, x);
        let (qn, qs) = (x[1], x[0]);
        let col = |j: usize| {
            let e = [
                if j == 0 { D::one() } else { D::zero() },
                if j == 1 { D::one() } else { D::zero() },
            ];
            Self::post_impact_momenta(p, &[qn, qs, e[0], e[1]])
        };
        let (c0, c1) = (col(0), col(1));
        let dq = solve2(
            [[c0[0], c1[0]], [c0[1], c1[1]]],
            h,
            "the compass gait's impact map",
        )?;
        Ok(vec![qn, qs, dq[0], dq[1]])
    }
}

/// Solves a 2×2 system by Cramer's rule; a singular matrix is a typed error.
fn solve2<D: Scalar>(m: [[D; 2]; 2], r: P2<D>, what: &str) -> Result<P2<D>, ModelError> {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let scale = m[0][0].re().abs() * m[1][1].re().abs() + m[0][1].re().abs() * m[1][0].re().abs();
    if !(det.re().abs() > 1e-14 * scale.max(f64::MIN_POSITIVE)) {
        return Err(ModelError::Singular {
            what: what.into(),
            pivot: det.re(),
        });
    }
    Ok([
        (r[0] * m[1][1] - r[1] * m[0][1]) / det,
        (m[0][0] * r[1] - m[1][0] * r[0]) / det,
    ])
}

/// The picture in the stance foot's frame (the foot at the origin, x downhill): the legs
/// and the three masses of [`CompassGait`]'s kinematics.
impl crate::animate::Geometry for CompassGait {
    fn shapes(
        &self, _mode: usize, _t: f64, x: &[f64], _u: &[f64], p: &[f64],
    ) -> Result<Vec<crate::animate::Shape>, ModelError> {
        use crate::animate::Shape;
        let pt = Self::points(p, [x[0], x[1]], [x[2], x[3]]);
        let [hip, m1, m2, foot] = pt.pos;
        let mass = |at, m: f64, name: &str| Shape::Mass {
            at,
            mass: m,
            name: name.into(),
        };
        Ok(vec![
            Shape::Bar {
                a: [0.0, 0.0],
                b: hip,
            },
            Shape::Bar { a: hip, b: foot },
            mass(hip, p[MH], "hip"),
            mass(m1, p[M], ""),
            mass(m2, p[M], ""),
        ])
    }
    fn scene(&self, p: &[f64], _x_range: (f64, f64)) -> Vec<crate::animate::SceneItem> {
        vec![crate::animate::SceneItem::Slope {
            through: [0.0, 0.0],
            angle: -p[SLOPE],
        }]
    }
}

impl HybridSystem for CompassGait {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn dims(&self) -> Dims {
        let params = [
            "m_h",
            "m",
            "a",
            "b",
            "g",
            "slope",
            "theta_ns0",
            "theta_s0",
            "dtheta_ns0",
            "dtheta_s0",
        ];
        let outputs = [
            "theta_ns",
            "theta_s",
            "dtheta_ns",
            "dtheta_s",
            "energy",
            "step_length",
        ];
        Dims::new(["theta_ns", "theta_s", "dtheta_ns", "dtheta_s"], params)
            .param_defaults(Self::default_params())
            .guards([GuardInfo::new("heel_strike", Direction::Rising)])
            .outputs(outputs)
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(p[6..10].to_vec())
    }
    fn flow<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let acc = Self::accelerations(p, [x[0], x[1]], [x[2], x[3]])?;
        dx[0] = x[2];
        dx[1] = x[3];
        dx[2] = acc[0];
        dx[3] = acc[1];
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        x[0] + x[1] - p[SLOPE] * 2.0
    }
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((m, Self::impact(p, x)?))
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[..4].copy_from_slice(&x[..4]);
        out[4] = Self::energy(p, x);
        // the distance between the feet, 2 l sin((θ_ns − θ_s)/2)
        out[5] = (p[A] + p[B]) * 2.0 * ((x[0] - x[1]) * 0.5).sin();
        Ok(())
    }
}

impl BuiltinSystem for CompassGait {
    type Settings = NoSettings;
    fn build(_: &NoSettings) -> Result<Self, BuildError> {
        Ok(CompassGait)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(CompassGait::default_params())
    }
}
