//! Forward (direct) sensitivities: `Ṡ = F_X S + F_θ` integrated with X (theory.md §2), and
//! the jump `S⁺ = Ξ S⁻ + Ξ_θ` at every event (§3), through the same hybrid loop as a
//! plain simulation. Error control covers S too, so its accuracy follows the tolerances.

use super::columns::{column_flow_rhs, ColumnFlow};
use super::evaluation::EventSensitivity;
use super::jump::Jump;
use super::seeds::ObjectiveSeeds;
use crate::error::{Error, ModelError};
use crate::integrate::hybrid::{GuardRate, HybridRhs};
use crate::integrate::trajectory::Ctx;
use crate::integrate::{Checkpointing, NewtonJacobian, ReplayWindow, Segment, Trajectory};
use crate::model::HybridSystem;
#[allow(unused_imports)]
use crate::setup::{guards_on_leading_state, Setup};
use nalgebra::DMatrix;
use std::cell::RefCell;

/// X together with S = dX/dθ (column-major, n×nθ; [`ColumnFlow::full`]), as one
/// integrated vector. Each event's jump, built to map S across it, is kept in order, so the
/// τ report and the objectives' seeds use the same one (built once per trajectory).
struct SensRhs<'s, 'a, S: HybridSystem> {
    flow: ColumnFlow<'s, 'a, S>,
    jumps: RefCell<Vec<Jump>>,
}

column_flow_rhs!(SensRhs);

impl<S: HybridSystem> SensRhs<'_, '_, S> {
    /// The event: X's jump and `S⁺ = Ξ S⁻ + Ξ_θ` (the jump kept for τ and the seeds).
    fn cross_event(
        &self, ctx: &Ctx, k: usize, t: f64, y: &[f64], terminal: bool,
    ) -> Result<(usize, Vec<f64>), ModelError> {
        let n = self.setup.n();
        let mut jump = Jump::at(self.setup, ctx, k, t, &y[..n], &self.theta, terminal)?;
        let s_plus = jump.forward(&self.columns_of(y));
        // what is kept serves τ and the event costs' seeds, which read the guard, f⁻ and
        // ġ only: Ξ (n×n) and Ξ_θ (n×nθ) are dropped (a 300-state frame's 300 events
        // held 290 MB of them)
        jump.forget_maps();
        let mut out = jump.x_plus.as_slice().to_vec();
        out.extend_from_slice(s_plus.as_slice());
        let mode_after = jump.mode_after;
        self.jumps.borrow_mut().push(jump);
        Ok((mode_after, out))
    }
}

/// The result of a forward-sensitivity run.
pub struct ForwardResult {
    /// The trajectory of (X, S).
    pub trajectory: Trajectory,
    pub values: Vec<f64>,
    pub gradients: Vec<Vec<f64>>,
    pub events: Vec<EventSensitivity>,
}

impl ForwardResult {
    /// The trajectory of X alone (the first n components).
    pub fn state_trajectory(&self, n: usize) -> Trajectory {
        let tr = &self.trajectory;
        let cut = |v: &Vec<f64>| v[..n].to_vec();
        Trajectory {
            segments: tr
                .segments
                .iter()
                .map(|s| Segment {
                    mode: s.mode,
                    t_start: s.t_start,
                    t_end: s.t_end,
                    t_lo: s.t_lo,
                    t_hi: s.t_hi,
                    steps: s.steps.iter().map(|d| d.project(n)).collect(),
                    end_events: s.end_events.clone(),
                    // the windows' states projected: they mark the segment as not dense
                    // (a replay needs the whole (X, S), so consumers simulate X instead)
                    windows: s
                        .windows
                        .iter()
                        .map(|w| ReplayWindow {
                            y0: w.y0[..n].to_vec(),
                            ..w.clone()
                        })
                        .collect(),
                })
                .collect(),
            events: tr
                .events
                .iter()
                .map(|e| crate::integrate::EventRecord {
                    before: e.before.cut(n),
                    after: e.after.cut(n),
                    ..e.clone()
                })
                .collect(),
            stats: tr.stats,
            t0: tr.t0,
            t_final: tr.t_final,
            y_final: cut(&tr.y_final),
            mode_final: tr.mode_final,
        }
    }

