//! A multiple-shooting problem evaluated at points of one's own choosing: the cost and every
//! row with exact gradients, as the SQP sees them (for another solver, or a check by
//! finite differences).

use super::nlp::ShootingNlp;
use super::problem::build;
use super::settings::Shooting;
use crate::constraint::Constraints;
use crate::error::Error;
use crate::model::HybridSystem;
use crate::optimize::constrained::nlp::RowAt;
use crate::optimize::constrained::sqp::Problem;
use crate::optimize::constrained::ConstrainedPoint;
use crate::optimize::ThetaEntry;
use crate::sensitivity::GradientMethod;
use crate::setup::Setup;

/// A multiple-shooting problem built once (its nodes from the guess, its event terms
/// placed) for evaluations at many points: [`ShootingEvaluator::point`].
pub struct ShootingEvaluator<'s, 'a, S: HybridSystem> {
    nlp: ShootingNlp<'s, 'a, S>,
    names: Vec<String>,
}

impl<'s, 'a, S: HybridSystem> ShootingEvaluator<'s, 'a, S> {
    /// The problem of [`optimize_shooting`](super::optimize_shooting) with these arguments, at its start.
    pub fn new(
        setup: &Setup<'a, S>, theta: &[ThetaEntry], constraints: &'s Constraints,
        shooting: &Shooting,
    ) -> Result<Self, Error> {
        let (nlp, _) = build(setup, theta, constraints, shooting)?;
        Ok(ShootingEvaluator {
            nlp,
            names: setup.theta_names(),
        })
    }

    /// The variables' names: the optimized entries of θ, `t_end` if it is free, then each
    /// interior node's states as `state@k`.
    pub fn variables(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .nlp
            .free
            .iter()
            .map(|&k| self.names[k].clone())
            .collect();
        if self.nlp.free_time {
            v.push("t_end".into());
        }
        for k in 1..self.nlp.k() {
            v.extend(
                self.nlp
                    .setup
                    .dims
                    .states
                    .iter()
                    .map(|s| format!("{s}@{k}")),
            );
        }
        v
    }

    /// The cost and every row with exact gradients at `values` (default: the start).
    pub fn point(&self, values: Option<&[f64]>) -> Result<ConstrainedPoint, Error> {
        let nlp = &self.nlp;
        let x = match values {
            Some(v) if v.len() == nlp.lower.len() => v.to_vec(),
            Some(v) => {
                return Err(Error::VariableCount {
                    found: v.len(),
                    variables: self.variables(),
                })
            }
            None => Problem::x0(nlp),
        };
        let p = Problem::evaluate(nlp, &x)?;
        let dims = &nlp.setup.dims;
        Ok(ConstrainedPoint::at(
            self.variables(),
            x,
            &p,
            GradientMethod::Direct,
            |r| match r.label.at {
                RowAt::Continuity { node, state } => {
                    format!("continuity[{node}].{}", dims.states[state])
                }
                _ => nlp.constraints.list[r.label.constraint].name.clone(),
            },
        ))
    }
}

/// The cost and every row — the constraints', then the continuity rows (named
/// `continuity[k].state`, node K being a periodic problem's closing) — with exact
/// gradients over the variables (the optimized entries of θ by name, then each interior
/// node's states as `state@k`) at `values` (default: the start, θ's values and the
/// guess's nodes): what the SQP sees, for a solver of your own or a check by finite
/// differences. To evaluate many points, build a [`ShootingEvaluator`] once.
pub fn shooting_point<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[ThetaEntry], constraints: &Constraints, shooting: &Shooting,
    values: Option<&[f64]>,
) -> Result<ConstrainedPoint, Error> {
    ShootingEvaluator::new(setup, theta, constraints, shooting)?.point(values)
}
