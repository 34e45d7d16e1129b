//! A mechanism's last linearization of its flow (implicit.rs, "Reuse"): the point it was
//! taken at, the real solution there and the explicit partials, kept in the mechanism's
//! [`VjpCache`] so that repeated vector-Jacobian products at one point solve once.

use super::constraints::{Constraint, ConstraintEval};
use super::dynamics::{Accel, Dynamics, Formulation};
use crate::linalg::Lu;
use crate::model::VjpArgs;
use std::sync::Mutex;

/// The last linearization of a mechanism's flow (module docs, "Reuse"). Cloning gives an
/// empty cache; any two caches compare equal (a cache is not part of a mechanism's value).
#[derive(Default)]
pub struct VjpCache(pub(super) Mutex<Option<Box<Linearization>>>);

impl Clone for VjpCache {
    fn clone(&self) -> Self {
        VjpCache::default()
    }
}

impl PartialEq for VjpCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for VjpCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("VjpCache")
    }
}

/// Where the partials are taken: the point, bit for bit, and what else the flow reads.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Key {
    pub(super) mode: usize,
    pub(super) t: u64,
    pub(super) x: Vec<u64>,
    pub(super) u: Vec<u64>,
    pub(super) p: Vec<u64>,
    pub(super) dynamics: Dynamics,
    /// The mode's constraint set (address and length).
    pub(super) cons: (usize, usize),
}

impl Key {
    pub(super) fn of(args: &VjpArgs<'_>, dynamics: &Dynamics, cons: &[Constraint]) -> Key {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect();
        Key {
            mode: args.mode,
            t: args.t.to_bits(),
            x: bits(args.x),
            u: bits(args.u),
            p: bits(args.p),
            dynamics: *dynamics,
            cons: (cons.as_ptr() as usize, cons.len()),
        }
    }
}

/// The formulations' unknowns (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Index1,
    Penalty,
    Index2,
}

impl Kind {
    pub(super) fn of(f: Formulation) -> Kind {
        match f {
            Formulation::Index1 => Kind::Index1,
            Formulation::Penalty => Kind::Penalty,
            Formulation::Index2 => Kind::Index2,
        }
    }
    /// The number of unknowns `s` with n coordinates and m constraint rows.
    pub(super) fn unknowns(self, n: usize, m: usize) -> usize {
        match self {
            Kind::Index1 => n + m,
            Kind::Penalty => n,
            Kind::Index2 => n + 2 * m,
        }
    }
}

/// The real solution at the point: the pieces of `R`, the unknowns, the flow's readings
/// and (once asked for) the outputs.
pub(super) struct Primal {
    pub(super) mass: Vec<f64>,
    pub(super) force: Vec<f64>,
    pub(super) ev: ConstraintEval<f64>,
    pub(super) s: Vec<f64>,
    pub(super) acc: Accel<f64>,
    /// `K` factored (index 1, penalty: `R_s = −K`).
    pub(super) k_lu: Option<Lu>,
    pub(super) y: Option<Vec<f64>>,
}

/// The explicit partials of `R`, `g`, `h` along all directions `d` of `(s, q, v, p)`, for
/// the outputs flagged in `wanted`, as their nonzero entries `(row, d, value)` (`g` is
/// mostly a selection, the weighted outputs are few, `R_z` has structural zeros).
#[derive(Default)]
pub(super) struct Partials {
    pub(super) wanted: Vec<bool>,
    pub(super) nd: usize,
    /// Nonzero entries of `∂g/∂(s, z)` and `∂h/∂(s, z)` (rows: g's, then h's).
    pub(super) gh: Vec<(usize, usize, f64)>,
    /// Nonzero entries of `R_z` (`d` counted from the first `z` direction).
    pub(super) rz: Vec<(usize, usize, f64)>,
    /// `R_s` (nk × nk, row-major; index 2 only) and `R_sᵀ` factored.
    pub(super) rs: Vec<f64>,
    pub(super) rs_t: Option<Lu>,
}

/// A point's solution and partials (module docs).
pub(super) struct Linearization {
    pub(super) key: Key,
    pub(super) primal: Primal,
    pub(super) partials: Option<Partials>,
    /// Buffers of an earlier point's partials, and the products' scratch.
    pub(super) spare: Partials,
    pub(super) scratch: Vec<f64>,
}
