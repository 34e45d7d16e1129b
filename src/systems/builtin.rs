//! The built-in systems behind one enum (static dispatch; the model trait has generic
//! methods), so that the CLI and problem files can name them.

use super::biped::Biped;
use super::bouncing_ball::{BouncingBall, ThrustBall};
use super::compass_gait::CompassGait;
use super::five_bar::FiveBar;
use super::impact_pendulum::ImpactPendulum;
use super::locking_pendulum::LockingPendulum;
use super::pendulum_wall::PendulumWall;
use super::rectifier::Rectifier;
use super::simplest_walker::SimplestWalker;
use super::switched::SwitchedLinear;
use crate::custom::CustomSystem;
use crate::dae::Dae;
use crate::error::ModelError;
use crate::model::{GuardInfo, HybridSystem, Scalar};

/// A built-in system, chosen by `[system] kind = "…"` in a problem file.
#[derive(Debug, Clone)]
pub enum Builtin {
    BouncingBall(BouncingBall),
    ThrustBall(ThrustBall),
    SwitchedLinear(SwitchedLinear),
    ImpactPendulum(ImpactPendulum),
    FiveBar(Box<FiveBar>),
    LockingPendulum(Box<LockingPendulum>),
    Biped(Biped),
    SimplestWalker(SimplestWalker),
    CompassGait(CompassGait),
    /// The half-wave rectifier (a hybrid DAE of index 1).
    Rectifier(Dae<Rectifier>),
    /// The pendulum against a wall in Cartesian coordinates (a hybrid DAE of index 2).
    PendulumWall(Dae<PendulumWall>),
    /// An expression-defined system (`kind = "custom"`).
    Custom(Box<CustomSystem>),
}

/// The names accepted as `kind`.
pub const KINDS: [&str; 12] = [
    "biped",
    "custom",
    "bouncing_ball",
    "thrust_ball",
    "switched_linear",
    "impact_pendulum",
    "five_bar",
    "locking_pendulum",
    "simplest_walker",
    "compass_gait",
    "rectifier",
    "pendulum_wall",
];

macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            Builtin::BouncingBall($s) => $e,
            Builtin::ThrustBall($s) => $e,
            Builtin::SwitchedLinear($s) => $e,
            Builtin::ImpactPendulum($s) => $e,
            Builtin::FiveBar($s) => $e,
            Builtin::LockingPendulum($s) => $e,
            Builtin::Biped($s) => $e,
            Builtin::SimplestWalker($s) => $e,
            Builtin::CompassGait($s) => $e,
            Builtin::Rectifier($s) => $e,
            Builtin::PendulumWall($s) => $e,
            Builtin::Custom($s) => $e,
        }
    };
}

impl HybridSystem for Builtin {
    fn state_names(&self) -> Vec<String> {
        each!(self, s => s.state_names())
    }
    fn param_names(&self) -> Vec<String> {
        each!(self, s => s.param_names())
    }
    fn control_names(&self) -> Vec<String> {
        each!(self, s => s.control_names())
    }
    fn mode_names(&self) -> Vec<String> {
        each!(self, s => s.mode_names())
    }
    fn guards(&self) -> Vec<GuardInfo> {
        each!(self, s => s.guards())
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        each!(self, s => s.guard_active(mode, k))
    }
    fn output_names(&self) -> Vec<String> {
        each!(self, s => s.output_names())
    }
    fn initial_mode(&self, p: &[f64]) -> usize {
        each!(self, s => s.initial_mode(p))
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        each!(self, s => s.initial_state(p))
    }
    fn initial_state_at<D: Scalar>(&self, t0: f64, p: &[D]) -> Result<Vec<D>, ModelError> {
        each!(self, s => s.initial_state_at(t0, p))
    }
    // The hot methods are inlined into their callers, so that the match costs a branch and
    // a small model's code is inlined as through its own type: without this the CLI
    // (which runs `Builtin`) measured the ball's adjoint ~12% slower than the library call
    // on `BouncingBall` (`cargo bench`), the wrapper being a large out-of-line function.
    #[inline(always)]
    fn flow<D: Scalar>(
        &self,
        mode: usize,
        t: D,
        x: &[D],
        u: &[D],
        p: &[D],
        dx: &mut [D],
    ) -> Result<(), ModelError> {
        each!(self, s => s.flow(mode, t, x, u, p, dx))
    }
    #[inline(always)]
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        each!(self, s => s.guard(mode, k, t, x, u, p))
    }
    #[inline(always)]
    fn reset<D: Scalar>(
        &self,
        mode: usize,
        k: usize,
        t: D,
        x: &[D],
        p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        each!(self, s => s.reset(mode, k, t, x, p))
    }
    #[inline(always)]
    fn outputs<D: Scalar>(
        &self,
        mode: usize,
        t: D,
        x: &[D],
        u: &[D],
        p: &[D],
        out: &mut [D],
    ) -> Result<(), ModelError> {
        each!(self, s => s.outputs(mode, t, x, u, p, out))
    }
    fn geometry(&self) -> Option<&dyn crate::animate::Geometry> {
        each!(self, s => s.geometry())
    }
    fn flow_vjp(
        &self,
        args: crate::model::VjpArgs<'_>,
        out: crate::model::VjpOut<'_>,
    ) -> Result<(), ModelError> {
        each!(self, s => s.flow_vjp(args, out))
    }
}

