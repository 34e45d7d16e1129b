//! Periodic hybrid orbits (walking gaits): fixed points of the return map on a Poincaré
//! section, their Floquet multipliers through the saltation matrices, their
//! sensitivities to the parameters, and continuation in a parameter.
//!
//! - `section.rs`: the section (just after a guard's reset, or a hyperplane; period-k
//!   orbits) and the system that starts on it;
//! - `hyperplane.rs`: a hyperplane section as one more guard of the system, and its chart;
//! - `image.rs`: whether a start is the reset's image of the guard's surface;
//! - `map.rs`: `P(x)`, `DP`, `∂P/∂p`, the period and `dT/d(x, p)` from one direct pass;
//! - `projection.rs`: a guess slightly off the section moved onto it;
//! - `newton.rs`: Newton's method on `P(x) − x = 0` with the exact `DP`;
//! - `stability.rs`: multipliers on the section and of the full monodromy;
//! - `second.rs`: `d(DP)` by the direct pass in dual numbers;
//! - `sensitivity.rs`: `dx*/dp`, `dT/dp`, `d|λ|/dp`;
//! - `continuation.rs`: natural-parameter continuation with period-doubling detection;
//! - `spec.rs`: the `[periodic]` table of a problem file.

pub(crate) mod continuation;
pub(crate) mod hyperplane;
pub(crate) mod image;
pub(crate) mod map;
pub(crate) mod newton;
pub(crate) mod objective;
pub(crate) mod objective_value;
pub(crate) mod optimize;
pub(crate) mod orbit;
pub(crate) mod projection;
pub(crate) mod second;
pub(crate) mod section;
pub(crate) mod section_guard;
pub(crate) mod sensitivity;
pub(crate) mod spec;
pub(crate) mod stability;

pub use crate::periodic_error::{NewtonFailure, PeriodicError};
pub use continuation::{continue_orbit, BifurcationKind, Range};
pub use hyperplane::{Crossing, Hyperplane};
pub use map::MapOptions;
pub use newton::NewtonOptions;
pub use objective::ObjectiveSpec;
pub use optimize::GaitOptimum;
pub use orbit::{solve_orbit, OrbitReport};
pub use projection::GuessProjection;
pub use section::{Section, SectionKind, StartOnSection};
pub use section_guard::WithSectionGuard;
pub use sensitivity::{orbit_sensitivities, OrbitSensitivities, RadiusDerivative};
pub use spec::PeriodicSpec;
pub use stability::{radius_kink, spectrum, spectrum_on, Spectrum, Stability};
