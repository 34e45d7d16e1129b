//! θ as the optimizer sees it: each entry's value, whether it is optimized, its bounds, and
//! the transform that maps it to an unconstrained variable.

/// How a bounded parameter is mapped to an unconstrained optimization variable.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Transform {
    /// No bounds: z = x / scale.
    Identity { scale: f64 },
    /// x > lower: z = ln(x − lower).
    Log { lower: f64 },
    /// x < upper: z = ln(upper − x).
    LogUpper { upper: f64 },
    /// lower < x < upper: z = logit((x − lower)/(upper − lower)).
    Logit { lower: f64, upper: f64 },
}

impl Transform {
    /// From the bounds (documented choice: bounds imply the transform).
    pub fn from_bounds(lower: Option<f64>, upper: Option<f64>, value: f64) -> Transform {
        match (lower, upper) {
            (None, None) => Transform::Identity {
                scale: value.abs().max(1.0),
            },
            (Some(l), None) => Transform::Log { lower: l },
            (None, Some(u)) => Transform::LogUpper { upper: u },
            (Some(l), Some(u)) => Transform::Logit { lower: l, upper: u },
        }
    }
    /// z = T(x)
    pub fn to_z(&self, x: f64) -> f64 {
        match *self {
            Transform::Identity { scale } => x / scale,
            Transform::Log { lower } => (x - lower).ln(),
            Transform::LogUpper { upper } => (upper - x).ln(),
            Transform::Logit { lower, upper } => {
                let s = (x - lower) / (upper - lower);
                (s / (1.0 - s)).ln()
            }
        }
    }
    /// x = T⁻¹(z) and dx/dz.
    pub fn to_x(&self, z: f64) -> (f64, f64) {
        match *self {
            Transform::Identity { scale } => (z * scale, scale),
            Transform::Log { lower } => {
                let e = z.exp();
                (lower + e, e)
            }
            Transform::LogUpper { upper } => {
                let e = z.exp();
                (upper - e, -e)
            }
            Transform::Logit { lower, upper } => {
                let s = 1.0 / (1.0 + (-z).exp());
                (lower + (upper - lower) * s, (upper - lower) * s * (1.0 - s))
            }
        }
    }
}

/// A parameter of θ as the problem sets it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ThetaEntry {
    pub name: String,
    pub value: f64,
    pub optimize: bool,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub transform: Transform,
}