impl Builtin {
    /// The `kind` that names this system in a problem file.
    pub fn kind(&self) -> &'static str {
        match self {
            Builtin::BouncingBall(_) => "bouncing_ball",
            Builtin::ThrustBall(_) => "thrust_ball",
            Builtin::SwitchedLinear(_) => "switched_linear",
            Builtin::ImpactPendulum(_) => "impact_pendulum",
            Builtin::FiveBar(_) => "five_bar",
            Builtin::LockingPendulum(_) => "locking_pendulum",
            Builtin::Biped(_) => "biped",
            Builtin::SimplestWalker(_) => "simplest_walker",
            Builtin::CompassGait(_) => "compass_gait",
            Builtin::Rectifier(_) => "rectifier",
            Builtin::PendulumWall(_) => "pendulum_wall",
            Builtin::Custom(_) => "custom",
        }
    }

    /// Builds a system from its kind and its `[system]` table (without `kind`).
    pub fn from_table(kind: &str, rest: toml::Table) -> Result<Builtin, String> {
        let none = |name: &str, rest: &toml::Table| -> Result<(), String> {
            match rest.keys().next() {
                Some(k) => Err(format!(
                    "unknown key `{k}` in [system] for kind \"{name}\" (it takes no settings)"
                )),
                None => Ok(()),
            }
        };
        let cfg = |rest: toml::Table| toml::Value::Table(rest);
        Ok(match kind {
            "bouncing_ball" => {
                none(kind, &rest)?;
                Builtin::BouncingBall(BouncingBall)
            }
            "thrust_ball" => {
                none(kind, &rest)?;
                Builtin::ThrustBall(ThrustBall)
            }
            "switched_linear" => {
                none(kind, &rest)?;
                Builtin::SwitchedLinear(SwitchedLinear)
            }
            "impact_pendulum" => {
                none(kind, &rest)?;
                Builtin::ImpactPendulum(ImpactPendulum)
            }
            "simplest_walker" => {
                none(kind, &rest)?;
                Builtin::SimplestWalker(SimplestWalker)
            }
            "compass_gait" => {
                none(kind, &rest)?;
                Builtin::CompassGait(CompassGait)
            }
            "rectifier" => {
                none(kind, &rest)?;
                Builtin::Rectifier(Dae::new(Rectifier))
            }
            "pendulum_wall" => {
                none(kind, &rest)?;
                Builtin::PendulumWall(Dae::new(PendulumWall))
            }
            "five_bar" => {
                let c: super::five_bar::FiveBarConfig = cfg(rest)
                    .try_into()
                    .map_err(|e: toml::de::Error| format!("[system]: {}", e.message()))?;
                Builtin::FiveBar(Box::new(
                    FiveBar::new(c).map_err(|e| format!("[system]: {e}"))?,
                ))
            }
            "locking_pendulum" => {
                let c: super::locking_pendulum::LockingPendulumConfig = cfg(rest)
                    .try_into()
                    .map_err(|e: toml::de::Error| format!("[system]: {}", e.message()))?;
                Builtin::LockingPendulum(Box::new(
                    LockingPendulum::new(c).map_err(|e| format!("[system]: {e}"))?,
                ))
            }
            "biped" => {
                let c: super::biped::BipedConfig = cfg(rest)
                    .try_into()
                    .map_err(|e: toml::de::Error| format!("[system]: {}", e.message()))?;
                Builtin::Biped(Biped::new(c).map_err(|e| format!("[system]: {e}"))?)
            }
            "custom" => Builtin::Custom(Box::new(
                CustomSystem::from_table(rest).map_err(|e| e.to_string())?,
            )),
            other => {
                return Err(format!(
                    "[system] kind: unknown system kind \"{other}\"; valid kinds: {}",
                    KINDS.join(", ")
                ))
            }
        })
    }
}

impl Builtin {
    /// Every built-in system (all kinds but `custom`), each with its default `[system]`
    /// settings, in the order of [`KINDS`].
    pub fn catalog() -> Vec<Builtin> {
        vec![
            Builtin::Biped(Biped::default()),
            Builtin::BouncingBall(BouncingBall),
            Builtin::ThrustBall(ThrustBall),
            Builtin::SwitchedLinear(SwitchedLinear),
            Builtin::ImpactPendulum(ImpactPendulum),
            Builtin::FiveBar(Box::default()),
            Builtin::LockingPendulum(Box::default()),
            Builtin::SimplestWalker(SimplestWalker),
            Builtin::CompassGait(CompassGait),
            Builtin::Rectifier(Dae::new(Rectifier)),
            Builtin::PendulumWall(Dae::new(PendulumWall)),
        ]
    }

    /// The documented default values of the parameters, in the order of `param_names`
    /// (each system's `default_params`: the reference-models.md numbers or the shipped
    /// problem's); `None` for a custom system, whose parameters are its file's.
    pub fn default_params(&self) -> Option<Vec<f64>> {
        Some(match self {
            Builtin::BouncingBall(_) | Builtin::ThrustBall(_) => BouncingBall::default_params(),
            Builtin::SwitchedLinear(_) => SwitchedLinear::default_params(),
            Builtin::ImpactPendulum(_) => ImpactPendulum::default_params(),
            Builtin::FiveBar(_) => FiveBar::default_params(),
            Builtin::LockingPendulum(_) => LockingPendulum::default_params(),
            Builtin::Biped(_) => Biped::default_params(),
            Builtin::SimplestWalker(_) => SimplestWalker::default_params(),
            Builtin::CompassGait(_) => CompassGait::default_params(),
            Builtin::Rectifier(_) => Rectifier::default_params(),
            Builtin::PendulumWall(_) => PendulumWall::default_params(),
            Builtin::Custom(_) => return None,
        })
    }
}
