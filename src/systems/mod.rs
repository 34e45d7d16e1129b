//! Built-in systems.
pub mod biped;
pub mod bouncing_ball;
pub mod builtin;
pub mod five_bar;
pub mod impact_pendulum;
pub mod locking_pendulum;
pub mod switched;
