//! Pictures of the motion of mechanisms and gaits: a system's [`Geometry`] maps a state
//! to drawable shapes; [`Motion`] reads them off a trajectory's dense output; the
//! stroboscopic picture ([`write_strobe`]) and the animated GIF ([`write_gif`]) draw them.

mod animation;
mod canvas;
mod files;
pub mod geometry;
mod layout;
pub mod mechanism;
mod motion;
pub mod spec;
mod strobe;

pub use animation::{frame_times, write_gif, AnimationOptions, GifInfo, MAX_FRAMES};
pub use files::{stage_animation, stage_strobe, Drawing, Run};
pub use geometry::{Geometry, Pt, SceneItem, Shape, Side};
pub use mechanism::mechanism_shapes;
pub use motion::{mass_positions, EventMark, Motion, Paths};
pub use spec::{GeometrySpec, OutputGeometry};
pub use strobe::{event_summary, fade, write_strobe, StrobeOptions};
