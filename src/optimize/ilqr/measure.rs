//! What the augmented-Lagrangian outer loop measures its iterates with (augmented.rs): the
//! problem the SQP would solve — its cost, every constraint row with its exact gradient,
//! the KKT residual on the same rows. Single shooting's problem over the horizon, or for a
//! periodic problem the one segment from the start to the closing event, whose rows are
//! the constraints' and the closing rows (shooting/closing.rs).

use crate::constraint::Constraints;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::constrained::nlp::{Nlp, Point};
use crate::optimize::constrained::path;
use crate::optimize::constrained::sqp::Problem;
use crate::optimize::shooting::{Closure, ShootingNlp};
use crate::sensitivity::GradientMethod;

/// The outer loop's measure (module docs).
pub(crate) enum Measure<'s, 'a, S: HybridSystem> {
    Single(Nlp<'s, 'a, S>),
    Closing(ShootingNlp<'s, 'a, S>, Closure),
}

impl<S: HybridSystem> Measure<'_, '_, S> {
    fn problem(&self) -> &dyn Problem {
        match self {
            Measure::Single(n) => n,
            Measure::Closing(n, _) => n,
        }
    }

    /// The cost and rows at the variables x (θ's optimized entries, then T if free).
    pub fn evaluate(&self, x: &[f64]) -> Result<Point, Error> {
        self.problem().evaluate(x)
    }

    /// The start's variables.
    pub fn x0(&self) -> Vec<f64> {
        self.problem().x0()
    }

    /// The variables' bounds.
    pub fn bounds(&self) -> (&[f64], &[f64]) {
        self.problem().bounds()
    }

    /// θ's optimized entries.
    pub fn free(&self) -> &[usize] {
        match self {
            Measure::Single(n) => &n.free,
            Measure::Closing(n, _) => &n.free,
        }
    }

    pub fn constraints(&self) -> &Constraints {
        match self {
            Measure::Single(n) => n.constraints,
            Measure::Closing(n, _) => n.constraints,
        }
    }

    /// The gradient method of the rows (the closing problem's segment: direct).
    pub fn method(&self) -> GradientMethod {
        match self {
            Measure::Single(n) => n.method,
            Measure::Closing(..) => GradientMethod::Direct,
        }
    }

    /// θ at the start.
    pub fn theta_initial(&self) -> Vec<f64> {
        match self {
            Measure::Single(n) => n.theta_of(&n.x0()).0,
            Measure::Closing(n, _) => n.theta_of(&Problem::x0(n)),
        }
    }

    /// A path constraint's extrema at `p` (single shooting only: multiple shooting refuses
    /// path constraints when its problem is built).
    pub fn extrema(&self, p: &Point, output: usize) -> Result<Vec<path::Extremum>, Error> {
        match self {
            Measure::Single(n) => {
                let traj = n.setup.simulate(&p.theta)?;
                path::extrema(&n.setup, &traj, &p.theta, output)
            }
            Measure::Closing(..) => unreachable!("refused by the closing problem"),
        }
    }

    /// A path constraint's most violated value at `p` for the report (NaN on the closing
    /// problem, as multiple shooting reports).
    pub fn extreme(&self, p: &Point, output: usize, bounds: (f64, f64)) -> f64 {
        match self {
            Measure::Single(n) => path::extreme(n, p, output, bounds),
            Measure::Closing(..) => f64::NAN,
        }
    }
}
