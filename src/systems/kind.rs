//! The `[system]` table of a problem file: the system's kind with that kind's own settings.
//! The kinds are the variants of a serde enum, so a problem file names them by their
//! snake_case names (`kind = "five_bar"`) and a settings key that the kind does not take is
//! an error. The problem reader turns `kind = "x"` plus the settings into serde's variant
//! tag (see `problem::document`).

use super::biped::{Biped, BipedConfig};
use super::bouncing_ball::{BouncingBall, ThrustBall};
use super::builtin::{Builtin, KINDS};
use super::compass_gait::CompassGait;
use super::compass_gait_actuated::ActuatedCompassGait;
use super::five_bar::{FiveBar, FiveBarConfig};
use super::hysteretic_oscillator::HystereticOscillator;
use super::impact_pendulum::ImpactPendulum;
use super::locking_pendulum::{LockingPendulum, LockingPendulumConfig};
use super::pendulum_wall::PendulumWall;
use super::rectifier::Rectifier;
use super::shear_frame::{ShearFrame, ShearFrameConfig, ShearFrameError};
use super::simplest_walker::SimplestWalker;
use super::steel_coupon::SteelCoupon;
use super::switched::SwitchedLinear;
use crate::custom::{CustomError, CustomSystem};
use crate::dae::Dae;
use crate::error::ModelError;
use serde::Deserialize;

/// A kind without settings: its table holds `kind` only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

/// The settings of a built-in DAE of index 1: optional algebraic start values by name
/// (`initial_algebraic = { iD = 0.3 }`). By default z0 is solved from the start mode's
/// algebraic equations; given values are checked against them (an inconsistent z0 is
/// [`ModelError::Inconsistent`] with its residual, mode and time).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaeSettings {
    #[serde(default)]
    pub initial_algebraic: Option<std::collections::BTreeMap<String, f64>>,
}

