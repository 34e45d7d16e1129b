//! Pictures of the motion of mechanisms and gaits: a system's [`Geometry`] maps a state
//! to drawable shapes; [`Motion`] reads them off a trajectory's dense output; the
//! stroboscopic picture ([`write_strobe`]) and the animated GIF ([`write_gif`]) draw them.

//!
//! The geometry and the motion read off a trajectory are always built; drawing them (the
//! strobe picture, the GIF and the files they go into) is the cargo feature `plots`.

#[cfg(feature = "plots")]
mod animation;
#[cfg(feature = "plots")]
mod canvas;
#[cfg(feature = "plots")]
mod layout;
pub(crate) mod mechanism;
mod motion;
pub(crate) mod spec;
#[cfg(feature = "plots")]
mod strobe;

/// The geometry of a system (below the model interface, which names it: [`crate::geometry`]).
use crate::geometry;
#[cfg(feature = "plots")]
pub use animation::{frame_times, write_gif, AnimationOptions, GifInfo, MAX_FRAMES};
pub use geometry::{Geometry, Pt, SceneItem, Shape, Side};
pub use mechanism::mechanism_shapes;
pub use motion::{mass_positions, EventMark, Motion, Paths};
pub use spec::{GeometrySpec, OutputGeometry};
#[cfg(feature = "plots")]
pub use strobe::{event_summary, fade, write_strobe, StrobeOptions};
