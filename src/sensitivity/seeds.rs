//! The objectives' cotangent seeds on a trajectory (theory.md §4): what each objective
//! puts into the adjoint at the final time, at events, at data samples, and on θ directly. Built once per
//! trajectory and shared by every backward pass.

use super::jump::Jump;
use super::term::{term_on, At, FinalOutputs};
use crate::error::Error;
use crate::integrate::{Instant, Trajectory};
use crate::model::HybridSystem;
use crate::setup::{SampleCotangent, Setup};
use nalgebra::DVector;
use std::collections::BTreeMap;

/// An event cost's adjoint contribution `(c_X, c_θ)` (theory §4).
pub type EventCotangent = (DVector<f64>, DVector<f64>);

/// Per objective: `λ(tf) = Φ_Xᵀ` (+1 on the objective's own quadratures), `μ(tf) = Φ_θᵀ`,
/// and the event-cost contributions `c` at the events they refer to.
#[derive(Debug, Clone)]
pub struct ObjectiveSeeds {
    /// λ(tf) of each objective (n).
    pub lambda_tf: Vec<DVector<f64>>,
    /// μ(tf) of each objective (nθ).
    pub mu_tf: Vec<DVector<f64>>,
    /// `events[i][o]`: objective o's contribution at event i, if any.
    pub events: Vec<Vec<Option<EventCotangent>>>,
    /// The data samples' contributions at the starts of the segments they are read at
    /// (setup/data.rs): segment → `(objective, c)`; a sample read at the final state adds
    /// to `lambda_tf` and `mu_tf` instead.
    pub segment_starts: BTreeMap<usize, Vec<(usize, EventCotangent)>>,
}

impl ObjectiveSeeds {
    /// Seeds of every objective of `setup` on `traj` (a trajectory of X), with event i's
    /// jump given by `jump(i)` (a reference to a kept one, or one built on demand: only
    /// the events that costs name are asked for). A terminal term on a run that a
    /// terminal event ended is an event cost at that event (evaluated at X⁻, like event
    /// terms).
    pub fn build<
        S: HybridSystem,
        J: std::borrow::Borrow<Jump>,
        F: Fn(usize) -> Result<J, Error>,
    >(
        setup: &Setup<'_, S>, traj: &Trajectory, theta: &[f64], jump: F,
    ) -> Result<Self, Error> {
        let (n, nx, nth) = (setup.n(), setup.nx(), setup.ntheta());
        let no = setup.objectives.len();
        let mut seeds = ObjectiveSeeds {
            lambda_tf: vec![DVector::zeros(n); no],
            mu_tf: vec![DVector::zeros(nth); no],
            events: vec![vec![None; no]; traj.events.len()],
            segment_starts: BTreeMap::new(),
        };
        // the outputs' Jacobians at tf, computed once for every terminal term
        let mut end: FinalOutputs = None;
        for (oi, obj) in setup.objectives.iter().enumerate() {
            for (z, _) in setup.running_of(oi) {
                seeds.lambda_tf[oi][nx + z] = 1.0;
            }
            seeds.add_samples(oi, setup.data_cotangents(traj, theta, oi)?);
            for term in &obj.terms {
                match term_on(setup, traj, term, theta, &mut end)? {
                    Some((At::Event(i), tj)) => {
                        let (cx, ct) = jump(i)?.borrow().event_cost(&tj);
                        match &mut seeds.events[i][oi] {
                            Some((a, b)) => {
                                *a += cx;
                                *b += ct;
                            }
                            slot => *slot = Some((cx, ct)),
                        }
                    }
                    Some((At::Final, tj)) => {
                        seeds.lambda_tf[oi] += &tj.x;
                        seeds.mu_tf[oi] += &tj.theta;
                    }
                    None => {}
                }
            }
        }
        Ok(seeds)
    }

    /// Objective o's data cotangents: at a segment's start, or at the final state.
    fn add_samples(&mut self, o: usize, list: Vec<SampleCotangent>) {
        for (at, cx, ct) in list {
            match at {
                Instant::SegmentStart(s) => self
                    .segment_starts
                    .entry(s)
                    .or_default()
                    .push((o, (cx, ct))),
                Instant::Final => {
                    self.lambda_tf[o] += cx;
                    self.mu_tf[o] += ct;
                }
            }
        }
    }

    /// Whether any objective has an event cost at event i.
    pub fn has_event_cost(&self, i: usize) -> bool {
        self.events[i].iter().any(Option::is_some)
    }
}