impl DaeSettings {
    /// The system wrapped as a [`Dae`], with the prescribed z0 in the order of its
    /// algebraic states (every one must be named).
    fn build<S: crate::dae::DaeSystem>(&self, sys: S) -> Result<Dae<S>, BuildError> {
        let Some(given) = &self.initial_algebraic else {
            return Ok(Dae::new(sys));
        };
        let names = sys.algebraic_names();
        if let Some(name) = given.keys().find(|k| !names.contains(k)) {
            return Err(BuildError::UnknownAlgebraic {
                name: name.clone(),
                valid: names.join(", "),
            });
        }
        let z0 = names
            .iter()
            .map(|n| {
                given
                    .get(n)
                    .copied()
                    .ok_or_else(|| BuildError::MissingAlgebraic { name: n.clone() })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        Ok(Dae::new(sys).with_initial_algebraic(z0))
    }
}

/// A system kind with its settings, as `[system]` gives it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemSpec {
    /// A planar body on two massless legs (reference-models.md §3).
    Biped(BipedConfig),
    /// An expression-defined system ([`crate::custom`]).
    Custom(Box<crate::custom::schema::SystemSpec>),
    /// The bouncing ball with linear drag (reference-models.md §1).
    BouncingBall(NoSettings),
    /// The bouncing ball with a thrust control.
    ThrustBall(NoSettings),
    /// A bilinear spring: two linear modes, identity reset.
    SwitchedLinear(NoSettings),
    /// A forced pendulum striking a wall (seed 000 §2).
    ImpactPendulum(NoSettings),
    /// The five-bar mechanism (reference-models.md §2), multibody.
    FiveBar(FiveBarConfig),
    /// A double pendulum whose joint locks at a stop, multibody.
    LockingPendulum(LockingPendulumConfig),
    /// Garcia et al.'s simplest walker (reference-models.md §10).
    SimplestWalker(NoSettings),
    /// Goswami et al.'s compass gait (reference-models.md §10).
    CompassGait(NoSettings),
    /// The compass gait with a hip torque control, started on the heel-strike section
    /// (reference-models.md §10).
    CompassGaitActuated(NoSettings),
    /// The half-wave rectifier, a hybrid DAE of index 1 (reference-models.md §7).
    Rectifier(DaeSettings),
    /// The pendulum against a wall in Cartesian coordinates, a hybrid DAE of index 2
    /// (reference-models.md §8).
    PendulumWall(NoSettings),
    /// Menegotto–Pinto steel under prescribed cyclic strain, a system with memory
    /// (reference-models.md §9).
    SteelCoupon(DaeSettings),
    /// A single-storey structure with an exponential hysteretic law, a system with memory
    /// (reference-models.md §9).
    HystereticOscillator(DaeSettings),
    /// An N-storey shear frame whose storeys follow the hysteretic oscillator's law, under
    /// ground motion, a system with memory (reference-models.md §11).
    ShearFrame(ShearFrameConfig),
}

/// Why a system could not be built from valid settings.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A built-in system's settings are inconsistent (e.g. a ground above the mechanism).
    #[error("{0}")]
    Model(#[from] ModelError),
    /// A custom system's declarations or expressions are wrong.
    #[error(transparent)]
    Custom(#[from] CustomError),
    /// `initial_algebraic` names a state the system does not have.
    #[error("`{name}` is not an algebraic state; valid: {valid}")]
    UnknownAlgebraic { name: String, valid: String },
    /// `initial_algebraic` leaves out an algebraic state.
    #[error("missing a value for the algebraic state `{name}` (give all or none)")]
    MissingAlgebraic { name: String },
    /// `actuators` names a coordinate the mechanism does not have.
    #[error("`{name}` is not a coordinate of the mechanism; valid: {valid}")]
    UnknownActuator { name: String, valid: String },
    /// A shear frame's settings are out of range ([`ShearFrameError::key`] names the key).
    #[error(transparent)]
    ShearFrame(#[from] ShearFrameError),
}

impl SystemSpec {
    /// The system.
    pub fn build(&self) -> Result<Builtin, BuildError> {
        Ok(match self {
            SystemSpec::Biped(c) => Builtin::Biped(Biped::new(*c)?),
            SystemSpec::Custom(s) => Builtin::Custom(Box::new(CustomSystem::from_spec(s)?)),
            SystemSpec::BouncingBall(_) => Builtin::BouncingBall(BouncingBall),
            SystemSpec::ThrustBall(_) => Builtin::ThrustBall(ThrustBall),
            SystemSpec::SwitchedLinear(_) => Builtin::SwitchedLinear(SwitchedLinear),
            SystemSpec::ImpactPendulum(_) => Builtin::ImpactPendulum(ImpactPendulum),
            SystemSpec::FiveBar(c) => {
                c.actuator_indices()
                    .map_err(|name| BuildError::UnknownActuator {
                        name,
                        valid: super::five_bar::COORDINATES.join(", "),
                    })?;
                Builtin::FiveBar(Box::new(FiveBar::new(c.clone())?))
            }
            SystemSpec::LockingPendulum(c) => {
                Builtin::LockingPendulum(Box::new(LockingPendulum::new(*c)?))
            }
            SystemSpec::SimplestWalker(_) => Builtin::SimplestWalker(SimplestWalker),
            SystemSpec::CompassGait(_) => Builtin::CompassGait(CompassGait),
            SystemSpec::CompassGaitActuated(_) => Builtin::ActuatedCompassGait(ActuatedCompassGait),
            SystemSpec::Rectifier(d) => Builtin::Rectifier(d.build(Rectifier)?),
            SystemSpec::PendulumWall(_) => Builtin::PendulumWall(Dae::new(PendulumWall)),
            SystemSpec::SteelCoupon(d) => Builtin::SteelCoupon(d.build(SteelCoupon)?),
            SystemSpec::HystereticOscillator(d) => {
                Builtin::HystereticOscillator(d.build(HystereticOscillator)?)
            }
            SystemSpec::ShearFrame(c) => Builtin::ShearFrame(ShearFrame::new(*c)?),
        })
    }

    /// The kind `kind` with default settings (`None` for an unknown kind or `custom`, which
    /// has no default).
    pub fn default_of(kind: &str) -> Option<SystemSpec> {
        let mut t = toml::Table::new();
        t.insert(kind.to_string(), toml::Value::Table(toml::Table::new()));
        toml::Value::Table(t).try_into().ok()
    }
}

/// The default parameter values of the built-in system `kind` (with its default settings),
/// as (name, value) in parameter order; `None` for `custom` (its defaults are in its file)
/// or an unknown kind. What `hybridopt systems` prints and what a problem file's omitted
/// parameter takes.
pub fn defaults(kind: &str) -> Option<Vec<(String, f64)>> {
    let system = SystemSpec::default_of(kind)?.build().ok()?;
    Some(system.defaults())
}

impl Builtin {
    /// Every built-in system (all kinds but `custom`), each with its default `[system]`
    /// settings, in the order of [`KINDS`].
    pub fn catalog() -> Vec<Builtin> {
        KINDS
            .iter()
            .filter_map(|k| SystemSpec::default_of(k)?.build().ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HybridSystem;

    #[test]
    fn every_builtin_kind_has_a_default_for_every_parameter() {
        for kind in KINDS.iter().filter(|k| **k != "custom") {
            let d = defaults(kind).unwrap_or_else(|| panic!("{kind}: no defaults"));
            let sys = SystemSpec::default_of(kind)
                .and_then(|s| s.build().ok())
                .expect("builds");
            assert_eq!(sys.kind(), *kind);
            let names: Vec<String> = d.iter().map(|(n, _)| n.clone()).collect();
            assert_eq!(names, sys.dims().params, "{kind}");
            assert!(d.iter().all(|(_, v)| v.is_finite()), "{kind}");
        }
        assert_eq!(defaults("custom"), None);
        assert_eq!(defaults("rocket"), None);
        assert_eq!(
            defaults("bouncing_ball").unwrap()[0],
            ("g".to_string(), 9.81)
        );
    }
}