    /// S(t) at a time, from the dense output (n×nθ).
    pub fn sensitivity_at(&self, n: usize, nth: usize, t: f64, prefer_left: bool) -> DMatrix<f64> {
        let si = self.trajectory.segment_index(t, prefer_left);
        let mut y = vec![0.0; n * (1 + nth)];
        self.trajectory.segments[si].state_at(t, &mut y);
        DMatrix::from_column_slice(n, nth, &y[n..])
    }
}

/// Runs X and S together and assembles dψ/dθ = Z(tf) + Φ_X S(tf) + Φ_θ + Σ E-terms,
/// keeping the dense output of (X, S) for figures ([`ForwardResult::sensitivity_at`]).
pub fn forward_sensitivity<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64],
) -> Result<ForwardResult, Error> {
    forward_sensitivity_keeping(setup, theta, Checkpointing::Never)
}

/// [`forward_sensitivity`] for callers that need the values, gradients and event times
/// only: the run keeps nothing a step ([`Checkpointing::Discard`]: each segment's
/// starting (X, S), the events and the end), so its memory does not grow with the
/// horizon. Its trajectory is not dense ([`Trajectory::is_dense`]): whoever needs states
/// in between simulates.
pub fn forward_sensitivity_lean<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64],
) -> Result<ForwardResult, Error> {
    forward_sensitivity_keeping(setup, theta, Checkpointing::Discard)
}

/// [`forward_sensitivity`] keeping the dense output under `keep`.
fn forward_sensitivity_keeping<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], keep: Checkpointing,
) -> Result<ForwardResult, Error> {
    setup.check_theta(theta.len())?;
    let n = setup.n();
    let nth = setup.ntheta();
    let rhs = SensRhs {
        flow: ColumnFlow::full(setup, theta),
        jumps: RefCell::new(Vec::new()),
    };
    let (m0, y0) = rhs.initial()?;
    let traj = setup.run_hybrid(&rhs, y0, m0, keep)?;
    // event reports (τ) from the jumps the run applied, one per event of the tape
    // (every event of the tape went through `SensRhs::cross_event`, which kept its jump)
    let jumps = rhs.jumps.into_inner();
    if jumps.len() != traj.events.len() {
        return Err(Error::Internal(format!(
            "the direct method applied {} jumps for {} events on the tape",
            jumps.len(),
            traj.events.len()
        )));
    }
    // S⁻ of an event, read from the tape when needed (not all held at once)
    let s_minus =
        |t: &Trajectory, i: usize| DMatrix::from_column_slice(n, nth, &t.events[i].before.y[n..]);
    let events = traj
        .events
        .iter()
        .zip(&jumps)
        .enumerate()
        .map(|(i, (e, jump))| EventSensitivity {
            t: e.t,
            guard: e.guard,
            mode_before: e.mode_before(),
            mode_after: e.mode_after(),
            group: e.group,
            tau: jump.tau(&s_minus(&traj, i)).as_slice().to_vec(),
        })
        .collect();
    let s_f = DMatrix::from_column_slice(n, nth, &traj.y_final[n..]);
    // values from the X part
    let state_only = ForwardResult {
        trajectory: traj,
        values: vec![],
        gradients: vec![],
        events,
    };
    let xt = state_only.state_trajectory(n);
    let values = setup.objective_values(&xt, theta)?;
    // dψ/dθ from the objectives' seeds (the same ones the adjoint starts from):
    // λ_tfᵀ S(tf) + μ_tf + Σ_events c_Xᵀ S⁻ + c_θ, where cᵀ[S⁻; I] = E_t τ + E_X(S⁻ + f⁻τ) + E_θ
    // is the event cost's total derivative (theory §3–4)
    let seeds = ObjectiveSeeds::build(setup, &xt, theta, |i| Ok(&jumps[i]))?;
    let gradients = rhs.flow.derivatives(
        &seeds,
        &s_f,
        |i| s_minus(&state_only.trajectory, i),
        |si| {
            let (y, _) = state_only
                .trajectory
                .state_of(crate::integrate::Instant::SegmentStart(si));
            DMatrix::from_column_slice(n, nth, &y[n..])
        },
    );
    Ok(ForwardResult {
        values,
        gradients,
        ..state_only
    })
}
