//! θ as the optimizer sees it: each entry's value, whether it is optimized, and its bounds.
//! The bounds live in one place, the entry: the transform that maps the entry to an
//! unconstrained variable is derived from them ([`ThetaEntry::transform`]), so the
//! optimizer honours every bound by construction, whichever solver runs.

use crate::error::Error;

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
    /// x = T⁻¹(z) and dx/dz. x never leaves the bounds: a Log/LogUpper/Logit image is
    /// clamped to them against round-off (it reaches a bound only when e^z under- or
    /// overflows).
    pub fn to_x(&self, z: f64) -> (f64, f64) {
        match *self {
            Transform::Identity { scale } => (z * scale, scale),
            Transform::Log { lower } => {
                let e = z.exp();
                ((lower + e).max(lower), e)
            }
            Transform::LogUpper { upper } => {
                let e = z.exp();
                ((upper - e).min(upper), -e)
            }
            Transform::Logit { lower, upper } => {
                let s = 1.0 / (1.0 + (-z).exp());
                let x = (lower + (upper - lower) * s).clamp(lower, upper);
                (x, (upper - lower) * s * (1.0 - s))
            }
        }
    }
}

/// A parameter of θ as the problem sets it: its value, whether the optimizer moves it, and
/// its bounds (open: the value stays strictly inside). There is no separate transform to
/// keep in step with the bounds: [`ThetaEntry::transform`] derives it.
///
/// ```
/// use hybridopt::prelude::*;
///
/// let k = ThetaEntry::free("k", 2.0).with_bounds(Some(0.0), Some(10.0));
/// assert!(k.check().is_ok());
/// assert_eq!(k.transform(), Transform::Logit { lower: 0.0, upper: 10.0 });
/// let outside = ThetaEntry::free("k", 12.0).with_bounds(Some(0.0), Some(10.0));
/// assert!(outside.check().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ThetaEntry {
    pub name: String,
    pub value: f64,
    pub optimize: bool,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

impl ThetaEntry {
    /// An entry the optimizer leaves at `value`.
    pub fn fixed(name: &str, value: f64) -> ThetaEntry {
        ThetaEntry {
            name: name.to_string(),
            value,
            optimize: false,
            lower: None,
            upper: None,
        }
    }

    /// An optimized entry starting at `value`, without bounds.
    pub fn free(name: &str, value: f64) -> ThetaEntry {
        ThetaEntry {
            optimize: true,
            ..ThetaEntry::fixed(name, value)
        }
    }

    /// The same entry with bounds (`None`: unbounded on that side).
    pub fn with_bounds(self, lower: Option<f64>, upper: Option<f64>) -> ThetaEntry {
        ThetaEntry {
            lower,
            upper,
            ..self
        }
    }

    /// The transform to the optimizer's unconstrained variable, from the bounds (log above a
    /// lower bound, log below an upper one, logit between two, a scaled identity without).
    pub fn transform(&self) -> Transform {
        Transform::from_bounds(self.lower, self.upper, self.value)
    }

    /// Checks that the value and the bounds are finite, the bounds ordered and the value
    /// strictly inside them.
    pub fn check(&self) -> Result<(), Error> {
        self.check_bounds(false)
    }

    /// [`Self::check`] with closed bounds: the value may sit on one (the constrained
    /// solver's bounds are closed and held exactly); the bounds themselves must be ordered.
    pub fn check_closed(&self) -> Result<(), Error> {
        self.check_bounds(true)
    }

    fn check_bounds(&self, closed: bool) -> Result<(), Error> {
        let finite = |b: Option<f64>| b.is_none_or(f64::is_finite);
        let above = |l: f64| {
            if closed {
                self.value >= l
            } else {
                self.value > l
            }
        };
        let below = |u: f64| {
            if closed {
                self.value <= u
            } else {
                self.value < u
            }
        };
        let inside = self.lower.is_none_or(above) && self.upper.is_none_or(below);
        let ordered = match (self.lower, self.upper) {
            (Some(l), Some(u)) => l < u,
            _ => true,
        };
        if self.value.is_finite() && finite(self.lower) && finite(self.upper) && inside && ordered {
            Ok(())
        } else {
            Err(Error::Bounds {
                name: self.name.clone(),
                value: self.value,
                lower: self.lower,
                upper: self.upper,
            })
        }
    }
}
