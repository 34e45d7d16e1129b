//! The pictures of a run in a results folder: `strobe.png`/`.svg` and `animation.gif`,
//! written into a [`Staging`] folder so that they appear atomically with the other results.

use crate::animate::Motion;
use crate::animate::OutputGeometry;
use crate::animate::{write_gif, AnimationOptions, GifInfo};
use crate::animate::{write_strobe, StrobeOptions};
use crate::error::Error;
use crate::geometry::Geometry;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::output::atomic::Staging;
use crate::problem::Problem;
use crate::setup::Setup;
use crate::systems::builtin::Builtin;

/// What draws the runs: the system's own geometry, or another one (a problem file's
/// `[plot.geometry]`, see [`crate::animate::OutputGeometry`]).
#[derive(Clone, Copy)]
pub enum Drawing<'g> {
    /// [`HybridSystem::geometry`]; the name is the system's, for the error when it has none.
    System(&'g str),
    /// This geometry.
    Given(&'g dyn Geometry),
}

impl<'g> Drawing<'g> {
    /// What draws a problem's runs: the problem file's `[plot.geometry]` (`from_file`,
    /// [`file_geometry`]), else the system's own geometry; `None` for a system that has
    /// neither.
    pub fn of_problem(
        p: &'g Problem, from_file: Option<&'g OutputGeometry<'g, Builtin>>,
    ) -> Option<Self> {
        match from_file {
            Some(g) => Some(Drawing::Given(g)),
            None if p.system.geometry().is_some() => Some(Drawing::System(p.system.kind())),
            None => None,
        }
    }
}

/// The problem file's `[plot.geometry]`, drawn from the system's outputs.
pub fn file_geometry(p: &Problem) -> Option<OutputGeometry<'_, Builtin>> {
    p.plot_geometry
        .as_ref()
        .map(|g| OutputGeometry::new(&p.system, g))
}

/// One motion to draw: its panel's subtitle, trajectory and θ.
pub struct Run<'t> {
    pub label: String,
    pub trajectory: &'t Trajectory,
    pub theta: &'t [f64],
}

/// Writes `strobe.png` and `strobe.svg` of `runs` (side by side) into `stage`. A
/// trajectory whose dense output was compacted (an adjoint evaluation's) is simulated again
/// with all of it kept.
pub fn stage_strobe<S: HybridSystem>(
    stage: &Staging, setup: &Setup<'_, S>, drawing: Drawing<'_>, title: &str, runs: &[Run<'_>],
    opts: &StrobeOptions,
) -> Result<(), Error> {
    with_motions(setup, drawing, runs, |panels| {
        write_strobe(
            title,
            panels,
            opts,
            &stage.path("strobe.png"),
            Some(&stage.path("strobe.svg")),
        )
    })
}

/// Writes `animation.gif` of `runs` (side by side) into `stage`.
pub fn stage_animation<S: HybridSystem>(
    stage: &Staging, setup: &Setup<'_, S>, drawing: Drawing<'_>, title: &str, runs: &[Run<'_>],
    opts: &AnimationOptions,
) -> Result<GifInfo, Error> {
    with_motions(setup, drawing, runs, |panels| {
        write_gif(title, panels, opts, &stage.path("animation.gif"))
    })
}

/// Calls `f` with the runs as (subtitle, motion) panels, re-simulating compacted ones.
fn with_motions<S: HybridSystem, T>(
    setup: &Setup<'_, S>, drawing: Drawing<'_>, runs: &[Run<'_>],
    f: impl FnOnce(&[(&str, &Motion<'_>)]) -> Result<T, Error>,
) -> Result<T, Error> {
    if let Drawing::System(system) = drawing {
        if setup.sys.geometry().is_none() {
            return Err(Error::NoGeometry {
                system: system.to_string(),
            });
        }
    }
    let dense: Vec<Option<Trajectory>> = runs
        .iter()
        .map(|r| {
            if r.trajectory.is_dense() {
                Ok(None)
            } else {
                setup.simulate(r.theta).map(Some)
            }
        })
        .collect::<Result<_, _>>()?;
    let motions = runs
        .iter()
        .zip(&dense)
        .map(|(r, d)| {
            let traj = d.as_ref().unwrap_or(r.trajectory);
            match drawing {
                Drawing::System(name) => Motion::new(setup, traj, r.theta, name),
                Drawing::Given(g) => Motion::with_geometry(setup, traj, r.theta, g),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let panels: Vec<(&str, &Motion<'_>)> = runs
        .iter()
        .zip(&motions)
        .map(|(r, m)| (r.label.as_str(), m))
        .collect();
    f(&panels)
}
