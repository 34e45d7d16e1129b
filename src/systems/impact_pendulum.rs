//! A second-order system in the seed's form (seed 000 §2, (23a)–(23e)): a damped pendulum
//! `q̈ = a(t, q, v, p) = −(g/l) sin q − c v + A sin(ω t)` that strikes a wall at
//! `r(q) = q − q_w = 0` (rising) and rebounds with `v⁺ = h(t, q, v, p) = −e v⁻`.
//! State (q, v); parameters (g_over_l, c, A, omega, e, q_w, q0, v0). The time-dependent
//! forcing makes h_t, a_t and the event-time terms all matter.

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, NoSettings};
use crate::error::ModelError;
use crate::model::{Dims, Direction, GuardInfo, HybridSystem, Scalar};

#[derive(Debug, Clone, Copy, Default)]
pub struct ImpactPendulum;

impl ImpactPendulum {
    pub fn default_params() -> Vec<f64> {
        vec![9.81, 0.3, 1.5, 2.0, 0.7, 0.4, -0.5, 2.0]
    }
}

impl HybridSystem for ImpactPendulum {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn dims(&self) -> Dims {
        let params = ["g_over_l", "c", "A", "omega", "e", "q_w", "q0", "v0"];
        Dims::new(["q", "v"], params)
            .param_defaults(Self::default_params())
            .guards([GuardInfo::new("wall", Direction::Rising)])
            .outputs(["q", "v", "a"])
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![p[6], p[7]])
    }
    fn flow<D: Scalar>(
        &self, _m: usize, t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = x[1];
        dx[1] = -p[0] * x[0].sin() - p[1] * x[1] + p[2] * (p[3] * t).sin();
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        x[0] - p[5]
    }
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        // a mildly time- and position-dependent restitution so that h_t and h_q are nonzero
        let e = p[4] * (D::one() + (t * 0.1).sin() * 0.05 + x[0] * 0.02);
        Ok((m, vec![x[0], -e * x[1]]))
    }
    fn outputs<D: Scalar>(
        &self, m: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let mut dx = [D::zero(); 2];
        self.flow(m, t, x, u, p, &mut dx)?;
        out[0] = x[0];
        out[1] = x[1];
        out[2] = dx[1];
        Ok(())
    }
}

impl BuiltinSystem for ImpactPendulum {
    type Settings = NoSettings;
    fn build(_: &NoSettings) -> Result<Self, BuildError> {
        Ok(ImpactPendulum)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(ImpactPendulum::default_params())
    }
}
