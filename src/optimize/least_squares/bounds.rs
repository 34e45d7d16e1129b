//! The box l ≤ x ≤ u (bounds possibly infinite) as both solvers keep it: points are
//! projected into it, and a variable at a bound whose gradient pushes it outward is held
//! there for the step (the active set); the projected gradient measures stationarity on
//! the box (docs/theory.md §9).

use super::error::LsqError;

/// Lower and upper bounds per variable (±∞ where open).
#[derive(Debug, Clone, PartialEq)]
pub struct BoxBounds {
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
}

/// Which side of its box a variable is held at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundSide {
    Lower,
    Upper,
}

impl BoxBounds {
    /// No bounds on n variables.
    pub fn free(n: usize) -> BoxBounds {
        BoxBounds {
            lower: vec![f64::NEG_INFINITY; n],
            upper: vec![f64::INFINITY; n],
        }
    }

    /// Checks the bounds against the start x0 (ordered, not NaN, x0 finite, same length)
    /// and returns x0 projected into the box.
    pub fn check(&self, x0: &[f64]) -> Result<Vec<f64>, LsqError> {
        let n = x0.len();
        if self.lower.len() != n || self.upper.len() != n {
            return Err(LsqError::Shape {
                what: "bounds",
                expected: (n, 2),
                got: (self.lower.len(), self.upper.len()),
            });
        }
        for i in 0..n {
            let (l, u, s) = (self.lower[i], self.upper[i], x0[i]);
            if l.is_nan() || u.is_nan() || l > u || !s.is_finite() || l == f64::INFINITY {
                return Err(LsqError::Bounds {
                    index: i,
                    lower: l,
                    upper: u,
                    start: s,
                });
            }
        }
        let mut x = x0.to_vec();
        self.project(&mut x);
        Ok(x)
    }

    /// x ← min(max(x, l), u), componentwise.
    pub fn project(&self, x: &mut [f64]) {
        for (i, v) in x.iter_mut().enumerate() {
            *v = v.max(self.lower[i]).min(self.upper[i]);
        }
    }

    /// The side variable i is at (exactly: projected points sit on their bounds), if any.
    pub fn at(&self, x: &[f64], i: usize) -> Option<BoundSide> {
        if x[i] <= self.lower[i] {
            Some(BoundSide::Lower)
        } else if x[i] >= self.upper[i] {
            Some(BoundSide::Upper)
        } else {
            None
        }
    }

    /// Whether variable i is held for the step: at a bound with the gradient g = Jᵀr of
    /// ½‖r‖² pushing it outward (descent −g points out of the box). At l = u it is held
    /// always.
    pub fn held(&self, x: &[f64], g: &[f64], i: usize) -> bool {
        if self.lower[i] == self.upper[i] {
            return true;
        }
        match self.at(x, i) {
            Some(BoundSide::Lower) => g[i] >= 0.0,
            Some(BoundSide::Upper) => g[i] <= 0.0,
            None => false,
        }
    }

    /// The indices of the variables free for the step (not [`held`](Self::held)).
    pub fn free_set(&self, x: &[f64], g: &[f64]) -> Vec<usize> {
        (0..x.len()).filter(|&i| !self.held(x, g, i)).collect()
    }

    /// ‖P(g)‖∞: the gradient with the components of held variables zeroed (zero exactly
    /// at a stationary point of the box-constrained problem).
    pub fn projected_gradient_norm(&self, x: &[f64], g: &[f64]) -> f64 {
        (0..x.len())
            .filter(|&i| !self.held(x, g, i))
            .fold(0.0, |s, i| s.max(g[i].abs()))
    }
}
