//! The built-in systems behind one enum (static dispatch; the model trait has generic
//! methods), so that the CLI and problem files can name them.

use super::biped::Biped;
use super::bouncing_ball::{BouncingBall, ThrustBall};
use super::compass_gait::CompassGait;
use super::compass_gait_actuated::ActuatedCompassGait;
use super::five_bar::FiveBar;
use super::hysteretic_oscillator::HystereticOscillator;
use super::impact_pendulum::ImpactPendulum;
use super::locking_pendulum::LockingPendulum;
use super::pendulum_wall::PendulumWall;
use super::rectifier::Rectifier;
use super::shear_frame::ShearFrame;
use super::simplest_walker::SimplestWalker;
use super::steel_coupon::SteelCoupon;
use super::switched::SwitchedLinear;
use crate::custom::CustomSystem;
use crate::dae::Dae;
use crate::error::ModelError;
use crate::model::{Dims, HybridSystem, Scalar};

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
    /// The compass gait with a hip torque control `hip` (`kind = "compass_gait_actuated"`).
    ActuatedCompassGait(ActuatedCompassGait),
    /// The half-wave rectifier (a hybrid DAE of index 1).
    Rectifier(Dae<Rectifier>),
    /// The pendulum against a wall in Cartesian coordinates (a hybrid DAE of index 2).
    PendulumWall(Dae<PendulumWall>),
    /// An expression-defined system (`kind = "custom"`).
    Custom(Box<CustomSystem>),
    /// Menegotto–Pinto steel under cyclic strain, with memory (`kind = "steel_coupon"`).
    SteelCoupon(Dae<SteelCoupon>),
    /// The hysteretic oscillator, with memory (`kind = "hysteretic_oscillator"`).
    HystereticOscillator(Dae<HystereticOscillator>),
    /// The N-storey hysteretic shear frame, with memory (`kind = "shear_frame"`).
    ShearFrame(ShearFrame),
}

/// The names accepted as `kind`.
pub const KINDS: [&str; 16] = [
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
    "compass_gait_actuated",
    "rectifier",
    "pendulum_wall",
    "steel_coupon",
    "hysteretic_oscillator",
    "shear_frame",
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
            Builtin::ActuatedCompassGait($s) => $e,
            Builtin::Rectifier($s) => $e,
            Builtin::PendulumWall($s) => $e,
            Builtin::Custom($s) => $e,
            Builtin::SteelCoupon($s) => $e,
            Builtin::HystereticOscillator($s) => $e,
            Builtin::ShearFrame($s) => $e,
        }
    };
}

impl HybridSystem for Builtin {
    /// The system's own, with the documented parameter defaults of a built-in system
    /// ([`Builtin::defaults`]).
    fn dims(&self) -> Dims {
        let mut d = each!(self, s => s.dims());
        if let Some(values) = self.default_params() {
            d.param_defaults = Some(values);
        }
        d
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        each!(self, s => s.guard_active(mode, k))
    }
    fn flow_pattern(&self, mode: usize) -> Option<crate::sparsity::Pattern> {
        each!(self, s => s.flow_pattern(mode))
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
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        each!(self, s => s.flow(mode, t, x, u, p, dx))
    }
    #[inline(always)]
    fn guard<D: Scalar>(&self, mode: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        each!(self, s => s.guard(mode, k, t, x, u, p))
    }
    #[inline(always)]
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        each!(self, s => s.reset(mode, k, t, x, p))
    }
    #[inline(always)]
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        each!(self, s => s.outputs(mode, t, x, u, p, out))
    }
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        each!(self, s => s.geometry())
    }
    fn flow_vjp(
        &self, args: crate::model::VjpArgs<'_>, out: crate::model::VjpOut<'_>,
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
            Builtin::ActuatedCompassGait(_) => "compass_gait_actuated",
            Builtin::Rectifier(_) => "rectifier",
            Builtin::PendulumWall(_) => "pendulum_wall",
            Builtin::Custom(_) => "custom",
            Builtin::SteelCoupon(_) => "steel_coupon",
            Builtin::HystereticOscillator(_) => "hysteretic_oscillator",
            Builtin::ShearFrame(_) => "shear_frame",
        }
    }

    /// The default value of each parameter that has one, in parameter order: every
    /// parameter of a built-in system (the reference-models.md numbers, each system's
    /// `default_params`); for a custom system, those its file gives in `[system] defaults`.
    /// A problem file may leave such a parameter out of `[parameters]`: it is then fixed
    /// at this value.
    pub fn defaults(&self) -> Vec<(String, f64)> {
        match self {
            Builtin::Custom(c) => c.defaults().to_vec(),
            _ => {
                let names = each!(self, s => s.dims()).params;
                names
                    .into_iter()
                    .zip(self.default_params().unwrap_or_default())
                    .collect()
            }
        }
    }
}

impl Builtin {
    /// The documented default values of the parameters, in parameter order (the values of
    /// [`Builtin::defaults`]); `None` for a custom system, whose parameters are its file's.
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
            Builtin::ActuatedCompassGait(_) => ActuatedCompassGait::default_params(),
            Builtin::Rectifier(_) => Rectifier::default_params(),
            Builtin::PendulumWall(_) => PendulumWall::default_params(),
            Builtin::SteelCoupon(_) => SteelCoupon::default_params(),
            Builtin::HystereticOscillator(_) => HystereticOscillator::default_params(),
            Builtin::ShearFrame(f) => f.default_params(),
            Builtin::Custom(_) => return None,
        })
    }
}
