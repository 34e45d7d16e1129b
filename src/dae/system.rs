//! The model interface for hybrid differential-algebraic systems (seed 001; theory.md §6).
//!
//! A hybrid DAE has differential states `y`, algebraic states `z`, a memory `y*` (values
//! captured at the last transition, constant until the next one), parameters `p`, and in
//! each mode either
//!
//! ```text
//! index 1:  ẏ = f(y, z, y*, p, t),   0 = k(y, z, y*, p, t)   (k_z nonsingular)
//! index 2:  ẏ = f(y, z, y*, p, t),   0 = k(y, y*, p, t)      (k_y f_z nonsingular)
//! ```
//!
//! Guards `g(y, z, y*, p, t)` may depend on the algebraic states. A transition maps the
//! state before the event to the state after it, explicitly (`y⁺ = R(y⁻, z⁻, y*, p, t)`) or
//! through an implicit transition function `T(y⁺, y⁻, z⁻, y*, p, t) = 0` (seed (16c), (24))
//! that the library solves by Newton. The algebraic states after a transition always come
//! from the new mode's algebraic equations (consistent re-initialization); the memory after
//! it from [`DaeSystem::memory_update`] (by default: the memory is kept).
//!
//! Like [`crate::HybridSystem`], every function is generic over the [`Scalar`], written
//! once with ordinary arithmetic; every derivative the sensitivities need (including those
//! of z and of an implicit transition, by the implicit function theorem) is exact.

use super::DaeDims;
use crate::error::ModelError;
use crate::model::Scalar;

/// The differential index of the system's algebraic equations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DaeIndex {
    /// Semi-explicit index 1: `0 = k(y, z, y*, p, t)` with `k_z` nonsingular.
    One,
    /// Hessenberg index 2: `0 = k(y, y*, p, t)` (no z) with `k_y f_z` nonsingular; z is
    /// fixed by the hidden constraint `k_y f + k_t = 0`.
    Two,
}

/// What a transition does to the differential states.
#[derive(Debug, Clone)]
pub enum Transition<D> {
    /// `y⁺` given explicitly, and the next mode.
    Explicit { mode: usize, y: Vec<D> },
    /// `y⁺` solves [`DaeSystem::transition_residual`]` = 0` (n_y equations), by Newton from
    /// `guess` (real values: by default the state before the event is a good start).
    Implicit { mode: usize, guess: Vec<f64> },
}

/// The values a DAE function sees at one point: `y`, `z`, the memory `y*`, `p`, `t`.
#[derive(Debug, Clone, Copy)]
pub struct Point<'a, D> {
    pub t: D,
    pub y: &'a [D],
    pub z: &'a [D],
    pub memory: &'a [D],
    pub p: &'a [D],
}

/// A hybrid differential-algebraic system (theory.md §6, seed 001). Wrap it in
/// [`super::Dae`] to use it with every simulation, sensitivity method and optimizer of the
/// library: the wrapper solves z by Newton inside every evaluation (the reduced formulation
/// of theory.md §6), carries the memory as states that are constant between transitions,
/// and solves implicit transitions.
pub trait DaeSystem: Send + Sync {
    /// The index of the algebraic equations (the same in every mode).
    fn index(&self) -> DaeIndex;
    /// The names of its differential and algebraic states, memory, parameters, modes,
    /// guards and further outputs ([`DaeDims`]).
    fn dims(&self) -> DaeDims;
    /// Whether guard `k` is watched in `mode` (all by default).
    fn guard_active(&self, _mode: usize, _k: usize) -> bool {
        true
    }
    /// The start mode.
    fn initial_mode(&self, _p: &[f64]) -> usize {
        0
    }
    /// The start values `y0(p)`. For index 2 they must satisfy `k(y0) = 0` (checked).
    fn initial_differential<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError>;
    /// Algebraic start values the user prescribes, if any (`None` by default: z0 is solved
    /// from the algebraic equations). Prescribed values are checked against them: an
    /// inconsistent z0 is an error, never silently replaced.
    fn initial_algebraic(&self, _p: &[f64]) -> Option<Vec<f64>> {
        None
    }
    /// The memory at the start (zeros by default).
    fn initial_memory<D: Scalar>(&self, _y0: &[D], _p: &[D]) -> Vec<D> {
        vec![D::zero(); self.dims().memory.len()]
    }
    /// A start value for the Newton iteration on z at a point (zeros by default). z is
    /// solved afresh at every evaluation; a good guess saves iterations, a linear `k`
    /// needs none.
    fn algebraic_guess(
        &self, _mode: usize, _t: f64, _y: &[f64], _memory: &[f64], _p: &[f64],
    ) -> Vec<f64> {
        vec![0.0; self.dims().algebraic.len()]
    }
    /// The differential equations `ẏ = f`, written into `dy`.
    fn flow<D: Scalar>(
        &self, mode: usize, at: Point<'_, D>, dy: &mut [D],
    ) -> Result<(), ModelError>;
    /// The algebraic equations, written into `res` (n_z values): index 1 `k(y, z, y*, p, t)`;
    /// index 2 the constraint `k(y, y*, p, t)` (`at.z` is then not to be used).
    fn algebraic<D: Scalar>(
        &self, mode: usize, at: Point<'_, D>, res: &mut [D],
    ) -> Result<(), ModelError>;
    /// The guard function `g_{m,k}(y, z, y*, p, t)`.
    fn guard<D: Scalar>(&self, mode: usize, k: usize, at: Point<'_, D>) -> D;
    /// The transition at guard `k` of `mode`, at the state before the event (identity by
    /// default: a pure mode switch that keeps the mode and y).
    fn transition<D: Scalar>(
        &self, mode: usize, _k: usize, at: Point<'_, D>,
    ) -> Result<Transition<D>, ModelError> {
        Ok(Transition::Explicit {
            mode,
            y: at.y.to_vec(),
        })
    }
    /// The implicit transition function `T(y⁺, y⁻, z⁻, y*, p, t)` (n_y values into `res`)
    /// of a transition declared [`Transition::Implicit`]; `before` is the point before the
    /// event. Not called otherwise.
    fn transition_residual<D: Scalar>(
        &self, _mode: usize, _k: usize, _y_after: &[D], _before: Point<'_, D>, _res: &mut [D],
    ) -> Result<(), ModelError> {
        Err(ModelError::Unsupported {
            what: "this system declares no implicit transition".into(),
        })
    }
    /// The memory after a transition from `mode` through guard `k` into `new_mode`, given
    /// the point before the event and `y⁺` (the memory is kept by default). The seed's
    /// memory `y*⁺ = (y⁺, z⁻)` is one choice; laws with derived history variables (a
    /// reversal point and the asymptotes through it) compute them here.
    fn memory_update<D: Scalar>(
        &self, _mode: usize, _k: usize, _new_mode: usize, _y_after: &[D], before: Point<'_, D>,
    ) -> Vec<D> {
        before.memory.to_vec()
    }
    /// Further outputs (after the algebraic states), written into `out`.
    fn outputs<D: Scalar>(
        &self, _mode: usize, _at: Point<'_, D>, _out: &mut [D],
    ) -> Result<(), ModelError> {
        Ok(())
    }
    /// Position-level invariants that the index-2 form keeps only implicitly (e.g. the
    /// rod length behind a velocity constraint): their drift is reported, never imposed
    /// (none by default).
    fn invariants<D: Scalar>(&self, _mode: usize, _at: Point<'_, D>) -> Vec<D> {
        Vec::new()
    }
}
