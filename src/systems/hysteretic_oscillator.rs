//! A single-storey structure with a hysteretic restoring force under harmonic load: the
//! exponential branch law with memory (reference-models §9; a system with memory, seed 001
//! §4, theory.md §6). Our own example: the seed's numbers are not in its extracted text.
//!
//! Differential states `(x, v)`, the restoring force f as the algebraic state (index 1,
//! `k_z = 1`), the memory `(x_r, f_r)` (the last reversal point):
//!
//! ```text
//! ẋ = v,   m v̇ = F0 sin(Ω t) − c v − f,
//! 0 = f − f_r − (s f_y − f_r)(1 − exp(−k0 (x − x_r)/(s f_y − f_r))) − b k0 (x − x_r)
//! ```
//!
//! (initial tangent `k0 (1 + b)`, saturating towards `s f_y` with hardening `b k0`). The
//! mode is the direction s = sign v (`positive` +1, `negative` −1); a reversal is where v
//! crosses 0 (`stop_up` falling in `positive`, `stop_down` rising in `negative`): s flips
//! and `(x_r, f_r)` becomes the current `(x, f)`.
//!
//! Start at rest, `x = v = 0`, `(x_r, f_r) = (0, 0)`, s = +1. The guard is 0 there: the
//! simulator masks a guard that starts at zero until it leaves zero
//! ([`crate::integrate::EventOptions::zero_tol`]), and the load drives v positive
//! (`v ≈ F0 Ω t²/(2m)`), away from the `positive` mode's falling crossing: the start is
//! not a reversal.
//!
//! Parameters `(m, c, k0, f_y, b, F0, Omega)`, defaults `(1, 0.05, 1, 0.5, 0.05, 0.8, 1.2)`
//! (reference-models §9).

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, DaeSettings};
use super::reversal;
use crate::dae::{Dae, DaeDims, DaeIndex, DaeSystem, Point, Transition};
use crate::error::ModelError;
use crate::model::Scalar;

/// The hysteretic oscillator (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct HystereticOscillator;

impl HystereticOscillator {
    pub const PARAMS: [&'static str; 7] = ["m", "c", "k0", "f_y", "b", "F0", "Omega"];
    /// Reference-models §9's values: m = 1, c = 0.05, k0 = 1, f_y = 0.5, b = 0.05,
    /// F0 = 0.8, Ω = 1.2.
    pub fn default_params() -> Vec<f64> {
        vec![1.0, 0.05, 1.0, 0.5, 0.05, 0.8, 1.2]
    }

    /// The direction s of a mode (`positive` +1, `negative` −1).
    pub fn direction(mode: usize) -> f64 {
        reversal::direction(mode)
    }
}

/// The branch law `f = f_r + (s f_y − f_r)(1 − exp(−k0 Δ/(s f_y − f_r))) + b k0 Δ`,
/// `Δ = x − x_r` (reference-models §9), with the parameters `(k0, f_y, b)`.
pub fn branch_force<D: Scalar>(s: f64, x: D, x_r: D, f_r: D, k0: D, f_y: D, b: D) -> D {
    let dx = x - x_r;
    let span = f_y * s - f_r;
    f_r + span * (D::one() - (-(k0 * dx) / span).exp()) + b * k0 * dx
}

impl DaeSystem for HystereticOscillator {
    fn index(&self) -> DaeIndex {
        DaeIndex::One
    }
    fn dims(&self) -> DaeDims {
        DaeDims::new(["x", "v"], ["f"], Self::PARAMS)
            .memory(["x_r", "f_r"])
            .modes(["positive", "negative"])
            .guards(reversal::guards("stop_up", "stop_down"))
            .outputs(["x", "v"])
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        reversal::guard_active(mode, k)
    }
    /// At rest.
    fn initial_differential<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![D::zero(), D::zero()])
    }
    fn algebraic_guess(
        &self, mode: usize, _t: f64, y: &[f64], memory: &[f64], p: &[f64],
    ) -> Vec<f64> {
        let s = Self::direction(mode);
        vec![branch_force(
            s, y[0], memory[0], memory[1], p[2], p[3], p[4],
        )]
    }
    /// `ẋ = v`, `v̇ = (F0 sin(Ω t) − c v − f)/m`.
    fn flow<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, dy: &mut [D],
    ) -> Result<(), ModelError> {
        let p = at.p;
        let load = p[5] * (p[6] * at.t).sin();
        dy[0] = at.y[1];
        dy[1] = (load - p[1] * at.y[1] - at.z[0]) / p[0];
        Ok(())
    }
    /// `k = f − f_branch(x; x_r, f_r, s)`.
    fn algebraic<D: Scalar>(
        &self, mode: usize, at: Point<'_, D>, res: &mut [D],
    ) -> Result<(), ModelError> {
        let (p, m) = (at.p, at.memory);
        let s = Self::direction(mode);
        res[0] = at.z[0] - branch_force(s, at.y[0], m[0], m[1], p[2], p[3], p[4]);
        Ok(())
    }
    /// v for both guards (`stop_up` falls through 0, `stop_down` rises through 0).
    fn guard<D: Scalar>(&self, _mode: usize, _k: usize, at: Point<'_, D>) -> D {
        at.y[1]
    }
    /// s flips; x and v are continuous.
    fn transition<D: Scalar>(
        &self, mode: usize, _k: usize, at: Point<'_, D>,
    ) -> Result<Transition<D>, ModelError> {
        Ok(Transition::Explicit {
            mode: reversal::flipped(mode),
            y: at.y.to_vec(),
        })
    }
    /// `(x_r, f_r) = (x, f)` at the reversal.
    fn memory_update<D: Scalar>(
        &self, _mode: usize, _k: usize, _new_mode: usize, y_after: &[D], before: Point<'_, D>,
    ) -> Vec<D> {
        vec![y_after[0], before.z[0]]
    }
    fn outputs<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = at.y[0];
        out[1] = at.y[1];
        Ok(())
    }
}

impl BuiltinSystem for Dae<HystereticOscillator> {
    type Settings = DaeSettings;
    fn build(settings: &DaeSettings) -> Result<Self, BuildError> {
        settings.build(HystereticOscillator)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(HystereticOscillator::default_params())
    }
}
