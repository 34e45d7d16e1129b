//! A simulated motion seen through a system's [`Geometry`]: the shapes at any instant
//! from the trajectory's dense output (never a re-simulation), at every event from the
//! event record, and the path of every mass.

use super::geometry::{Geometry, Pt, SceneItem, Shape};
use crate::error::Error;
use crate::integrate::{Segment, Trajectory};
use crate::model::HybridSystem;
use crate::setup::Setup;

/// One event as the pictures show it.
#[derive(Debug, Clone, PartialEq)]
pub struct EventMark {
    pub t: f64,
    /// The guard's name.
    pub guard: String,
}

/// The controls `u(t)` in a segment of the trajectory.
type Controls<'a> = Box<dyn Fn(&Segment<f64>, f64) -> Vec<f64> + 'a>;

/// A trajectory with the geometry and the parameters to draw it.
pub struct Motion<'a> {
    geometry: &'a dyn Geometry,
    traj: &'a Trajectory,
    /// States of the system (the trajectory also carries the costs' quadratures after them).
    nx: usize,
    p: Vec<f64>,
    controls: Controls<'a>,
    modes: Vec<String>,
    events: Vec<EventMark>,
}

impl<'a> Motion<'a> {
    /// The motion of `traj`, simulated by `setup` at `theta`, drawn with the system's own
    /// geometry. `system` names the system in the error when it has none.
    pub fn new<'s: 'a, S: HybridSystem + 'a>(
        setup: &'a Setup<'s, S>, traj: &'a Trajectory, theta: &[f64], system: &str,
    ) -> Result<Motion<'a>, Error> {
        let geometry = setup.sys.geometry().ok_or_else(|| Error::NoGeometry {
            system: system.to_string(),
        })?;
        Self::with_geometry(setup, traj, theta, geometry)
    }

    /// The motion of `traj` drawn with `geometry` (e.g. a problem file's
    /// `[plot.geometry]`). The trajectory must keep its dense output ([`Setup::simulate`]
    /// does).
    pub fn with_geometry<'s: 'a, S: HybridSystem + 'a>(
        setup: &'a Setup<'s, S>, traj: &'a Trajectory, theta: &[f64], geometry: &'a dyn Geometry,
    ) -> Result<Motion<'a>, Error> {
        if !traj.is_dense() {
            return Err(Error::Unsupported {
                what: "a motion is drawn from the dense output of every segment, but this \
                       trajectory was compacted into checkpoints"
                    .into(),
                instead: "simulate with Setup::simulate".into(),
            });
        }
        let np = setup.np();
        if theta.len() != setup.ntheta() {
            return Err(Error::ThetaLength {
                found: theta.len(),
                parameters: setup.np(),
                controls: setup.nc(),
            });
        }
        let events = traj
            .events
            .iter()
            .map(|e| EventMark {
                t: e.t,
                guard: setup.dims.guard_name(e.guard),
            })
            .collect();
        let th = theta.to_vec();
        let controls: Controls<'a> = Box::new(move |seg: &Segment<f64>, t: f64| {
            let ctx = seg.ctx();
            setup.controls_at(&ctx, t, &th)
        });
        Ok(Motion {
            geometry,
            traj,
            nx: setup.nx(),
            p: theta[..np].to_vec(),
            controls,
            modes: setup.dims.modes.clone(),
            events,
        })
    }

    /// The time span `[t0, t_final]` of the motion.
    pub fn t_range(&self) -> (f64, f64) {
        (self.traj.t0, self.traj.t_final)
    }

    /// The events in time order.
    pub fn events(&self) -> &[EventMark] {
        &self.events
    }

    /// The segment, mode and system state at time `t` (clamped into the motion) from the
    /// dense output; at an event instant, the state after it.
    fn read(&self, t: f64) -> (&Segment<f64>, f64, Vec<f64>) {
        let (t0, t1) = self.t_range();
        let t = t.clamp(t0.min(t1), t0.max(t1));
        let seg = &self.traj.segments[self.traj.segment_index(t, false)];
        let mut x = vec![0.0; self.traj.y_final.len()];
        seg.state_at(t, &mut x);
        x.truncate(self.nx);
        (seg, t, x)
    }

    /// The mode and the system's state at time `t` (clamped into the motion) from the
    /// dense output; at an event instant, the state after it.
    pub fn state_at(&self, t: f64) -> (usize, Vec<f64>) {
        let (seg, _, x) = self.read(t);
        (seg.mode, x)
    }

    /// The shapes at time `t` (see [`Motion::state_at`]).
    pub fn shapes_at(&self, t: f64) -> Result<Vec<Shape>, Error> {
        let (seg, t, x) = self.read(t);
        self.shapes(seg, seg.mode, t, &x)
    }

    /// The shapes at event `k`, from the state just before it (positions do not jump at
    /// an event; velocities may).
    pub fn shapes_at_event(&self, k: usize) -> Result<Vec<Shape>, Error> {
        let e = &self.traj.events[k];
        let seg = &self.traj.segments[e.segment];
        self.shapes(seg, e.mode_before(), e.t, &e.before.y[..self.nx])
    }

    fn shapes(
        &self, seg: &Segment<f64>, mode: usize, t: f64, x: &[f64],
    ) -> Result<Vec<Shape>, Error> {
        let u = (self.controls)(seg, t);
        self.geometry
            .shapes(mode, t, x, &u, &self.p)
            .map_err(|source| Error::Model {
                t,
                mode: self.modes.get(mode).cloned().unwrap_or_default(),
                source,
            })
    }

    /// The path of every mass (in the order of the [`Shape::Mass`] entries) through the
    /// dense output: every step end and `per_step` interior points of each step.
    pub fn mass_paths(&self, per_step: usize) -> Result<Paths, Error> {
        let mut out = Paths::default();
        for (t, si, x) in self.traj.samples(per_step) {
            let seg = &self.traj.segments[si];
            let masses = mass_positions(&self.shapes(seg, seg.mode, t, &x[..self.nx])?);
            if out.points.is_empty() {
                out.points = vec![Vec::new(); masses.len()];
            }
            for (path, at) in out.points.iter_mut().zip(masses) {
                path.push(at);
            }
            out.t.push(t);
        }
        Ok(out)
    }

    /// The static scene over the horizontal extent `x_range`.
    pub fn scene(&self, x_range: (f64, f64)) -> Vec<SceneItem> {
        self.geometry.scene(&self.p, x_range)
    }
}

/// The masses' paths: `points[i][j]` is mass i at time `t[j]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Paths {
    pub t: Vec<f64>,
    pub points: Vec<Vec<Pt>>,
}

/// The positions of the masses among `shapes`, in order.
pub fn mass_positions(shapes: &[Shape]) -> Vec<Pt> {
    shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Mass { at, .. } => Some(*at),
            _ => None,
        })
        .collect()
}
