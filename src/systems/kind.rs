//! What a built-in system's `kind` stands for: [`BuiltinSystem`] (the settings its
//! `[system]` table takes besides `kind`, and how they build it), the settings shared by
//! several kinds ([`NoSettings`], [`DaeSettings`]), and [`BuildError`]. A problem file names
//! the kinds by the table in [`super::builtin`]; a settings key that the kind does not take
//! is an error. The problem reader turns `kind = "x"` plus the settings into serde's
//! variant tag (see `problem::document`).

use super::builtin::SystemSpec;
use super::shear_frame::ShearFrameError;
use crate::custom::{CustomError, CustomSystem};
use crate::dae::Dae;
use crate::error::ModelError;
use serde::Deserialize;

/// A system that a problem file names by its `kind` (one line of the table behind
/// [`Builtin`](super::Builtin)): what its `[system]` table takes besides `kind`, how those settings
/// build it, and its documented parameter defaults. Each built-in implements it in its own
/// file.
pub trait BuiltinSystem: Sized {
    /// The settings of its `[system]` table ([`NoSettings`] for none).
    type Settings: for<'de> Deserialize<'de> + std::fmt::Debug + Clone;
    /// The system with these settings.
    fn build(settings: &Self::Settings) -> Result<Self, BuildError>;
    /// The documented default value of every parameter, in parameter order
    /// (reference-models.md); `None` when its parameters are the problem file's own.
    fn param_defaults(&self) -> Option<Vec<f64>>;
}

/// A boxed system (a large one, kept small in [`Builtin`](super::Builtin)) is named as the system.
impl<S: BuiltinSystem> BuiltinSystem for Box<S> {
    type Settings = S::Settings;
    fn build(settings: &S::Settings) -> Result<Self, BuildError> {
        S::build(settings).map(Box::new)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        (**self).param_defaults()
    }
}

/// `kind = "custom"`: the system its file declares, with the defaults it gives.
impl BuiltinSystem for CustomSystem {
    type Settings = Box<crate::custom::schema::SystemSpec>;
    fn build(spec: &Self::Settings) -> Result<Self, BuildError> {
        Ok(CustomSystem::from_spec(spec)?)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        None
    }
}

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
    pub(crate) fn build<S: crate::dae::DaeSystem>(&self, sys: S) -> Result<Dae<S>, BuildError> {
        let Some(given) = &self.initial_algebraic else {
            return Ok(Dae::new(sys));
        };
        let names = sys.dims().algebraic;
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
