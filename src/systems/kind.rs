//! What a built-in system's `kind` stands for: [`BuiltinSystem`] (the settings its
//! `[system]` table takes besides `kind`, and how they build it), the settings shared by
//! several kinds ([`NoSettings`], [`DaeSettings`]); why a build fails is [`BuildError`]. A problem file names
//! the kinds by the table in [`super::builtin`]; a settings key that the kind does not take
//! is an error. The problem reader turns `kind = "x"` plus the settings into serde's
//! variant tag (see `problem::document`).

use super::build_error::BuildError;
use crate::custom::CustomSystem;
use crate::dae::Dae;
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
/// [`ModelError::Inconsistent`](crate::error::ModelError::Inconsistent) with its residual, mode and time).
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
