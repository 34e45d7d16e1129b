//! A half-wave rectifier with a smoothing capacitor: a hybrid DAE of index 1 whose guard
//! is on the algebraic state (reference-models §7; our own example — seed 001's example
//! numbers are not in its extracted text).
//!
//! A sine source `v_s(t) = V sin(ω t + φ0)` feeds a capacitor C through a diode with
//! on-resistance r; a load R sits across C. Differential state `v_C`, algebraic state
//! `i_D` (the diode current):
//!
//! ```text
//! on:   C v̇_C = i_D − v_C/R,   0 = r i_D − (v_s(t) − v_C)
//! off:  C v̇_C = −v_C/R,        0 = i_D
//! ```
//!
//! on → off when `i_D` falls through 0; off → on when `v_s − v_C` rises through 0. `v_C`
//! is continuous; `i_D` follows from the new mode's algebraic equation. Parameters
//! `(V, omega, phi0, r, R, C, vC0)`, reference values `(1, 2π, 0.3, 0.01, 1, 0.5, 0)`.

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, DaeSettings};
use crate::dae::{Dae, DaeDims, DaeIndex, DaeSystem, Point, Transition};
use crate::error::ModelError;
use crate::model::{Direction, GuardInfo, Scalar};

/// The rectifier (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct Rectifier;

/// Modes.
pub const ON: usize = 0;
pub const OFF: usize = 1;
/// Guards.
pub const DIODE_OFF: usize = 0;
pub const DIODE_ON: usize = 1;

impl Rectifier {
    /// The reference parameters `(V, ω, φ0, r, R, C, v_C0)` of reference-models §7.
    pub fn default_params() -> Vec<f64> {
        vec![1.0, 2.0 * std::f64::consts::PI, 0.3, 0.01, 1.0, 0.5, 0.0]
    }
}

/// The source voltage `V sin(ω t + φ0)`.
fn source<D: Scalar>(t: D, p: &[D]) -> D {
    p[0] * (p[1] * t + p[2]).sin()
}

impl DaeSystem for Rectifier {
    fn index(&self) -> DaeIndex {
        DaeIndex::One
    }
    fn dims(&self) -> DaeDims {
        DaeDims::new(["vC"], ["iD"], ["V", "omega", "phi0", "r", "R", "C", "vC0"])
            .modes(["on", "off"])
            .guards([
                GuardInfo::new("diode_off", Direction::Falling),
                GuardInfo::new("diode_on", Direction::Rising),
            ])
            .outputs(["vC", "vs"])
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        (mode == ON && k == DIODE_OFF) || (mode == OFF && k == DIODE_ON)
    }
    fn initial_differential<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![p[6]])
    }
    fn flow<D: Scalar>(
        &self, mode: usize, at: Point<'_, D>, dy: &mut [D],
    ) -> Result<(), ModelError> {
        let (vc, cap, load) = (at.y[0], at.p[5], at.p[4]);
        let current = if mode == ON { at.z[0] } else { D::zero() };
        dy[0] = (current - vc / load) / cap;
        Ok(())
    }
    fn algebraic<D: Scalar>(
        &self, mode: usize, at: Point<'_, D>, res: &mut [D],
    ) -> Result<(), ModelError> {
        res[0] = if mode == ON {
            at.p[3] * at.z[0] - (source(at.t, at.p) - at.y[0])
        } else {
            at.z[0]
        };
        Ok(())
    }
    fn guard<D: Scalar>(&self, _mode: usize, k: usize, at: Point<'_, D>) -> D {
        match k {
            DIODE_OFF => at.z[0],
            _ => source(at.t, at.p) - at.y[0],
        }
    }
    fn transition<D: Scalar>(
        &self, mode: usize, _k: usize, at: Point<'_, D>,
    ) -> Result<Transition<D>, ModelError> {
        let next = if mode == ON { OFF } else { ON };
        Ok(Transition::Explicit {
            mode: next,
            y: at.y.to_vec(),
        })
    }
    fn outputs<D: Scalar>(
        &self, _mode: usize, at: Point<'_, D>, out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = at.y[0];
        out[1] = source(at.t, at.p);
        Ok(())
    }
}

impl BuiltinSystem for Dae<Rectifier> {
    type Settings = DaeSettings;
    fn build(settings: &DaeSettings) -> Result<Self, BuildError> {
        settings.build(Rectifier)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(Rectifier::default_params())
    }
}
