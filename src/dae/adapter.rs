//! [`Dae`]: a hybrid DAE as a [`HybridSystem`] (the reduced formulation of theory.md §6).
//!
//! The state is `x = (y, y*)`: the differential states and the memory, which is constant
//! between transitions (`ẏ* = 0`) and set by [`DaeSystem::memory_update`] at each one. The
//! algebraic states are not integrated: at every evaluation they are solved from the mode's
//! algebraic equations ([`super::algebraic`]), with exact derivatives by the implicit
//! function theorem. Every part of theory.md §2–§4 (forward and adjoint sensitivities, the
//! jump at events, τ) then applies unchanged; seed 001's DAE transfer conditions are what
//! this reduction gives (`tests/dae.rs` checks them on one event).

use super::algebraic::{self, Solved, Where};
use super::cache;
use super::system::{DaeIndex, DaeSystem, Point};
use super::transition::{self, Names};
use crate::error::ModelError;
use crate::model::{Dims, GuardInfo, HybridSystem, Scalar, VjpArgs, VjpOut};

/// Start values are consistent when the algebraic residual (index 1: `k` at prescribed z0;
/// index 2: the constraint `k(y0)`) is below this relative to `1 + |y0|_∞`.
pub const CONSISTENCY_TOL: f64 = 1e-9;

/// A [`DaeSystem`] usable wherever a [`HybridSystem`] is.
#[derive(Debug, Clone)]
pub struct Dae<S: DaeSystem> {
    sys: S,
    ny: usize,
    nz: usize,
    n_out: usize,
    modes: Vec<String>,
    guards: Vec<GuardInfo>,
    /// The identity under which this wrapper's solves are cached ([`cache`]).
    id: u64,
    /// Algebraic start values given by the user (a problem file's `initial_algebraic`),
    /// in place of [`DaeSystem::initial_algebraic`]'s; checked, never replaced.
    z0: Option<Vec<f64>>,
}

impl<S: DaeSystem> Dae<S> {
    pub fn new(sys: S) -> Self {
        let dims = sys.dims();
        Dae {
            ny: dims.differential.len(),
            nz: dims.algebraic.len(),
            n_out: dims.outputs.len(),
            id: cache::next_id(),
            modes: dims.modes,
            guards: dims.guards,
            sys,
            z0: None,
        }
    }

    /// Prescribes the algebraic start values `z0` (index 1): the start is checked against
    /// the start mode's algebraic equations at them, and inconsistent values are
    /// [`ModelError::Inconsistent`] (residual, mode, time), never silently replaced.
    pub fn with_initial_algebraic(mut self, z0: Vec<f64>) -> Self {
        self.z0 = Some(z0);
        self
    }

    /// The wrapped system.
    pub fn inner(&self) -> &S {
        &self.sys
    }

    fn mode_name(&self, mode: usize) -> &str {
        self.modes.get(mode).map_or("?", |s| s.as_str())
    }

    /// The algebraic states at a state `x = (y, y*)` of `mode`: the real solve (shared by
    /// the flow, outputs and guards at the same point, `cache.rs`), then the correction
    /// that carries the scalar's derivatives (`algebraic::correct`).
    pub fn algebraic<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], p: &[D],
    ) -> Result<Vec<D>, ModelError> {
        if self.nz == 0 {
            return Ok(Vec::new());
        }
        let re = |v: &[D]| v.iter().map(|a| a.re()).collect::<Vec<f64>>();
        let solved = self.solved(mode, t.re(), &re(x), &re(p))?;
        let (y, memory) = x.split_at(self.ny);
        algebraic::correct(&self.sys, mode, t, y, memory, p, &solved)
    }

    /// The converged real algebraic states at a real point (cached per thread).
    fn solved(&self, mode: usize, t: f64, x: &[f64], p: &[f64]) -> Result<Solved, ModelError> {
        cache::get_or_solve(self.id, mode, t, x, p, || {
            let (y, memory) = x.split_at(self.ny);
            let at = Where {
                mode_name: self.mode_name(mode),
            };
            algebraic::solve_real(&self.sys, mode, t, y, memory, p, &at)
        })
    }

    /// The constraint residuals at a state: `(|k|_∞, |invariants|_∞)` — for an index-2
    /// system the velocity-level constraint and the position-level invariants it keeps
    /// only implicitly (their drift); zeros for index 1.
    pub fn constraint_residuals(
        &self, mode: usize, t: f64, x: &[f64], p: &[f64],
    ) -> Result<(f64, f64), ModelError> {
        if self.sys.index() == DaeIndex::One {
            return Ok((0.0, 0.0));
        }
        let z = self.algebraic(mode, t, x, p)?;
        let (y, memory) = x.split_at(self.ny);
        let at = Point {
            t,
            y,
            z: &z,
            memory,
            p,
        };
        let mut k = vec![0.0; z.len()];
        self.sys.algebraic(mode, at, &mut k)?;
        let inv = self.sys.invariants(mode, at);
        let max = |v: &[f64]| v.iter().fold(0.0f64, |m, a| m.max(a.abs()));
        Ok((max(&k), max(&inv)))
    }

    /// Checks the start values against the start mode's equations (see [`CONSISTENCY_TOL`]).
    fn check_consistent(
        &self, mode: usize, t0: f64, y: &[f64], memory: &[f64], p: &[f64],
    ) -> Result<(), ModelError> {
        let scale = 1.0 + y.iter().fold(0.0f64, |m, a| m.max(a.abs()));
        let tolerance = CONSISTENCY_TOL * scale;
        let given = self.z0.clone().or_else(|| self.sys.initial_algebraic(p));
        let (what, z) = match (self.sys.index(), given) {
            (DaeIndex::Two, _) => ("the constraint k(y0)", vec![0.0; self.nz]),
            (DaeIndex::One, Some(z0)) => ("the algebraic equations at the prescribed z0", z0),
            (DaeIndex::One, None) => return Ok(()),
        };
        let mut k = vec![0.0; z.len()];
        let at = Point {
            t: t0,
            y,
            z: &z,
            memory,
            p,
        };
        self.sys.algebraic(mode, at, &mut k)?;
        let residual = k.iter().fold(0.0f64, |m, a| m.max(a.abs()));
        if !(residual <= tolerance) {
            return Err(ModelError::Inconsistent {
                what: what.to_string(),
                mode: self.mode_name(mode).to_string(),
                t: t0,
                residual,
                tolerance,
            });
        }
        Ok(())
    }
}

