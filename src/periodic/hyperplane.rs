//! A hyperplane Poincaré section `n·x = c`, crossed in one direction (the system the
//! return map runs, with the hyperplane as one more guard, is in `section_guard.rs`).
//!
//! The hyperplane is the guard `h(x) = n·x − c` (active in the section's mode only) with
//! the identity reset. At a crossing, the jump formula of theory.md §3 has `R_x = I`,
//! `R_t = 0` and `f⁺ = f⁻`, so its saltation matrix is `Ξ = I − (f⁻ − f⁺) h_x / ḣ = I`:
//! the crossings inside a period (period-k orbits) leave the sensitivities unchanged, and
//! the last one, where the run stops (`EventOptions::stop_after`), gives
//! `DP = S⁻ + f⁻ τ`, `τ = −h_x S⁻ / ḣ = −nᵀ S⁻ / (n·f⁻)` ([`super::map`]). The system's
//! own guards keep firing in between (impacts inside the period) with their own jumps.
//!
//! On the hyperplane, with `n − 1` free components and the remaining one `d` (its
//! coefficient `n_d ≠ 0`), the section is charted by `x(y) = Σ_j y_j e_{f_j} + x_d(y) e_d`,
//! `x_d = (c − Σ_j n_{f_j} y_j) / n_d`; its tangent map is [`Hyperplane::chart`].

use crate::model::{Direction, Scalar};
use nalgebra::DMatrix;

/// The direction in which the state crosses the hyperplane to return to the section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Crossing {
    /// `n·x − c` from negative to positive.
    Rising,
    /// `n·x − c` from positive to negative.
    Falling,
}

impl Crossing {
    /// The guard direction of the crossing.
    pub fn direction(self) -> Direction {
        match self {
            Crossing::Rising => Direction::Rising,
            Crossing::Falling => Direction::Falling,
        }
    }
}

/// The section `{x : n·x = c}` crossed in `crossing`'s direction.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hyperplane {
    /// `n`, one coefficient per state (not all zero).
    pub normal: Vec<f64>,
    /// `c`.
    pub offset: f64,
    pub crossing: Crossing,
}

/// The name of the hyperplane's guard in event lists.
pub const GUARD_NAME: &str = "hyperplane";

impl Hyperplane {
    /// `h(x) = n·x − c`.
    pub fn value<D: Scalar>(&self, x: &[D]) -> D {
        let mut h = D::from(-self.offset);
        for (xi, &ni) in x.iter().zip(&self.normal) {
            if ni != 0.0 {
                h += *xi * ni;
            }
        }
        h
    }

    /// The component solved from `n·x = c` when `free` lists all the others, if its
    /// coefficient is nonzero (module docs).
    pub fn dependent(&self, free: &[usize]) -> Option<usize> {
        let n = self.normal.len();
        if free.len() + 1 != n {
            return None;
        }
        (0..n)
            .find(|i| !free.contains(i))
            .filter(|&d| self.normal[d] != 0.0)
    }

    /// The chart's tangent map `E` (n × (n − 1)): column `j` is `e_{f_j} − (n_{f_j}/n_d) e_d`
    /// (the direction that moves free component `f_j` by one and stays on the
    /// hyperplane). `None` unless `free` lists `n − 1` components and the remaining one has
    /// a nonzero coefficient.
    pub fn chart(&self, free: &[usize]) -> Option<DMatrix<f64>> {
        let d = self.dependent(free)?;
        let mut e = DMatrix::zeros(self.normal.len(), free.len());
        for (j, &f) in free.iter().enumerate() {
            e[(f, j)] = 1.0;
            e[(d, j)] = -self.normal[f] / self.normal[d];
        }
        Some(e)
    }
}
