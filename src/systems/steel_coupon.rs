//! A steel coupon under prescribed cyclic strain, Menegotto–Pinto law with memory
//! (reference-models §9; a system with memory, seed 001 §4, theory.md §6). Our own
//! example: the seed's numbers are not in its extracted text.
//!
//! The strain is prescribed, `ε(t) = (ε_a + ε_b t) sin(2π t)`; the stress σ is the one
//! algebraic state (`0 = σ − σ_MP(ε(t); memory)`, index 1, `k_z = 1`); there is no
//! differential state. The mode is the loading direction s (`loading` s = +1, `unloading`
//! s = −1); a reversal is where `ε̇(t)` changes sign (a guard on t alone, `peak` falling in
//! `loading`, `valley` rising in `unloading`). The memory `(ε_r, σ_r, ε_0, σ_0, R)` is the
//! reversal point, the intersection of the asymptotes and the curvature of the branch:
//!
//! ```text
//! ε* = (ε − ε_r)/(ε_0 − ε_r),   σ* = b ε* + (1 − b) ε* / (1 + |ε*|^R)^{1/R},
//! σ  = σ_r + σ* (σ_0 − σ_r)
//! ```
//!
//! At a reversal into direction s, with `ε_y = σ_y/E` and `(ε_r, σ_r) = (ε, σ)` there:
//!
//! ```text
//! ε_0 = (s σ_y (1 − b) − σ_r + E ε_r) / (E (1 − b)),   σ_0 = σ_r + E (ε_0 − ε_r),
//! ξ = |ε_r − ε_0,old| / ε_y,   R = R0 (1 − cR1 ξ/(cR2 + ξ)).
//! ```
//!
//! Start: `(ε_r, σ_r) = (0, 0)`, s = +1, `(ε_0, σ_0) = (ε_y, σ_y)`, R = R0.
//! Parameters `(E, sigma_y, b, R0, cR1, cR2, eps_a, eps_b)`, defaults
//! `(200000 MPa, 420 MPa, 0.01, 18, 0.925, 0.15, 0.002, 0.004)` (reference-models §9).
//! The reversal times depend on ε_a, ε_b only, never on the material.

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, DaeSettings};
use super::reversal;
use crate::dae::{Dae, DaeDims, DaeIndex, DaeSystem, Point};
use crate::error::ModelError;
use crate::model::Scalar;

/// The Menegotto–Pinto coupon (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct SteelCoupon;

/// Memory slots: the reversal point, the asymptotes' intersection, the curvature.
const EPS_R: usize = 0;
const SIG_R: usize = 1;
const EPS_0: usize = 2;
const SIG_0: usize = 3;
const R: usize = 4;