impl<S: DaeSystem> HybridSystem for Dae<S> {
    /// The states `(y, y*)`; the outputs: the algebraic states first, then the system's
    /// own. A DAE takes no controls.
    fn dims(&self) -> Dims {
        let d = self.sys.dims();
        let mut states = d.differential;
        states.extend(d.memory);
        let mut outputs = d.algebraic;
        outputs.extend(d.outputs);
        Dims::new(states, d.params)
            .modes(d.modes)
            .guards(d.guards)
            .outputs(outputs)
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        self.sys.guard_active(mode, k)
    }
    fn initial_mode(&self, p: &[f64]) -> usize {
        self.sys.initial_mode(p)
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        self.initial_state_at(0.0, p)
    }
    /// `(y0, y*0)`, checked against the start mode's equations at `t0`: inconsistent user
    /// data is an error naming the residual, the mode and the time.
    fn initial_state_at<D: Scalar>(&self, t0: f64, p: &[D]) -> Result<Vec<D>, ModelError> {
        let y0 = self.sys.initial_differential(p)?;
        let memory = self.sys.initial_memory(&y0, p);
        let re = |v: &[D]| v.iter().map(|a| a.re()).collect::<Vec<f64>>();
        let pr = re(p);
        let mode = self.sys.initial_mode(&pr);
        self.check_consistent(mode, t0, &re(&y0), &re(&memory), &pr)?;
        let mut x = y0;
        x.extend(memory);
        Ok(x)
    }
    fn flow<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let z = self.algebraic(mode, t, x, p)?;
        let (y, memory) = x.split_at(self.ny);
        let (dy, dmemory) = dx.split_at_mut(self.ny);
        self.sys.flow(
            mode,
            Point {
                t,
                y,
                z: &z,
                memory,
                p,
            },
            dy,
        )?;
        dmemory.iter_mut().for_each(|d| *d = D::zero());
        Ok(())
    }
    /// The guard at the algebraic states of the point; NaN when they cannot be solved
    /// there (the flow at the same point reports why).
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        match self.algebraic(mode, t, x, p) {
            Ok(z) => {
                let (y, memory) = x.split_at(self.ny);
                self.sys.guard(
                    mode,
                    k,
                    Point {
                        t,
                        y,
                        z: &z,
                        memory,
                        p,
                    },
                )
            }
            Err(_) => D::from(f64::NAN),
        }
    }
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let (y, memory) = x.split_at(self.ny);
        let names = Names {
            mode: self.mode_name(mode),
            guard: self.guards.get(k).map_or("?", |g| g.name.as_str()),
        };
        let after = transition::apply(&self.sys, mode, k, t, y, memory, p, &names)?;
        let mut x = after.y;
        x.extend(after.memory);
        Ok((after.mode, x))
    }
    /// By the implicit function theorem at one real solve of z (`dae::vjp`), not one
    /// dual Newton correction per input direction.
    fn flow_vjp(&self, args: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError> {
        let z = if self.nz == 0 {
            Vec::new()
        } else {
            self.solved(args.mode, args.t, args.x, args.p)?.z
        };
        super::vjp::flow_vjp(&self.sys, self.ny, self.n_out, &z, args, out)
    }
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let z = self.algebraic(mode, t, x, p)?;
        let (y, memory) = x.split_at(self.ny);
        let (zs, rest) = out.split_at_mut(z.len());
        zs.copy_from_slice(&z);
        self.sys.outputs(
            mode,
            Point {
                t,
                y,
                z: &z,
                memory,
                p,
            },
            rest,
        )
    }
}
