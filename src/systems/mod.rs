//! Built-in systems, each a [`crate::HybridSystem`] at this module's root ([`BouncingBall`],
//! [`CompassGait`], [`FiveBar`], …), with [`Builtin`], the one a problem file names.
pub(crate) mod biped;
pub(crate) mod bouncing_ball;
pub(crate) mod builtin;
pub(crate) mod compass_gait;
pub(crate) mod compass_gait_actuated;
pub(crate) mod five_bar;
pub(crate) mod geometry;
pub(crate) mod hysteretic_oscillator;
pub(crate) mod impact_pendulum;
pub(crate) mod kind;
pub(crate) mod locking_pendulum;
pub(crate) mod pendulum_angle;
pub(crate) mod pendulum_wall;
pub(crate) mod rectifier;
pub(crate) mod reversal;
pub(crate) mod shear_frame;
pub(crate) mod simplest_walker;
pub(crate) mod steel_coupon;
pub(crate) mod switched;

pub use biped::{Biped, BipedConfig};
pub use bouncing_ball::{shipped_objective, BouncingBall, ThrustBall};
pub use builtin::{Builtin, KINDS};
pub use compass_gait::CompassGait;
pub use compass_gait_actuated::ActuatedCompassGait;
pub use five_bar::{FiveBar, FiveBarConfig};
pub use hysteretic_oscillator::HystereticOscillator;
pub use impact_pendulum::ImpactPendulum;
pub use kind::{defaults, BuildError, DaeSettings, NoSettings, SystemSpec};
pub use locking_pendulum::{LockingPendulum, LockingPendulumConfig};
pub use pendulum_angle::PendulumAngle;
pub use pendulum_wall::PendulumWall;
pub use rectifier::Rectifier;
pub use shear_frame::{GroundMotion, ShearFrame, ShearFrameConfig, ShearFrameError};
pub use simplest_walker::SimplestWalker;
pub use steel_coupon::SteelCoupon;
pub use switched::SwitchedLinear;
