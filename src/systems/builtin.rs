//! The one table of built-in systems: each line names a system's `kind` in problem files
//! and the type that implements it ([`BuiltinSystem`]: its settings, how they build it, its
//! parameter defaults, in the system's own file). [`super::dispatch`] turns the table into
//! [`Builtin`] (static dispatch; the model trait has generic methods), [`SystemSpec`] and
//! [`KINDS`]. A new built-in system is its file plus one line here.

use super::build_error::BuildError;
use super::dispatch::{builtins, each_builtin};
use super::kind::BuiltinSystem;
use crate::custom::CustomSystem;
use crate::dae::Dae;

builtins! {
    /// A planar body on two massless legs (reference-models.md §3).
    "biped" => Biped(super::biped::Biped),
    /// An expression-defined system ([`crate::custom`]).
    "custom" => Custom(Box<CustomSystem>),
    /// The bouncing ball with linear drag (reference-models.md §1).
    "bouncing_ball" => BouncingBall(super::bouncing_ball::BouncingBall),
    /// The bouncing ball with a thrust control.
    "thrust_ball" => ThrustBall(super::bouncing_ball::ThrustBall),
    /// A bilinear spring: two linear modes, identity reset.
    "switched_linear" => SwitchedLinear(super::switched::SwitchedLinear),
    /// A forced pendulum striking a wall (seed 000 §2).
    "impact_pendulum" => ImpactPendulum(super::impact_pendulum::ImpactPendulum),
    /// The five-bar mechanism (reference-models.md §2), multibody.
    "five_bar" => FiveBar(Box<super::five_bar::FiveBar>),
    /// A double pendulum whose joint locks at a stop, multibody.
    "locking_pendulum" => LockingPendulum(Box<super::locking_pendulum::LockingPendulum>),
    /// Garcia et al.'s simplest walker (reference-models.md §10).
    "simplest_walker" => SimplestWalker(super::simplest_walker::SimplestWalker),
    /// Goswami et al.'s compass gait (reference-models.md §10).
    "compass_gait" => CompassGait(super::compass_gait::CompassGait),
    /// The compass gait with a hip torque control `hip`, started on the heel-strike section
    /// (reference-models.md §10).
    "compass_gait_actuated" => ActuatedCompassGait(super::compass_gait_actuated::ActuatedCompassGait),
    /// The half-wave rectifier, a hybrid DAE of index 1 (reference-models.md §7).
    "rectifier" => Rectifier(Dae<super::rectifier::Rectifier>),
    /// The pendulum against a wall in Cartesian coordinates, a hybrid DAE of index 2
    /// (reference-models.md §8).
    "pendulum_wall" => PendulumWall(Dae<super::pendulum_wall::PendulumWall>),
    /// Menegotto–Pinto steel under prescribed cyclic strain, a system with memory
    /// (reference-models.md §9).
    "steel_coupon" => SteelCoupon(Dae<super::steel_coupon::SteelCoupon>),
    /// A single-storey structure with an exponential hysteretic law, a system with memory
    /// (reference-models.md §9).
    "hysteretic_oscillator" => HystereticOscillator(Dae<super::hysteretic_oscillator::HystereticOscillator>),
    /// An N-storey shear frame whose storeys follow the hysteretic oscillator's law, under
    /// ground motion, a system with memory (reference-models.md §11).
    "shear_frame" => ShearFrame(super::shear_frame::ShearFrame),
}

impl Builtin {
    /// The default value of each parameter that has one, in parameter order: every
    /// parameter of a built-in system (the reference-models.md numbers, each system's
    /// `default_params`); for a custom system, those its file gives in `[system] defaults`.
    /// A problem file may leave such a parameter out of `[parameters]`: it is then fixed
    /// at this value.
    pub fn defaults(&self) -> Vec<(String, f64)> {
        use crate::model::HybridSystem;
        match self {
            Builtin::Custom(c) => c.defaults().to_vec(),
            _ => self
                .dims()
                .params
                .into_iter()
                .zip(self.default_params().unwrap_or_default())
                .collect(),
        }
    }

    /// How a custom system's expressions run (machine code or interpreted); `None` for
    /// the other kinds.
    pub fn compilation(&self) -> Option<&crate::custom::Compilation> {
        match self {
            Builtin::Custom(c) => Some(c.compilation()),
            _ => None,
        }
    }

    /// Every built-in system (all kinds but `custom`), each with its default `[system]`
    /// settings, in the order of [`KINDS`].
    pub fn catalog() -> Vec<Builtin> {
        KINDS
            .iter()
            .filter_map(|k| SystemSpec::default_of(k)?.build().ok())
            .collect()
    }
}

impl SystemSpec {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HybridSystem;
    use crate::systems::KINDS;

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
