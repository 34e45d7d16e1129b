//! The forward pass: the stages run one after another through the real hybrid system
//! under the new control law (Tassa, Erez & Todorov 2012, eq. 12),
//!
//! ```text
//! u_k = clamp(û_k + α k_k + K_k (z_k − ẑ_k),  lower, upper),
//! ```
//!
//! every event found by the simulation wherever the new controls put it (so a firing may
//! move to another stage, and its cost term with it), and the cost summed over the stages.
//! Where the rollout has fired a different number of events than the nominal before a
//! node (an impact moved across it) or is in another mode, `x_k − x̂_k` compares states
//! on two sides of a reset — an O(1) jump, not a deviation — and the state part of the
//! feedback is dropped at that stage (the carried coefficients' part stays).
//! The line search tries α = 1, ½, ¼, … and accepts the first rollout whose decrease is
//! at least a fraction of the predicted one, `J − Ĵ ≤ c · (α Σ kᵀQ_u + ½α² Σ kᵀQ_uu k)`.

use super::backward::Policy;
use super::costs::{missing, Piece};
use super::stage::Stages;
use crate::cost::EventGuard;
use crate::error::Error;
use crate::model::HybridSystem;
use nalgebra::DVector;

/// A rollout: θ, each stage's start state and mode (and the end's), its pieces and the cost.
#[derive(Debug, Clone)]
pub(crate) struct Rollout {
    pub theta: Vec<f64>,
    pub x: Vec<Vec<f64>>,
    pub modes: Vec<usize>,
    pub pieces: Vec<Vec<Piece>>,
    /// The event terms' firings counted before each stage.
    pub before: Vec<Vec<usize>>,
    /// All events fired before each stage.
    pub events: Vec<usize>,
    pub cost: f64,
    /// When the last stage ended (the closing event's time for a periodic problem).
    pub t_end: f64,
}

/// The fraction of the predicted decrease a step must achieve.
const ARMIJO: f64 = 1e-4;
/// The line search's shortest step.
const MIN_ALPHA: f64 = 1e-4;

impl<S: HybridSystem> Stages<'_, '_, S> {
    /// The rollout of θ as it is (`law` `None`) or under `law = (policy, nominal, α)`.
    pub fn rollout(
        &self, theta: &[f64], law: Option<(&Policy, &Rollout, f64)>,
    ) -> Result<Rollout, Error> {
        let mut theta = theta.to_vec();
        let (mode0, x0) = self
            .setup
            .initial(self.core(&theta))
            .map_err(|e| crate::setup::located(self.setup, self.setup.t0, 0)(e))?;
        let nx = self.layout.nx;
        let mut out = Rollout {
            theta: vec![],
            x: vec![x0[..nx].to_vec()],
            modes: vec![mode0],
            pieces: vec![],
            before: vec![],
            events: vec![0],
            cost: 0.0,
            t_end: self.setup.t0,
        };
        let mut before = vec![0; self.plan.events.len()];
        for k in 0..self.n() {
            if let Some((policy, nominal, alpha)) = law {
                let at = (out.x[k].as_slice(), out.modes[k], out.events[k]);
                self.apply(k, &mut theta, at, policy, nominal, alpha);
                if k == 0 && !self.layout.params.is_empty() {
                    // stage 0 decided the free parameters: the start moves with them
                    let start = self.start(&theta)?;
                    (out.x[0], out.modes[0]) = (start.x, start.mode);
                }
            }
            out.before.push(before.clone());
            let step = self.plain(k, &out.x[k], out.modes[k], &theta, &mut before)?;
            out.cost += step.cost;
            out.t_end = step.t_end;
            out.events.push(out.events[k] + step.fired);
            out.x.push(step.x_end);
            out.modes.push(step.mode_end);
            out.pieces.push(step.pieces);
        }
        if let Some((guard, occurrence, fired)) = missing(&self.plan, &before) {
            return Err(Error::MissingEvent {
                guard: match guard {
                    EventGuard::Guard(g) => self.setup.dims.guard_name(g),
                    EventGuard::Any => "any".into(),
                },
                occurrence,
                fired,
                t0: self.setup.t0,
                t1: self.setup.t_end,
            });
        }
        out.theta = theta;
        Ok(out)
    }

    /// Stage k's decided coefficients under the law (module docs), written into θ.
    fn apply(
        &self, k: usize, theta: &mut [f64], (x, mode, events): (&[f64], usize, usize),
        policy: &Policy, nominal: &Rollout, alpha: f64,
    ) {
        let st = &self.layout.stages[k];
        let mut dz = DVector::from_vec(self.layout.z(k, x, theta))
            - DVector::from_vec(self.layout.z(k, &nominal.x[k], &nominal.theta));
        if events != nominal.events[k] || mode != nominal.modes[k] {
            // an event moved across the node: the states either side of it are no
            // deviation of one another, so the state part of the feedback is dropped
            dz.rows_mut(0, self.layout.nx).fill(0.0);
        }
        let du = &policy.k[k] * alpha + &policy.gain[k] * dz;
        for (j, &q) in st.new.iter().enumerate() {
            let (lower, upper) = self.bounds_of(q);
            theta[q] = (nominal.theta[q] + du[j]).clamp(lower, upper);
        }
    }

    /// The line search along the policy from `nominal` (module docs): the accepted rollout
    /// and its α (`tries` counts the rollouts), or `None` when no α down to the shortest one decreased the cost enough
    /// (a rollout that fails — an event term's firing gone, a model error — counts as no
    /// decrease).
    pub fn line_search(
        &self, policy: &Policy, nominal: &Rollout, tries: &mut u64,
    ) -> Option<(Rollout, f64)> {
        let mut alpha = 1.0;
        while alpha >= MIN_ALPHA {
            *tries += 1;
            if let Ok(r) = self.rollout(&nominal.theta, Some((policy, nominal, alpha))) {
                let expected = policy.expected(alpha);
                if r.cost < nominal.cost && r.cost - nominal.cost <= ARMIJO * expected {
                    return Some((r, alpha));
                }
            }
            alpha *= 0.5;
        }
        None
    }
}