impl SteelCoupon {
    pub const PARAMS: [&'static str; 8] =
        ["E", "sigma_y", "b", "R0", "cR1", "cR2", "eps_a", "eps_b"];
    /// Reference-models §9's values: E = 200000 MPa, σ_y = 420 MPa, b = 0.01, R0 = 18,
    /// cR1 = 0.925, cR2 = 0.15, ε_a = 0.002, ε_b = 0.004.
    pub fn default_params() -> Vec<f64> {
        vec![200000.0, 420.0, 0.01, 18.0, 0.925, 0.15, 0.002, 0.004]
    }

    /// The loading direction s of a mode (`loading` +1, `unloading` −1).
    pub fn direction(mode: usize) -> f64 {
        reversal::direction(mode)
    }
}

/// The prescribed strain `ε(t) = (ε_a + ε_b t) sin(2π t)`.
pub fn strain<D: Scalar>(t: D, eps_a: D, eps_b: D) -> D {
    let w = std::f64::consts::TAU;
    (eps_a + eps_b * t) * (t * w).sin()
}

/// Its rate `ε̇(t) = ε_b sin(2π t) + 2π (ε_a + ε_b t) cos(2π t)`.
pub fn strain_rate<D: Scalar>(t: D, eps_a: D, eps_b: D) -> D {
    let w = std::f64::consts::TAU;
    eps_b * (t * w).sin() + (eps_a + eps_b * t) * (t * w).cos() * w
}

/// The branch law `σ*(ε*) = b ε* + (1 − b) ε* / (1 + |ε*|^R)^{1/R}` (reference-models §9).
/// At `ε* = 0` it is `ε*` itself, which has the same value and first derivatives (the
/// correction is `O(|ε*|^{1+R})`) and avoids `ln 0`.
pub fn normalized_stress<D: Scalar>(eps_star: D, b: D, r: D) -> D {
    let a = eps_star.abs();
    if a.re() == 0.0 {
        return eps_star;
    }
    let pow_r = (r * a.ln()).exp();
    let root = ((pow_r + 1.0).ln() / r).exp();
    b * eps_star + (D::one() - b) * eps_star / root
}

/// σ on the branch of the memory `(ε_r, σ_r, ε_0, σ_0, R)` at strain ε.
pub fn branch_stress<D: Scalar>(eps: D, memory: &[D], b: D) -> D {
    let eps_star = (eps - memory[EPS_R]) / (memory[EPS_0] - memory[EPS_R]);
    memory[SIG_R] + normalized_stress(eps_star, b, memory[R]) * (memory[SIG_0] - memory[SIG_R])
}

impl DaeSystem for SteelCoupon {
    fn index(&self) -> DaeIndex {
        DaeIndex::One
    }
    fn dims(&self) -> DaeDims {
        DaeDims::new([], ["sigma"], Self::PARAMS)
            .memory(["eps_r", "sigma_r", "eps_0", "sigma_0", "R"])
            .modes(["loading", "unloading"])
            .guards(reversal::guards("peak", "valley"))
            .outputs(["eps", "R"])
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        reversal::guard_active(mode, k)
    }
    fn initial_differential<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(Vec::new())
    }
    /// `(ε_r, σ_r, ε_0, σ_0, R) = (0, 0, σ_y/E, σ_y, R0)`.
    fn initial_memory<D: Scalar>(&self, _y0: &[D], p: &[D]) -> Vec<D> {
        vec![D::zero(), D::zero(), p[1] / p[0], p[1], p[3]]
    }
    fn algebraic_guess(
        &self, _mode: usize, t: f64, _y: &[f64], memory: &[f64], p: &[f64],
    ) -> Vec<f64> {
        vec![branch_stress(strain(t, p[6], p[7]), memory, p[2])]
    }
    fn flow<D: Scalar>(
        &self, _mode: usize, _at: Point<'_, D>, _dy: &mut [D],
    ) -> Result<(), ModelError> {
        Ok(())
    }
    /// `k = σ − σ_MP(ε(t); memory)`.
    fn algebraic<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, res: &mut [D],
    ) -> Result<(), ModelError> {
        let p = at.p;
        let eps = strain(at.t, p[6], p[7]);
        res[0] = at.z[0] - branch_stress(eps, at.memory, p[2]);
        Ok(())
    }
    /// `ε̇(t)` for both guards (`peak` falls through 0, `valley` rises through 0).
    fn guard<D: Scalar>(&self, _mode: usize, _k: usize, at: Point<'_, D>) -> D {
        strain_rate(at.t, at.p[6], at.p[7])
    }
    /// The direction flips; the memory is updated by [`DaeSystem::memory_update`].
    fn transition<D: Scalar>(
        &self, mode: usize, _k: usize, _at: Point<'_, D>,
    ) -> Result<crate::dae::Transition<D>, ModelError> {
        Ok(crate::dae::Transition::Explicit {
            mode: reversal::flipped(mode),
            y: Vec::new(),
        })
    }
    /// The reversal point, the new asymptotes' intersection and R (the module doc).
    fn memory_update<D: Scalar>(
        &self, _mode: usize, _k: usize, new_mode: usize, _y_after: &[D], before: Point<'_, D>,
    ) -> Vec<D> {
        let p = before.p;
        let (e, sigma_y, b, r0, cr1, cr2) = (p[0], p[1], p[2], p[3], p[4], p[5]);
        let s = Self::direction(new_mode);
        let eps_y = sigma_y / e;
        let eps_r = strain(before.t, p[6], p[7]);
        let sig_r = before.z[0];
        let one_b = D::one() - b;
        let eps_0 = (sigma_y * one_b * s - sig_r + e * eps_r) / (e * one_b);
        let sig_0 = sig_r + e * (eps_0 - eps_r);
        let xi = (eps_r - before.memory[EPS_0]).abs() / eps_y;
        let r = r0 * (D::one() - cr1 * xi / (cr2 + xi));
        vec![eps_r, sig_r, eps_0, sig_0, r]
    }
    fn outputs<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = strain(at.t, at.p[6], at.p[7]);
        out[1] = at.memory[R];
        Ok(())
    }
}

impl BuiltinSystem for Dae<SteelCoupon> {
    type Settings = DaeSettings;
    fn build(settings: &DaeSettings) -> Result<Self, BuildError> {
        settings.build(SteelCoupon)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(SteelCoupon::default_params())
    }
}
