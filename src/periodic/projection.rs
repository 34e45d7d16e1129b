//! A guess slightly off the section, moved onto it before Newton's method starts.
//!
//! A start on the firing side of the section's guard (`g(x) ≠ 0` there: the period would
//! end at once, `map.rs`'s check) is refused when it misses by much, but a small miss is
//! what a guess written for nearby parameters has (the compass gait's guess, on the
//! section θ_ns + θ_s = 2·slope at the shipped 3°, misses it by 2.8e-4 at a slope 0.3 %
//! steeper). Such a guess is projected onto `g = 0` by Newton's method along the guard's
//! gradient restricted to the components that are not free on the section (the ones the
//! section fixes; all of them if the guard does not depend on those):
//!
//! ```text
//! x ← x − g(x) ∇_c g / |∇_c g|²     (the minimum-norm step to g = 0 to first order)
//! ```
//!
//! until `|g| ≤ zero_tol`. "Small" is `|g| ≤` [`MAX_MISS`]` · (1 + |x|∞)`: 1 % of the
//! state's scale, well inside the distance at which a rough guess still starts Newton's
//! method on the return map (the shipped guesses are 0.05–0.8 away from their orbits)
//! yet far above rounding; a larger miss is a guess for another section, another
//! parameter range or another state order, which silent moving would hide.

use super::map::{miss, MapOptions};
use super::section::Section;
use super::section_guard::WithSectionGuard;
use crate::error::Error;
use crate::model::{guard_jacobian, HybridSystem};
use serde::Serialize;

/// The largest miss moved onto the section, relative to `1 + |x|∞` (module docs).
pub const MAX_MISS: f64 = 1e-2;

/// Newton steps of the projection; a guard that needs more is not nearly linear there.
const MAX_STEPS: usize = 8;

/// A guess moved onto the section: `orbit.json`'s and `periodic --json`'s
/// `guess_projection`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuessProjection {
    /// The section's guard.
    pub guard: String,
    /// Its value at the guess (the miss).
    pub miss: f64,
    /// The guess as given.
    pub guess: Vec<f64>,
    /// The start on the section that Newton's method began from.
    pub start: Vec<f64>,
}

const STUCK_HINT: &str =
    "the projection onto the guard's surface did not converge; give a state on the section";

/// `x` itself when it is on the section; moved onto it when it misses by little (module
/// docs), with the record of the move; refused when it misses by much.
pub fn onto_section<S: HybridSystem>(
    sys: &S, sec: &Section, opts: &MapOptions, p: &[f64], x: &[f64],
) -> Result<(Vec<f64>, Option<GuessProjection>), Error> {
    let aug = WithSectionGuard::new(sys, sec);
    let Some(m) = miss(&aug, sec, opts, p, x) else {
        return Ok((x.to_vec(), None));
    };
    let scale = 1.0 + x.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    if !(m.value.abs() <= MAX_MISS * scale) {
        return Err(m.refused(x, m.far_hint));
    }
    let k = aug.section_guard;
    let fixed: Vec<usize> = (0..x.len()).filter(|i| !sec.free.contains(i)).collect();
    let mut y = x.to_vec();
    for _ in 0..MAX_STEPS {
        let j =
            guard_jacobian(&aug, sec.mode, k, 0.0, &y, &[], p).map_err(|source| Error::Model {
                t: 0.0,
                mode: aug.dims().modes.get(sec.mode).cloned().unwrap_or_default(),
                source,
            })?;
        let g = j.value[0];
        if g.abs() <= m.zero_tol {
            break;
        }
        let grad = |i: usize| j.x[(0, i)];
        let along: Vec<usize> = if fixed.iter().any(|&i| grad(i) != 0.0) {
            fixed.clone()
        } else {
            (0..y.len()).collect()
        };
        let norm2: f64 = along.iter().map(|&i| grad(i) * grad(i)).sum();
        if !(norm2 > 0.0) {
            return Err(m.refused(x, STUCK_HINT));
        }
        for &i in &along {
            y[i] -= g * grad(i) / norm2;
        }
    }
    if miss(&aug, sec, opts, p, &y).is_some() {
        return Err(m.refused(x, STUCK_HINT));
    }
    let record = GuessProjection {
        guard: m.guard,
        miss: m.value,
        guess: x.to_vec(),
        start: y.clone(),
    };
    Ok((y, Some(record)))
}
